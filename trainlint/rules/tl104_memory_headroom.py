"""TL104 memory-headroom: the run fits with a lot of room; speed is being left on the table.

**What**: the estimated peak uses under half of the GPU, and activation checkpointing is on (it
recomputes the forward pass for nothing), or the micro-batch could grow while accumulation shrinks
at the same effective batch.

**Why**: checkpointing costs about a third more compute; tiny micro-batches keep the GPU
underused. Both are only worth it when memory is short.

**Fix**: none offered automatically (speed changes are a choice); the message says what still fits.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.planner import TARGET
from trainlint.memory.estimate import estimate_plan
from trainlint.plan import Origin, Setting
from trainlint.rules.base import LintContext, Rule
from trainlint.rules.memory_common import verdict_basis

RULE = Rule("TL104", "memory-headroom", Severity.INFO, "Plenty of GPU memory left: checkpointing or a small micro-batch costs speed")


def check(ctx: LintContext):
    est, plan = ctx.estimate, ctx.plan
    if est is None or plan is None or verdict_basis(ctx) is not None or not est.fits or est.utilization >= 0.5:
        return
    capacity = ctx.gpu.memory_bytes
    advice: list[str] = []
    detail = ""
    if plan.grad_ckpt.value != "none":
        without = estimate_plan(plan.with_(grad_ckpt=Setting("none", Origin("cli"))), ctx.architecture, ctx.gpu)
        if without.total <= capacity * TARGET:
            advice.append(f"without activation checkpointing it would need {without.total / 2**30:.1f} GiB and run "
                          "about 25% faster")
    micro, gas = plan.micro_batch.value, plan.grad_accum.value
    if gas > 1 and not advice:
        best = None
        factor = 2
        while gas % factor == 0:
            trial = plan.with_(micro_batch=Setting(micro * factor, Origin("cli")),
                               grad_accum=Setting(gas // factor, Origin("cli")))
            total = estimate_plan(trial, ctx.architecture, ctx.gpu).total
            if total > capacity * TARGET:
                break
            best = (micro * factor, gas // factor, total)
            factor *= 2
        if best:
            advice.append(f"micro-batch {best[0]} with accumulation {best[1]} would need {best[2] / 2**30:.1f} GiB "
                          "and use the GPU better")
            detail = (f"Micro-batch {best[0]} with accumulation {best[1]} keeps the same effective batch "
                      f"({micro} x {gas}).")
    if advice:
        yield RULE.at(ctx.document, None,
                      f"uses {est.total / 2**30:.1f} of {capacity / 2**30:.1f} GiB ({est.utilization:.0%}): "
                      + "; ".join(advice), detail=detail)
