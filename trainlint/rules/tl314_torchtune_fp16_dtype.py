"""TL314 torchtune-fp16-dtype: torchtune `dtype: fp16`, which its recipes refuse.

**What**: `dtype: fp16` in a torchtune recipe config.

**Why**: torchtune trains in `dtype` itself (no fp32 master weights, no loss scaling), and its
recipes reject fp16: full fine-tuning "full fp16 training is not supported with this recipe.
Please use bf16 or fp32 instead." (`recipes/full_finetune_*.py`), LoRA/QLoRA "fp16 precision is not
supported in this recipe. Please use fp32 or bf16." (`recipes/lora_finetune_*.py`). The run stops at
setup.

Generation and evaluation configs (no `optimizer` or `loss` section) accept fp16 and are not reported.

**Example**: `dtype: fp16` → `dtype: bf16` (Ampere or newer) or `dtype: fp32`.

**Fix** (unsafe: bf16 needs an Ampere or newer GPU): `dtype: bf16`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL314", "torchtune-fp16-dtype", Severity.ERROR,
            "torchtune recipes refuse dtype fp16", flavors=("torchtune",))


def check(ctx: LintContext):
    doc = ctx.document
    node = doc.find(("dtype",))
    if node is None or node.kind != "scalar" or str(node.value).lower() not in ("fp16", "float16", "half"):
        return
    if doc.find(("optimizer",)) is None and doc.find(("loss",)) is None:
        return  # generation / evaluation recipes run in fp16 fine
    yield RULE.at(doc, node,
                  f"`dtype: {node.raw}`: torchtune's recipes refuse fp16 (\"full fp16 training is not supported with this "
                  f"recipe. Please use bf16 or fp32 instead.\"; LoRA: \"fp16 precision is not supported in this "
                  f"recipe\"). Use bf16 on Ampere or newer GPUs, else fp32.",
                  [fix("use bf16", replace_value(doc, node, "bf16"), safe=False),
                   fix("use fp32", replace_value(doc, node, "fp32"), safe=False)])
