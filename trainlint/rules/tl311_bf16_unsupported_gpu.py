"""TL311 bf16-unsupported-gpu: bf16 requested for a GPU without bf16 support.

**What**: bf16 training when the target GPU (`--gpu`, a `# trainlint: gpu=...` comment or
`[tool.trainlint]`) has no bf16 support (V100, T4, P100, ...): HF `bf16: true`, Lightning/LitGPT
`precision: bf16-mixed`/`bf16-true`, Accelerate `mixed_precision: bf16`, Axolotl `bf16: true`,
torchtune `dtype: bf16`.

**Why**: the frameworks ask torch whether the device does bf16: TrainingArguments
(`TrainingArguments.__post_init__`, transformers `training_args.py`, via
`is_torch_bf16_gpu_available()` -> `torch.cuda.is_bf16_supported()`) stops with "Your setup doesn't
support bf16/gpu." (transformers 5.x adds " You need to assign use_cpu if you want to train the model on
CPU." and " You need Ampere+ GPU with cuda>=11.0."), Accelerate's launcher with "bf16 mixed precision
requires PyTorch >= 1.10 and a supported device." (`commands/launch.py`), torchtune with "bf16 precision
was requested but not available on this hardware. Please use fp32 precision instead."
(`training/precision.py`). But from torch 2.4 `torch.cuda.is_bf16_supported()` counts emulation
(`including_emulation=True` by default) and answers True on V100/T4, so those checks pass and bf16
runs emulated, many times slower. Whether the run stops therefore depends on the torch release: a
warning, never an error (a slow run is not a failed one). Lightning leaves it to PyTorch. Axolotl's
`bf16: auto` is fine (it falls back to fp16), so it is not reported.

**Evidence**: `transformers/training_args.py: TrainingArguments.__post_init__` (stops with torch < 2.4;
with torch >= 2.4 bf16 is emulated (silent, slow)); verified against transformers 4.52 - 5.24. First
message: "Your setup doesn't support bf16/gpu.".

**Example**: `bf16: true` with `--gpu V100-32GB`.

**Fix** (unsafe: fp16 needs loss scaling and can overflow where bf16 did not): use fp16 mixed
precision (`fp16: true`, `16-mixed`, `mixed_precision: fp16`, Axolotl `bf16: auto`); torchtune: fp32.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, rename_key, replace_value
from trainlint.rules._frameworks import Claim, flag, lightning_trainer, target_gpu
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL311", "bf16-unsupported-gpu", Severity.WARNING,
            "bf16 on a GPU without bf16 support", flavors=("huggingface", "lightning", "litgpt", "accelerate", "axolotl", "torchtune"),
            framework="transformers", evidence="transformers/training_args.py: TrainingArguments.__post_init__",
            raises="Your setup doesn't support bf16/gpu.")

CLAIMS = (
    Claim("transformers", "training_args.py TrainingArguments.__post_init__ (is_torch_bf16_gpu_available)",
          "Your setup doesn't support bf16/gpu.", "stops"),  # with torch < 2.4
    Claim("torch", "torch/cuda/__init__.py is_bf16_supported(including_emulation=True)", "", "silent",
          since="2.4.0"),  # emulated bf16: no stop, much slower
)
EMULATED = "with torch >= 2.4 the check counts emulation and bf16 runs emulated, many times slower"


def check(ctx: LintContext):
    gpu = target_gpu(ctx)
    if gpu is None or gpu.bf16:
        return
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    name = gpu.name
    if ctx.flavor in ("huggingface", "axolotl"):
        entry = root.entry("bf16")
        if entry is None or flag(entry.value) is not True:
            return
        if ctx.flavor == "axolotl":
            yield RULE.at(doc, entry.key_span,
                          f"`bf16: {entry.value.raw}` but the target {name} has no bf16 support: the HF Trainer stops "
                          "(torch < 2.4) or emulates it",
                          [fix("write `bf16: auto`", replace_value(doc, entry.value, "auto"), safe=False)],
                          detail="The HF Trainer under Axolotl stops with \"Your setup doesn't support bf16/gpu\" on "
                                 f"torch < 2.4 ({EMULATED}). Write `bf16: auto` (bf16 where supported, else fp16).")
            return
        fp16 = root.entry("fp16")
        if fp16 is None:
            edits = [rename_key(doc, entry, "fp16")]
        else:
            edits = [replace_value(doc, entry.value, False), replace_value(doc, fp16.value, True)]
        yield RULE.at(doc, entry.key_span,
                      f"`bf16: {entry.value.raw}` but the target {name} has no bf16 support: TrainingArguments stops "
                      "(torch < 2.4) or emulates it",
                      [fix("use fp16 mixed precision", *edits, safe=False)],
                      detail="bf16 needs an Ampere or newer GPU: TrainingArguments stops with \"Your setup doesn't "
                             f"support bf16/gpu\" on torch < 2.4 ({EMULATED}). Use `fp16: true`.")
    elif ctx.flavor in ("lightning", "litgpt"):
        base = ("",) if ctx.flavor == "litgpt" else lightning_trainer(doc)
        if base is None:
            return
        path = ("precision",) if ctx.flavor == "litgpt" else base + ("precision",)
        node = doc.find(path)
        if node is None or node.kind != "scalar" or not str(node.value).lower().startswith("bf16"):
            return
        yield RULE.at(doc, node,
                      f"`precision: {node.raw}` but the target {name} has no bf16 support: PyTorch refuses or emulates it",
                      [fix("use `16-mixed`", replace_value(doc, node, text="16-mixed"), safe=False)],
                      detail="PyTorch refuses bf16 there or emulates it many times slower. Use `16-mixed` (fp16 with "
                             "loss scaling).")
    elif ctx.flavor == "accelerate":
        node = root.get("mixed_precision")
        if node is None or node.kind != "scalar" or str(node.value).lower() != "bf16":
            return
        yield RULE.at(doc, node,
                      f"`mixed_precision: {node.raw}` but the target {name} has no bf16 support: `accelerate launch` "
                      "stops (torch < 2.4)",
                      [fix("use fp16", replace_value(doc, node, "fp16"), safe=False)],
                      detail="`accelerate launch` stops with \"bf16 mixed precision requires PyTorch >= 1.10 and a "
                             f"supported device.\" on torch < 2.4 ({EMULATED}). Use `mixed_precision: fp16`.")
    elif ctx.flavor == "torchtune":
        node = root.get("dtype")
        if node is None or node.kind != "scalar" or str(node.value).lower() not in ("bf16", "bfloat16"):
            return
        yield RULE.at(doc, node,
                      f"`dtype: {node.raw}` but the target {name} has no bf16 support: torchtune stops (torch < 2.4) "
                      "or emulates it",
                      [fix("use fp32", replace_value(doc, node, "fp32"), safe=False)],
                      detail="torchtune stops with \"bf16 precision was requested but not available on this hardware. "
                             f"Please use fp32 precision instead.\" on torch < 2.4 ({EMULATED}). Use `dtype: fp32`.")
