"""Shared by TL520/TL521/TL522: schema violations of HF TrainingArguments, LightningCLI and Accelerate
files (trainlint/catalog/schemas.py), filtered so that what TL003/TL004 and the dedicated rules report is not
reported twice, plus a few value constraints the frameworks enforce in code. Not a rule."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from functools import lru_cache

from trainlint._patterns import compile_later
from trainlint.catalog import schemas
from trainlint.catalog.files import read_data
from trainlint.context.launch import accelerate_option_for
from trainlint.document.tree import Node
from trainlint.flavors.base import as_int, may_be_number
from trainlint.rules._frameworks import hf_dialect, lightning_trainer, suggest, version_status

SCHEMA_FOR = {"huggingface": "hf-training-args", "lightning": "lightning", "accelerate": "accelerate"}
_NUMBER = compile_later(r"[-+]?(\d[\d_]*\.?\d*|\.\d+)([eE][-+]?\d+)?")
# Checked by dedicated rules: TL313 (precision), TL621 (strategy); TL004 (yes/no booleans).
SKIP_LIGHTNING = {"precision", "strategy"}
BOOL_WORD_KEYS = {"mixed_precision"}

# Constraints enforced in code rather than in the schemas: key path (relative to the section) -> minimum, why.
MINIMUMS: dict[str, dict[tuple[str, ...], tuple[int, str]]] = {
    "huggingface": {
        ("per_device_train_batch_size",): (1, "the DataLoader stops with \"batch_size should be a positive integer value\""),
        ("per_device_eval_batch_size",): (1, "the DataLoader stops with \"batch_size should be a positive integer value\""),
        ("gradient_accumulation_steps",): (1, "the Trainer divides by it (and DeepSpeed asserts \"Gradient accumulation steps: 0 has to be greater than 0\")"),
    },
    "accelerate": {
        ("num_processes",): (1, "there is no process to launch"),
        ("num_machines",): (1, "there is no machine to launch on"),
    },
    "lightning": {
        ("accumulate_grad_batches",): (1, "the training loop takes the step count modulo it (ZeroDivisionError)"),
        ("num_nodes",): (1, "Lightning stops with \"`num_nodes` must be a positive integer\""),
    },
}
ENUMS: dict[str, dict[tuple[str, ...], tuple]] = {
    "accelerate": {
        ("deepspeed_config", "zero_stage"): (0, 1, 2, 3),
        ("deepspeed_config", "offload_optimizer_device"): ("none", "cpu", "nvme"),
        ("deepspeed_config", "offload_param_device"): ("none", "cpu", "nvme"),
        ("fsdp_config", "fsdp_sharding_strategy"): ("FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "HYBRID_SHARD",
                                                    "HYBRID_SHARD_ZERO2", 1, 2, 3, 4, 5),
        ("fsdp_config", "fsdp_auto_wrap_policy"): ("TRANSFORMER_BASED_WRAP", "SIZE_BASED_WRAP", "NO_WRAP"),
        ("fsdp_config", "fsdp_state_dict_type"): ("FULL_STATE_DICT", "LOCAL_STATE_DICT", "SHARDED_STATE_DICT"),
        ("fsdp_config", "fsdp_backward_prefetch"): ("BACKWARD_PRE", "BACKWARD_POST", "NO_PREFETCH"),
        ("fsdp_config", "fsdp_version"): (1, 2),
    },
}


@dataclass
class Finding:
    """A value the schema checks reject (wrong type, unknown choice, out of range), before it is a Diagnostic."""
    kind: str  # type | enum | range
    node: Node
    key_path: tuple
    message: str  # one line: the key, the value and what is wrong with it ("`optim` has no value "adam"")
    expected: str
    suggestion: object = None
    removed: dict | None = None  # a value an older release accepted: {"package", "removed", "hint"} (the schema's table)
    certain: bool = True  # False: whether the release in use still accepts it is not known (assumptions say why)
    assumptions: tuple = ()
    detail: str = ""  # what the message leaves out: the values allowed, why the framework refuses it


def _headline(kind: str, message: str, expected: str) -> tuple[str, str]:
    """(message, detail) from a schema error's sentence: the list of allowed values goes to the detail."""
    if kind == "enum":
        head, sep, _ = message.partition("; expected ")
        return (head if sep else message), f"Expected {expected}."
    return message, ""


_cache: dict = {}


def findings(ctx) -> list[Finding]:
    doc = ctx.document
    launch = getattr(ctx, "launch", None)
    runs = launch is not None and launch.found and launch.role == "accelerate"
    # the options a launch gives itself drop findings (launch_sets); without such a launch they rest on an assumption
    key = (id(doc), ctx.flavor, runs, getattr(launch, "overrides", ()) if runs else ())
    if key in _cache and _cache[key][0] is doc:
        return _cache[key][1]
    result = _compute(ctx)
    _cache.clear()
    _cache[key] = (doc, result)
    return result


def _compute(ctx) -> list[Finding]:
    doc = ctx.document
    name = SCHEMA_FOR.get(ctx.flavor)
    if name is None or doc.root is None or doc.root.kind != "mapping":
        return []
    dialect = hf_dialect(doc, ctx) if ctx.flavor == "huggingface" else ""
    if dialect == "open-instruct":
        return []
    base: tuple = ()
    if ctx.flavor == "lightning":
        modern, _ = version_status(ctx, "lightning", ">=2.0")
        if modern is False:
            # The schema is Lightning 2.x's Trainer signature; 1.x typed its arguments otherwise (accelerator,
            # strategy, devices, gradient_clip_algorithm ... Optional, default None): a pinned 1.x is not judged by it.
            return []
        trainer = lightning_trainer(doc)
        if trainer is None or trainer == ():
            return []
        base = trainer
        section = doc.find(base)
        data = {"trainer": section.to_python() if section is not None else None}
    else:
        data = doc.data()
    try:
        errors = schemas.validation_errors(name, data, unknown_keys=False)  # only type, enum and range are read
    except Exception:  # noqa: BLE001 - schemas or jsonschema missing: no schema checks
        errors = []
    out: list[Finding] = []
    seen: set = set()
    for err in errors:
        if err.kind not in ("type", "enum", "range"):
            continue
        path = tuple(err.key_path)
        if ctx.flavor == "lightning":
            if len(path) < 2 or path[1] in SKIP_LIGHTNING:
                continue
            path = tuple(base) + path[1:]
        node = doc.find(path)
        if node is None or _covered_elsewhere(ctx, dialect, node, path, err):
            continue
        if ctx.flavor == "accelerate" and launch_sets(ctx, path):
            continue  # every launch of the file gives this option itself: the file's value is never read
        if err.kind == "range" and tuple(path[len(base):]) in MINIMUMS.get(ctx.flavor, {}):
            continue  # _code_constraints says it with the framework's own words
        message = err.message
        if ctx.flavor == "lightning" and base != ("trainer",):
            message = message.replace("`trainer.", "`" + ".".join(base) + ".")
        suggestion = None
        match = re.search(r'did you mean "([^"]+)"\?', message)
        if match:
            suggestion = match.group(1)
        removed: dict | None = None
        certain = True
        assumptions: tuple[str, ...] = ()
        if err.kind == "enum" and ctx.flavor == "huggingface" and node.kind == "scalar":
            removed = _removed_value(path, node.value)
            if removed is not None:
                gone, assumptions = version_status(ctx, removed["package"], f">={removed['removed']}")
                if gone is False:
                    continue  # the release this file runs under still accepts the value
                certain = bool(gone)
        if ctx.flavor == "accelerate":
            assumptions = (*assumptions, *launch_may_set(ctx, path))
        if err.kind == "type" and ctx.flavor == "huggingface" and _argparse_converts(node, err.expected) and \
                not (ctx.dialect is not None and ctx.dialect.known):
            assumptions = (*assumptions, UNCONVERTED_ASSUMED)
        message, detail = _headline(err.kind, message, err.expected)
        out.append(Finding(err.kind, node, path, message, err.expected, suggestion, removed, certain, assumptions,
                           detail))
        seen.add(path)
    for f in _code_constraints(ctx, base, seen):
        if ctx.flavor == "accelerate":
            if launch_sets(ctx, f.key_path):
                continue
            f = replace(f, assumptions=(*f.assumptions, *launch_may_set(ctx, f.key_path)))
        out.append(f)
    return out


def launch_may_set(ctx, path: tuple) -> tuple[str, ...]:
    """The assumption a finding on an accelerate config key rests on when no `accelerate launch` in the repository
    is known to run the file: that the launch gives no option of its own for the key (`--num_processes $N` would
    replace the file's value, huggingface/smollm's `num_processes: null`)."""
    launch = getattr(ctx, "launch", None)
    if launch is not None and launch.found and launch.role == "accelerate":
        return ()
    option = accelerate_option_for(".".join(str(p) for p in path))
    if option is None:
        return ()
    return (f"assumed the launch gives no `{option}` (it would replace this value): no `accelerate launch` command "
            "that runs this file was found; declare it with `# trainlint: launch=\"accelerate launch --config_file ...\"`",)


def launch_sets(ctx, path: tuple) -> bool:
    """Whether every `accelerate launch` that runs this accelerate config sets the key at `path` (or the section
    holding it) with its own option (`--num_processes $N`): accelerate's _validate_launch_command copies a config
    value only onto the options not given, so the file's value is never used (huggingface/smollm's vloom configs
    keep `num_processes: null` for train.slurm's `--num_processes $NUM_GPUS`)."""
    launch = getattr(ctx, "launch", None)
    overrides = getattr(launch, "overrides", ()) if launch is not None and launch.role == "accelerate" else ()
    dotted = ".".join(str(p) for p in path)
    return any(dotted == key or dotted.startswith(key + ".") for key in overrides)


def _removed_value(path: tuple, value) -> dict | None:
    """The schema's `x-trainlint-removed-values` entry for a value an older transformers accepted (`optim:
    adamw_hf` until 4.50, `adamw_apex_fused` until 5.8), or None."""
    if len(path) != 1 or not isinstance(value, str):
        return None
    try:
        table = (schemas.load_schema("hf-training-args").get("properties", {}).get(path[0]) or {}).get(
            "x-trainlint-removed-values") or {}
    except Exception:  # noqa: BLE001 - no schema: no table
        return None
    entry = table.get(value)
    if not isinstance(entry, dict) or not entry.get("removed"):
        return None
    return {"package": str(entry.get("package") or "transformers").lower(), "removed": str(entry["removed"]),
            "hint": entry.get("hint"), "refused_by": entry.get("refused_by"), "raises": entry.get("raises"),
            "when": entry.get("when")}


@lru_cache(maxsize=1)
def _conversions() -> dict:
    """catalog/data/value_conversions.json: keys whose consumer takes more types than the schema declares."""
    try:
        data = json.loads(read_data("value_conversions.json"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def consumer_accepts(schema: str, path: tuple, value) -> bool:
    """Whether the value's consumer takes it although the schema's type does not (`lora_target_modules:
    all-linear`: TRL hands the string to peft's LoraConfig, which takes a string)."""
    if len(path) != 1 or not isinstance(path[0], str):
        return False
    entry = (_conversions().get(schema) or {}).get(path[0])
    if not isinstance(entry, dict):
        return False
    kinds = entry.get("accepts") or []
    return isinstance(value, str) and "string" in kinds


def _covered_elsewhere(ctx, dialect: str, node: Node, path: tuple, err) -> bool:
    if node.kind != "scalar":
        return False
    key = path[-1] if path else ""
    value = node.value
    if err.kind == "type" and consumer_accepts(SCHEMA_FOR.get(ctx.flavor, ""), path, value):
        return True  # the parser hands the string on unconverted and its consumer takes it
    if isinstance(value, bool) and not node.style and node.raw.lower() in ("yes", "no", "on", "off"):
        return True  # TL004
    if ctx.flavor == "accelerate" and key in BOOL_WORD_KEYS and isinstance(value, bool):
        return True  # TL004
    if err.kind == "type" and isinstance(value, str) and may_be_number(value.strip()) and \
            _NUMBER.fullmatch(value.strip()) and (
            "number" in err.expected or "integer" in err.expected):
        if not node.style:
            return True  # TL003 (or the loader converts it)
        if dialect == "trl" or ctx.flavor == "lightning":
            # TrlParser: argparse converts string defaults through the option's type; jsonargparse loads strings.
            # Not LLaMA-Factory: OmegaConf.to_container + HfArgumentParser.parse_dict keep "8" a string.
            return True
    if err.kind == "type" and isinstance(value, str) and value.strip().lower() in BOOL_WORDS and dialect == "trl":
        return True  # argparse's string_to_bool converts it (TrlParser); parse_dict (LLaMA-Factory) does not
    return False


# transformers/hf_argparser.py string_to_bool: the strings argparse turns into a bool option's value
BOOL_WORDS = ("yes", "true", "t", "y", "1", "no", "false", "f", "n", "0")
UNCONVERTED_ASSUMED = ("assumed a parser that hands YAML values to the dataclass unconverted (HfArgumentParser."
                       "parse_yaml_file, LLaMA-Factory); TrlParser sets them as argparse defaults, which convert it; "
                       "declare the parser with `# trainlint: dialect=hf` (or trl)")


def _argparse_converts(node: Node, expected: str) -> bool:
    """Whether TrlParser (the file's values as argparse defaults, converted through each option's type) would
    turn this string into the declared type: a string_to_bool word for a boolean, a number for a number."""
    if node.kind != "scalar" or not isinstance(node.value, str):
        return False
    text = node.value.strip()
    if "true or false" in expected and text.lower() in BOOL_WORDS:
        return True
    return ("number" in expected or "integer" in expected) and _NUMBER.fullmatch(text) is not None


def _code_constraints(ctx, base: tuple, seen: set) -> list[Finding]:
    doc = ctx.document
    out: list[Finding] = []
    for rel, (minimum, why) in MINIMUMS.get(ctx.flavor, {}).items():
        path = tuple(base) + rel
        if path in seen:
            continue
        node = doc.find(path)
        value = as_int(node.value) if node is not None and node.kind == "scalar" else None
        if value is None or value >= minimum:
            continue
        label = ".".join(str(p) for p in path)
        out.append(Finding("range", node, path, f"`{label}` must be at least {minimum}, got {value}",
                           f"at least {minimum}", detail=f"{why[0].upper()}{why[1:]}."))
    for rel, allowed in ENUMS.get(ctx.flavor, {}).items():
        path = tuple(base) + rel
        if path in seen:
            continue
        node = doc.find(path)
        if node is None or node.kind != "scalar" or node.value is None:
            continue
        value = node.value
        if value in allowed or (isinstance(value, str) and value.upper() in [str(a).upper() for a in allowed]
                                and path[-1] != "zero_stage"):
            continue
        if isinstance(value, bool):
            continue
        label = ".".join(str(p) for p in path)
        guess = suggest(str(value), [str(a) for a in allowed], cutoff=0.7)
        shown = ", ".join(str(a) for a in allowed)
        shown_value = f'"{value}"' if isinstance(value, str) else str(value)
        message = f"`{label}` has no value {shown_value}" + (f"; did you mean \"{guess}\"?" if guess else "")
        out.append(Finding("enum", node, path, message, f"one of {shown}", guess, detail=f"Expected one of {shown}."))
    return out
