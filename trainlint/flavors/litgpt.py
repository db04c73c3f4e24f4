"""LitGPT finetune/pretrain YAML (jsonargparse over Lightning Fabric): checkpoint_dir names the model,
precision is a Lightning precision string, train.{global,micro}_batch_size give accumulation
(Lightning-AI/litgpt `litgpt/args.py`, TrainArgs)."""

from __future__ import annotations

import difflib

from pathlib import Path

from trainlint.catalog import semantics
from trainlint.document.tree import Document
from trainlint.flavors.base import ConfigView, as_bool, top_keys
from trainlint.flavors.lightning import PRECISIONS
from trainlint.plan import AMP_BF16, Peft, ReadResult, Setting, TrainingPlan, default, inferred

NAME = "litgpt"

KEYS = {"checkpoint_dir", "out_dir", "precision", "devices", "num_nodes", "quantize", "train", "eval",
        "lora_r", "logger_name", "data", "optimizer", "seed", "resume", "initial_checkpoint_dir", "model_name"}
LORA_FLAGS = ("lora_query", "lora_key", "lora_value", "lora_projection", "lora_mlp", "lora_head")


# Further setup() arguments of LitGPT's finetune/pretrain entry points (log: LogArgs since 0.5; access_token).
MORE_KEYS = {"lora_alpha", "lora_dropout", "model_config", "tokenizer_dir", "log", "access_token"}


def detect(doc: Document) -> float:
    keys = top_keys(doc)
    if not ("checkpoint_dir" in keys or "model_name" in keys):
        return 0.0
    known = KEYS | set(LORA_FLAGS) | MORE_KEYS
    if keys <= known:
        return 0.9
    # A fork or an extended entry point adds arguments of its own (calvintwr/litgpt: `pad_id`, `fsdp: FSDPArgs`
    # in setup()): still LitGPT when its characteristic sections dominate (out_dir, a train: mapping, five or more
    # LitGPT keys) and only a few keys are new, none of them a near-miss of a LitGPT key (`lora_rnk` stays a typo
    # that the unknown-key check reports).
    extra = keys - known
    if any(difflib.get_close_matches(key, known, n=1, cutoff=0.75) for key in extra):
        return 0.0
    train = doc.find(("train",))
    if "out_dir" in keys and train is not None and train.kind == "mapping" and len(keys & known) >= 5 \
            and len(extra) <= 3 and len(extra) * 4 <= len(keys):
        return 0.8
    return 0.0


def read(doc: Document, overrides: dict | None = None, script: str | None = None) -> ReadResult:
    """`overrides`: {key path: (value, Origin)} that win over the file's (see ConfigView); `script`: the LitGPT
    command or script the launch runs with this file as its config (`finetune_adapter`, `litgpt/finetune/lora.py`),
    when one is known."""
    view = ConfigView(doc, overrides=overrides)
    changes: dict = {}
    checkpoint = view.str("checkpoint_dir") or view.str("model_name")
    if checkpoint is not None:
        changes["model"] = Setting(_checkpoint_model(checkpoint.value, doc.path), checkpoint.origin)
    node = view.node("precision")
    precision: Setting | None = None
    if node is not None and node.kind == "scalar" and str(node.value).lower() in PRECISIONS:
        precision = Setting(PRECISIONS[str(node.value).lower()], view.origin(("precision",)))
        changes["precision"] = precision
    else:
        changes["precision"] = default(AMP_BF16, "precision not set: LitGPT's get_default_supported_precision("
                                                 "training=True) is bf16-mixed on a GPU with bf16 (litgpt/utils.py)")
    devices = view.int("devices")
    nodes = view.int("num_nodes")
    world = max(1, (devices.value if devices else 1)) * max(1, (nodes.value if nodes else 1))
    if devices is not None:
        changes["num_gpus"] = devices if world == devices.value else inferred(world, "devices x num_nodes")
    micro = view.int("train", "micro_batch_size")
    changes["micro_batch"] = micro or default(1, "train.micro_batch_size not set")
    total = view.int("train", "global_batch_size")
    if total is not None and micro is not None and micro.value > 0:
        changes["global_batch"] = total
        changes["grad_accum"] = inferred(max(1, total.value // (micro.value * world)),
                                         "train.global_batch_size / (micro_batch_size x devices)")
    seq = view.int("train", "max_seq_length")
    if seq is not None:
        changes["seq_len"] = seq
    quantize = view.str("quantize")
    bits = 4 if quantize is not None and "nf4" in quantize.value or (quantize and "fp4" in quantize.value) else (
        8 if quantize is not None and "int8" in quantize.value else None)
    rank = view.int("lora_r")
    switches = semantics.litgpt_lora_switches()
    if rank is not None or any(view.has(flag) for flag in switches):
        # litgpt/finetune/lora.py setup(): the switches' defaults (query and value on), lora_dropout 0.05; the
        # estimator maps them to the architecture's modules (catalog/semantics.py litgpt_lora_targets).
        defaults = semantics.litgpt_lora_defaults()
        on = tuple(flag for flag in switches
                   if (as_bool(view.value(flag)) if view.has(flag) else bool(defaults.get(flag))))
        dropout = view.value("lora_dropout")
        dropout = float(dropout) if isinstance(dropout, (int, float)) and not isinstance(dropout, bool) else float(
            defaults.get("lora_dropout", 0.0))
        value = precision.value if isinstance(precision, Setting) else changes["precision"].value
        # Fabric's true precisions cast the whole module, adapters too (HalfPrecision.convert_module).
        adapter_dtype = value.param_dtype if value.param_dtype != "fp32" and not value.autocast else None
        origin = rank.origin if rank is not None else view.origin((next(f for f in switches if view.has(f)),))
        # Fabric's BitsandbytesPrecision: bnb.nf4 / bnb.fp4 quantize without double quantization, the -dq modes with.
        double = bool(quantize is not None and quantize.value.endswith("-dq"))
        changes["peft"] = Setting(Peft("lora", rank.value if rank else int(defaults.get("lora_r", 8)), None, bits,
                                       double_quant=double, dropout=max(0.0, dropout), adapter_dtype=adapter_dtype, switches=on), origin)
    adapter = _adapter_script(script)
    if adapter is not None and "peft" not in changes:
        # litgpt/finetune/adapter(_v2).py: only the adapter trains (mark_only_adapter(_v2)_as_trainable); Fabric's
        # true precisions cast it with the model.
        value = precision.value if isinstance(precision, Setting) else changes["precision"].value
        double = bool(quantize is not None and quantize.value.endswith("-dq"))
        spec = semantics.entry("litgpt", "adapter") or {}
        changes["peft"] = inferred(Peft(adapter, 0, None, bits, double_quant=double,
                                        adapter_prompt=int(spec.get("prompt_length") or 10),
                                        adapter_start=int(spec.get("start_layer") or 2),
                                        adapter_dtype=value.param_dtype if value.param_dtype != "fp32"
                                        and not value.autocast else None),
                                   f"`litgpt {script}`: LitGPT's {adapter.replace('_', ' ')} script")
    kind = "adapter" if adapter is not None and changes["peft"].value.method == adapter else _script(view, "peft" in changes)
    loss = semantics.litgpt_loss(kind)
    if loss.get("kernel"):
        changes["loss_kernel"] = inferred(loss["kernel"], {
            "lora": "LitGPT's LoRA script: the head in 128-token chunks",
            "full": "LitGPT's full fine-tune script: full logits",
            "adapter": "LitGPT's adapter script: the head in 128-token chunks",
            "pretrain": "LitGPT's pretrain script: full logits"}[kind] + ", chunked cross-entropy")
    if world > 1:
        # litgpt/finetune/{full,lora}.py and pretrain.py: FSDPStrategy(activation_checkpointing_policy={Block})
        # whenever more than one device trains.
        note = "LitGPT trains with FSDP (full shard) and activation checkpointing on more than one device"
        changes["fsdp"] = inferred("full_shard", note)
        changes["grad_ckpt"] = inferred("full", note)
    optimizer = view.str("optimizer") or view.str("optimizer", "class_path")
    if optimizer is not None:
        changes["optimizer"] = optimizer
    return ReadResult(TrainingPlan(flavor=NAME, path=doc.path).with_(**changes))


def _adapter_script(script: str | None) -> str | None:
    """"adapter" / "adapter_v2" when the launch runs LitGPT's adapter scripts (data "litgpt" adapter scripts: the
    `litgpt finetune_adapter(_v2)` command or the script's path), else None."""
    if not script:
        return None
    names = semantics.entry("litgpt", "adapter", "scripts") or {}
    clean = script.replace("\\", "/").strip()
    for name, method in names.items():
        if clean == name or (name.endswith(".py") and clean.endswith(name)):
            return str(method)
    return None


def _script(view: ConfigView, lora: bool) -> str:
    """Which LitGPT entry point reads the file (data "litgpt" loss _scripts): LoRA keys -> `finetune_lora`, a
    `model_name` without `checkpoint_dir` -> `pretrain`, otherwise `finetune_full`."""
    if lora:
        return "lora"
    if view.has("model_name") and not view.has("checkpoint_dir"):
        return "pretrain"
    return "full"


def _checkpoint_model(written: str, path: str) -> str:
    """The model a `checkpoint_dir` names: the folder itself where it exists with a config.json, looked up as LitGPT
    does from the folder it runs in (the config's folder or one above it, up to five levels: a repository root
    running `litgpt finetune --config config_hub/...`), kept whole (`checkpoints/<org>/<name>`); otherwise the
    `<org>/<name>` its last two parts give (LitGPT's download layout `checkpoints/<org>/<name>`, auto-downloaded
    from the hub by that name)."""
    clean = written.replace("\\", "/")
    candidate = Path(clean).expanduser()
    bases = [] if candidate.is_absolute() else [p for p in Path(path).resolve().parents][:6] if path else []
    for folder in ([candidate] if candidate.is_absolute() else [base / candidate for base in bases]):
        try:
            if (folder / "config.json").is_file():
                return str(folder)
        except OSError:
            continue
    parts = [p for p in clean.split("/") if p and p not in (".", "..")]
    if parts and parts[0] == "checkpoints":
        parts = parts[1:]
    if not parts:
        return clean
    return "/".join(parts[-2:]) if len(parts) >= 2 else parts[-1]
