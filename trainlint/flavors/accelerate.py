"""Accelerate config YAML (`accelerate launch --config_file`): how many processes, which mixed precision,
and the DeepSpeed or FSDP plugin settings (accelerate `commands/config/config_args.py` and
`commands/launch.py`).

An Accelerate file names no model or batch; it sizes the run (world size, precision, sharding) that an
HF config is launched with.
"""

from __future__ import annotations

from trainlint.document.tree import Document
from trainlint.flavors import deepspeed as ds
from trainlint.flavors.base import ConfigView, as_bool, top_keys
from trainlint.plan import AMP_BF16, AMP_FP16, FP32, MASTER_BF16, MASTER_FP16, Precision, ReadResult, Setting, TrainingPlan, inferred

NAME = "accelerate"

COMPANIONS = {"compute_environment", "num_processes", "machine_rank", "mixed_precision", "deepspeed_config",
              "fsdp_config", "main_training_function", "num_machines", "use_cpu", "downcast_bf16"}
FSDP_MODES = {"FULL_SHARD": "full_shard", "SHARD_GRAD_OP": "shard_grad_op", "NO_SHARD": "no_shard",
              "HYBRID_SHARD": "hybrid_shard", "HYBRID_SHARD_ZERO2": "hybrid_shard_zero2",
              "1": "full_shard", "2": "shard_grad_op", "3": "no_shard", "4": "hybrid_shard", "5": "hybrid_shard_zero2"}


def detect(doc: Document) -> float:
    keys = top_keys(doc)
    if "distributed_type" in keys and keys & COMPANIONS:
        return 0.95
    return 0.5 if len(keys & COMPANIONS) >= 3 else 0.0


def read(doc: Document) -> ReadResult:
    view = ConfigView(doc)
    changes: dict = {}
    dist_setting = view.str("distributed_type")
    dist = dist_setting.value.upper() if dist_setting else "NO"
    procs = view.int("num_processes")
    if procs is not None and procs.value >= 1:
        changes["num_gpus"] = procs
    machines = view.int("num_machines")
    if machines is not None and machines.value >= 1:
        changes["num_nodes"] = machines
    mp = view.node("mixed_precision")
    if mp is not None and mp.kind == "scalar":
        value = str(mp.value).lower() if mp.value is not False else "no"
        table = {"bf16": AMP_BF16, "fp16": AMP_FP16, "no": FP32, "false": FP32,
                 "fp8": Precision("fp32", autocast="bf16", fp8=True)}
        if value in table:
            changes["precision"] = Setting(table[value], view.origin(("mixed_precision",)))
    # parallelism_config (accelerate ParallelismConfig): context parallelism (cp, torch ring attention) and
    # DeepSpeed Ulysses sequence parallelism (sp) both split every sequence across that many GPUs.
    for key in ("parallelism_config_cp_size", "parallelism_config_sp_size"):
        size = view.int("parallelism_config", key)
        if size is not None and size.value > 1:
            changes["context_parallel"] = size
    linked: list = []
    if dist == "DEEPSPEED":
        stage = view.int("deepspeed_config", "zero_stage")
        if stage is not None and not 0 <= stage.value <= 3:
            stage = None
        changes["zero_stage"] = stage or inferred(2, "Accelerate's DeepSpeed plugin defaults to ZeRO stage 2")
        for field, key in (("offload_optimizer", "offload_optimizer_device"), ("offload_params", "offload_param_device")):
            device = view.str("deepspeed_config", key)
            if device is not None:
                changes[field] = Setting(device.value.lower() if device.value.lower() in ("cpu", "nvme") else None,
                                         device.origin)
        gas = view.int("deepspeed_config", "gradient_accumulation_steps")
        if gas is not None:
            changes["grad_accum"] = gas
        precision = changes.get("precision")
        if precision is not None and precision.value.autocast:
            changes["precision"] = Setting(MASTER_BF16 if precision.value.autocast == "bf16" else MASTER_FP16,
                                           precision.origin)
        gather = view.bool("deepspeed_config", "zero3_save_16bit_model")
        if gather is not None:
            changes["zero3_save_16bit"] = gather
        file_node = view.node("deepspeed_config", "deepspeed_config_file")
        if file_node is not None:
            found, note = ds.open_link(doc, file_node)
            if found is not None:
                linked.append(found)
            if note:
                changes["notes"] = (note,)
    elif dist == "FSDP":
        strategy = view.node("fsdp_config", "fsdp_sharding_strategy")
        reshard = view.node("fsdp_config", "fsdp_reshard_after_forward")
        origin = view.origin(("fsdp_config",))
        mode = "full_shard"
        if strategy is not None and strategy.kind == "scalar":
            mode = FSDP_MODES.get(str(strategy.value).upper(), "full_shard")
            origin = view.origin(("fsdp_config", "fsdp_sharding_strategy"))
        elif reshard is not None and reshard.kind == "scalar":
            flag = as_bool(reshard.value)
            if flag is not None:
                mode = "full_shard" if flag else "shard_grad_op"
            elif isinstance(reshard.value, str):
                mode = FSDP_MODES.get(reshard.value.upper(), "full_shard")
            origin = view.origin(("fsdp_config", "fsdp_reshard_after_forward"))
        changes["fsdp"] = Setting(mode, origin)
        offload = view.bool("fsdp_config", "fsdp_offload_params")
        if offload is not None and offload.value:
            changes["offload_params"] = Setting("cpu", offload.origin)
            changes["offload_optimizer"] = Setting("cpu", offload.origin)
        ckpt = view.bool("fsdp_config", "fsdp_activation_checkpointing")
        if ckpt is not None:
            changes["grad_ckpt"] = Setting("full" if ckpt.value else "none", ckpt.origin)
        # How checkpoints are saved (memory/phases.py): accelerate's FullyShardedDataParallelPlugin defaults to
        # FULL_STATE_DICT under FSDP 1 and SHARDED_STATE_DICT under FSDP 2.
        version = view.int("fsdp_config", "fsdp_version")
        if version is not None and version.value in (1, 2):
            changes["fsdp_version"] = version
        kind = view.str("fsdp_config", "fsdp_state_dict_type")
        if kind is not None and str(kind.value).upper() in ("FULL_STATE_DICT", "SHARDED_STATE_DICT", "LOCAL_STATE_DICT"):
            changes["fsdp_state_dict"] = Setting(str(kind.value).upper(), kind.origin)
    notes = changes.pop("notes", ())
    plan = TrainingPlan(flavor=NAME, path=doc.path, notes=notes).with_(**changes)
    if linked and linked[0].root is not None and linked[0].root.kind == "mapping":
        plan = ds.overlay(plan, linked[0], host=NAME)
    return ReadResult(plan, [d for d in linked if d.path != doc.path])
