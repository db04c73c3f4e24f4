"""TL201 deepspeed-batch-tied-to-world-size: a hard-coded `train_batch_size` that only works on some GPU counts.

**What**: a number in `train_batch_size` of a DeepSpeed config when trainlint does not know the
world size (no `--num-gpus`, directive, `[tool.trainlint]`, launcher config). The message names the
world sizes it works with.

**Why**: DeepSpeed checks `train_batch_size == micro × accumulation × world size` at start-up
(`deepspeed/runtime/config.py::_batch_assertion`: "Check batch related parameters.
train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size ..."),
deriving a missing micro-batch or accumulation with integer divisions, so the same file stops the
run on another GPU count (OpenRLHF#346 "256 != 2 * 18 * 7"). Under HF Trainer the value is also
compared with `world_size × per_device_train_batch_size × gradient_accumulation_steps`
("Please correct the following DeepSpeed config values that mismatch TrainingArguments values:
- ds train_batch_size=32 vs hf train_batch_size (calculated)=4", trlx#376, hendrycks/apps#9).

**Example**: `"train_batch_size": 32` with `"train_micro_batch_size_per_gpu": 4` and
`"gradient_accumulation_steps": 2` works on exactly 4 GPUs.

**Fix**: under HF Trainer or Accelerate, set it to `"auto"` (safe: they compute it from their
arguments; unsafe in a file on its own that holds other `"auto"` values, as the integration is a guess); for raw DeepSpeed or Lightning with the micro-batch and accumulation set, remove it so
DeepSpeed computes it (unsafe: the global batch then grows with the GPU count). Or tell trainlint
the world size (`--num-gpus N`) to have it checked (TL200, TL600).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule
from trainlint.rules.tl200_deepspeed_batch_mismatch import batch_inputs, ds_replace

RULE = Rule("TL201", "deepspeed-batch-tied-to-world-size", Severity.WARNING,
            "A hard-coded DeepSpeed train_batch_size ties the config to certain GPU counts", flavors=ds.ALL_FLAVORS)


def check(ctx: LintContext):
    if ds.known_world(ctx.plan) is not None:
        return
    for cfg in ds.ds_configs(ctx):
        tb_node = cfg.find("train_batch_size")
        tb = ds.ds_int(tb_node)
        if tb is None or tb <= 0:
            continue
        if cfg.host in ds.HF_HOSTS:
            yield from _hf(cfg, tb_node, tb)
            continue
        found = batch_inputs(cfg, ctx)
        if found is None:
            continue
        nodes, (_, micro, gas), (micro_from, gas_from) = found
        if (micro is not None and micro <= 0) or (gas is not None and gas <= 0):
            continue
        worlds = ds.valid_worlds(tb, micro, gas)
        if not worlds:
            continue  # TL200: no world size works
        fixes = []
        if cfg.host == "accelerate":
            fixes.append(fix('set train_batch_size to "auto" (Accelerate computes it)', ds_replace(cfg, tb_node, "auto")))
        elif cfg.host is None and ds.looks_integrated(cfg):
            fixes.append(fix('set train_batch_size to "auto" (the integration this file is written for computes it)',
                             ds_replace(cfg, tb_node, "auto"), safe=False))
        elif micro is not None and gas is not None:
            where = ds.entry_of(cfg.doc, tb_node)
            if where is not None:
                fixes.append(fix("remove train_batch_size (DeepSpeed computes micro × accumulation × world size)",
                                 delete_entry(cfg.doc, where[0], where[1]), safe=False))
        if micro is not None and gas is not None:
            how = (f"with micro-batch {micro} ({micro_from}) and accumulation {gas} ({gas_from}) it works only on "
                   f"{ds.list_worlds(worlds)}")
        elif micro is not None:
            how = (f"with micro-batch {micro} ({micro_from}) DeepSpeed derives accumulation = {tb} // ({micro} × world "
                   f"size), so it works only on {ds.list_worlds(worlds)} and the accumulation changes with the count")
        elif gas is not None:
            how = (f"with accumulation {gas} ({gas_from}) DeepSpeed derives the micro-batch = {tb} // world size // {gas}, "
                   f"so it works only on {ds.list_worlds(worlds)} and the per-GPU batch changes with the count")
        else:
            how = (f"DeepSpeed derives the micro-batch = {tb} // world size (accumulation 1), so it works only on "
                   f"{ds.list_worlds(worlds)} and the per-GPU batch changes with the count")
        yield RULE.at(cfg.doc, tb_node,
                      f"train_batch_size is hard-coded to {tb}: {how}; on any other world size DeepSpeed stops with "
                      f"\"{ds.BATCH_ASSERT}\". Drop it or set micro-batch and accumulation instead, or pass --num-gpus "
                      "to have it checked.", fixes)


def _hf(cfg: ds.DSConfig, tb_node, tb: int):
    micro = ds.host_value(cfg, "micro")
    gas = ds.host_value(cfg, "gas")
    fixes = [fix('set train_batch_size to "auto" (HF Trainer computes it)', ds_replace(cfg, tb_node, "auto"))]
    if micro is None or gas is None or micro.value <= 0 or gas.value <= 0:
        return
    per_world = micro.value * gas.value
    severity = None
    if tb % per_world:
        severity = Severity.ERROR
        implied = (f"no world size matches: {tb} is not a multiple of per_device_train_batch_size {micro.value} × "
                   f"gradient_accumulation_steps {gas.value}")
    else:
        world = tb // per_world
        implied = (f"it matches HF's world_size × per_device_train_batch_size {micro.value} × "
                   f"gradient_accumulation_steps {gas.value} only on {world} GPU{'s' if world != 1 else ''}")
    yield RULE.at(cfg.doc, tb_node,
                  f"train_batch_size is hard-coded to {tb}: {implied}; elsewhere HF Trainer stops with \"Please correct "
                  f"the following DeepSpeed config values that mismatch TrainingArguments values: - ds train_batch_size="
                  f"{tb} vs hf train_batch_size (calculated)=...\". Set it to \"auto\".", fixes, severity=severity)
