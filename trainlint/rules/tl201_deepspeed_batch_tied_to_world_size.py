"""TL201 deepspeed-batch-tied-to-world-size: a hard-coded `train_batch_size` that only works on some GPU counts.

**What**: a number in `train_batch_size` of a DeepSpeed config when trainlint does not know the
world size (no `--num-gpus`, directive, `[tool.trainlint]`, launcher config). The message names the
GPU counts it works with (counting DeepSpeed's `sequence_parallel_size`, which divides the GPU count
in DeepSpeed's batch check) and says that it assumed nothing about the count. The count in DeepSpeed's check is
the data-parallel size (`DeepSpeedConfig` takes `mpu.get_data_parallel_world_size()` when a model-parallel unit is
given): under Megatron-DeepSpeed's tensor and pipeline parallelism that is GPUs / (tensor × pipeline parallel).
Where the launch passes `--tensor-model-parallel-size` / `--pipeline-model-parallel-size` the message names the
data-parallel sizes and the GPU counts they make; with no launch it names the data-parallel sizes as such
("data-parallel size (GPUs / tensor x pipeline parallel)").

**Why**: DeepSpeed checks `train_batch_size == micro × accumulation × world size` at start-up,
deriving a missing micro-batch or accumulation with integer divisions, so the same file stops the
run on another GPU count (OpenRLHF#346 "256 != 2 * 18 * 7"; a derived value of 0 stops it with
"... has to be greater than 0" first). Under HF Trainer the value is compared with
`world_size × per_device_train_batch_size × gradient_accumulation_steps`, where `world_size` counts
every process ("Please correct the following DeepSpeed config values that mismatch TrainingArguments
values: - ds train_batch_size=32 vs hf train_batch_size (calculated)=4", trlx#376, hendrycks/apps#9);
that is an error when no GPU count can match. With `auto_find_batch_size` HF skips that comparison,
but DeepSpeed's own check still applies (a warning).

**Example**: `"train_batch_size": 32` with `"train_micro_batch_size_per_gpu": 4` and
`"gradient_accumulation_steps": 2` works on exactly 4 GPUs.

**Fix**: under HF Trainer or Accelerate, set it to `"auto"` (safe: they compute it from their
arguments; unsafe in a file on its own that holds other `"auto"` values, as the integration is a guess); for raw DeepSpeed or Lightning with the micro-batch and accumulation set, remove it so
DeepSpeed computes it (unsafe: the global batch then grows with the GPU count). Or tell trainlint
the world size (`--num-gpus N`) to have it checked (TL200, TL600).

**Evidence**: `deepspeed/runtime/config.py` `DeepSpeedConfig._set_batch_related_parameters` and
`_batch_assertion` (DeepSpeed 0.17.0 to 0.19.8): "Check batch related parameters. train_batch_size is not
equal to micro_batch_per_gpu * gradient_acc_step * world_size 32 != 4 * 2 * 8" (assert, a stop);
`transformers/integrations/deepspeed.py` `HfTrainerDeepSpeedConfig.trainer_config_process` /
`trainer_config_finalize` (transformers 5.0 to 5.24): "Please correct the following DeepSpeed config values
that mismatch TrainingArguments values: - ds train_batch_size=32 vs hf train_batch_size (calculated)=64"
(ValueError, a stop, before DeepSpeed starts).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule
from trainlint.rules.tl200_deepspeed_batch_mismatch import batch_inputs, ds_replace

RULE = Rule("TL201", "deepspeed-batch-tied-to-world-size", Severity.WARNING,
            "A hard-coded DeepSpeed train_batch_size ties the config to certain GPU counts", flavors=ds.ALL_FLAVORS,
            framework="deepspeed", versions="",
            evidence="deepspeed/runtime/config.py: DeepSpeedConfig._batch_assertion; transformers/integrations/deepspeed.py: HfTrainerDeepSpeedConfig.trainer_config_process",
            raises="Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size 32 != 4 * 2 * 8")


def check(ctx: LintContext):
    if ds.known_world(ctx.plan) is not None:
        return
    for cfg in ds.ds_configs(ctx):
        tb_node = cfg.find("train_batch_size")
        tb = ds.ds_int(tb_node)
        if tb is None or tb <= 0 or cfg.autotuner_writes(("train_batch_size",)):
            continue  # `deepspeed --autotuning`: each experiment's train_batch_size = micro x gas x its GPUs
        if cfg.host in ds.HF_HOSTS:
            yield from _hf(cfg, tb_node, tb)
            continue
        found = batch_inputs(cfg, ctx)
        if found is None:
            continue
        nodes, (_, micro, gas), (micro_from, gas_from) = found
        if (micro is not None and micro <= 0) or (gas is not None and gas <= 0):
            continue
        sp = ds.sequence_parallel(cfg)
        dp_sizes = ds.valid_worlds(tb, micro, gas)
        worlds = [w * sp for w in dp_sizes]
        if not worlds:
            continue  # TL200: no world size works
        parallel = _model_parallel(ctx.launch)
        fixes = []
        if cfg.host == "accelerate":
            fixes.append(fix('set train_batch_size to "auto" (Accelerate computes it)', ds_replace(cfg, tb_node, "auto")))
        elif cfg.host is None and ds.looks_integrated(cfg):
            fixes.append(fix('set train_batch_size to "auto" (the integration this file is written for computes it)',
                             ds_replace(cfg, tb_node, "auto"), safe=False))
        elif micro is not None and gas is not None and tb_node is not None:
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
        if sp > 1:
            how += f" (sequence_parallel_size {sp} divides the GPU count in DeepSpeed's check)"
        if parallel is not None:
            how = how.replace(ds.list_worlds(worlds), _dp_words(dp_sizes, sp, parallel))
            how = how.replace("world size", "data-parallel size").replace("with the count", "with the size")
        if parallel is None:
            counts = ds.list_worlds(worlds)
        elif parallel["tensor"] is not None and parallel["pipeline"] is not None:
            counts = ds.list_worlds([w * parallel["tensor"] * parallel["pipeline"] for w in worlds])
        else:
            counts = "some data-parallel sizes"
        yield RULE.at(cfg.doc, tb_node,
                      f"train_batch_size is hard-coded to {tb}: it works only on {counts}; DeepSpeed stops on others",
                      fixes,
                      detail=f"{how[:1].upper()}{how[1:]}; the GPU count is not known here, and on any other count "
                             f"DeepSpeed stops at start-up with \"{ds.BATCH_ASSERT} ...\" (or \"... has to be greater "
                             "than 0\" where a derived value rounds to 0). Drop it or set micro-batch and accumulation "
                             "instead, or pass --num-gpus to have it checked.")


# Megatron's model-parallel arguments: the data-parallel size that divides the batch is world / (tp x pp)
# (megatron/core/parallel_state.py: data_parallel_size = world_size // (tensor x pipeline x context parallel)).
_PARALLEL_ARGS = (("tensor_model_parallel_size", "tensor"), ("pipeline_model_parallel_size", "pipeline"))


def _model_parallel(launch):
    """{"tensor": n | None, "pipeline": n | None}: the model-parallel sizes the launch passes (Megatron's
    --tensor-model-parallel-size / --pipeline-model-parallel-size; the one it leaves out is 1; None: a shell
    variable the script does not set), both None with no launch; None when a launch passes neither (the
    data-parallel size is then the GPU count)."""
    if launch is None or not launch.found:
        return {"tensor": None, "pipeline": None}  # no launch: the model may be split (Megatron-DeepSpeed)
    found = {}
    for key, name in _PARALLEL_ARGS:
        arg = launch.argument(key)
        if arg is not None:
            found[name] = _positive(arg.value)
    if not found:
        return None
    return {name: found.get(name, 1) for _key, name in _PARALLEL_ARGS}


def _positive(raw) -> int | None:
    try:
        value = int(str(raw).strip())
    except (TypeError, ValueError):
        return None  # a shell variable, or text Megatron would not take
    return value if value >= 1 else None


def _dp_words(dp_sizes: list[int], sp: int, parallel: dict) -> str:
    """The data-parallel sizes a batch works on, with the GPU counts the launch's tensor x pipeline parallel makes
    of them, or the rule that relates the two when the launch leaves a size to a shell variable."""
    sizes = ds.list_worlds(dp_sizes).replace(" GPUs", "").replace(" GPU", "")
    tp, pp = parallel["tensor"], parallel["pipeline"]
    if tp is None or pp is None:
        return f"a data-parallel size (GPUs / tensor x pipeline parallel) of {sizes}"
    gpus = ds.list_worlds([w * sp * tp * pp for w in dp_sizes])
    return (f"a data-parallel size (GPUs / tensor x pipeline parallel) of {sizes}, that is {gpus} with the launch's "
            f"tensor parallel {tp} x pipeline parallel {pp}")


def _hf(cfg: ds.DSConfig, tb_node, tb: int):
    auto_find_node = cfg.host_doc.find(("auto_find_batch_size",)) if cfg.host_doc is not None else None
    auto_find = auto_find_node is not None and auto_find_node.kind == "scalar" and \
        ds.as_bool(auto_find_node.value) is True
    micro = ds.host_value(cfg, "micro")
    gas = ds.host_value(cfg, "gas")
    fixes = [fix('set train_batch_size to "auto" (HF Trainer computes it)', ds_replace(cfg, tb_node, "auto"))]
    if micro is None or gas is None or micro.value <= 0 or gas.value <= 0:
        return
    per_world = micro.value * gas.value
    severity = None
    if auto_find:
        # HF skips its comparison (fill_match(..., must_match=False)); DeepSpeed's own check still applies,
        # and every micro-batch auto_find_batch_size tries changes the product.
        yield RULE.at(cfg.doc, tb_node,
                      f"train_batch_size is hard-coded to {tb} with auto_find_batch_size: DeepSpeed stops when the "
                      "batch does not match it", fixes,
                      detail="With auto_find_batch_size HF does not compare it, but DeepSpeed checks it against micro "
                             "× accumulation × world size at start-up and again after each batch-size retry "
                             f"(\"{ds.BATCH_ASSERT} ...\"); the GPU count is not known here. Set it to \"auto\".")
        return
    if tb % per_world:
        severity = Severity.ERROR
        implied = (f"no world size matches: {tb} is not a multiple of per_device_train_batch_size {micro.value} × "
                   f"gradient_accumulation_steps {gas.value}")
        headline = (f"train_batch_size is hard-coded to {tb}, no multiple of micro-batch {micro.value} × accumulation "
                    f"{gas.value}: HF Trainer stops")
    else:
        world = tb // per_world
        gpus = f"{world} GPU{'s' if world != 1 else ''}"
        implied = (f"it matches HF's world_size × per_device_train_batch_size {micro.value} × "
                   f"gradient_accumulation_steps {gas.value} only on {gpus}")
        headline = f"train_batch_size is hard-coded to {tb}: it works only on {gpus}; HF Trainer stops on others"
    yield RULE.at(cfg.doc, tb_node, headline, fixes, severity=severity,
                  detail=f"{implied[:1].upper()}{implied[1:]} (HF's world_size counts every process); the GPU count "
                         "is not known here, and elsewhere HF Trainer stops with \"Please correct the following "
                         "DeepSpeed config values that mismatch TrainingArguments values: - ds train_batch_size="
                         f"{tb} vs hf train_batch_size (calculated)=...\". Set it to \"auto\".")
