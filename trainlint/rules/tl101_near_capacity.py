"""TL101 near-capacity: the estimated peak uses more than 90% of the GPU.

**What**: the estimated per-GPU total is between 90% and 100% of the target GPU's memory.

**Why**: the estimate is within a few percent of what PyTorch reports, but real runs vary: a longer
batch after packing, allocator fragmentation, an evaluation step, NCCL growth. Under 10% headroom a
run that starts may still die hours in.

A run over the card only by bitsandbytes' paged optimizer state (CUDA unified memory, which the driver pages to
host RAM "when GPU memory is exhausted", bitsandbytes' optimizer docs) does not stop: TL101 says how much is paged
out, not TL100.

**Fix**: as TL100: the planner's re-estimated changes that bring it under 90%, cheapest first.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.planner import TARGET, held_change, plan_fixes
from trainlint.rules.base import LintContext, Rule
from trainlint.rules.memory_common import anchor, breakdown_text, model_caveats, need_text, run_assumptions, verdict_basis

RULE = Rule("TL101", "near-capacity", Severity.WARNING, "The estimated peak is above 90% of the GPU")


def check(ctx: LintContext):
    est = ctx.estimate
    if est is None or verdict_basis(ctx) is not None or not est.fits or est.utilization <= TARGET:
        return
    offers, _ = plan_fixes(ctx)
    held = held_change(ctx, offers)
    assumptions = run_assumptions(ctx)
    caveats = list(model_caveats(ctx))
    if est.spills:  # over the card with the paged optimizer state, within it without: the driver pages it out
        spilled = max((est.total - ctx.gpu.memory_bytes) / 2**30, 0.1)
        yield RULE.at(ctx.document, anchor(ctx),
                      f"{need_text(est, ctx.gpu)}: fits only by paging ~{spilled:.1f} GiB of optimizer state to host RAM",
                      [o.fix(est.total, ctx.gpu.memory_bytes) for o in offers], assumptions=assumptions + caveats,
                      detail=f"{breakdown_text(est)} bitsandbytes' paged optimizers keep their state in CUDA unified "
                             "memory, which the driver moves to host RAM when the GPU's memory is exhausted: the run "
                             "does not stop, but each optimizer step waits for the pages it moves."
                             + (f" {held}" if held else ""))
        return
    yield RULE.at(ctx.document, anchor(ctx),
                  f"{need_text(est, ctx.gpu)}: {est.utilization:.0%} used, under 10% headroom",
                  [o.fix(est.total, ctx.gpu.memory_bytes) for o in offers], assumptions=assumptions + caveats,
                  detail=f"{breakdown_text(est)} With under 10% headroom a longer batch or fragmentation can still run "
                         "out of memory." + (f" {held}" if held else ""))
