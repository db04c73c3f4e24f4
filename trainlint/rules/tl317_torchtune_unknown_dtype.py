"""TL317 torchtune-unknown-dtype: a torchtune `dtype` that is not one of fp16, bf16, fp32, fp64.

**What**: `dtype: bfloat16`, `float32`, `float`, `float64`, `double`, or any other word in a torchtune config
(`float16` / `half` are TL314's).

**Why**: every torchtune recipe turns `cfg.dtype` into a torch dtype with `training.get_dtype`, which knows only
the short names and stops the run at setup: "Dtype bfloat16 must be one of fp16, bf16, fp32, fp64 for
finetuning." The torch names that work in Hugging Face configs do not work here.

**Evidence**: torchtune `torchtune/training/precision.py: get_dtype` (`PRECISION_STR_TO_DTYPE`, the `ValueError`
above), called in the `__init__` / `setup` of every recipe under `recipes/`, every release from v0.1.0 to main
(2026-04). An OmegaConf interpolation (`${...}`) is resolved before and is not judged.

**Example**: `dtype: bfloat16` → `dtype: bf16`.

**Fix** (safe, the same precision spelled as torchtune accepts it): `bfloat16` → `bf16`, `float32` / `float` →
`fp32`, `float64` / `double` → `fp64`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL317", "torchtune-unknown-dtype", Severity.ERROR,
            "A torchtune dtype other than fp16, bf16, fp32, fp64", flavors=("torchtune",),
            framework="torchtune", versions="",
            evidence="torchtune/training/precision.py: get_dtype",
            raises="Dtype bfloat16 must be one of fp16, bf16, fp32, fp64 for finetuning.")

KNOWN = ("fp16", "bf16", "fp32", "fp64")
SAME_PRECISION = {"bfloat16": "bf16", "torch.bfloat16": "bf16", "float32": "fp32", "float": "fp32",
                  "torch.float32": "fp32", "float64": "fp64", "double": "fp64", "torch.float64": "fp64"}
FP16_WORDS = ("float16", "half")  # TL314


def check(ctx: LintContext):
    doc = ctx.document
    node = doc.find(("dtype",))
    if node is None or node.kind != "scalar" or node.value is None:
        return
    text = str(node.value)
    if text in KNOWN or text.lower() in FP16_WORDS or "${" in text:
        return
    same = SAME_PRECISION.get(text.lower())
    fixes = [fix(f"write {same}", replace_value(doc, node, same), safe=True)] if same else []
    hint = f" Write `dtype: {same}`." if same else " Use one of those."
    yield RULE.at(doc, node, f"`dtype: {node.raw}` is no torchtune dtype (it knows fp16, bf16, fp32, fp64): it stops at setup",
                  fixes,
                  detail=f"torchtune only knows fp16, bf16, fp32, fp64 and stops at setup (\"Dtype {text} must be one "
                         f"of fp16, bf16, fp32, fp64 for finetuning.\").{hint}")
