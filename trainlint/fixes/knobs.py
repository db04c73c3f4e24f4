"""Where each flavor keeps the settings the memory fix planner turns, and how to write them.

`setting_edits(ctx, field, value)` returns the minimal edits that make the config say `value` for a
TrainingPlan field: the value is replaced where the config (or a linked DeepSpeed file) sets it, or
inserted where the flavor keeps it; a value a `# trainlint:` directive of the file sets is replaced in the directive.
None when the flavor has no such setting, or a flag, [tool.trainlint] or the launch sets the value (`held_origin`:
a config edit would not take).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from trainlint._patterns import compile_later
from trainlint.catalog.files import read_data
from trainlint.diagnostics import Edit
from trainlint.document.tree import Node
from trainlint.fixes.edits import insert_entry, replace_value, scalar_text
from trainlint.plan import OVERRIDABLE, Origin

# flavor -> plan field -> key path in the main document (inserted when absent).
KEYS: dict[str, dict[str, tuple]] = {
    "huggingface": {"micro_batch": ("per_device_train_batch_size",), "grad_accum": ("gradient_accumulation_steps",),
                    "grad_ckpt": ("gradient_checkpointing",), "attn_impl": ("attn_implementation",),
                    "optimizer": ("optim",), "fused_loss": ("use_liger_kernel",),
                    "eval_batch": ("per_device_eval_batch_size",), "eval_accumulation": ("eval_accumulation_steps",),
                    "save_only_model": ("save_only_model",)},
    "axolotl": {"micro_batch": ("micro_batch_size",), "grad_accum": ("gradient_accumulation_steps",),
                "grad_ckpt": ("gradient_checkpointing",), "attn_impl": ("attn_implementation",),
                "optimizer": ("optimizer",), "activation_offload": ("activation_offloading",)},
    "torchtune": {"micro_batch": ("batch_size",), "grad_accum": ("gradient_accumulation_steps",),
                  "grad_ckpt": ("enable_activation_checkpointing",),
                  "activation_offload": ("enable_activation_offloading",)},
    "deepspeed": {"micro_batch": ("train_micro_batch_size_per_gpu",), "grad_accum": ("gradient_accumulation_steps",),
                  "zero_stage": ("zero_optimization", "stage")},
    "lightning": {"grad_accum": ("trainer", "accumulate_grad_batches")},
    "litgpt": {"micro_batch": ("train", "micro_batch_size")},
    "accelerate": {"zero_stage": ("deepspeed_config", "zero_stage"),
                   "fsdp_state_dict": ("fsdp_config", "fsdp_state_dict_type"),
                   "offload_optimizer": ("deepspeed_config", "offload_optimizer_device"),
                   "offload_params": ("deepspeed_config", "offload_param_device")},
}
# Flavors with a CPU activation offload switch (axolotl `activation_offloading`, torchtune
# `enable_activation_offloading`; both need activation checkpointing on).
ACTIVATION_OFFLOAD = ("axolotl", "torchtune")
# Fields a linked DeepSpeed file holds for its host config.
LINKED_DEEPSPEED = {"zero_stage": ("zero_optimization", "stage")}

# How an optimizer the planner names is written in each flavor: HF's and axolotl's `optim`/`optimizer` names, a
# torchtune `_component_` class path. A flavor (or an optimizer) not listed has no spelling known: no edit is made.
OPTIMIZER_NAMES = {"huggingface": {"adamw_8bit": "adamw_bnb_8bit"}, "axolotl": {"adamw_8bit": "adamw_bnb_8bit"},
                   "torchtune": {"adamw_8bit": "bitsandbytes.optim.AdamW8bit"}}
# The keywords a torchtune `optimizer:` section may keep when its `_component_` becomes the 8-bit class: torchtune's
# recipes pass every other key of the section to the constructor (`config.instantiate(cfg_optimizer, params)`), and
# bitsandbytes' AdamW8bit takes these in every release (bitsandbytes/optim/adamw.py AdamW8bit.__init__; 0.46 dropped
# percentile_clipping and block_wise). Any other (torch's `fused`, `foreach`) would end in a TypeError.
COMPONENT_KEYWORDS = {"bitsandbytes.optim.AdamW8bit": frozenset({
    "_component_", "lr", "betas", "eps", "weight_decay", "amsgrad", "optim_bits", "args", "min_8bit_size",
    "is_paged"})}


def config_value(flavor: str, field: str, value: Any) -> Any:
    """How the plan's `value` of `field` is written in a file of `flavor`; None for an optimizer the flavor has no
    known spelling of."""
    if field == "grad_ckpt":
        return value != "none"
    if field == "optimizer":
        return OPTIMIZER_NAMES.get(flavor, {}).get(value)
    return value


def setting_edits(ctx, field: str, value: Any) -> list[Edit] | None:
    plan = ctx.plan
    setting = getattr(plan, field)
    origin = setting.origin
    if field == "grad_ckpt" and ctx.flavor == "huggingface" and value != "none" and _fsdp_sharded(plan):
        edits = _fsdp_checkpointing(ctx)
        if edits is not None:
            return edits
    if held_origin(ctx, field) is not None:
        # a flag, [tool.trainlint] or a script argument of the launch sets it: a config edit would not take; a
        # `# trainlint:` directive of this file is changed where it is written
        return directive_edits(ctx, field, value)
    if origin.kind in ("config", "linked") and origin.key_path:
        doc = ctx.document_for(setting)
        node = doc.find(origin.key_path) if doc is not None else None
        if node is not None and node.kind == "scalar" and node.alias_of is None:
            flavor = "deepspeed" if doc is not ctx.document else ctx.flavor
            written = config_value(flavor, field, value)
            if written is None and field == "optimizer":
                return None
            if field == "optimizer" and not _keywords_taken(doc, origin.key_path, written):
                return None
            return [replace_value(doc, node, written)]
    if field in LINKED_DEEPSPEED and ctx.linked:
        return _insert(ctx.linked[0], LINKED_DEEPSPEED[field], config_value("deepspeed", field, value))
    path = KEYS.get(ctx.flavor, {}).get(field)
    written = config_value(ctx.flavor, field, value)
    if path is None or written is None:
        return None
    return _insert(ctx.document, path, written)


def _keywords_taken(doc, key_path: tuple, component: Any) -> bool:
    """Whether the section holding a `_component_` that becomes `component` has only keywords that class takes
    (COMPONENT_KEYWORDS; a component not listed, or a key not a component's, is not checked)."""
    accepted = COMPONENT_KEYWORDS.get(component) if isinstance(component, str) else None
    if accepted is None or not key_path or key_path[-1] != "_component_":
        return True
    section = doc.find(key_path[:-1])
    if section is None or section.kind != "mapping":
        return True
    return all(str(key) in accepted for key in section.keys())


def held_origin(ctx, field: str) -> Origin | None:
    """Where a value the config text does not decide is set: a flag (or an editor setting), a `# trainlint:`
    directive, [tool.trainlint], or a script argument of the launch command; None when the config (or a default, or
    the planner) decides it."""
    origin = getattr(ctx.plan, field).origin
    if origin.kind == "launch" and origin.key_path:
        return origin
    if origin.kind in ("cli", "directive", "project") and origin.note != "planner":
        return origin
    return None


def directive_edits(ctx, field: str, value: Any) -> list[Edit] | None:
    """The edit that writes `value` (a whole number: the counts a directive takes) over the value of this file's
    `# trainlint:` directive that sets `field`; None when no directive of this file sets it, or its value's place is
    not known."""
    origin = getattr(ctx.plan, field).origin
    doc = ctx.document
    if origin.kind != "directive" or origin.span is None or doc is None or origin.path != doc.path or \
            not isinstance(value, int) or isinstance(value, bool) or value < 1:
        return None
    return [Edit(doc.path, origin.span, str(value))]


_DIRECTIVE_START = compile_later(r"#\s*trainlint:")
# The user-facing names of the plan fields a setting may hold (the CLI flag, the directive and [tool.trainlint] key).
SETTING_NAMES = {name: key for key, (name, _kind) in OVERRIDABLE.items()}


def where_held(ctx, field: str, origin: Origin) -> str:
    """Where `held_origin` says a value is set, in words: "the `# trainlint: micro-batch=8` directive at line 3",
    "the `--micro-batch` flag", "`micro-batch` in [tool.trainlint] in pyproject.toml", "the launch's
    `--per_device_train_batch_size` (train.sh:12)"."""
    key = SETTING_NAMES.get(field, field)
    if origin.kind == "directive":
        doc = ctx.document
        if origin.span is not None and doc is not None and origin.path == doc.path:
            line = doc.line_text(origin.span.start.line)
            starts = [m.start() for m in _DIRECTIVE_START.finditer(line) if m.start() < origin.span.start.column]
            comment = line[starts[-1]:].strip() if starts else line.strip()
            return f"the `{comment}` directive at line {origin.span.start.line + 1}"
        return f"a `# trainlint: {key}=...` directive"
    if origin.kind == "cli":
        if origin.note == "editor settings":
            return f"the editor setting `{key}`"
        return f"the `--{key}` flag" if field in SETTING_NAMES else "the command line"
    if origin.kind == "project":
        return f"`{key}` in {origin.describe()}"
    where = origin.path + (f":{origin.span.start.line + 1}" if origin.span is not None else "")
    argument = str(origin.key_path[-1]) if origin.key_path else key
    return f"the launch's `{argument}`" + (f" ({where})" if where else "")


def _fsdp_sharded(plan) -> bool:
    fsdp = getattr(plan, "fsdp", None)
    return fsdp is not None and fsdp.value not in (None, "", "no_shard")


def _fsdp_checkpointing(ctx) -> list[Edit] | None:
    """Under HF FSDP, checkpointing goes in `fsdp_config.activation_checkpointing` (what TL425 asks for:
    TrainingArguments' gradient_checkpointing adds an AllGather per layer in backward)."""
    doc = ctx.document
    if doc is None or doc.root is None or doc.root.kind != "mapping":
        return None
    section = doc.root.get("fsdp_config")
    if section is None:
        text = '{"activation_checkpointing": true}' if doc.kind == "json" else "{activation_checkpointing: true}"
        return [insert_entry(doc, doc.root, "fsdp_config", text)]
    if section.kind != "mapping":
        return None  # a path to an FSDP JSON file: not edited here
    return _insert(doc, ("fsdp_config", "activation_checkpointing"), True)


def _insert(doc, path: tuple, value: Any) -> list[Edit] | None:
    parent = doc.find(path[:-1]) if len(path) > 1 else doc.root
    if parent is None or parent.kind != "mapping" or parent.alias_of is not None:
        return None
    existing = parent.get(path[-1])
    if existing is not None:
        return [replace_value(doc, existing, value)] if existing.kind == "scalar" else None
    key = path[-1]
    return [insert_entry(doc, parent, key, scalar_text(doc, value))]


def zero_offload_edits(ctx) -> list[Edit] | None:
    return deepspeed_offload_edits(ctx, "optimizer")


def deepspeed_offload_edits(ctx, what: str = "optimizer") -> list[Edit] | None:
    """Add `offload_optimizer` (what="optimizer") or `offload_param` (what="param") `{device: cpu}` to the
    DeepSpeed config's zero_optimization (Accelerate's plugin: `offload_*_device: cpu`)."""
    if ctx.flavor == "accelerate" and not ctx.linked:
        return setting_edits(ctx, "offload_optimizer" if what == "optimizer" else "offload_params", "cpu")
    doc = ctx.linked[0] if ctx.linked else (ctx.document if ctx.flavor == "deepspeed" else None)
    if doc is None or doc.root is None or doc.root.kind != "mapping":
        return None
    zero = doc.find(("zero_optimization",))
    if zero is None or zero.kind != "mapping" or zero.alias_of is not None:
        return None
    key = "offload_optimizer" if what == "optimizer" else "offload_param"
    existing = zero.get(key)
    if existing is not None and existing.kind == "mapping":
        device = existing.get("device")
        if device is not None and device.kind == "scalar":
            return [replace_value(doc, device, "cpu")]
        return [insert_entry(doc, existing, "device", scalar_text(doc, "cpu"))]
    if existing is not None:
        return None
    text = '{"device": "cpu", "pin_memory": true}' if doc.kind == "json" else "{device: cpu, pin_memory: true}"
    return [insert_entry(doc, zero, key, text)]


def deepspeed_mappings(ctx) -> list:
    """(document, mapping node) of each DeepSpeed config in play: a linked file, the DeepSpeed file
    itself, or an HF/TRL file's inline `deepspeed:` mapping."""
    out = []
    for doc in ctx.linked:
        if doc.root is not None and doc.root.kind == "mapping":
            out.append((doc, doc.root))
    doc = ctx.document
    if doc is not None and doc.root is not None and doc.root.kind == "mapping":
        if ctx.flavor == "deepspeed":
            out.append((doc, doc.root))
        else:
            inline = doc.root.get("deepspeed")
            if inline is not None and inline.kind == "mapping" and inline.alias_of is None:
                out.append((doc, inline))
    return out


def mirrored_batch_edits(ctx, micro: int, gas: int, skip: list[Edit]) -> list[Edit] | None:
    """Edits that keep a DeepSpeed config's explicit (non-"auto") micro-batch and accumulation equal to
    the new values; None when one of them cannot be edited. train_batch_size stays: the effective
    batch does not change."""
    out: list[Edit] = []
    for doc, mapping in deepspeed_mappings(ctx):
        for key, value in (("train_micro_batch_size_per_gpu", micro), ("gradient_accumulation_steps", gas)):
            node = mapping.get(key)
            if node is None:
                continue
            if node.kind != "scalar" or node.alias_of is not None:
                return None
            current = node.to_python()
            if isinstance(current, str) or isinstance(current, bool):
                continue  # "auto": filled from the host config
            if any(e.path == doc.path and e.span.start.offset == node.span.start.offset for e in skip):
                continue
            out.append(replace_value(doc, node, value))
    return out


# LoRA / QLoRA where the config itself can ask for it (rank 16 on every linear layer): key -> value, in
# order; QLoRA adds the 4-bit keys. Only offered when no key of the set is already written.
LORA_KEYS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "trl": ({"use_peft": True, "lora_r": 16, "lora_target_modules": ["all-linear"]}, {"load_in_4bit": True}),
    "llamafactory": ({"finetuning_type": "lora", "lora_rank": 16, "lora_target": "all"}, {"quantization_bit": 4}),
    "axolotl": ({"adapter": "lora", "lora_r": 16, "lora_alpha": 32, "lora_target_linear": True},
                {"adapter": "qlora", "load_in_4bit": True}),
}


# The Peft each kind's reader builds from LORA_KEYS (so a LoRA title's estimate is the fixed file's):
# TRL's ModelConfig lora_dropout defaults to 0.05; LLaMA-Factory does not upcast for k-bit training.
LORA_PEFT: dict[str, dict[str, Any]] = {"trl": {"dropout": 0.05}, "llamafactory": {"kbit_upcast": False}, "axolotl": {}}


def lora_kind(ctx) -> str | None:
    if ctx.flavor == "axolotl":
        return "axolotl"
    if ctx.flavor == "huggingface" and ctx.plan.trainer.value in ("trl", "llamafactory"):
        return ctx.plan.trainer.value
    return None


def lora_edits(ctx, qlora: bool) -> list[Edit] | None:
    """Edits that switch a full fine-tuning config to LoRA (or QLoRA) adapters; None where the config
    cannot say it or already says part of it (LLaMA-Factory's `finetuning_type: full` is replaced)."""
    kind = lora_kind(ctx)
    doc = ctx.document
    if kind is None or doc is None or doc.root is None or doc.root.kind != "mapping" or doc.root.alias_of is not None:
        return None
    base, quant = LORA_KEYS[kind]
    values = dict(base)
    if qlora and doc.root.get("model_quantization_config") is not None:
        return None  # axolotl: model_quantization_config and load_in_4bit cannot be used together
    if kind == "llamafactory" and (any(_true(doc.root.get(key)) for key in _llamafactory_not_with_lora())
                                   or (not qlora and any(doc.root.get(k) is not None for k in quant))):
        # LLaMA-Factory refuses LoRA with GaLore / APOLLO / BAdam (FinetuningArguments.__post_init__), and a
        # `quantization_bit` already written would make the "LoRA" fix QLoRA: no such fix is offered
        return None
    if qlora:
        values.update(quant)
    edits: list[Edit] = []
    text = ""
    for key, value in values.items():
        node = doc.root.get(key)
        if node is not None:
            if kind == "llamafactory" and key == "finetuning_type" and node.kind == "scalar":
                edits.append(replace_value(doc, node, value))
                continue
            return None
        if isinstance(value, list):  # TRL's lora_target_modules is a list (a one-item list becomes the string)
            written = "[" + ", ".join(json.dumps(v) if doc.kind == "json" else str(v) for v in value) + "]"
        else:
            written = scalar_text(doc, value)
        edit = insert_entry(doc, doc.root, key, written)
        text += edit.new_text
        insert_at = edit.span
    if text:
        edits.append(Edit(doc.path, insert_at, text))
    return edits


@functools.lru_cache(maxsize=1)
def _llamafactory_not_with_lora() -> tuple[str, ...]:
    """The keys LLaMA-Factory refuses with `finetuning_type: lora` (catalog/data/llamafactory_checks.json)."""
    try:
        data = json.loads(read_data("llamafactory_checks.json"))
    except (OSError, ValueError):
        return ()
    return tuple(str(c["key"]) for c in data.get("checks") or []
                 if isinstance(c, dict) and c.get("key") and "lora" in (c.get("type_in") or []))


def _true(node: Node | None) -> bool:
    return node is not None and node.kind == "scalar" and (
        node.value is True or (isinstance(node.value, str) and node.value.strip().lower() == "true"))


# How each flavor turns on sharding it does not have yet (for the planner's advice; no edit is made:
# a DeepSpeed file or an FSDP setup is more than one key).
SHARDING_HOWTO = {
    "huggingface": "add `deepspeed:` with a ZeRO-3 JSON, or `fsdp: full_shard auto_wrap` with "
                   "`fsdp_config: {activation_checkpointing: true}`",
    "axolotl": "add `deepspeed: deepspeed_configs/zero3_bf16.json` (shipped with axolotl) or an `fsdp_config`",
    "lightning": "set `trainer.strategy: deepspeed_stage_3` (or `fsdp`)",
    "torchtune": "use the full_finetune_distributed recipe (FSDP), with `fsdp_cpu_offload: true` for offload",
    "accelerate": "set `distributed_type: DEEPSPEED` with `deepspeed_config: {zero_stage: 3}` (or FSDP)",
    "deepspeed": "raise `zero_optimization.stage` and add the offload sections",
    # a launch target's command line (context/launch/targets.py): HfArgumentParser's options
    "launch": "pass `--deepspeed` with a ZeRO-3 JSON, or `--fsdp \"full_shard auto_wrap\"` with an `--fsdp_config` "
              "JSON that sets `activation_checkpointing: true`",
}


def sharding_howto(flavor: str) -> str:
    return SHARDING_HOWTO.get(flavor, "set that up in the launcher or a DeepSpeed/FSDP config")
