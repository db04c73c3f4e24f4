"""Shared reads for the DeepSpeed rules (TL2xx-TL6xx DeepSpeed family): which DeepSpeed configs a
lint sees (the file itself, linked files, inline `deepspeed: {...}` mappings), who reads them (raw
DeepSpeed or an integration), and the values the integrations fill or compare.

Not a rule: it has no RULE and is not registered.
"""

from __future__ import annotations

import difflib
import functools
import os
from dataclasses import dataclass
from pathlib import Path

from trainlint.context import codeargs, pins
from trainlint.context import dialect as dialect_context
from trainlint.context import launch as launch_context
from trainlint.context.dialect import HF_TRAINER
from trainlint.document.tree import Document, Entry, Node
from trainlint.fixes.edits import replace_value, scalar_text
from trainlint.flavors.base import as_bool, as_float, as_int, as_str, is_auto, uses_auto
from trainlint.flavors.deepspeed import is_megatron
from trainlint.flavors.huggingface import dialect

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Integrations that read a DeepSpeed config, and where their configs name it.
LINK_KEYS: dict[str, list[tuple[str, ...]]] = {
    "huggingface": [("deepspeed",)],
    "axolotl": [("deepspeed",)],
    "accelerate": [("deepspeed_config", "deepspeed_config_file")],
    "lightning": [("trainer", "strategy", "init_args", "config"), ("fit", "trainer", "strategy", "init_args", "config")],
}
HF_HOSTS = ("huggingface", "axolotl")  # HF Trainer's HfTrainerDeepSpeedConfig compares values
FILLING_HOSTS = ("huggingface", "axolotl", "accelerate")  # fill "auto" values
ALL_FLAVORS = ("deepspeed", "huggingface", "axolotl", "accelerate", "lightning")

# What fills "auto" (transformers 5.0-5.24 integrations/deepspeed.py HfTrainerDeepSpeedConfig.trainer_config_process
# / trainer_config_finalize; accelerate 1.12-1.15 utils/dataclasses.py DeepSpeedPlugin + accelerator.py
# _prepare_deepspeed).
HF_FILLED = {
    ("train_micro_batch_size_per_gpu",), ("gradient_accumulation_steps",), ("train_batch_size",),
    ("gradient_clipping",),
    ("optimizer", "params", "lr"), ("optimizer", "params", "betas"), ("optimizer", "params", "eps"),
    ("optimizer", "params", "weight_decay"),
    ("scheduler", "params", "warmup_min_lr"), ("scheduler", "params", "warmup_max_lr"),
    ("scheduler", "params", "warmup_num_steps"), ("scheduler", "params", "total_num_steps"),
    ("fp16", "enabled"), ("bf16", "enabled"),  # amp.enabled / amp.opt_level: transformers 4.x only
    ("zero_optimization", "reduce_bucket_size"), ("zero_optimization", "stage3_prefetch_bucket_size"),
    ("zero_optimization", "stage3_param_persistence_threshold"),
}
ACCELERATE_FILLED = {
    ("train_micro_batch_size_per_gpu",), ("gradient_accumulation_steps",), ("train_batch_size",),
    ("gradient_clipping",), ("zero_optimization", "stage"),
    ("zero_optimization", "offload_optimizer", "device"), ("zero_optimization", "offload_param", "device"),
    ("zero_optimization", "offload_optimizer", "nvme_path"), ("zero_optimization", "offload_param", "nvme_path"),
    ("zero_optimization", "stage3_gather_16bit_weights_on_model_save"),
    ("fp16", "enabled"), ("bf16", "enabled"),
    ("zero_optimization", "reduce_bucket_size"), ("zero_optimization", "stage3_prefetch_bucket_size"),
    ("zero_optimization", "stage3_param_persistence_threshold"),
    ("optimizer", "params", "lr"), ("optimizer", "params", "weight_decay"),
    ("scheduler", "params", "warmup_min_lr"), ("scheduler", "params", "warmup_max_lr"),
    ("scheduler", "params", "warmup_num_steps"), ("scheduler", "params", "total_num_steps"),
}
# HF Trainer runs inside Accelerate: both fill lists apply to an HF or Axolotl run.
FILLED_BY = {
    "huggingface": HF_FILLED | ACCELERATE_FILLED,
    "axolotl": HF_FILLED | ACCELERATE_FILLED,
    "accelerate": ACCELERATE_FILLED,
    "lightning": set(),  # Lightning fills absent keys, never "auto" (strategies/deepspeed.py)
    None: HF_FILLED | ACCELERATE_FILLED,  # a DeepSpeed file on its own: whichever integration it is meant for
}

# Parsers whose scripts train with HF Trainer (or a subclass: TRL, LLaMA-Factory, ms-swift, Axolotl): run through
# an accelerate config's deepspeed_config_file, Trainer.propagate_args_to_deepspeed fills the file as well.
HF_TRAINER_DIALECTS = {"hf", "trl", "llamafactory", "open-r1", "firefly", "ms-swift", "axolotl"}


def filled_for(ctx, cfg: "DSConfig") -> set:
    """The keys whose "auto" something fills for this run: an accelerate config's DeepSpeed file launched with an
    HF Trainer script (the launched script's parser, `ctx.dialect`) is filled by HF Trainer too
    (transformers `Trainer.propagate_args_to_deepspeed` -> `HfTrainerDeepSpeedConfig.trainer_config_process`)."""
    if cfg.host == "accelerate" and getattr(ctx, "dialect", None) is not None and \
            ctx.dialect.name in HF_TRAINER_DIALECTS:
        return FILLED_BY["huggingface"]
    return cfg.filled


HOST_NAMES = {"huggingface": "HF Trainer", "axolotl": "Axolotl (HF Trainer)", "accelerate": "Accelerate",
              "lightning": "Lightning's DeepSpeedStrategy", None: "DeepSpeed"}


@dataclass(eq=False)  # state, compared by identity
class DSConfig:
    """One DeepSpeed config seen by this lint."""

    doc: Document  # the DeepSpeed file, or the host file seen from an inline mapping
    host: str | None  # None: DeepSpeed reads it itself; else the integration flavor
    host_doc: Document | None = None  # None with a host: the launch passes the file on the command line
    link: Node | None = None  # the host's key naming it
    launch: Any = None  # the Launch whose script arguments reach the host's parser (context.launch.Launch)
    autotuned: bool = False  # `deepspeed --autotuning` runs over it: the autotuner writes AUTOTUNED per experiment
    dialect: str = ""  # the host script's parser, when the launch passes the file on the command line

    def autotuner_writes(self, path) -> bool:
        """Whether the DeepSpeed autotuner replaces this key (path) in every experiment's config."""
        return self.autotuned and tuple(path)[:1] in AUTOTUNED

    @property
    def root(self) -> Node | None:
        root = self.doc.root
        return root if root is not None and root.kind == "mapping" else None

    def find(self, *path) -> Node | None:
        return self.root.find(path) if self.root is not None else None

    @property
    def inline(self) -> bool:
        return self.host_doc is not None and self.doc.path == self.host_doc.path

    @property
    def name(self) -> str:
        """How messages name this config."""
        if self.inline:
            key = ".".join(str(k) for k in self.link.key_path) if self.link is not None else "deepspeed"
            return f"the inline `{key}` config"
        return self.doc.path

    @property
    def short_name(self) -> str:
        """How one-line messages name this config: the file's name without its folder."""
        if self.inline:
            return self.name
        return os.path.basename(self.doc.path) or self.doc.path

    @property
    def filled(self) -> set:
        return FILLED_BY.get(self.host, set())


# What `deepspeed --autotuning run|tune` writes into each experiment's config before the script (HF Trainer,
# Accelerate) sees it (deepspeed/autotuning/autotuner.py: Autotuner._generate_experiments and
# run_tuning_micro_batch_sizes: zero_optimization from the tuning space's template, train_micro_batch_size_per_gpu
# from the tuning list, gradient_accumulation_steps = max_train_batch_size_per_gpu // micro, train_batch_size =
# micro x gas x GPUs; the rest of the user's config is kept), and scheduler.py run_experiment passes it in place of
# the file (`--deepspeed` / `--deepspeed_config` gets the experiment's config) and sets the script arguments
# autotuning.arg_mappings names (`--per_device_train_batch_size`, `--gradient_accumulation_steps`) to the same
# values.
AUTOTUNED = {("zero_optimization",), ("train_micro_batch_size_per_gpu",), ("gradient_accumulation_steps",),
             ("train_batch_size",)}


def _launch_host(ctx) -> tuple[str | None, Any]:
    """(host, launch) for a DeepSpeed file the launch itself passes to the script: HF Trainer when it is the
    `--deepspeed X` TrainingArguments field of a script whose parser is an HF Trainer one."""
    launch = getattr(ctx, "launch", None)
    if launch is None or not launch.found or launch.role != "hf-deepspeed":
        return None, None
    dialect = getattr(ctx, "dialect", None)
    if dialect is None or dialect.name not in HF_TRAINER:
        return None, None
    return "huggingface", launch


def _autotuning_block(doc: Document) -> bool:
    root = doc.root
    node = root.find(("autotuning", "enabled")) if root is not None and root.kind == "mapping" else None
    return node is not None and node.kind == "scalar" and as_bool(node.value) is True


def _dialect_name(ctx) -> str:
    dialect = getattr(ctx, "dialect", None)
    return dialect.name if dialect is not None else ""


def ds_configs(ctx) -> list[DSConfig]:
    """The DeepSpeed configs this lint sees: the file itself when it is one, else those its host links. A
    DeepSpeed file a launch passes to an HF Trainer script as `--deepspeed X` has that host, with the launch's
    arguments as its TrainingArguments."""
    doc = ctx.document
    launch = getattr(ctx, "launch", None)
    if ctx.flavor == "deepspeed":
        if is_megatron(doc):
            return []  # GPT-NeoX / Megatron: DeepSpeed sections inside another launcher's config
        host, via = _launch_host(ctx)
        if launch is not None and launch.found and launch.role in ("hf-deepspeed", "deepspeed"):
            autotuned = bool(launch.autotuning)
        else:  # no launch names it: an enabled `autotuning` block says it is the autotuner's template
            autotuned = _autotuning_block(doc)
        cfg = DSConfig(doc, host, launch=via, autotuned=autotuned, dialect=_dialect_name(ctx) if host else "")
        return [cfg] if cfg.root is not None else []
    if ctx.flavor not in LINK_KEYS or doc.root is None:
        return []
    via = launch if launch is not None and launch.found and launch.role == "config" else None
    out: list[DSConfig] = []
    link = None
    for path in LINK_KEYS[ctx.flavor]:
        node = doc.find(path)
        if node is None:
            continue
        link = node
        if node.kind == "mapping":
            out.append(DSConfig(doc.subdocument(node), ctx.flavor, doc, node, launch=via))
    for linked in ctx.linked:
        cfg = DSConfig(linked, ctx.flavor, doc, link, launch=via)
        if cfg.root is not None and linked.path != doc.path:
            out.append(cfg)
    return out


def key_name(path) -> str:
    return ".".join(str(k) for k in path)


def stage(cfg: DSConfig) -> int | None:
    """The ZeRO stage DeepSpeed will use: 0 when absent, None when unknown ("auto", unreadable)."""
    node = cfg.find("zero_optimization")
    if node is None:
        return 0
    if node.kind == "scalar":
        flag = as_bool(node.value)
        return 1 if flag else 0 if flag is False else None
    if node.kind != "mapping":
        return None
    st = node.get("stage")
    if st is None:
        return 0
    if is_auto(st):
        return None
    return as_int(st.value)


def stage_node(cfg: DSConfig) -> Node | None:
    return cfg.find("zero_optimization", "stage") or cfg.find("zero_optimization")


def offload_device(cfg: DSConfig, section: str) -> tuple[str | None, Node | None]:
    """(device, node) of zero_optimization.<section>.device; device lower-cased, None if absent/auto."""
    sec = cfg.find("zero_optimization", section)
    if sec is None or sec.kind != "mapping":
        return None, sec
    dev = sec.get("device")
    if dev is None or is_auto(dev) or dev.kind != "scalar":
        return None, sec
    value = as_str(dev.value)
    return (value.lower() if value else None), sec


def scalar(node: Node | None) -> Any:
    """A scalar's value, None for absent, "auto" and non-scalars."""
    if node is None or node.kind != "scalar" or is_auto(node):
        return None
    return node.value


def ds_int(node: Node | None) -> int | None:
    value = scalar(node)
    return as_int(value) if value is not None else None


def entry_of(doc: Document, node: Node) -> tuple[Node, Entry] | None:
    """(parent mapping, entry) holding `node`."""
    if not node.key_path or doc.root is None:
        return None
    parent = doc.root.find(node.key_path[:-1]) if len(node.key_path) > 1 else doc.root
    if parent is None or parent.kind != "mapping" or not isinstance(node.key_path[-1], str):
        return None
    entry = parent.entry(node.key_path[-1])
    return (parent, entry) if entry is not None else None


def did_you_mean(key: str, known) -> str | None:
    lowered = {k.lower(): k for k in known}
    found = difflib.get_close_matches(key.lower(), list(lowered), n=1, cutoff=0.75)
    return lowered[found[0]] if found else None


def auto_text(doc: Document) -> str:
    return scalar_text(doc, "auto")


def number_text(doc: Document, value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e18:
        value = int(value)
    return scalar_text(doc, value)


# ---- the host side: TrainingArguments values HF compares with the DeepSpeed config -------------------------

@dataclass
class HostValue:
    """A value the HF integration compares with the DeepSpeed config, and where it was set."""
    value: Any
    node: Node | None  # None: a default, or a launch argument (origin)
    label: str  # how HF's mismatch line names it, e.g. "per_device_train_batch_size"
    note: str = ""  # "(the TrainingArguments default)" etc.
    origin: Any = None  # the launch argument that set it (a plan.Origin), when the command line did
    known: bool = False  # the launch decides it: it passes the value, or the launch passes nothing that overrides it

    @property
    def key(self) -> str:
        """The host's key as its file writes it (`micro_batch_size`); the label for a default or a launch argument."""
        if self.origin is not None or self.node is None or isinstance(self.value, list):
            return self.label
        return ".".join(str(k) for k in self.node.key_path) or self.label

    def describe(self, host_doc: Document | None) -> str:
        if self.origin is not None:
            return f"{self.label} is {fmt(self.value)} ({where_launched(self.origin)})"
        if self.node is None:
            return f"{self.label} is {fmt(self.value)} ({self.note or 'the default'})"
        key = self.label if isinstance(self.value, list) else ".".join(str(k) for k in self.node.key_path) or self.label
        return f"{key} is {fmt(self.value)} in {host_doc.path if host_doc is not None else 'the host config'}"


def fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        return "[" + ", ".join(fmt(v) for v in value) + "]"
    return str(value)


def hf_dialect(doc: Document) -> str:
    return dialect(doc)


def where_launched(origin) -> str:
    """`--gradient_accumulation_steps 16` passed to x.py, scripts/train.sh:12 (the path relative to the working
    directory when it is under it)."""
    path = origin.path
    try:
        rel = os.path.relpath(path)
        path = rel if not rel.startswith("..") else path
    except ValueError:
        pass
    line = f":{origin.span.start.line + 1}" if origin.span is not None else ""
    return f"{origin.note}, {path}{line}" if origin.note else f"{path}{line}"


def _arg_value(raw, what: str):
    """A script argument's text as HfArgumentParser types it (string_to_bool for the flags)."""
    if raw is None:
        return None
    if what in ("fp16", "bf16"):
        text = str(raw).strip().lower()
        return True if text in ("yes", "true", "t", "y", "1") else False if text in ("no", "false", "f", "n", "0") \
            else None
    value = as_float(raw) if what in ("clip", "lr", "beta1", "beta2", "eps", "wd", "warmup") else as_int(raw)
    if what == "warmup" and value is not None:
        if 0 < value < 1:
            return None  # a ratio of the training steps
        value = int(value)
    return value


def host_value(cfg: DSConfig, what: str) -> HostValue | None:
    """The TrainingArguments value HF compares with a DeepSpeed key: the launch's command-line argument where
    the script's parser lets it override the file, else the host file's value, else the default HF uses.

    what: micro | gas | clip | lr | beta1 | beta2 | eps | wd | warmup | fp16 | bf16.
    Axolotl hosts count only what the file sets (plus its documented batch defaults)."""
    doc = cfg.host_doc
    launch = cfg.launch
    if doc is None:
        if cfg.host is None or launch is None:
            return None
        return _command_line_value(cfg, what, launch)
    if doc.root is None or doc.root.kind != "mapping":
        return None
    found = _host_file_value(cfg, what)
    keys = ARG_KEYS.get(cfg.host or "", ARG_KEYS["huggingface"])
    if launch is None or what not in keys:
        return found
    key = keys[what]
    arg = launch.argument(key)
    if not launch.agreed(key):
        return None  # the launches that run the file pass different values: which one runs is not known
    if launch.parser_reads not in ("override", "command-line", "file"):
        return None if arg is not None else found  # which of the two wins depends on the script
    if arg is not None and launch.parser_reads != "file":
        value = _arg_value(arg.value, what)
        if value is None:
            return None  # a shell variable, or text HF would not take: unknown
        return HostValue(value, None, found.label if found is not None else key, origin=arg.origin, known=True)
    if found is not None and found.node is None and found.origin is None:
        code = _set_in_code(launch, key, what)  # a default of the library, unless the script sets it in code
        if code is not None:
            return code if code.known else None
    if found is not None:
        found.known = True  # the launch passes nothing that overrides it
    return found


def _script_code_value(launch, key: str) -> codeargs.CodeValue | None:
    """How the script the launch runs sets training argument `key` in its own code (context.codeargs: a keyword of the
    TrainingArguments it constructs, an assignment after parsing, its own subclass's default); None when it does not,
    or there is no launched script in the repository."""
    if launch is None or not launch.found or not launch.script:
        return None
    try:
        root = pins.repo_root(Path(launch.origin.path).parent) if launch.origin.path else None
        path = dialect_context.script_path(launch.script, launch_context.bases_of(launch, root))
    except (OSError, ValueError, RuntimeError):
        return None
    return codeargs.code_value(path, key) if path else None


def _set_in_code(launch, key: str, what: str) -> HostValue | None:
    """The value the launched script gives training argument `key` in its own code (context.codeargs: a keyword of
    the TrainingArguments it constructs, from a constant or its own argument's default; its own subclass's field
    default), as a HostValue (`known` False when the code computes it); None when the script does not set it."""
    code = _script_code_value(launch, key)
    if code is None:
        return None
    value = _arg_value(str(code.value), what) if code.known and code.value is not None else None
    return HostValue(value, None, key, f"set in the script's code: {code.where}", known=value is not None)


# The script argument (TrainingArguments field / axolotl option) for each compared value.
ARG_KEYS = {
    "huggingface": {"micro": "per_device_train_batch_size", "gas": "gradient_accumulation_steps",
                    "clip": "max_grad_norm", "lr": "learning_rate", "beta1": "adam_beta1", "beta2": "adam_beta2",
                    "eps": "adam_epsilon", "wd": "weight_decay", "warmup": "warmup_steps", "fp16": "fp16",
                    "bf16": "bf16"},
    "axolotl": {"micro": "micro_batch_size", "gas": "gradient_accumulation_steps", "clip": "max_grad_norm",
                "lr": "learning_rate", "beta1": "adam_beta1", "beta2": "adam_beta2", "eps": "adam_epsilon",
                "wd": "weight_decay", "warmup": "warmup_steps", "fp16": "fp16", "bf16": "bf16"},
}
# transformers TrainingArguments defaults (training_args.py, 5.0-5.24) for a script that reads the command line alone.
HF_DEFAULTS = {"micro": 8, "gas": 1, "clip": 1.0, "lr": 5e-5, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "wd": 0.0,
               "warmup": 0, "fp16": False, "bf16": False}


def _command_line_value(cfg: DSConfig, what: str, launch) -> HostValue | None:
    """The value for a DeepSpeed file the launch passes as `--deepspeed X`: the argument the command line gives,
    else, when the script reads the command line alone (no config file of its own), HF's default."""
    key = ARG_KEYS["huggingface"][what]
    arg = launch.argument(key)
    if not launch.agreed(key):
        return None  # the launches that run the file pass different values
    if arg is not None and launch.parser_reads in ("override", "command-line"):
        value = _arg_value(arg.value, what)
        return HostValue(value, None, key, origin=arg.origin, known=True) if value is not None else None
    if launch.parser_reads != "command-line" or arg is not None or cfg.dialect != "hf":
        return None  # a config file of the script's own decides it, a parser with defaults of its own, or unknown
    if what == "warmup" and launch.argument("warmup_ratio") is not None:
        return None
    code = _set_in_code(launch, key, what)
    if code is not None:
        return code if code.known else None  # the script builds its TrainingArguments itself
    where = where_launched(launch.origin).split(", ")[-1] if launch.origin.path else "the launch"
    return HostValue(HF_DEFAULTS[what], None, key,
                     f"the TrainingArguments default: the launch at {where} does not pass --{key}", known=True)


def _host_file_value(cfg: DSConfig, what: str) -> HostValue | None:
    doc = cfg.host_doc
    if doc is None:
        return None
    table: dict[str, tuple[tuple[str, ...], Any, str, str]]
    if cfg.host == "axolotl":
        table = {
            "micro": (("micro_batch_size",), 1, "per_device_train_batch_size", "Axolotl's micro_batch_size default"),
            "gas": (("gradient_accumulation_steps",), 1, "gradient_accumulation_steps", "Axolotl's default"),
            "clip": (("max_grad_norm",), None, "max_grad_norm", ""),
            "lr": (("learning_rate",), None, "learning_rate", ""),
            "beta1": (("adam_beta1",), None, "adam_beta1", ""),
            "beta2": (("adam_beta2",), None, "adam_beta2", ""),
            "eps": (("adam_epsilon",), None, "adam_epsilon", ""),
            "wd": (("weight_decay",), None, "weight_decay", ""),
            "warmup": (("warmup_steps",), None, "warmup_steps", ""),
            "fp16": (("fp16",), None, "fp16", ""),
            "bf16": (("bf16",), None, "bf16", ""),
        }
    else:
        trl = hf_dialect(doc) == "trl"
        table = {
            "micro": (("per_device_train_batch_size",), 8, "per_device_train_batch_size", "the TrainingArguments default"),
            "gas": (("gradient_accumulation_steps",), 1, "gradient_accumulation_steps", "the TrainingArguments default"),
            "clip": (("max_grad_norm",), 1.0, "max_grad_norm", "the TrainingArguments default"),
            "lr": (("learning_rate",), 5e-5, "learning_rate", "the TrainingArguments default"),
            "beta1": (("adam_beta1",), 0.9, "adam_beta1", "the TrainingArguments default"),
            "beta2": (("adam_beta2",), 0.999, "adam_beta2", "the TrainingArguments default"),
            "eps": (("adam_epsilon",), 1e-8, "adam_epsilon", "the TrainingArguments default"),
            "wd": (("weight_decay",), 0.0, "weight_decay", "the TrainingArguments default"),
            "warmup": (("warmup_steps",), 0, "warmup_steps", "the TrainingArguments default"),
            "fp16": (("fp16",), False, "fp16", "the TrainingArguments default"),
            "bf16": (("bf16",), None if trl else False, "bf16", "the TrainingArguments default"),
        }
    path, dflt, label, note = table[what]
    node = doc.find(path)
    if what in ("fp16", "bf16"):
        value = as_bool(node.value) if node is not None and node.kind == "scalar" else None
        full = doc.find((f"{what}_full_eval",))
        full_value = as_bool(full.value) if full is not None and full.kind == "scalar" else None
        if value is None and node is not None:
            return None  # Axolotl `bf16: auto`: decided by the GPU
        if value is None:
            if what == "bf16" and cfg.host == "huggingface" and hf_dialect(doc) == "trl":
                fp16 = doc.find(("fp16",))
                on = not (fp16 is not None and as_bool(fp16.value))
                return HostValue(on or bool(full_value), None, "bf16", "TRL's default: bf16 unless fp16")
            if dflt is None:
                return None
            value = dflt
        if full_value:
            return HostValue(True, full or node, label + " or " + f"{what}_full_eval")
        return HostValue(value, node, label, note if node is None else "")
    if node is None:
        if dflt is None:
            return None
        if what == "warmup" and doc.find(("warmup_ratio",)) is not None:
            return None  # depends on the number of training steps
        return HostValue(dflt, None, label, note)
    if node.kind != "scalar":
        return None
    amount = as_float(node.value) if what in ("clip", "lr", "beta1", "beta2", "eps", "wd", "warmup") else as_int(node.value)
    if amount is None:
        return None
    if what == "warmup":
        if 0 < amount < 1:
            return None  # transformers v5: a float below 1 is a ratio of the training steps
        amount = int(amount)
    return HostValue(amount, node, label)


def known_world(plan) -> int | None:
    """The world size when something real says it (--num-gpus, a directive, the project settings, the
    launcher config), not when it was guessed from the batch keys themselves."""
    if plan is None:
        return None
    setting = plan.num_gpus
    kind = setting.origin.kind
    if kind == "default":
        return None
    if kind == "inferred" and "train_batch_size" in setting.origin.note:
        return None
    return setting.value if isinstance(setting.value, int) and setting.value > 0 else None


# ---- DeepSpeed's batch arithmetic (runtime/config.py _set_batch_related_parameters / _batch_assertion) ------

BATCH_KEYS = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")
BATCH_ASSERT = ("Check batch related parameters. train_batch_size is not equal to "
                "micro_batch_per_gpu * gradient_acc_step * world_size")
# _batch_assertion checks these in this order before the equality (DeepSpeed 0.17.0-0.19.8).
POSITIVE = (("Train batch size", 0), ("Micro batch size per gpu", 1), ("Gradient accumulation steps", 2))


def deepspeed_batch(tb, micro, gas, world):
    """DeepSpeed's fill-in and check, run the way DeepSpeed runs them: (tb, micro, gas, first stop) where the
    first stop is the message DeepSpeed raises first (None: the batch is accepted). `world` is DeepSpeed's
    world size, an int, or a float when it divides by `sequence_parallel_size`. None when neither
    train_batch_size nor the micro-batch is given."""
    try:
        if tb is not None and micro is not None and gas is not None:
            pass
        elif tb is not None and micro is not None:
            gas = tb // micro
            gas //= world
        elif tb is not None and gas is not None:
            micro = tb // world
            micro //= gas
        elif micro is not None and gas is not None:
            tb = micro * gas * world
        elif tb is not None:
            gas, micro = 1, tb // world
        elif micro is not None:
            tb, gas = micro * world, 1
        else:
            return None
    except ZeroDivisionError as exc:
        return tb, micro, gas, f"ZeroDivisionError: {exc}"
    values = (tb, micro, gas)
    for label, index in POSITIVE:
        if not values[index] > 0:
            return tb, micro, gas, f"{label}: {values[index]} has to be greater than 0"
    if tb != micro * gas * world:
        return tb, micro, gas, f"{BATCH_ASSERT} {tb} != {micro} * {gas} * {world}"
    return tb, micro, gas, None


def resolve_batch(tb: int | None, micro: int | None, gas: int | None, world: int):
    """(tb, micro, gas, ok) after DeepSpeed's fill-in, or None when neither train_batch_size nor the
    micro-batch is given."""
    out = deepspeed_batch(tb, micro, gas, world)
    if out is None:
        return None
    r_tb, r_micro, r_gas, stop = out
    return r_tb, r_micro, r_gas, stop is None


def valid_worlds(tb: int | None, micro: int | None, gas: int | None, limit: int = 4096) -> list[int]:
    """DeepSpeed world sizes (data-parallel ranks) that pass the batch check."""
    try:
        return list(_valid_worlds(tb, micro, gas, limit))
    except TypeError:  # not hashable: computed without the cache
        return list(_valid_worlds.__wrapped__(tb, micro, gas, limit))


@functools.lru_cache(maxsize=256)
def _valid_worlds(tb, micro, gas, limit: int) -> tuple[int, ...]:  # 4096 checks: once per batch triple per run
    return tuple(world for world in range(1, limit + 1)
                 if (resolved := resolve_batch(tb, micro, gas, world)) is not None and resolved[3])


def list_worlds(worlds: list[int]) -> str:
    """"1, 2, 4 or 8 GPUs" / "1 GPU" / "1, 2, 4, 8, 16, 32, 64, 128, ... GPUs"."""
    shown = [str(w) for w in worlds[:8]]
    if len(worlds) > 8:
        return ", ".join(shown) + ", ... GPUs"
    if len(shown) == 1:
        return f"{shown[0]} GPU" + ("" if shown[0] == "1" else "s")
    return ", ".join(shown[:-1]) + " or " + shown[-1] + " GPUs"


def sequence_parallel(cfg: DSConfig) -> int:
    """The config's `sequence_parallel_size` (1 when absent or unreadable)."""
    value = ds_int(cfg.find("sequence_parallel_size"))
    return value if value is not None and value > 1 else 1


def ds_world(cfg: DSConfig, world: int) -> tuple[int | float, str]:
    """The world size DeepSpeed's batch check uses for `world` GPUs, and how it got it.

    runtime/config.py DeepSpeedConfig.__init__ without an mpu: `sequence_parallel_size` and
    `data_parallel_size` in the config make a mesh whose data-parallel group is the world size; with
    `sequence_parallel_size` alone, `dist.get_world_size() / sequence_parallel_size` (a float). AutoTP
    (`tensor_parallel.autotp_size`) does not reduce it: the config is built before the TP groups."""
    sp = sequence_parallel(cfg)
    if sp == 1:
        return world, ""
    dp = ds_int(cfg.find("data_parallel_size"))
    if dp is not None and dp > 0:
        return dp, f"data_parallel_size {dp} (with sequence_parallel_size {sp})"
    value = world / sp
    return value, f"{world} GPUs / sequence_parallel_size {sp}"


def first_stop_alone(tb, micro, gas) -> str | None:
    """DeepSpeed's first stop for written values when the world size is unknown: the message on one GPU,
    prefixed with "on 1 GPU" when it differs on two."""
    one = deepspeed_batch(tb, micro, gas, 1)
    two = deepspeed_batch(tb, micro, gas, 2)
    if one is None or one[3] is None:
        return None
    return one[3] if two is not None and two[3] == one[3] else f"on 1 GPU: {one[3]}"


def elastic(cfg: DSConfig) -> bool:
    """An enabled `elasticity` block: DeepSpeed <= 0.19.7 replaces the batch keys (0.19.8 refuses the block)."""
    node = cfg.find("elasticity", "enabled")
    return node is not None and node.kind == "scalar" and as_bool(node.value) is True


def is_comment_key(key) -> bool:
    """`_comment`, `__note`, `//`, `#...` keys: annotations in JSON, never settings."""
    return isinstance(key, str) and (key.startswith(("_", "//", "#")) or key.lower() in ("comment", "comments"))


def replace_text(doc: Document, node: Node, value: Any):
    """An edit writing `value` over `node` in the document's syntax ("auto", numbers, booleans)."""
    return replace_value(doc, node, text=number_text(doc, value) if isinstance(value, (int, float)) and not
                         isinstance(value, bool) else scalar_text(doc, value))


def looks_integrated(cfg: DSConfig) -> bool:
    """A DeepSpeed file written for an integration: linked from one, or holding "auto" values."""
    return cfg.host is not None or (cfg.root is not None and uses_auto(cfg.doc))


# Sections DeepSpeed reads through pydantic models (DeepSpeedConfigModel drops "auto" values there).
PYDANTIC_SECTIONS = {"zero_optimization", "fp16", "bf16", "bfloat16", "compile", "tensor_parallel", "hybrid_engine",
                     "tensorboard", "wandb", "csv_monitor", "comet", "comms_logger", "torch_autocast"}


def in_pydantic_section(path: tuple) -> bool:
    return bool(path) and path[0] in PYDANTIC_SECTIONS and len(path) > 1


def normalized(path: tuple) -> tuple:
    return ("bf16",) + tuple(path[1:]) if path and path[0] == "bfloat16" else tuple(path)
