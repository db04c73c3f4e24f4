"""TL426 sharding-on-one-device: ZeRO or FSDP sharding configured for a single process.

**What**: DeepSpeed ZeRO (stage 1-3) or FSDP sharding (full_shard, shard_grad_op, hybrid) in a run
whose world size is one process: Accelerate `num_processes: 1`, Lightning `devices: 1` with a
`deepspeed*`/`fsdp` strategy, or `--num-gpus 1` given to trainlint, with no CPU/NVMe offload.

**Why**: ZeRO and FSDP divide weights, gradients and optimizer states by the number of data-parallel
ranks (DeepSpeed `estimate_zero3_model_states_mem_needs`: `gpu = 4L + 18P/N`). With N = 1 nothing is
divided: the one GPU holds the full mixed-precision model state (~18 bytes per parameter with Adam)
plus the framework's buffers, so the run needs as much memory as plain DDP and pays the sharding
overhead on top. This is DeepSpeed#4953: the alignment-handbook ZeRO-3 Accelerate config edited to
`num_processes: 1` ran out of CUDA memory on one A100-80GB for a 7B DPO run, even at batch size 1.
(ZeRO-Offload on one GPU is a real technique: with `offload_optimizer`/`offload_param` set this rule
stays quiet.)

**Evidence**: `deepspeed/runtime/zero/stage3.py: estimate_zero3_model_states_mem_needs` (runs (no message)
and needs the unsharded memory); verified against DeepSpeed, FSDP: any release.

**Example**: `distributed_type: DEEPSPEED`, `deepspeed_config: {zero_stage: 3}`, `num_processes: 1`.

An accelerate config whose every launch gives `--num_processes` / `--num_machines` itself is read with the
launch's value (`Launch.overrides`: accelerate reads the file only for the options not given); a value the launch
gives through a shell variable is unknown, and nothing is reported.

**Fix**: none automatic: use more GPUs (`num_processes` = the GPUs you have), or add CPU offload
(`offload_optimizer_device: cpu`, `offload_param_device: cpu`) to trade speed for memory.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL426", "sharding-on-one-device", Severity.WARNING,
            "ZeRO/FSDP sharding on a single process shards nothing", flavors=("accelerate", "lightning", "huggingface", "axolotl"),
            framework="deepspeed", evidence="deepspeed/runtime/zero/stage3.py: estimate_zero3_model_states_mem_needs")

SHARDING_FSDP = {"full_shard", "shard_grad_op", "hybrid_shard", "hybrid_shard_zero2"}


def _offloaded(value) -> bool:
    return isinstance(value, str) and value.lower() in ("cpu", "nvme")


def check(ctx: LintContext):
    plan = ctx.plan
    if plan is None or plan.num_gpus.is_default or plan.num_gpus.value != 1 or plan.num_nodes.value > 1:
        return
    if plan.num_gpus.origin.kind == "inferred":
        return
    stage = plan.zero_stage.value if not plan.zero_stage.is_default else 0
    fsdp = (plan.fsdp.value or "").lower() if not plan.fsdp.is_default else ""
    if stage < 1 and fsdp not in SHARDING_FSDP:
        return
    if _offloaded(plan.offload_optimizer.value) or _offloaded(plan.offload_params.value):
        return
    what = f"ZeRO stage {stage}" if stage >= 1 else f"FSDP {fsdp}"
    decided_by = plan.zero_stage if stage >= 1 else plan.fsdp
    where = plan.num_gpus.origin
    doc = ctx.document
    target = where.span if where.span is not None and where.path in ("", doc.path) else None
    if target is None:
        doc = ctx.document_for(decided_by) or ctx.document
        target = decided_by.origin.span
    world = "`" + ".".join(str(k) for k in where.key_path) + ": 1`" if where.key_path else "a world size of 1"
    yield RULE.at(doc, target,
                  f"{what} with {world} shards nothing: one GPU still holds all weights, gradients and optimizer "
                  "states",
                  detail="The single GPU still holds all weights, gradients and optimizer states (~18 bytes per "
                         "parameter with mixed-precision Adam), as much as without sharding (DeepSpeed#4953: OOM for "
                         "a 7B DPO run on one A100-80GB). Use more processes, or offload the optimizer/parameters to "
                         "the CPU.")
