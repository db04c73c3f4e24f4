"""PyTorch Lightning CLI YAML (LightningCLI / jsonargparse): trainer, model, data, optimizer sections,
optionally under a subcommand (`fit:`), `class_path`/`init_args` objects, and Hydra-style Trainer configs.

Precision strings and strategy names follow lightning/fabric/connector.py and the strategy registry
(`lightning.pytorch.strategies.StrategyRegistry`).
"""

from __future__ import annotations

import difflib

from trainlint.catalog import schemas
from trainlint.document.tree import Document
from trainlint.flavors import deepspeed as ds
from trainlint.flavors.base import ConfigView, as_bool, as_int, as_str, top_keys
from trainlint.plan import (
    AMP_BF16,
    AMP_FP16,
    FP32,
    MASTER_BF16,
    MASTER_FP16,
    PURE_BF16,
    PURE_FP16,
    Precision,
    ReadResult,
    Setting,
    TrainingPlan,
    default,
    inferred,
)

NAME = "lightning"

CLI_KEYS = {"seed_everything", "trainer", "model", "data", "optimizer", "lr_scheduler", "ckpt_path",
            "fit", "validate", "test", "predict", "config"}
SUBCOMMANDS = ("fit", "validate", "test", "predict")

PRECISIONS = {
    "32-true": FP32, "32": FP32, "64-true": FP32, "64": FP32,
    "16-mixed": AMP_FP16, "16": AMP_FP16, "bf16-mixed": AMP_BF16, "bf16": AMP_BF16,
    "bf16-true": PURE_BF16, "16-true": PURE_FP16,
    "transformer-engine": Precision("bf16", fp8=True), "transformer-engine-float16": Precision("fp16", fp8=True),
}
# Registry strategy names -> (zero stage, offload optimizer, offload params) or FSDP mode.
DEEPSPEED_STRATEGIES = {
    "deepspeed": (2, None, None), "deepspeed_stage_1": (1, None, None), "deepspeed_stage_2": (2, None, None),
    "deepspeed_stage_2_offload": (2, "cpu", None), "deepspeed_stage_3": (3, None, None),
    "deepspeed_stage_3_offload": (3, "cpu", "cpu"), "deepspeed_stage_3_offload_nvme": (3, "nvme", "nvme"),
}
FSDP_STRATEGIES = {"fsdp": ("full_shard", None), "fsdp_cpu_offload": ("full_shard", "cpu")}


def detect(doc: Document) -> float:
    keys = top_keys(doc)
    root = doc.root
    if not keys or root is None:
        return 0.0
    trainer = root.get("trainer")
    target = root.get("_target_")
    if target is not None and isinstance(target.value, str) and target.value.endswith(("Trainer",)) and "lightning" in target.value:
        return 0.9
    if not keys <= CLI_KEYS:
        return 0.8 if _cli_subclass(root, keys) else 0.0
    if trainer is not None and trainer.kind == "mapping":
        if _foreign_trainer(trainer):
            return 0.0  # another framework's `trainer:` section (levanter/draccus: mp, num_train_steps, tracker, ...)
        return 0.9
    for name in ("model", "data"):
        node = root.get(name)
        if node is not None and node.kind == "mapping" and node.get("class_path") is not None:
            return 0.85
    if keys & set(SUBCOMMANDS):
        return 0.8
    return 0.3


def _cli_subclass(root, keys: set) -> bool:
    """A LightningCLI subclass's YAML: a Lightning `trainer:` section (three or more Trainer arguments, no
    foreign ones), a model: or data: section, and up to three top-level arguments the subclass adds in
    add_arguments_to_parser (hepattn's CLI: `name`, `matmul_precision`), none a near-miss of a LightningCLI key
    and no Hydra composition (`defaults:`)."""
    extra = keys - CLI_KEYS
    if not extra or len(extra) > 3 or "defaults" in keys or not keys & {"model", "data"}:
        return False
    trainer = root.get("trainer")
    if trainer is None or trainer.kind != "mapping" or _foreign_trainer(trainer):
        return False
    known = _trainer_args()
    names = {e.key for e in trainer.entries if isinstance(e.key, str)}
    if not known or len(names & known) < 3:
        return False
    return not any(difflib.get_close_matches(key, CLI_KEYS, n=1, cutoff=0.75) for key in extra)


def _trainer_args() -> set[str]:
    """Lightning Trainer arguments, current and removed (the lightning schema), empty when unavailable."""
    try:
        keys = set(schemas.known_keys("lightning", ("trainer",)) or ())
        keys |= set((schemas.property_schema("lightning", ("trainer",)) or {}).get("x-trainlint-removed") or {})
    except Exception:  # noqa: BLE001 - no schema: every trainer section counts as Lightning's
        return set()
    return keys


def _foreign_trainer(trainer) -> bool:
    """A `trainer:` mapping whose keys are mostly neither a Lightning Trainer argument (current or removed) nor close
    to one (more than half of three or more keys, or all of two): not LightningCLI's Trainer (levanter's
    TrainerConfig has mp, train_batch_size, num_train_steps, tracker, per_device_parallelism, ...)."""
    names = [e.key for e in trainer.entries if isinstance(e.key, str) and not e.key.startswith("_")]
    if len(names) < 2 or trainer.get("class_path") is not None:
        return False
    known = _trainer_args()
    if not known:
        return False
    foreign = [k for k in names if k not in known and not difflib.get_close_matches(k, known, n=1, cutoff=0.8)]
    return len(foreign) == len(names) if len(names) == 2 else len(foreign) * 2 > len(names)


def _section_root(view: ConfigView) -> tuple:
    """Sections may sit under a subcommand (`fit: {trainer: ...}`)."""
    for sub in SUBCOMMANDS:
        node = view.node(sub)
        if node is not None and node.kind == "mapping" and node.get("trainer") is not None:
            return (sub,)
    return ()


def _init_args(view: ConfigView, base: tuple) -> tuple:
    node = view.node(*base)
    if node is not None and node.kind == "mapping" and node.get("init_args") is not None:
        return base + ("init_args",)
    return base


def read(doc: Document) -> ReadResult:
    view = ConfigView(doc)
    top = _section_root(view)
    trainer = top + ("trainer",)
    if view.node("_target_") is not None:
        trainer = ()
    changes: dict = {}

    devices = _devices(view, trainer)
    nodes = view.int(*trainer, "num_nodes")
    if nodes is not None and nodes.value >= 1:
        changes["num_nodes"] = nodes
    if devices is not None:
        per_node = devices.value
        total = per_node * (nodes.value if nodes is not None and nodes.value >= 1 else 1)
        changes["num_gpus"] = Setting(total, devices.origin) if total == per_node else inferred(total, "devices x num_nodes")

    precision_node = view.node(*trainer, "precision")
    precision = None
    if precision_node is not None and precision_node.kind == "scalar":
        key = str(precision_node.value).strip().lower()
        if key in PRECISIONS:
            precision = Setting(PRECISIONS[key], view.origin(trainer + ("precision",)))
    changes["precision"] = precision or default(FP32, "precision not set: Lightning's default is 32-true")

    accumulate = view.int(*trainer, "accumulate_grad_batches")
    if accumulate is not None:
        changes["grad_accum"] = accumulate

    data = _init_args(view, top + ("data",))
    model = _init_args(view, top + ("model",))
    batch = view.first(data + ("batch_size",), data + ("train_batch_size",), model + ("batch_size",),
                       data + ("dict_kwargs", "batch_size"))
    changes["micro_batch"] = batch or default(1, "no batch_size found in data or model: 1 assumed")
    seq = view.first(data + ("max_length",), data + ("max_seq_length",), data + ("seq_len",), data + ("block_size",),
                     model + ("max_length",), model + ("max_seq_length",), model + ("seq_len",))
    if seq is not None:
        changes["seq_len"] = seq
    name = view.first(model + ("model_name_or_path",), model + ("pretrained_model_name_or_path",),
                      model + ("model_name",), model + ("hf_model",), model + ("checkpoint",), convert=as_str)
    notes: tuple = ()
    if name is not None:
        changes["model"] = name
    else:
        class_path = view.str(*top, "model", "class_path")
        if class_path is not None:
            notes += (f"the model is the LightningModule {class_path.value}; trainlint cannot size it from the "
                      "config (name a model with --model or a `# trainlint: model=...` comment)",)

    linked: list = []
    strategy_changes, linked = _strategy(view, trainer, changes.get("precision"))
    changes.update(strategy_changes)
    notes += changes.pop("notes", ())
    plan = TrainingPlan(flavor=NAME, path=doc.path, notes=notes).with_(**changes)
    if linked and linked[0].root is not None and linked[0].root.kind == "mapping":
        plan = ds.overlay(plan, linked[0], host=NAME)
    return ReadResult(plan, [d for d in linked if d.path != doc.path])


def _devices(view: ConfigView, trainer: tuple) -> Setting | None:
    for key in ("devices", "gpus"):
        node = view.node(*trainer, key)
        if node is None:
            continue
        origin = view.origin(trainer + (key,))
        value = node.to_python()
        if isinstance(value, list):
            return Setting(len(value), origin)
        number = as_int(value)
        if number is not None and number > 0:
            return Setting(number, origin)
        if isinstance(value, str) and "," in value:
            ids = [v for v in value.split(",") if v.strip()]
            return Setting(len(ids), origin)
    return None


def _strategy(view: ConfigView, trainer: tuple, precision: Setting | None) -> tuple[dict, list]:
    node = view.node(*trainer, "strategy")
    if node is None:
        return {}, []
    origin = view.origin(trainer + ("strategy",))
    out: dict = {}
    linked: list = []
    if node.kind == "scalar" and isinstance(node.value, str):
        name = node.value.strip().lower()
        if name in DEEPSPEED_STRATEGIES:
            stage, opt, par = DEEPSPEED_STRATEGIES[name]
            out.update(zero_stage=Setting(stage, origin), offload_optimizer=Setting(opt, origin),
                       offload_params=Setting(par, origin))
        elif name in FSDP_STRATEGIES:
            mode, off = FSDP_STRATEGIES[name]
            out.update(fsdp=Setting(mode, origin))
            if off:
                out.update(offload_params=Setting(off, origin), offload_optimizer=Setting(off, origin))
    elif node.kind == "mapping":
        class_path_node = node.get("class_path")
        class_path = as_str(class_path_node.value) if class_path_node is not None else ""
        args = node.get("init_args") or node
        args_path = trainer + ("strategy",) + (("init_args",) if node.get("init_args") is not None else ())
        if class_path and "DeepSpeed" in class_path:
            written_stage = view.int(*args_path, "stage")
            out["zero_stage"] = written_stage or Setting(2, origin)
            if as_bool(view.value(*args_path, "offload_optimizer")):
                out["offload_optimizer"] = Setting(str(view.value(*args_path, "offload_optimizer_device") or "cpu"),
                                                   view.origin(args_path + ("offload_optimizer",)))
            if as_bool(view.value(*args_path, "offload_parameters")):
                out["offload_params"] = Setting(str(view.value(*args_path, "offload_params_device") or "cpu"),
                                                view.origin(args_path + ("offload_parameters",)))
            config = args.get("config") if args.kind == "mapping" else None
            if config is not None:
                found, note = ds.open_link(view.doc, config)
                if found is not None:
                    linked = [found]
                if note:
                    out["notes"] = (note,)
        elif class_path and "FSDP" in class_path:
            mode = as_str(view.value(*args_path, "sharding_strategy")) or "FULL_SHARD"
            out["fsdp"] = Setting(mode.lower(), origin)
            if as_bool(view.value(*args_path, "cpu_offload")):
                out.update(offload_params=Setting("cpu", origin), offload_optimizer=Setting("cpu", origin))
            if view.node(*args_path, "activation_checkpointing_policy") is not None or \
                    view.node(*args_path, "activation_checkpointing") is not None:
                out["grad_ckpt"] = Setting("full", origin)
    if "zero_stage" in out and precision is not None:
        # Lightning's DeepSpeed precision plugin keeps 16-bit weights with DeepSpeed's fp32 master copy.
        dtype = precision.value.autocast or precision.value.param_dtype
        if dtype in ("bf16", "fp16"):
            out["precision"] = Setting(MASTER_BF16 if dtype == "bf16" else MASTER_FP16, precision.origin)
    return out, linked


