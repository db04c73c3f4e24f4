"""TL316 fp8-unsupported-gpu: fp8 training requested for a GPU without fp8 tensor cores.

**What**: fp8 mixed precision when the target GPU (`--gpu`, a `# trainlint: gpu=...` comment or
`[tool.trainlint]`) has no fp8 support (everything before Ada/Hopper: V100, T4, A10, A100, ...):
Accelerate `mixed_precision: fp8`, Lightning/LitGPT `precision: transformer-engine` /
`transformer-engine-float16`, Axolotl `fp8: true`.

**Why**: fp8 matmuls need compute capability 8.9 or newer. NVIDIA Transformer Engine (Lightning's
`transformer-engine` precision, Accelerate's default fp8 backend) stops with "Device compute
capability 8.9 or higher required for FP8 execution." (`transformer_engine/pytorch/fp8.py`); torchao's
float8 training (Axolotl, Accelerate's AO backend) has the same hardware requirement.

**Example**: `mixed_precision: fp8` with `--gpu A100-80GB` → `mixed_precision: bf16`.

**Fix** (unsafe: memory and speed change): bf16 mixed precision.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._frameworks import flag, lightning_trainer, target_gpu
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL316", "fp8-unsupported-gpu", Severity.ERROR,
            "fp8 on a GPU without fp8 tensor cores", flavors=("accelerate", "lightning", "litgpt", "axolotl"))


def check(ctx: LintContext):
    gpu = target_gpu(ctx)
    doc = ctx.document
    if gpu is None or getattr(gpu, "fp8", True) or doc.root is None or doc.root.kind != "mapping":
        return
    why = (f"the target {gpu.name} has no fp8 tensor cores (compute capability 8.9+: Ada, Hopper, Blackwell), and "
           f"Transformer Engine stops with \"Device compute capability 8.9 or higher required for FP8 execution.\"")
    if ctx.flavor == "accelerate":
        node = doc.root.get("mixed_precision")
        if node is not None and node.kind == "scalar" and str(node.value).lower() == "fp8":
            yield RULE.at(doc, node, f"`mixed_precision: fp8` but {why} Use bf16.",
                          [fix("use bf16", replace_value(doc, node, "bf16"), safe=False)])
    elif ctx.flavor in ("lightning", "litgpt"):
        base = lightning_trainer(doc) if ctx.flavor == "lightning" else ()
        if base is None:
            return
        node = doc.find(tuple(base) + ("precision",))
        if node is not None and node.kind == "scalar" and str(node.value).lower().startswith("transformer-engine"):
            new = "16-mixed" if str(node.value).lower().endswith("float16") else "bf16-mixed"
            yield RULE.at(doc, node, f"`precision: {node.raw}` (fp8 through Transformer Engine) but {why} Use {new}.",
                          [fix(f"use {new}", replace_value(doc, node, text=new), safe=False)])
    elif ctx.flavor == "axolotl":
        entry = doc.root.entry("fp8")
        if entry is not None and flag(entry.value) is True:
            yield RULE.at(doc, entry.key_span, f"`fp8: true` (torchao float8 training) but {why.split(', and')[0]}; "
                                               f"torchao's float8 kernels need the same hardware. Remove it and train in bf16.",
                          [fix("set `fp8: false`", replace_value(doc, entry.value, False), safe=False)])
