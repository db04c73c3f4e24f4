"""TL200 deepspeed-batch-mismatch: DeepSpeed's batch keys cannot agree with the world size.

**What**: `train_batch_size`, `train_micro_batch_size_per_gpu` and `gradient_accumulation_steps`
that, after DeepSpeed fills in the missing one, break `train_batch_size == micro × accumulation ×
world size` for the world size you named (`--num-gpus`, a `# trainlint: num-gpus=` directive,
`[tool.trainlint]`, Accelerate's `num_processes`, Lightning's `devices × num_nodes`), or for every
world size; and batch values that are 0 or negative. Under Lightning the accumulation is the
Trainer's `accumulate_grad_batches` and the micro-batch its dataloader batch size when the
DeepSpeed file does not set it.

**Why**: `deepspeed/runtime/config.py::_set_batch_related_parameters` derives the missing value with
integer divisions (`gas = train_batch // micro // world_size`), then `_batch_assertion` stops the
run: "Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu *
gradient_acc_step * world_size 256 != 2 * 18 * 7" (OpenRLHF#346), "Train batch size: 0 has to be
greater than 0". Lightning does not rewrite a hard-coded `train_batch_size` (Lightning#19891:
`256 != 16 * 1 * 8`). HF Trainer configs are checked by TL600 instead.

**Example**: `{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4,
"gradient_accumulation_steps": 2}` with `--num-gpus 8` (32 != 4 × 2 × 8).

**Fix** (unsafe: it changes the global batch you wrote): set `train_batch_size` to micro ×
accumulation × world size; under Accelerate, set it to `"auto"` (safe: Accelerate computes it).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL200", "deepspeed-batch-mismatch", Severity.ERROR,
            "DeepSpeed batch keys that fail train_batch_size == micro × accumulation × world size",
            flavors=("deepspeed", "accelerate", "lightning"))


def batch_inputs(cfg: ds.DSConfig, ctx: LintContext):
    """What DeepSpeed will see for (train_batch_size, micro, accumulation), each (value, where-from)
    with value None when unknown; None when an integration fills the batch ("auto")."""
    nodes = {key: cfg.find(key) for key in ds.BATCH_KEYS}
    if any(ds.is_auto(n) for n in nodes.values()) and cfg.host != "lightning":
        return None
    tb = ds.ds_int(nodes["train_batch_size"])
    micro = ds.ds_int(nodes["train_micro_batch_size_per_gpu"])
    gas = ds.ds_int(nodes["gradient_accumulation_steps"])
    micro_from = "train_micro_batch_size_per_gpu"
    gas_from = "gradient_accumulation_steps"
    if cfg.host == "lightning" and ctx.plan is not None:
        # Lightning sets accumulation from the Trainer and the micro-batch from the dataloader when absent.
        gas, gas_from = ctx.plan.grad_accum.value, "accumulate_grad_batches"
        if nodes["train_micro_batch_size_per_gpu"] is None:
            if ctx.plan.micro_batch.origin.kind == "default":
                micro = None
            else:
                micro, micro_from = ctx.plan.micro_batch.value, "the dataloader batch_size"
    return nodes, (tb, micro, gas), (micro_from, gas_from)


def check(ctx: LintContext):
    for cfg in ds.ds_configs(ctx):
        if cfg.host in ds.HF_HOSTS:
            continue
        found = batch_inputs(cfg, ctx)
        if found is None:
            continue
        nodes, (tb, micro, gas), (micro_from, gas_from) = found
        bad_zero = False
        for key, value in zip(ds.BATCH_KEYS, (tb, micro, gas)):
            node = nodes[key]
            if node is not None and value is not None and value <= 0:
                bad_zero = True
                yield RULE.at(cfg.doc, node, f"`{key}` is {value}; DeepSpeed stops with \"... has to be greater than 0\" "
                                             "(runtime/config.py _batch_assertion). Use a positive number.")
        if bad_zero or tb is None and (micro is None or gas is None):
            continue
        world = ds.known_world(ctx.plan)
        tb_node = nodes["train_batch_size"]
        if world is not None:
            resolved = ds.resolve_batch(tb, micro, gas, world)
            if resolved is None or resolved[3]:
                continue
            r_tb, r_micro, r_gas, _ = resolved
            target = tb_node or nodes["train_micro_batch_size_per_gpu"] or nodes["gradient_accumulation_steps"]
            if target is None:
                continue
            derived = []
            if micro is None:
                derived.append(f"the micro-batch as {tb} // {world} // {r_gas} = {r_micro}")
            elif gas is None:
                derived.append(f"accumulation as {tb} // {micro} // {world} = {r_gas}")
            how = f" (DeepSpeed derives {derived[0]})" if derived else ""
            fixes = []
            if tb_node is not None and micro is not None and gas is not None:
                product = micro * gas * world
                if cfg.host == "accelerate":
                    fixes.append(fix('set train_batch_size to "auto" (Accelerate computes it)',
                                     ds_replace(cfg, tb_node, "auto")))
                fixes.append(fix(f"set train_batch_size to {product}", ds_replace(cfg, tb_node, product), safe=False))
            yield RULE.at(cfg.doc, target,
                          f"train_batch_size {r_tb} != {r_micro} (micro-batch, {micro_from}) × {r_gas} "
                          f"(accumulation, {gas_from}) × {world} (world size, {ctx.plan.num_gpus.origin.describe()}){how}; "
                          f"DeepSpeed stops with \"{ds.BATCH_ASSERT} {r_tb} != {r_micro} * {r_gas} * {world}\". "
                          "Make the three agree, or drop train_batch_size and let DeepSpeed compute it.", fixes)
        elif tb is not None and tb_node is not None:
            worlds = ds.valid_worlds(tb, micro, gas)
            if worlds:
                continue  # TL201 warns that it is tied to these world sizes
            parts = [f"train_batch_size {tb}"]
            if micro is not None:
                parts.append(f"micro-batch {micro} ({micro_from})")
            if gas is not None:
                parts.append(f"accumulation {gas} ({gas_from})")
            yield RULE.at(cfg.doc, tb_node,
                          f"{', '.join(parts)}: no world size satisfies train_batch_size == micro × accumulation × "
                          f"world size with DeepSpeed's integer divisions, so every launch stops with \"{ds.BATCH_ASSERT}\". "
                          "Make train_batch_size a multiple of micro-batch × accumulation, or drop it.")


def ds_replace(cfg: ds.DSConfig, node, value):
    from trainlint.fixes.edits import scalar_text

    return replace_value(cfg.doc, node, text=scalar_text(cfg.doc, value))
