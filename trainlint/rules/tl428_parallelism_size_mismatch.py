"""TL428 parallelism-size-mismatch: Accelerate `parallelism_config` sizes whose product is not `num_processes`.

**What**: an Accelerate config whose `parallelism_config_dp_replicate_size` x `dp_shard_size` x
`tp_size` x `cp_size` x `sp_size` (each default 1) differs from `num_processes`.

**Why**: `ParallelismConfig` checks the device mesh against the launch (`parallelism_config.py`):
"ParallelismConfig total_size ({t}) does not match num_processes ({n}). Please adjust
dp_replicate_size/ dp_shard_size/tp_size/cp_size/sp_size." (`_validate_accelerator`). The check is
skipped for DeepSpeed sequence parallelism (`sp_backend: deepspeed` with `sp_size > 1`), and when
every size is 1 (Accelerate then sets `dp_replicate_size` to the number of processes); so is this rule.

**Evidence**: `accelerate/parallelism_config.py: ParallelismConfig._validate_accelerator` (stops);
verified against accelerate 1.10 - 1.15 (sp_size from 1.12). First message: "ParallelismConfig
total_size ({t}) does not match num_processes ({n}). Please adjust dp_replicate_size/
dp_shard_size/tp_size/cp_size/sp_size.".

**Example**: `num_processes: 8` with `dp_shard_size: 2` and `tp_size: 2` (product 4).

**Fix**: none automatic: decide which size is wrong.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules._frameworks import number
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL428", "parallelism-size-mismatch", Severity.ERROR,
            "parallelism_config sizes do not multiply to num_processes", flavors=("accelerate",),
            framework="accelerate", evidence="accelerate/parallelism_config.py: ParallelismConfig._validate_accelerator",
            raises="ParallelismConfig total_size ({t}) does not match num_processes ({n}). Please adjust dp_replicate_size/ dp_shard_size/tp_size/cp_size/sp_size.")

SIZES = ("dp_replicate_size", "dp_shard_size", "tp_size", "cp_size", "sp_size")


def check(ctx: LintContext):
    doc = ctx.document
    section = doc.find(("parallelism_config",))
    procs_node = doc.find(("num_processes",))
    procs = number(procs_node)
    if section is None or section.kind != "mapping" or procs is None or procs < 1:
        return
    sizes = {}
    for name in SIZES:
        node = section.get(f"parallelism_config_{name}")
        if node is None:
            node = section.get(name)
        value = number(node)
        if node is not None and value is None:
            return  # not a number: another rule's business
        sizes[name] = value if value is not None else 1
    backend = section.get("parallelism_config_sp_backend") or section.get("sp_backend")
    if backend is not None and str(backend.value).lower() == "deepspeed" and sizes["sp_size"] > 1:
        return
    total = 1
    for value in sizes.values():
        total *= value
    if total == procs or total == 1:
        return
    shown = " x ".join(f"{k} {v}" for k, v in sizes.items() if v != 1) or "all sizes 1"
    yield RULE.at(doc, procs_node,
                  f"`parallelism_config` multiplies to {total} ({shown}) but `num_processes` is {procs}: Accelerate "
                  "stops",
                  detail=f"Accelerate stops with \"ParallelismConfig total_size ({total}) does not match num_processes "
                         f"({procs})\". Make the sizes multiply to the number of processes.")
