"""A launch laid over a plan (`apply`): the world size, nodes, ZeRO stage / offload and FSDP mode it decides where
the config leaves them to defaults, and the script arguments the flavor readers take over the file's keys
(`view_overrides`); and whether the run's sharding is known at all (`sharding_known`)."""

from __future__ import annotations

import re
from pathlib import Path

from trainlint._patterns import compile_later
from trainlint.context import pins
from trainlint.context.launch.parsing import _int
from trainlint.context.launch.resolving import _resolve_path, bases_of
from trainlint.context.launch.values import Launch
from trainlint.plan import MASTER_BF16, MASTER_FP16, Origin, Setting

FSDP_MODES = {"1": "full_shard", "full_shard": "full_shard", "2": "shard_grad_op", "shard_grad_op": "shard_grad_op",
              "3": "no_shard", "no_shard": "no_shard", "4": "hybrid_shard", "hybrid_shard": "hybrid_shard",
              "5": "hybrid_shard", "_hybrid_shard_zero2": "hybrid_shard"}


def apply(plan, launch: Launch):
    """Lay what the launch decides over a plan: only where the config left a default or an inference
    (settings laid on afterwards still win)."""
    if plan is None or not launch.found:
        return plan
    changes = {}

    def weak(setting) -> bool:
        return setting.origin.kind in ("default", "inferred")

    if launch.num_processes.value is not None and weak(plan.num_gpus):
        changes["num_gpus"] = launch.num_processes
    if launch.num_machines.value is not None and weak(plan.num_nodes):
        changes["num_nodes"] = launch.num_machines
    if launch.role == "accelerate":  # the accelerate config linted: the options its launch gives win over its keys
        for key, field_name in (("num_processes", "num_gpus"), ("num_machines", "num_nodes")):
            given = getattr(launch, key)
            if key not in launch.overrides or field_name in changes:
                continue
            changes[field_name] = given if given.value is not None else Setting(
                getattr(plan, field_name).value, Origin("default", note=f"the launch gives --{key} through a shell "
                                                                         "variable: unknown"))
    sharding = launch.sharding.value or ""
    unsharded = weak(plan.zero_stage) and weak(plan.fsdp)
    if sharding.startswith("zero") and sharding[4:].isdigit() and unsharded and plan.flavor != "deepspeed":
        changes["zero_stage"] = Setting(int(sharding[4:]), launch.sharding.origin)
        for key, name in (("offload_optimizer", "offload_optimizer"), ("offload_param", "offload_params")):
            if launch.get(key) and weak(getattr(plan, name)):
                changes[name] = Setting(launch.get(key), launch.sharding.origin)
        held = _held_by_deepspeed(plan.precision)
        if held is not None:
            changes["precision"] = held
        if launch.get("zero3_save_16bit_model") and weak(plan.zero3_save_16bit):
            changes["zero3_save_16bit"] = Setting(launch.get("zero3_save_16bit_model") == "true",
                                                  launch.sharding.origin)
    elif sharding == "fsdp" and unsharded:
        mode = FSDP_MODES.get(str(launch.get("fsdp_strategy") or "FULL_SHARD").lower(), "full_shard")
        changes["fsdp"] = Setting(mode, launch.sharding.origin)
        # accelerate's FSDP plugin decides how checkpoints are saved (memory/phases.py, saving).
        if launch.get("fsdp_version") and weak(plan.fsdp_version):
            changes["fsdp_version"] = Setting(int(launch.get("fsdp_version")), launch.sharding.origin)
        if launch.get("fsdp_state_dict_type") and weak(plan.fsdp_state_dict):
            changes["fsdp_state_dict"] = Setting(launch.get("fsdp_state_dict_type"), launch.sharding.origin)
    changes.update(_argument_changes(plan, launch, weak))
    return plan.with_(**changes) if changes else plan


def _held_by_deepspeed(precision: Setting) -> Setting | None:
    """A 16-bit run that the launch hands to the DeepSpeed engine keeps fp32 master weights and fp32 optimizer
    states whatever dtype the model was loaded in (ZeRO 1/2 single_partition_of_fp32_groups, ZeRO-3
    fp32_partitioned_groups_flat, BF16_Optimizer at stage 0); None when there is nothing to change."""
    value = precision.value
    dtype = value.autocast or value.param_dtype
    if value.master_weights or dtype not in ("bf16", "fp16"):
        return None
    o = precision.origin
    return Setting(MASTER_BF16 if dtype == "bf16" else MASTER_FP16,
                   Origin(o.kind, o.path, o.key_path, o.span,
                          "held by DeepSpeed as 16-bit weights with an fp32 master copy"))


# The script arguments that set a plan field, per flavor of the file the script reads (its parser's field names).
PLAN_ARGUMENTS = {
    "huggingface": (("micro_batch", "per_device_train_batch_size"), ("grad_accum", "gradient_accumulation_steps")),
    "axolotl": (("micro_batch", "micro_batch_size"), ("grad_accum", "gradient_accumulation_steps")),
    "torchtune": (("micro_batch", "batch_size"), ("grad_accum", "gradient_accumulation_steps")),
    "litgpt": (("micro_batch", "train.micro_batch_size"),),
    # a DeepSpeed file passed as `--deepspeed X`: HF fills its "auto" (or absent) batch keys from the arguments
    "deepspeed": (("micro_batch", "per_device_train_batch_size"), ("grad_accum", "gradient_accumulation_steps")),
}


# Flavors whose reader takes the script's arguments over the file's keys (ConfigView overrides): the file is the
# script's config, read by a parser that lets the command line win.
READ_WITH_ARGUMENTS = ("huggingface", "axolotl", "torchtune", "litgpt")


_NUMBER = compile_later(r"[+-]?(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?)", re.I)


def _typed(raw):
    """A command-line value as the file would hold it: true/false, a number, else the text."""
    if raw is None:
        return None
    text = str(raw).strip()
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if _NUMBER.fullmatch(text):
        number = float(text)
        return int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number
    return text


def view_overrides(launch: Launch, flavor: str) -> dict | None:
    """{key path: (value, Origin)} for the flavor reader: the arguments the launch passes the script that reads
    this file as its config, where its parser lets them override the file (and every launch of the file agrees);
    None when there are none."""
    if not launch.found or flavor not in READ_WITH_ARGUMENTS or launch.role != "config" or \
            launch.parser_reads not in ("override", "command-line"):
        return None
    out = {}
    for key, setting in launch.arguments:
        if key in ("config", "config_file") or not launch.agreed(key):
            continue
        path = tuple(key.split(".")) if flavor in ("litgpt", "torchtune") else (key,)
        value = _typed(setting.value)
        if key in PATH_ARGUMENTS and isinstance(value, str):
            value = _from_launch_folder(value, launch)
        out[path] = (value, setting.origin)
    return out or None


# Script arguments that name a file, read from the folder the launch runs in (HF's and axolotl's `--deepspeed X`):
# the flavor reader gets the file's path from there, not from the config's folder.
PATH_ARGUMENTS = ("deepspeed",)


def _from_launch_folder(value: str, launch: Launch) -> str:
    """`value` (a relative path the launch passes) as the path of the file it names from the folder the launch
    runs in (the likeliest first); as written when none holds it."""
    if not value.endswith(".json") or value.startswith("/"):
        return value
    root = pins.repo_root(Path(launch.origin.path).parent) if launch.origin.path else None
    found = _resolve_path(value, bases_of(launch, root))
    return str(found) if found is not None else value


def _argument_changes(plan, launch: Launch, weak) -> dict:
    """Plan fields the script's command-line arguments set: over the config's own value where the parser lets
    the command line win (`parser_reads` "override" / "command-line"); for a DeepSpeed file the launch passes as
    `--deepspeed X`, only where the file leaves the value to HF ("auto" or absent)."""
    if launch.parser_reads not in ("override", "command-line"):
        return {}
    flavor = getattr(plan, "flavor", "")
    if flavor != "deepspeed" or launch.role != "hf-deepspeed":
        return {}  # a config the script reads takes them in its reader (view_overrides)
    out = {}
    for field_name, key in PLAN_ARGUMENTS.get(flavor, ()):
        if not launch.agreed(key):
            continue  # the launches that run the file pass different values
        arg = launch.argument(key)
        value = _int(arg.value) if arg is not None and arg.value is not None else None
        current = getattr(plan, field_name, None)
        if arg is None or value is None or current is None or (flavor == "deepspeed" and not weak(current)) or \
                current.origin.kind in ("cli", "directive", "project"):
            continue  # settings still win
        out[field_name] = Setting(value, arg.origin)
    return out


# Launchers that never add sharding: with them the config alone decides it.
CONFIG_DECIDES_SHARDING = ("torchrun", "python", "deepspeed", "tune", "litgpt", "llamafactory", "axolotl", "swift")


def sharding_known(plan, launch: Launch, flavor: str) -> bool:
    """Whether the run's sharding is known: the config states it, the launch decides it, or the launcher
    never adds any. Unknown: an HF-style YAML with no launch found (accelerate may add ZeRO or FSDP), or an
    accelerate launch without a config file (the machine's default config decides)."""
    if plan.zero_stage.origin.kind not in ("default",) or plan.fsdp.origin.kind not in ("default",):
        return True
    if flavor in ("deepspeed", "accelerate", "lightning", "litgpt", "axolotl"):
        return True  # the file states its own strategy; its absence is the framework's plain default
    if launch.found:
        given = launch.argument("deepspeed")
        if given is not None and given.value is None:
            return False  # `--deepspeed $DS_CONFIG`: a DeepSpeed config through a shell variable this file leaves unset
        return launch.launcher in CONFIG_DECIDES_SHARDING or launch.sharding.value is not None
    return False


def held_by_deepspeed(precision: Setting) -> Setting | None:
    """The precision of a run handed to the DeepSpeed engine (see `_held_by_deepspeed`), for the planning answers
    that try DeepSpeed layouts on a run without it; None when it does not change."""
    return _held_by_deepspeed(precision)
