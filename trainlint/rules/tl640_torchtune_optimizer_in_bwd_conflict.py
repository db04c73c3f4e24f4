"""TL640 torchtune-optimizer-in-bwd-conflict: torchtune `optimizer_in_bwd` with accumulation or clipping.

**What**: a torchtune recipe config with `optimizer_in_bwd: true` and `gradient_accumulation_steps`
> 1, a `clip_grad_norm` value, or `compile: {optimizer_step: true}`.

**Why**: with the optimizer step fused into backward, each gradient is applied and freed as soon as
it is computed, so it can neither be accumulated nor clipped by the global norm. The recipes stop
(`recipes/full_finetune_*.py`): "Gradient accumulation is not supported with optimizer in bwd.Please
set gradient_accumulation_steps=1, or optimizer_in_bwd=False." and "Gradient clipping is not
supported with optimizer in bwd.Please set clip_grad_norm=None, or optimizer_in_bwd=False." and
"optimizer_in_bwd not supported with compiling the optimizer step".

**Example**: `optimizer_in_bwd: true`, `gradient_accumulation_steps: 8`.

**Fix** (unsafe: memory goes up): `optimizer_in_bwd: false`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._frameworks import flag, number
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL640", "torchtune-optimizer-in-bwd-conflict", Severity.ERROR,
            "optimizer_in_bwd with gradient accumulation or clipping", flavors=("torchtune",))


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
                      f"`gradient_accumulation_steps: {gas.value.raw}` with `optimizer_in_bwd: true`: the recipe stops with "
                      f"\"Gradient accumulation is not supported with optimizer in bwd.\" (gradients are applied and freed "
                      f"during backward). Use gradient_accumulation_steps 1, or optimizer_in_bwd false.", [off])
    clip = root.entry("clip_grad_norm")
    if clip is not None and clip.value.kind == "scalar" and clip.value.value not in (None, "null", "None"):
        yield RULE.at(doc, clip.key_span,
                      f"`clip_grad_norm: {clip.value.raw}` with `optimizer_in_bwd: true`: the recipe stops with \"Gradient "
                      f"clipping is not supported with optimizer in bwd.\" Set clip_grad_norm to null, or optimizer_in_bwd "
                      f"false.", [off])
    step = root.find(("compile", "optimizer_step"))
    if step is not None and flag(step) is True:
        yield RULE.at(doc, step,
                      "`compile.optimizer_step: true` with `optimizer_in_bwd: true`: the recipe stops with \"optimizer_in_bwd "
                      "not supported with compiling the optimizer step\" (there is no separate optimizer step to "
                      "compile). Turn one of them off.", [off])
