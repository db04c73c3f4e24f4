"""TL223 litgpt-global-batch-divisibility: LitGPT `global_batch_size` not a multiple of micro-batch x devices.

**What**: a LitGPT finetune/pretrain config whose `train.global_batch_size` is not divisible by
`train.micro_batch_size` x `devices` x `num_nodes`.

**Why**: LitGPT derives accumulation with integer division
(`gradient_accumulation_iters = global_batch_size // devices // num_nodes // micro_batch_size`,
`litgpt/args.py`), so the run silently trains with a smaller global batch than written (and stops
with an assertion when the quotient is 0, "gradient_accumulation_iters > 0").

**Evidence**: `litgpt/args.py: TrainArgs.gradient_accumulation_iters` (silent (rounded down); a bare
AssertionError when the quotient is 0); verified against LitGPT 0.5.x. First message: "assert
gradient_accumulation_iters > 0".

**Example**: `global_batch_size: 64`, `micro_batch_size: 6`, `devices: 4` → 64 // 4 // 6 = 2
accumulation steps: the real global batch is 48.

Certain when the file sets `devices` (an error); with the device count taken from `--num-gpus` or a
launch file, a warning that says so.

**Fix**: none automatic: make `global_batch_size` a multiple of micro_batch_size x devices.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules._frameworks import number
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL223", "litgpt-global-batch-divisibility", Severity.ERROR,
            "LitGPT global_batch_size not divisible by micro_batch_size x devices", flavors=("litgpt",),
            framework="litgpt", evidence="litgpt/args.py: TrainArgs.gradient_accumulation_iters",
            raises="assert gradient_accumulation_iters > 0")


def check(ctx: LintContext):
    doc = ctx.document
    total_node = doc.find(("train", "global_batch_size"))
    total = number(total_node)
    micro = number(doc.find(("train", "micro_batch_size")))
    if total is None or micro is None or micro <= 0:
        return
    devices = number(doc.find(("devices",)))
    assumptions: tuple = ()
    if devices is None:
        plan = ctx.plan
        devices = plan.num_gpus.value if plan is not None and not plan.num_gpus.is_default else None
        if plan is not None and devices is not None:
            origin = plan.num_gpus.origin
            assumptions = (f"{devices} devices from the {origin.describe()} (the file sets no `devices`; LitGPT's "
                           f"default is 1)",)
    if devices is None or devices <= 0:
        return
    nodes = number(doc.find(("num_nodes",))) or 1
    step = micro * devices * nodes
    if total % step == 0:
        return
    accumulate = total // devices // nodes // micro
    product = f"micro_batch_size {micro} x {devices} devices" + (f" x {nodes} nodes" if nodes > 1 else "") + f" = {step}"
    if accumulate == 0:
        message = (f"`global_batch_size: {total}` is smaller than micro_batch_size x devices = {step}: LitGPT computes "
                   "0 accumulation steps and stops")
        detail = f"It is smaller than {product}. Use a multiple of {step}."
    else:
        message = (f"`global_batch_size: {total}` is not a multiple of micro_batch_size x devices = {step}: the run "
                   f"trains with {accumulate * step}")
        detail = (f"It is not a multiple of {product}: LitGPT rounds the accumulation down to {accumulate}, so the run "
                  f"trains with a global batch of {accumulate * step}, not {total}. Use "
                  f"{(total // step) * step or step} or {(total // step + 1) * step}.")
    yield RULE.at(doc, total_node, message, assumptions=assumptions, detail=detail)
