"""TL640 torchtune-optimizer-in-bwd-conflict: torchtune `optimizer_in_bwd` with accumulation or clipping.

**What**: a torchtune recipe config with `optimizer_in_bwd: true` and `gradient_accumulation_steps`
> 1, a `clip_grad_norm` value, or `compile: {optimizer_step: true}`.

**Why**: with the optimizer step fused into backward, each gradient is applied and freed as soon as
it is computed, so it can neither be accumulated nor clipped by the global norm. The recipes stop at
setup: the distributed ones with "Gradient accumulation is not supported with optimizer in bwd.Please set
gradient_accumulation_steps=1, or optimizer_in_bwd=False." and "Gradient clipping is not supported with
optimizer in bwd.Please set clip_grad_norm=None, or optimizer_in_bwd=False." (sic, no space), the
single-device one with "Gradient accumulation is not supported with optimizer_in_bwd: True" and "Gradient
clipping is not supported with optimizer_in_bwd: True"; compiling the step fails with "optimizer_in_bwd not
supported with compiling the optimizer step".

**Evidence**: torchtune `recipes/full_finetune_distributed.py`, `full_dpo_distributed.py`,
`qat_distributed.py`, `qat_single_device.py` (`__init__`) and `full_finetune_single_device.py` (`__init__`):
the accumulation check since v0.1.0 (2024-03), the clipping check since v0.4.0 (2024-10); the compile check
in `_setup_optimizer` of `full_finetune_distributed.py` and `qat_distributed.py` is on main after v0.6.1
(2025-05, unreleased). The LoRA recipes do not read `optimizer_in_bwd`.

**Example**: `optimizer_in_bwd: true`, `gradient_accumulation_steps: 8`.

**Fix** (unsafe: memory goes up): `optimizer_in_bwd: false`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._frameworks import flag, number
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL640", "torchtune-optimizer-in-bwd-conflict", Severity.ERROR,
            "optimizer_in_bwd with gradient accumulation or clipping", flavors=("torchtune",),
            framework="torchtune", versions="",
            evidence="recipes/full_finetune_distributed.py: FullFinetuneRecipeDistributed.__init__",
            raises="Gradient accumulation is not supported with optimizer in bwd.")


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    inbwd = root.entry("optimizer_in_bwd")
    if inbwd is None or flag(inbwd.value) is not True:
        return
    off = fix("set `optimizer_in_bwd: false`", replace_value(doc, inbwd.value, False), safe=False)
    gas = root.entry("gradient_accumulation_steps")
    if gas is not None and (number(gas.value) or 1) > 1:
        yield RULE.at(doc, gas.key_span,
                      f"`gradient_accumulation_steps: {gas.value.raw}` with `optimizer_in_bwd: true`: the recipe "
                      "stops at setup", [off],
                      detail="The recipe stops at setup (\"Gradient accumulation is not supported with optimizer in "
                             "bwd\", single device: \"... with optimizer_in_bwd: True\"): gradients are applied and "
                             "freed during backward. Use gradient_accumulation_steps 1, or optimizer_in_bwd false.")
    clip = root.entry("clip_grad_norm")
    if clip is not None and clip.value.kind == "scalar" and clip.value.value not in (None, "null", "None"):
        yield RULE.at(doc, clip.key_span,
                      f"`clip_grad_norm: {clip.value.raw}` with `optimizer_in_bwd: true`: the recipe stops at setup",
                      [off],
                      detail="The recipe stops at setup (\"Gradient clipping is not supported with optimizer in "
                             "bwd\", single device: \"... with optimizer_in_bwd: True\"): the global norm needs every "
                             "gradient at once. Set clip_grad_norm to null, or optimizer_in_bwd false.")
    step = root.find(("compile", "optimizer_step"))
    newer = ctx.version_in("torchtune", ">0.6.1")  # the check is on main after 0.6.1; 0.6.1 has no optimizer_step
    if step is not None and flag(step) is True and newer is not False:
        assumed = () if newer else ("torchtune version unknown: this check exists on torchtune main after 0.6.1 "
                                    "(unreleased); 0.6.1 and earlier have no `compile.optimizer_step`",)
        yield RULE.at(doc, step,
                      "`compile.optimizer_step: true` with `optimizer_in_bwd: true`: the recipe stops", [off],
                      assumptions=assumed,
                      detail="The recipe stops with \"optimizer_in_bwd not supported with compiling the optimizer "
                             "step\" (there is no separate optimizer step to compile). Turn one of them off.")
