"""TL220 grpo-batch-divisibility: GRPO generation batch that does not split into prompt groups.

**What**: a TRL GRPOConfig YAML whose generation batch (`generation_batch_size`, default
`per_device_train_batch_size` x processes x `steps_per_generation` (default: gradient accumulation))
is not divisible by `num_generations` (default 8) or by the global batch, that sets both
`generation_batch_size` and `steps_per_generation`, that asks for fewer than 2 generations, or that
turns on `auto_find_batch_size`.

**Why**: GRPO scores each prompt against the other completions of its group, so every batch must hold
whole groups. `GRPOConfig.__post_init__` (TRL `trainer/grpo_config.py`) stops with
"'generation_batch_size' and 'steps_per_generation' can not be both configured at the same time",
"generation_batch_size ({g}) must be divisible by the global batch size ({per_device*num_processes}).",
"generation_batch_size ({g}) must be divisible by num_generations ({k}).", or "GRPO requires at least 2
generations per prompt to calculate the advantages. You provided {k}, which is less than the minimum
required." (TRL 0.20 - 1.16; `generation_batch_size`/`steps_per_generation` exist from 0.18; in 0.18 and
0.19 the num_generations check reads "The effective train batch size (n x p x s) must be evenly
divisible by the number of generations per prompt (k). ...", and the global-batch check only enforces a
multiple of the per-device batch). From TRL 1.9 it also refuses `auto_find_batch_size`:
"auto_find_batch_size is not supported by GRPO, because the generation batch must contain full prompt
groups of num_generations completions, ..."; before 1.9 that is accepted (and the halved batch may
split groups), so that finding names the release. `num_generations` defaults to 8 in every release
read. Checks that depend on the number of processes run only when it is known (`--num-gpus`, an
Accelerate file, a directive).

**Evidence**: `trl/trainer/grpo_config.py: GRPOConfig.__post_init__` (stops (the auto_find_batch_size
check: TRL >= 1.9)); verified against TRL 0.18 - 1.16. First message: "generation_batch_size ({g}) must
be divisible by num_generations ({k}).".

**Example**: `per_device_train_batch_size: 4`, `num_generations: 6` on 1 GPU (4 is not a multiple of 6).

**Fix**: none automatic: pick `num_generations` that divides the generation batch (or a batch that
is a multiple of it).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules._frameworks import Claim, number, version_status
from trainlint.document.tree import Node
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL220", "grpo-batch-divisibility", Severity.ERROR,
            "GRPO generation batch not divisible into prompt groups", flavors=("huggingface",),
            framework="trl", evidence="trl/trainer/grpo_config.py: GRPOConfig.__post_init__",
            raises="generation_batch_size ({g}) must be divisible by num_generations ({k}).")

CLAIMS = (
    Claim("trl", "trainer/grpo_config.py GRPOConfig.__post_init__",
          "generation_batch_size ({g}) must be divisible by num_generations ({k}).", "stops", since="0.20.0"),
    Claim("trl", "trainer/grpo_config.py GRPOConfig.__post_init__",
          "The effective train batch size ({n} x {p} x {s}) must be evenly divisible by the number of generations per "
          "prompt ({k}).", "stops", since="0.18.0", until="0.20.0"),
    Claim("trl", "trainer/grpo_config.py GRPOConfig.__post_init__",
          "auto_find_batch_size is not supported by GRPO, because the generation batch must contain full prompt groups "
          "of num_generations completions, ...", "stops", since="1.9.0"),
)


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    plan = ctx.plan
    if root is None or root.kind != "mapping" or plan is None or plan.task.value != "grpo":
        return
    auto = root.entry("auto_find_batch_size")
    if auto is not None and auto.value.kind == "scalar" and auto.value.value is True:
        refused, assumptions = version_status(ctx, "trl", ">=1.9")
        if refused is not False:
            yield RULE.at(doc, auto.key_span,
                          "`auto_find_batch_size: true` in a GRPO run: GRPOConfig (TRL >= 1.9) stops",
                          assumptions=assumptions,
                          detail="GRPOConfig (TRL >= 1.9) stops with \"auto_find_batch_size is not supported by GRPO, "
                                 "because the generation batch must contain full prompt groups\" (older TRL accepts it, "
                                 "and a halved batch can split prompt groups). Set the batch size yourself.")
        else:
            yield RULE.at(doc, auto.key_span,
                          "`auto_find_batch_size: true` in a GRPO run: a halved batch can split prompt groups",
                          severity=Severity.WARNING,
                          detail="On an out-of-memory error the batch is halved, and the halved generation batch can "
                                 "split prompt groups (TRL >= 1.9 refuses the setting for that reason). Set the batch "
                                 "size yourself.")
    k_node = root.get("num_generations")
    k = number(k_node) if k_node is not None else 8
    gen_node, spg_node = root.get("generation_batch_size"), root.get("steps_per_generation")
    spg_entry = root.entry("steps_per_generation")
    if gen_node is not None and spg_node is not None and gen_node.value is not None and spg_node.value is not None \
            and spg_entry is not None:
        yield RULE.at(doc, spg_entry.key_span,
                      "`generation_batch_size` and `steps_per_generation` are both set: GRPOConfig stops",
                      detail="GRPOConfig stops with \"'generation_batch_size' and 'steps_per_generation' can not be "
                             "both configured at the same time\". Keep one.")
        return
    if k is None:
        return
    if k < 2:
        yield RULE.at(doc, k_node, f"`num_generations: {k}`: GRPO needs at least 2 completions per prompt and stops",
                      detail="GRPO compares completions within a prompt's group and stops with \"GRPO requires at "
                             "least 2 generations per prompt to calculate the advantages\". Use 2 or more.")
        return
    per_device = number(root.get("per_device_train_batch_size")) or 8
    world_known = not plan.num_gpus.is_default
    world = plan.num_gpus.value if world_known else 1  # TRL uses world_size, all processes
    global_batch = per_device * world
    gas = number(root.get("gradient_accumulation_steps")) or 1
    given = number(gen_node) if gen_node is not None else None
    where: Node | None
    if given is not None:
        gen = given
        where = gen_node
        how = f"generation_batch_size ({gen})"
        if world_known and gen % global_batch:
            yield RULE.at(doc, where,
                          f"{how} is not divisible by the global batch {per_device} x {world} = {global_batch}: "
                          "GRPOConfig stops",
                          detail=f"GRPOConfig stops with \"generation_batch_size ({gen}) must be divisible by the "
                                 f"global batch size ({global_batch}).\" Use a multiple of {global_batch}.")
            return
    else:
        if not world_known:
            return
        steps = number(spg_node) if spg_node is not None else gas
        gen = global_batch * (steps or 1)
        where = k_node if k_node is not None else root.get("per_device_train_batch_size")
        how = (f"the generation batch {per_device} x {world} GPUs x {steps} "
               f"{'steps_per_generation' if spg_node is not None else 'accumulation steps'} = {gen}")
    if gen % k:
        yield RULE.at(doc, where, f"{how} is not divisible by num_generations ({k}): GRPOConfig stops",
                      detail=f"GRPOConfig stops with \"generation_batch_size ({gen}) must be divisible by "
                             f"num_generations ({k}).\" Make the generation batch a multiple of {k} (or choose "
                             f"num_generations that divides {gen}).")
