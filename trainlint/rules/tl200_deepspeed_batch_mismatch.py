"""TL200 deepspeed-batch-mismatch: DeepSpeed's batch keys cannot agree with the world size.

**What**: `train_batch_size`, `train_micro_batch_size_per_gpu` and `gradient_accumulation_steps`
that DeepSpeed refuses at start-up for the world size you named (`--num-gpus`, a `# trainlint:
num-gpus=` directive, `[tool.trainlint]`, Accelerate's `num_processes`, Lightning's `devices ×
num_nodes`), or for every world size; and batch values that are 0 or negative. DeepSpeed's world size
is the data-parallel one: with `sequence_parallel_size` in the config it is the GPU count divided by
it (`data_parallel_size` when that is set too). Under Lightning the accumulation is the Trainer's
`accumulate_grad_batches` and the micro-batch its dataloader batch size when the DeepSpeed file does
not set it; under Accelerate a missing `gradient_accumulation_steps` is 1 (its `DeepSpeedPlugin`
inserts it). HF Trainer configs are checked by TL600 instead.

**Why**: DeepSpeed derives the missing value with integer divisions (`gas = train_batch // micro //
world_size`), then checks the three in a fixed order and stops at the first that fails: each must
be > 0 ("Gradient accumulation steps: 0 has to be greater than 0" is what a derived 0 gives), then
`train_batch_size == micro × accumulation × world size` ("Check batch related parameters.
train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size 256 != 2 * 18 *
7", OpenRLHF#346). A written 0 that DeepSpeed divides by stops even earlier with a
`ZeroDivisionError`. Lightning does not rewrite a hard-coded `train_batch_size` (Lightning#19891:
`256 != 16 * 1 * 8`). The message quotes the line DeepSpeed raises first.

**Example**: `{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4,
"gradient_accumulation_steps": 2}` with `--num-gpus 8` (32 != 4 × 2 × 8).

**Fix** (unsafe: it changes the global batch you wrote): set `train_batch_size` to micro ×
accumulation × DeepSpeed's world size; under Accelerate, set it to `"auto"` (safe: Accelerate computes it).

**Evidence**: `deepspeed/runtime/config.py` `DeepSpeedConfig._set_batch_related_parameters`,
`_batch_assertion` and the world size in `DeepSpeedConfig.__init__` (DeepSpeed 0.17.0 to 0.19.8, unchanged);
first message for a derived 0: "Gradient accumulation steps: 0 has to be greater than 0" (assert, a stop);
otherwise "Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu *
gradient_acc_step * world_size 32 != 4 * 2 * 8" (assert, a stop). Accelerate 1.12 to 1.15
`utils/dataclasses.py` `DeepSpeedPlugin.__post_init__` inserts `gradient_accumulation_steps = 1`; Lightning
2.4 to 2.6.6 `strategies/deepspeed.py` `_format_batch_size_and_grad_accum_config`. DeepSpeed 0.19.7 and older
let an enabled `elasticity` block replace the three keys (not checked then).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value, scalar_text
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL200", "deepspeed-batch-mismatch", Severity.ERROR,
            "DeepSpeed batch keys that fail train_batch_size == micro × accumulation × world size",
            flavors=("deepspeed", "accelerate", "lightning"),
            framework="deepspeed", versions="",
            evidence="deepspeed/runtime/config.py: DeepSpeedConfig._set_batch_related_parameters, _batch_assertion",
            raises="Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size 32 != 4 * 2 * 8")


def batch_inputs(cfg: ds.DSConfig, ctx: LintContext):
    """What DeepSpeed will see for (train_batch_size, micro, accumulation), each (value, where-from)
    with value None when unknown; None when an integration fills the batch ("auto")."""
    nodes = {key: cfg.find(key) for key in ds.BATCH_KEYS}
    if any(ds.is_auto(n) for n in nodes.values()) and cfg.host != "lightning":
        return None
    if ds.elastic(cfg):
        return None  # DeepSpeed <= 0.19.7 replaces the batch keys; 0.19.8 refuses the block (TL502)
    if cfg.host == "lightning" and nodes["gradient_accumulation_steps"] is not None:
        return None  # Lightning stops first (TL604)
    tb = ds.ds_int(nodes["train_batch_size"])
    micro = ds.ds_int(nodes["train_micro_batch_size_per_gpu"])
    gas = ds.ds_int(nodes["gradient_accumulation_steps"])
    micro_from = "train_micro_batch_size_per_gpu"
    gas_from = "gradient_accumulation_steps"
    if cfg.host == "accelerate" and nodes["gradient_accumulation_steps"] is None:
        gas, gas_from = 1, "inserted as 1 by Accelerate's DeepSpeedPlugin"
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
        if cfg.host in ds.HF_HOSTS or cfg.autotuner_writes(("train_batch_size",)):
            continue  # HF compares them (TL600); `deepspeed --autotuning` writes all three per experiment
        found = batch_inputs(cfg, ctx)
        if found is None:
            continue
        nodes, (tb, micro, gas), (micro_from, gas_from) = found
        world = ds.known_world(ctx.plan)
        ds_world, world_how = ds.ds_world(cfg, world) if world is not None else (None, "")
        bad = [(key, value) for key, value in zip(ds.BATCH_KEYS, (tb, micro, gas))
               if nodes[key] is not None and value is not None and value <= 0]
        if bad:
            stop = (ds.deepspeed_batch(tb, micro, gas, ds_world)[3] if ds_world is not None
                    else ds.first_stop_alone(tb, micro, gas))
            for key, value in bad:
                yield RULE.at(cfg.doc, nodes[key], f"`{key}` is {value}: DeepSpeed stops at start-up",
                              detail=f"DeepSpeed stops at start-up with \"{stop}\" (runtime/config.py). Use a positive "
                                     "number.")
            continue
        if tb is None and (micro is None or gas is None):
            continue
        tb_node = nodes["train_batch_size"]
        if ds_world is not None:
            resolved = ds.deepspeed_batch(tb, micro, gas, ds_world)
            if resolved is None or resolved[3] is None:
                continue
            r_tb, r_micro, r_gas, stop = resolved
            target = tb_node or nodes["train_micro_batch_size_per_gpu"] or nodes["gradient_accumulation_steps"]
            if target is None:
                continue
            derived = []
            if micro is None:
                derived.append(f"the micro-batch as {tb} // {ds_world} // {r_gas} = {r_micro}")
            elif gas is None:
                derived.append(f"accumulation as {tb} // {micro} // {ds_world} = {r_gas}")
            how = f" (DeepSpeed derives {derived[0]})" if derived else ""
            origin = ctx.plan.num_gpus.origin.describe() if ctx.plan is not None else "the settings"
            world_text = (f"{ds_world} (DeepSpeed's world size: {world_how}, the GPU count from {origin})"
                          if world_how else f"{world} (world size, {origin})")
            fixes = []
            product = micro * gas * ds_world if micro is not None and gas is not None else None
            if tb_node is not None and product is not None and float(product).is_integer() and product > 0:
                if cfg.host == "accelerate":
                    fixes.append(fix('set train_batch_size to "auto" (Accelerate computes it)',
                                     ds_replace(cfg, tb_node, "auto")))
                fixes.append(fix(f"set train_batch_size to {int(product)}", ds_replace(cfg, tb_node, int(product)),
                                 safe=False))
            yield RULE.at(cfg.doc, target,
                          f"train_batch_size {r_tb} is not micro-batch {r_micro} × accumulation {r_gas} × world size "
                          f"{ds_world}: DeepSpeed stops at start-up", fixes,
                          detail=f"train_batch_size {r_tb} vs {r_micro} (micro-batch, {micro_from}) × {r_gas} "
                                 f"(accumulation, {gas_from}) × {world_text}{how}; DeepSpeed stops with \"{stop}\". "
                                 "Make the three agree, or drop train_batch_size and let DeepSpeed compute it.")
        elif tb is not None and tb_node is not None:
            worlds = ds.valid_worlds(tb, micro, gas)
            if worlds:
                continue  # TL201 warns that it is tied to these world sizes
            parts = [f"train_batch_size {tb}"]
            short = [f"train_batch_size {tb}"]
            if micro is not None:
                parts.append(f"micro-batch {micro} ({micro_from})")
                short.append(f"micro-batch {micro}")
            if gas is not None:
                parts.append(f"accumulation {gas} ({gas_from})")
                short.append(f"accumulation {gas}")
            yield RULE.at(cfg.doc, tb_node,
                          f"{', '.join(short)}: no world size fits them, so every launch stops at start-up",
                          detail=f"{', '.join(parts)}: no world size satisfies train_batch_size == micro × "
                                 "accumulation × world size with DeepSpeed's integer divisions, so every launch stops "
                                 f"at start-up (\"{ds.BATCH_ASSERT} ...\", or \"... has to be greater than 0\" where a "
                                 "derived value rounds to 0). Make train_batch_size a multiple of micro-batch × "
                                 "accumulation, or drop it.")


def ds_replace(cfg: ds.DSConfig, node, value):
    return replace_value(cfg.doc, node, text=scalar_text(cfg.doc, value))
