"""LitGPT finetune/pretrain YAML (jsonargparse over Lightning Fabric): checkpoint_dir names the model,
precision is a Lightning precision string, train.{global,micro}_batch_size give accumulation
(Lightning-AI/litgpt `litgpt/args.py`, TrainArgs)."""

from __future__ import annotations

import difflib

from trainlint.document.tree import Document
from trainlint.flavors.base import ConfigView, as_bool, top_keys
from trainlint.flavors.lightning import PRECISIONS
from trainlint.plan import FP32, Peft, ReadResult, Setting, TrainingPlan, default, inferred

NAME = "litgpt"

KEYS = {"checkpoint_dir", "out_dir", "precision", "devices", "num_nodes", "quantize", "train", "eval",
        "lora_r", "logger_name", "data", "optimizer", "seed", "resume", "initial_checkpoint_dir", "model_name"}
LORA_FLAGS = {"lora_query": ["q_proj"], "lora_key": ["k_proj"], "lora_value": ["v_proj"],
              "lora_projection": ["o_proj"], "lora_mlp": ["gate_proj", "up_proj", "down_proj"], "lora_head": ["lm_head"]}


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


def read(doc: Document, overrides: dict | None = None) -> ReadResult:
    """`overrides`: {key path: (value, Origin)} that win over the file's (see ConfigView)."""
    view = ConfigView(doc, overrides=overrides)
    changes: dict = {}
    checkpoint = view.str("checkpoint_dir") or view.str("model_name")
    if checkpoint is not None:
        parts = [p for p in checkpoint.value.replace("\\", "/").split("/") if p and p != "checkpoints"]
        changes["model"] = Setting("/".join(parts[-2:]) if len(parts) >= 2 else parts[-1], checkpoint.origin)
    precision = view.node("precision")
    if precision is not None and precision.kind == "scalar" and str(precision.value).lower() in PRECISIONS:
        changes["precision"] = Setting(PRECISIONS[str(precision.value).lower()], view.origin(("precision",)))
    else:
        changes["precision"] = default(FP32, "precision not set")
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
    if rank is not None:
        targets = [name for flag, names in LORA_FLAGS.items() if as_bool(view.value(flag)) for name in names]
        changes["peft"] = Setting(Peft("lora", rank.value, targets, bits), rank.origin)
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
