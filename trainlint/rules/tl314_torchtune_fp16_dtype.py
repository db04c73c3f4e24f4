"""TL314 torchtune-fp16-dtype: torchtune `dtype: fp16`, which its training recipes refuse.

**What**: `dtype: fp16` in a torchtune training config (one with an `optimizer` or `loss` section), or fp16
spelled `float16` / `half` in any torchtune config.

**Why**: torchtune trains in `dtype` itself (no fp32 master weights, no loss scaling), and its training
recipes reject fp16 at setup: "full fp16 training is not supported with this recipe. Please use bf16 or fp32
instead." (full fine-tuning, the distributed LoRA/DPO/QAT recipes), "fp16 precision is not supported in this
recipe. Please use fp32 or bf16." (single-device LoRA, LoRA DPO, QAT, knowledge distillation). The spellings
`float16` / `half` fail earlier, in every recipe, generation and evaluation included: torchtune only knows
`fp16`, `bf16`, `fp32`, `fp64` ("Dtype float16 must be one of fp16, bf16, fp32, fp64 for finetuning.").

Generation and evaluation configs (no `optimizer` or `loss` section) accept `fp16` and are not reported.

**Evidence**: torchtune `recipes/full_finetune_*.py`, `lora_finetune_*.py`, `*_dpo_*.py`, `qat_*.py`,
`knowledge_distillation_*.py`, `ppo_full_finetune_single_device.py` (`__init__`, right after
`training.get_dtype`), and `torchtune/training/precision.py: get_dtype` (`PRECISION_STR_TO_DTYPE`), every
release from v0.1.0 (2024-03) to main (2026-04).

**Example**: `dtype: fp16` → `dtype: bf16` (Ampere or newer) or `dtype: fp32`; `dtype: float16` in a
generation config → `dtype: fp16`.

**Fix** (unsafe: bf16 needs an Ampere or newer GPU): `dtype: bf16`; for `float16`/`half` in a generation or
evaluation config, `dtype: fp16` (safe: the same precision, spelled as torchtune accepts it).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL314", "torchtune-fp16-dtype", Severity.ERROR,
            "torchtune recipes refuse dtype fp16", flavors=("torchtune",),
            framework="torchtune", versions="",
            evidence="recipes/full_finetune_distributed.py: FullFinetuneRecipeDistributed.__init__; torchtune/training/precision.py: get_dtype",
            raises="full fp16 training is not supported with this recipe. Please use bf16 or fp32 instead.")

SPELLINGS = ("float16", "half")  # fp16 in words torchtune's get_dtype does not know


def check(ctx: LintContext):
    doc = ctx.document
    node = doc.find(("dtype",))
    if node is None or node.kind != "scalar":
        return
    value = str(node.value).lower()
    if value not in ("fp16",) + SPELLINGS:
        return
    training = doc.find(("optimizer",)) is not None or doc.find(("loss",)) is not None
    if value in SPELLINGS:
        if training:
            yield RULE.at(doc, node,
                          f"`dtype: {node.raw}` is no torchtune dtype, and its training recipes refuse fp16: the "
                          "recipe stops",
                          [fix("use bf16", replace_value(doc, node, "bf16"), safe=False),
                           fix("use fp32", replace_value(doc, node, "fp32"), safe=False)],
                          detail=f"torchtune only knows fp16, bf16, fp32, fp64 (\"Dtype {node.value} must be one of "
                                 "fp16, bf16, fp32, fp64 for finetuning.\"), and its training recipes refuse fp16 "
                                 "anyway. Use bf16 on Ampere or newer GPUs, else fp32.")
        else:
            yield RULE.at(doc, node,
                          f"`dtype: {node.raw}` is no torchtune dtype (it knows fp16, bf16, fp32, fp64): torchtune stops",
                          [fix("write fp16", replace_value(doc, node, "fp16"), safe=True)],
                          detail=f"torchtune only knows fp16, bf16, fp32, fp64 (\"Dtype {node.value} must be one of "
                                 "fp16, bf16, fp32, fp64 for finetuning.\"). Write `dtype: fp16`.")
        return
    if not training:
        return  # generation / evaluation recipes run in fp16 fine
    yield RULE.at(doc, node, f"`dtype: {node.raw}`: torchtune's training recipes refuse fp16 and stop at setup",
                  [fix("use bf16", replace_value(doc, node, "bf16"), safe=False),
                   fix("use fp32", replace_value(doc, node, "fp32"), safe=False)],
                  detail="torchtune's recipes refuse fp16 (\"full fp16 training is not supported with this recipe. "
                         "Please use bf16 or fp32 instead.\"; LoRA: \"fp16 precision is not supported in this "
                         "recipe\"). Use bf16 on Ampere or newer GPUs, else fp32.")
