"""DeepSpeed JSON (`ds_config.json`, also `.conf`/hjson), standalone or linked from another config.

Facts from deepspeed/runtime/config.py and zero/config.py: batch
keys fill each other in; `fp16`/`bf16` sections hold 16-bit weights with an fp32 master copy in the
ZeRO optimizer; `offload_param` works at stage 3 only.
"""

from __future__ import annotations

from trainlint.document.reading import read_document
from trainlint.document.tree import Document
from trainlint.flavors.base import ConfigView, as_bool, as_int, as_str, is_auto, resolve_link, top_keys
from trainlint.plan import (
    FP32,
    MASTER_BF16,
    MASTER_FP16,
    Origin,
    ReadResult,
    Setting,
    TrainingPlan,
    default,
    inferred,
)

NAME = "deepspeed"

STRONG_KEYS = {
    "zero_optimization", "train_micro_batch_size_per_gpu", "zero_allow_untested_optimizer",
    "zero_force_ds_cpu_optimizer", "wall_clock_breakdown", "steps_per_print",
}
COMPANION_KEYS = {
    "train_batch_size", "gradient_accumulation_steps", "gradient_clipping", "optimizer", "scheduler", "aio",
    "fp16", "bf16", "bfloat16", "activation_checkpointing", "amp", "communication_data_type", "flops_profiler",
    "tensorboard", "wandb", "elasticity", "pipeline", "data_types", "compile", "tensor_parallel",
}
FOREIGN_KEYS = {"distributed_type", "base_model", "trainer", "output_dir", "model_name_or_path"}

# DeepSpeed optimizer types (case-insensitive) -> trainlint optimizer names.
OPTIMIZERS = {
    "adam": "adamw", "adamw": "adamw", "onebitadam": "adamw", "zerooneadam": "adamw", "muadam": "adamw",
    "muadamw": "adamw", "lamb": "lamb", "onebitlamb": "lamb", "adagrad": "adagrad", "lion": "lion",
    "sgd": "sgd_momentum", "musgd": "sgd_momentum", "muon": "muon",
}


# GPT-NeoX / Megatron configs carry DeepSpeed sections next to keys DeepSpeed never reads; they compute the batch
# for world / (pipe x model parallel) themselves and hand DeepSpeed an mpu: not DeepSpeed files.
MEGATRON_PARALLEL_KEYS = {"pipe_parallel_size", "model_parallel_size", "pipe-parallel-size", "model-parallel-size",
                          "tensor_model_parallel_size", "pipeline_model_parallel_size"}
MEGATRON_MODEL_KEYS = {"num_layers", "num_attention_heads", "seq_length", "max_position_embeddings", "train_iters",
                       "lr_decay_style", "lr_decay_iters", "checkpoint_activations", "tokenizer_type", "data_path",
                       "data-path", "vocab_file", "vocab-file", "num-layers", "hidden-size", "seq-length"}


def is_megatron(doc: Document) -> bool:
    """A GPT-NeoX / Megatron config (EleutherAI/gpt-neox configs/*.yml): a parallel-size key, or two model or
    schedule keys of Megatron's."""
    keys = top_keys(doc)
    return bool(keys & MEGATRON_PARALLEL_KEYS) or len(keys & MEGATRON_MODEL_KEYS) >= 2


def detect(doc: Document) -> float:
    keys = top_keys(doc)
    if not keys or keys & FOREIGN_KEYS or is_megatron(doc) or _hydra_objects(doc):
        return 0.0
    strong = len(keys & STRONG_KEYS)
    companions = len(keys & COMPANION_KEYS)
    for section in ("fp16", "bf16"):
        node = doc.find((section,))
        if node is not None and node.kind == "mapping" and node.get("enabled") is not None:
            strong += 1
    if strong:
        return min(1.0, 0.6 + 0.1 * (strong + companions))
    if companions < 2 or _other_trainer_sections(doc) or len(keys - STRONG_KEYS - COMPANION_KEYS) > companions:
        return 0.0  # optimizer/scheduler alone, beside more keys DeepSpeed does not have, are another program's
    return 0.4


def _other_trainer_sections(doc: Document) -> bool:
    """`optimizer` / `scheduler` written as {type|name, kwargs} (Point-BERT / EasyDict configs, trlx's TRLConfig)
    rather than DeepSpeed's {type, params}."""
    root = doc.root
    if root is None:
        return False
    for name in ("optimizer", "scheduler"):
        node = root.get(name)
        if node is not None and node.kind == "mapping" and node.get("kwargs") is not None and node.get("params") is None:
            return True
    return False


def _hydra_objects(doc: Document) -> bool:
    """A Hydra/instantiate file: `_target_` at the top, or an `optimizer`/`scheduler` section that is a
    `_target_` object (lightning-hydra-template's configs/model/*.yaml) rather than DeepSpeed's {type, params}."""
    root = doc.root
    if root is None:
        return False
    if root.get("_target_") is not None:
        return True
    for name in ("optimizer", "scheduler"):
        node = root.get(name)
        if node is not None and node.kind == "mapping" and node.get("_target_") is not None and node.get("type") is None:
            return True
    return False


def read(doc: Document) -> ReadResult:
    plan = overlay(TrainingPlan(flavor=NAME, path=doc.path), doc, host=None)
    return ReadResult(plan)


def _enabled(view: ConfigView, section: str) -> tuple[bool | None, tuple]:
    """(enabled?, key path); None when "auto" (filled by an integration) or absent."""
    for name in ((section, "bfloat16") if section == "bf16" else (section,)):
        node = view.node(name, "enabled")
        if node is not None:
            return (None if is_auto(node) else as_bool(node.value)), (name, "enabled")
        section_node = view.node(name)
        if section_node is not None and section_node.kind == "mapping":
            return False, (name,)
    return None, ()


def overlay(plan: TrainingPlan, doc: Document, host: str | None) -> TrainingPlan:
    """Lay what a DeepSpeed config decides over `plan`.

    host: the integration that reads it ("huggingface", "lightning", "accelerate", "axolotl") or None
    for raw `deepspeed.initialize`. Integrations own the batch keys ("auto" is filled from their own
    arguments), so only a raw DeepSpeed config sets them here.
    """
    view = ConfigView(doc, "config" if host is None else "linked")
    changes: dict = {}

    stage = view.int("zero_optimization", "stage")
    if stage is not None and not 0 <= stage.value <= 3:
        stage = None  # DeepSpeed rejects it (the schema rules say so); the estimate keeps its default
    zero_node = view.node("zero_optimization")
    if stage is not None:
        changes["zero_stage"] = stage
    elif zero_node is not None and zero_node.kind == "scalar" and as_bool(zero_node.value):
        changes["zero_stage"] = Setting(1, view.origin(("zero_optimization",), "legacy `true` means stage 1"))
    elif zero_node is not None and zero_node.kind == "mapping":
        changes["zero_stage"] = Setting(0, view.origin(("zero_optimization",), "stage not set: 0"))

    gather = view.first(("zero_optimization", "stage3_gather_16bit_weights_on_model_save"),
                        ("zero_optimization", "stage3_gather_fp16_weights_on_model_save"), convert=as_bool)
    if gather is not None and isinstance(gather.value, bool):
        changes["zero3_save_16bit"] = gather  # DeepSpeedEngine._zero3_consolidated_16bit_state_dict on save

    for field, section, legacy in (("offload_optimizer", "offload_optimizer", "cpu_offload"),
                                   ("offload_params", "offload_param", "cpu_offload_param")):
        device = view.str("zero_optimization", section, "device")
        if device is not None and device.value.lower() in ("cpu", "nvme"):
            changes[field] = Setting(device.value.lower(), device.origin)
        elif device is not None:
            changes[field] = Setting(None, device.origin)
        elif (offload_node := view.node("zero_optimization", section)) is not None and offload_node.kind == "mapping":
            changes[field] = Setting(None, view.origin(("zero_optimization", section), "no device: none"))
        else:
            flag = view.bool("zero_optimization", legacy)
            if flag is not None and flag.value:
                changes[field] = Setting("cpu", flag.origin)

    bf16, bf16_path = _enabled(view, "bf16")
    fp16, fp16_path = _enabled(view, "fp16")
    if bf16:
        changes["precision"] = Setting(MASTER_BF16, view.origin(bf16_path))
    elif fp16:
        changes["precision"] = Setting(MASTER_FP16, view.origin(fp16_path))
    elif host is None:
        if bf16 is False or fp16 is False:
            path = bf16_path if bf16 is False else fp16_path
            changes["precision"] = Setting(FP32, view.origin(path, "no 16-bit section enabled: fp32"))
        else:
            changes["precision"] = default(FP32, "no fp16/bf16 section: DeepSpeed trains in fp32")
    elif plan.precision.value.param_dtype != "fp32" or plan.precision.value.autocast:
        # "auto" or absent: the integration injects its own precision, held the DeepSpeed way.
        dtype = plan.precision.value.autocast or plan.precision.value.param_dtype
        if dtype in ("bf16", "fp16"):
            changes["precision"] = Setting(MASTER_BF16 if dtype == "bf16" else MASTER_FP16,
                                           Origin(plan.precision.origin.kind, plan.precision.origin.path,
                                                  plan.precision.origin.key_path, plan.precision.origin.span,
                                                  "held by DeepSpeed as 16-bit weights with an fp32 master copy"))

    opt_type = view.str("optimizer", "type")
    if opt_type is not None:
        name = OPTIMIZERS.get(opt_type.value.lower().replace("_", ""), opt_type.value.lower())
        changes["optimizer"] = Setting(name, opt_type.origin)

    autotp = view.int("tensor_parallel", "autotp_size")
    if autotp is not None and autotp.value > 1:
        changes["tensor_parallel"] = autotp

    # Ulysses sequence parallelism (deepspeed/runtime/config.py: without an mpu the data-parallel world size is
    # dist.get_world_size() / config["sequence_parallel_size"]): every sequence is split across that many GPUs and
    # the data-parallel degree is divided by it, as context parallelism (the plan's context_parallel).
    sp = view.int("sequence_parallel_size")
    if sp is not None and sp.value > 1 and plan.context_parallel.value <= 1:
        changes["context_parallel"] = sp

    if host is None:
        changes.update(_batch(view, plan))
    return plan.with_(**changes, linked_paths=plan.linked_paths + ((doc.path,) if host else ()))


def _batch(view: ConfigView, plan: TrainingPlan) -> dict:
    """Raw DeepSpeed's batch fill-in rules (runtime/config.py::_set_batch_related_parameters)."""
    out: dict = {}
    micro = view.int("train_micro_batch_size_per_gpu")
    gas = view.int("gradient_accumulation_steps")
    total = view.int("train_batch_size")
    if micro is not None:
        out["micro_batch"] = micro
    if gas is not None:
        out["grad_accum"] = gas
    if total is not None:
        out["global_batch"] = total
    if total is not None and micro is not None and gas is not None and micro.value > 0 and gas.value > 0:
        world, rest = divmod(total.value, micro.value * gas.value)
        if rest == 0 and world >= 1:
            out["num_gpus"] = inferred(world, "train_batch_size / (micro-batch x accumulation)")
    elif total is not None and micro is not None and gas is None and plan.num_gpus.origin.kind != "default":
        world = plan.num_gpus.value
        if micro.value * world > 0:
            out["grad_accum"] = inferred(max(1, total.value // (micro.value * world)),
                                         "train_batch_size / (micro-batch x world size)")
    elif total is not None and micro is None:
        gas_value = gas.value if gas is not None else 1
        world = plan.num_gpus.value
        if gas_value > 0 and world > 0:
            out["micro_batch"] = inferred(max(1, total.value // world // gas_value),
                                          "train_batch_size / world size / accumulation")
    return out


def open_link(doc: Document, node) -> tuple[Document | None, str | None]:
    """The DeepSpeed config a key names: an inline mapping, or a path relative to the config's folder
    (then the working directory). Returns (document, None) or (None, why not)."""
    if node.kind == "mapping":
        return doc.subdocument(node), None
    target = as_str(node.value) if node.kind == "scalar" else None
    return open_path(doc, target)


def open_path(doc: Document, target: str | None) -> tuple[Document | None, str | None]:
    """The DeepSpeed config at `target`, a path relative to the config's folder (then the working directory)."""
    if target is None:
        return None, None
    path = resolve_link(doc.path, target)
    if path is None:
        return None, (f"the DeepSpeed config {target!r} was not found next to {doc.path} or in the working "
                      "directory, so its settings are not part of the estimate")
    return read_document(path), None


def ds_int(doc: Document, *path: str) -> int | None:
    node = doc.find(path)
    return as_int(node.value) if node is not None and node.kind == "scalar" else None


__all__ = ["NAME", "detect", "read", "overlay", "open_link", "open_path", "ds_int"]
