"""TL103 offload-host-memory: CPU offload moves state into host RAM; this says how much.

**What**: ZeRO `offload_optimizer` / `offload_param` to CPU (or FSDP CPU offload). With a model
known, the pinned host RAM each node needs; without one, the bytes per parameter it costs.

**Why**: offload trades GPU memory for host memory, and the host runs out too: DeepSpeed's own
estimator counts ~18 bytes per parameter for full offload plus a 1.5x pinned-buffer margin
(`estimate_zero3_model_states_mem_needs`); fine-tuning LLaMA-33B with full offload on a 600 GB
node ran out of host RAM (DeepSpeed#3448).

The finding sits on the offload key, or, when a linked DeepSpeed file sets it, on the key that
names that file (`deepspeed: ds_z3_offload_config.json`).

**Fix**: none; check the node's RAM, offload less, or use more nodes.
"""

from __future__ import annotations

import os

from trainlint.diagnostics import Severity
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL103", "offload-host-memory", Severity.INFO, "How much host RAM CPU offload needs")


def _offload_origin(ctx):
    """Where the offload is set: its key in this file, else the key that links the file setting it
    (`deepspeed: examples/deepspeed/ds_z3_offload_config.json`), else None (the whole file)."""
    settings = (ctx.plan.offload_params, ctx.plan.offload_optimizer)
    for setting in settings:
        if setting.value == "cpu" and setting.origin.span is not None and setting.origin.path == ctx.document.path:
            return setting.origin.span
    for setting in settings:
        if setting.value == "cpu" and setting.origin.kind == "linked" and setting.origin.path:
            span = _link_span(ctx.document, setting.origin.path)
            if span is not None:
                return span
    return None


def _link_span(doc, linked: str):
    """The key of a top-level (or once nested) string value naming the linked file."""
    name = os.path.basename(linked)
    root = doc.root
    if not name or root is None or root.kind != "mapping":
        return None
    pending = [(root, 0)]
    while pending:
        node, depth = pending.pop(0)
        for entry in node.entries:
            value = entry.value
            if value.kind == "scalar" and isinstance(value.value, str) and \
                    os.path.basename(value.value.strip()) == name:
                return entry.key_span
            if value.kind == "mapping" and depth < 1:
                pending.append((value, depth + 1))
    return None


def check(ctx: LintContext):
    plan = ctx.plan
    if plan is None or "cpu" not in (plan.offload_optimizer.value, plan.offload_params.value):
        return
    what = "optimizer states and parameters" if plan.offload_params.value == "cpu" and \
        plan.offload_optimizer.value == "cpu" else ("optimizer states" if plan.offload_optimizer.value == "cpu"
                                                     else "parameters")
    est = ctx.estimate
    if est is not None and est.host_bytes:
        yield RULE.at(ctx.document, _offload_origin(ctx),
                      f"CPU offload of the {what} needs about {est.host_bytes / 2**30:.0f} GiB of pinned host RAM per "
                      "node",
                      detail=f"For {est.model} on {plan.num_gpus.value} GPU(s), up to 8 per node; make sure the nodes "
                             "have it.")
        return
    per_param = 18 if what.startswith("optimizer states and") else (16 if what == "optimizer states" else 2)
    yield RULE.at(ctx.document, _offload_origin(ctx),
                  f"CPU offload of the {what} needs about {per_param} bytes per parameter of pinned host RAM per node",
                  detail=f"x1.5 for DeepSpeed's buffers: ~{per_param * 1.5 * 7:.0f} GB for a 7B model, "
                         f"~{per_param * 1.5 * 70:.0f} GB for 70B; name the model (--model) for an exact figure.")
