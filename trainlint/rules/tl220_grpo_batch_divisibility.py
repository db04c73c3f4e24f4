"""TL220 grpo-batch-divisibility: GRPO generation batch that does not split into prompt groups.

**What**: a TRL GRPOConfig YAML whose generation batch (`generation_batch_size`, default
`per_device_train_batch_size` x processes x `steps_per_generation` (default: gradient accumulation))
is not divisible by `num_generations` (default 8) or by the global batch, that sets both
`generation_batch_size` and `steps_per_generation`, that asks for fewer than 2 generations, or that
turns on `auto_find_batch_size`.

**Why**: GRPO scores each prompt against the other completions of its group, so every batch must hold
whole groups. `GRPOConfig.__post_init__` (TRL `grpo_config.py`) stops with "generation_batch_size
({g}) must be divisible by num_generations ({k}).", "generation_batch_size ({g}) must be divisible by
the global batch size ({per_device*num_processes}).", "'generation_batch_size' and
'steps_per_generation' can not be both configured at the same time", "GRPO requires at least 2
generations per prompt to calculate the advantages.", or "auto_find_batch_size is not supported by
GRPO, because the generation batch must contain full prompt groups". Checks that depend on the number of processes
run only when it is known (`--num-gpus`, an Accelerate file, a directive).

**Example**: `per_device_train_batch_size: 4`, `num_generations: 6` on 1 GPU (4 is not a multiple of 6).

**Fix**: none automatic: pick `num_generations` that divides the generation batch (or a batch that
is a multiple of it).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules._frameworks import number
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL220", "grpo-batch-divisibility", Severity.ERROR,
            "GRPO generation batch not divisible into prompt groups", flavors=("huggingface",))


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    plan = ctx.plan
    if root is None or root.kind != "mapping" or plan is None or plan.task.value != "grpo":
        return
    auto = root.entry("auto_find_batch_size")
    if auto is not None and auto.value.kind == "scalar" and auto.value.value is True:
        yield RULE.at(doc, auto.key_span,
                      "`auto_find_batch_size: true` in a GRPO run: GRPOConfig stops with \"auto_find_batch_size is not "
                      "supported by GRPO, because the generation batch must contain full prompt groups\". Set the batch "
                      "size yourself.")
    k_node = root.get("num_generations")
    k = number(k_node) if k_node is not None else 8
    gen_node, spg_node = root.get("generation_batch_size"), root.get("steps_per_generation")
    if gen_node is not None and spg_node is not None and gen_node.value is not None and spg_node.value is not None:
        yield RULE.at(doc, root.entry("steps_per_generation").key_span,
                      "`generation_batch_size` and `steps_per_generation` are both set: GRPOConfig stops with "
                      "\"'generation_batch_size' and 'steps_per_generation' can not be both configured at the same "
                      "time\". Keep one.")
        return
    if k is None:
        return
    if k < 2:
        yield RULE.at(doc, k_node,
                      f"`num_generations: {k}`: GRPO compares completions within a prompt's group and stops with \"GRPO "
                      f"requires at least 2 generations per prompt to calculate the advantages\". Use 2 or more.")
        return
    per_device = number(root.get("per_device_train_batch_size")) or 8
    world_known = not plan.num_gpus.is_default
    world = plan.num_gpus.value if world_known else 1  # TRL uses world_size, all processes
    global_batch = per_device * world
    gas = number(root.get("gradient_accumulation_steps")) or 1
    if gen_node is not None and number(gen_node) is not None:
        gen = number(gen_node)
        where = gen_node
        how = f"generation_batch_size ({gen})"
        if world_known and gen % global_batch:
            yield RULE.at(doc, where,
                          f"{how} is not divisible by the global batch {per_device} x {world} = {global_batch}: GRPOConfig "
                          f"stops with \"generation_batch_size ({gen}) must be divisible by the global batch size "
                          f"({global_batch}).\" Use a multiple of {global_batch}.")
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
        yield RULE.at(doc, where,
                      f"{how} is not divisible by num_generations ({k}): GRPOConfig stops with \"generation_batch_size "
                      f"({gen}) must be divisible by num_generations ({k}).\" Make the generation batch a multiple of "
                      f"{k} (or choose num_generations that divides {gen}).")
