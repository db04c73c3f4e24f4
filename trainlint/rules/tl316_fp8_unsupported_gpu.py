"""TL316 fp8-unsupported-gpu: fp8 training requested for a GPU without fp8 tensor cores.

**What**: fp8 mixed precision when the target GPU (`--gpu`, a `# trainlint: gpu=...` comment or
`[tool.trainlint]`) has no fp8 support (everything before Ada/Hopper: V100, T4, A10, A100, ...):
Accelerate `mixed_precision: fp8`, Lightning/LitGPT `precision: transformer-engine` /
`transformer-engine-float16`, Axolotl `fp8: true`.

**Why**: fp8 matmuls need compute capability 8.9 or newer, and the frameworks differ in what they do:

- Accelerate does not stop: `AcceleratorState.__init__` (`accelerate/state.py`, accelerate 0.26 - 1.15)
  logs "The current device has compute capability of (8, 0) which is insufficient for FP8 mixed
  precision training (requires a GPU Hopper/Ada Lovelace or higher, compute capability of 8.9 or
  higher). Will use FP16 instead." and trains in fp16 (with loss scaling), not in fp8 and not in bf16.
  It stops only when no fp8 library is installed ("Using `fp8` precision requires `transformer_engine`
  or `MS-AMP` to be installed."). A warning.
- Lightning's `transformer-engine` precision (`fabric/plugins/precision/transformer_engine.py`) enters
  Transformer Engine's `fp8_autocast`, which asserts `check_fp8_support()`: "Device compute capability
  8.9 or higher required for FP8 execution." (`transformer_engine/pytorch/fp8.py`): the first forward
  stops. An error.
- Axolotl's `fp8: true` uses torchao's float8 training, which has the same hardware requirement (not
  traced further here). A warning.

**Evidence**: `transformer_engine/pytorch/fp8.py: check_fp8_support (via fp8_autocast)` (accelerate: logs
and trains in fp16 (0.26 - 1.15); Transformer Engine (Lightning): stops); verified against accelerate
0.26 - 1.15, Lightning 2.6. First message: "Device compute capability 8.9 or higher required for FP8
execution.".

**Example**: `mixed_precision: fp8` with `--gpu A100-80GB` → `mixed_precision: bf16`.

**Fix** (unsafe: memory and speed change): bf16 mixed precision.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._frameworks import Claim, flag, lightning_trainer, target_gpu
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL316", "fp8-unsupported-gpu", Severity.ERROR,
            "fp8 on a GPU without fp8 tensor cores", flavors=("accelerate", "lightning", "litgpt", "axolotl"),
            framework="lightning", evidence="transformer_engine/pytorch/fp8.py: check_fp8_support (via fp8_autocast)",
            raises="Device compute capability 8.9 or higher required for FP8 execution.")

CLAIMS = (
    Claim("accelerate", "state.py AcceleratorState.__init__",
          "The current device has compute capability of {cc} which is insufficient for FP8 mixed precision training "
          "(requires a GPU Hopper/Ada Lovelace or higher, compute capability of 8.9 or higher). Will use FP16 instead.",
          "logs", since="0.26.0"),
    Claim("lightning", "fabric/plugins/precision/transformer_engine.py TransformerEnginePrecision (te.fp8_autocast)",
          "Device compute capability 8.9 or higher required for FP8 execution.", "stops"),
)


def check(ctx: LintContext):
    gpu = target_gpu(ctx)
    doc = ctx.document
    if gpu is None or getattr(gpu, "fp8", True) or doc.root is None or doc.root.kind != "mapping":
        return
    no_fp8 = f"the target {gpu.name} has no fp8 tensor cores (compute capability 8.9+: Ada, Hopper, Blackwell)"
    why = (f"{no_fp8}, and Transformer Engine stops with \"Device compute capability 8.9 or higher required for FP8 "
           f"execution.\"")
    if ctx.flavor == "accelerate":
        node = doc.root.get("mixed_precision")
        if node is not None and node.kind == "scalar" and str(node.value).lower() == "fp8":
            yield RULE.at(doc, node,
                          f"`mixed_precision: fp8` but the target {gpu.name} has no fp8 tensor cores: Accelerate "
                          "trains in fp16 instead",
                          [fix("use bf16", replace_value(doc, node, "bf16"), safe=False)], severity=Severity.WARNING,
                          detail=f"{no_fp8[:1].upper()}{no_fp8[1:]}: Accelerate logs \"... which is insufficient for "
                                 "FP8 mixed precision training ... Will use FP16 instead.\" and trains in fp16, not "
                                 "fp8. Use bf16.")
    elif ctx.flavor in ("lightning", "litgpt"):
        base = lightning_trainer(doc) if ctx.flavor == "lightning" else ()
        if base is None:
            return
        node = doc.find(tuple(base) + ("precision",))
        if node is not None and node.kind == "scalar" and str(node.value).lower().startswith("transformer-engine"):
            new = "16-mixed" if str(node.value).lower().endswith("float16") else "bf16-mixed"
            yield RULE.at(doc, node,
                          f"`precision: {node.raw}` (fp8) but the target {gpu.name} has no fp8 tensor cores: "
                          "Transformer Engine stops",
                          [fix(f"use {new}", replace_value(doc, node, text=new), safe=False)],
                          detail=f"fp8 through Transformer Engine, but {why} Use {new}.")
    elif ctx.flavor == "axolotl":
        entry = doc.root.entry("fp8")
        if entry is not None and flag(entry.value) is True:
            yield RULE.at(doc, entry.key_span,
                          f"`fp8: true` (torchao float8 training) but the target {gpu.name} has no fp8 tensor cores",
                          [fix("set `fp8: false`", replace_value(doc, entry.value, False), safe=False)],
                          severity=Severity.WARNING,
                          detail=f"{no_fp8[:1].upper()}{no_fp8[1:]}; torchao's float8 kernels need the same hardware. "
                                 "Remove it and train in bf16.")
