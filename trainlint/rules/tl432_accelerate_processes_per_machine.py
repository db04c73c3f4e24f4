"""TL432 accelerate-processes-per-machine: `num_processes` that `num_machines` does not divide.

**What**: an Accelerate config with `num_machines` above 1 whose `num_processes` is not a multiple of it
(`num_processes: 12`, `num_machines: 8`), or smaller than it (`num_processes: 1`, `num_machines: 2`).

**Why**: `num_processes` is the total over all machines. `accelerate launch` starts `num_processes // num_machines`
processes on each machine (`accelerate/utils/launch.py: prepare_multi_gpu_env`, `args.nproc_per_node =
str(num_processes // num_machines)`; the DeepSpeed launcher's `--num_gpus` and the MPI launcher the same), so the
remainder is dropped without a word: 12 over 8 machines is one process on each, 8 in all, not 12; the batch
arithmetic, learning-rate scaling and data sharding of the script then follow the smaller world size. Fewer
processes than machines gives none per machine, and the launch does not start a run.

The values the launch sets itself (`accelerate launch --num_processes $N --num_machines $M`) replace the file's
and are not judged (`Launch.overrides`); where no `accelerate launch` that runs the file is known, the finding
assumes none gives those options (a warning that says so, as for TL520).

**Evidence**: `accelerate/utils/launch.py: prepare_multi_gpu_env, prepare_deepspeed_cmd_env` (silent integer
division); accelerate 0.26 - 1.14 and main.

**Example**: `num_machines: 2`, `num_processes: 9` → `num_processes: 8` (or 10).

**Fix**: none automatic: the world size meant is a human decision.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules._frameworks import number
from trainlint.rules._schema_checks import launch_may_set, launch_sets
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL432", "accelerate-processes-per-machine", Severity.ERROR,
            "num_processes is not a multiple of num_machines: accelerate drops the remainder",
            flavors=("accelerate",), framework="accelerate",
            evidence="accelerate/utils/launch.py: prepare_multi_gpu_env (num_processes // num_machines)")


def check(ctx: LintContext):
    doc = ctx.document
    procs_node = doc.find(("num_processes",))
    machines_node = doc.find(("num_machines",))
    procs, machines = number(procs_node), number(machines_node)
    if procs is None or machines is None or machines <= 1 or procs < 1 or procs % machines == 0:
        return
    if launch_sets(ctx, ("num_processes",)) or launch_sets(ctx, ("num_machines",)):
        return  # the launch gives its own value: the file's is not read
    per = procs // machines
    if per == 0:
        message = (f"`num_processes: {procs}` is fewer than `num_machines: {machines}`: accelerate starts no process "
                   "on any machine")
        detail = (f"num_processes is the total over all machines; accelerate launch starts num_processes // "
                  f"num_machines = 0 per machine (prepare_multi_gpu_env), so no training process starts. Write the "
                  f"total, {machines} x the GPUs of one machine.")
    else:
        message = (f"`num_processes: {procs}` over `num_machines: {machines}`: accelerate starts {per} per machine, "
                   f"{per * machines} in all, not {procs}")
        detail = (f"num_processes is the total over all machines; accelerate launch starts num_processes // "
                  f"num_machines = {per} per machine (prepare_multi_gpu_env) and drops the remainder without a "
                  f"word, so the run has {per * machines} processes. Write a multiple of {machines}.")
    assumptions = (*launch_may_set(ctx, ("num_processes",)), *launch_may_set(ctx, ("num_machines",)))
    yield RULE.at(doc, procs_node, message, assumptions=tuple(dict.fromkeys(assumptions)), detail=detail)
