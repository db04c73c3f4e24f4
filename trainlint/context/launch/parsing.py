"""Reading one launch command line: which launcher it is (accelerate launch, torchrun / python -m
torch.distributed.run, deepspeed, tune run, litgpt, axolotl, llamafactory-cli, trl, swift, megatron, python),
the launcher's own options (`Parsed`), and the arguments it hands the script, as that script's parser reads them
(`script_arguments`)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from trainlint._patterns import compile_later
from trainlint.context.launch.resolving import _ASSIGN, _expand


def _tokens(text: str) -> list[str]:
    text = text.split(" #", 1)[0]
    try:
        return shlex.split(text, comments=False)
    except ValueError:
        return text.split()


# An unquoted `$NAME` / `${NAME}` in a command: the shell splits its value into words.
_BARE_VARIABLE = compile_later(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def _split_variables(text: str, env: dict) -> str:
    """`text` with each unquoted variable whose value holds several words replaced by those words, as the shell's
    word splitting has them (`srun $SRUN_ARGS bash -c ...`, `accelerate launch $ARGS train.py`); quoted ones stay
    one word."""
    if "$" not in text:
        return text
    out, quote, i = [], "", 0
    while i < len(text):
        c = text[i]
        if c == "\\" and quote != "'" and i + 1 < len(text):
            out.append(text[i:i + 2])
            i += 2
            continue
        if quote:
            if c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c == "$":
            m = _BARE_VARIABLE.match(text, i)
            value = env.get(m.group(1) or m.group(2)) if m else None
            if m and value is not None and any(ch.isspace() for ch in value.strip()):
                out.append(" ".join(shlex.quote(w) for w in _tokens(value)))
                i = m.end()
                continue
        out.append(c)
        i += 1
    return "".join(out)


# launcher options: name -> (field, takes a value)
ACCELERATE_OPTS = {"--config_file": "config_file", "--config-file": "config_file", "--num_processes": "num_processes",
                   "--num-processes": "num_processes", "--num_machines": "num_machines",
                   "--num-machines": "num_machines", "--deepspeed_config_file": "deepspeed_config",
                   "--deepspeed-config-file": "deepspeed_config", "--zero_stage": "zero_stage",
                   "--zero-stage": "zero_stage", "--mixed_precision": "mixed_precision",
                   "--mixed-precision": "mixed_precision", "--main_process_port": None, "--main_process_ip": None,
                   "--machine_rank": None, "--gpu_ids": "gpu_ids", "--offload_optimizer_device": "offload_optimizer",
                   "--offload_param_device": "offload_param", "--fsdp_sharding_strategy": "fsdp_strategy",
                   "--rdzv_backend": None, "--dynamo_backend": None, "--num_cpu_threads_per_process": None,
                   "--fsdp_version": None, "--tp_size": None, "--rdzv_conf": None, "--same_network": None,
                   "--deepspeed_hostfile": None, "--deepspeed_multinode_launcher": None}


ACCELERATE_FLAGS = {"--use_deepspeed": "deepspeed", "--use-deepspeed": "deepspeed", "--use_fsdp": "fsdp",
                    "--use-fsdp": "fsdp", "--multi_gpu": "multi_gpu", "--multi-gpu": "multi_gpu", "--cpu": "cpu",
                    "-m": "module", "--module": "module", "--no_python": None, "--quiet": None, "-q": None}
TORCHRUN_OPTS = {"--nproc_per_node": "num_processes", "--nproc-per-node": "num_processes", "--nnodes": "num_machines",
                 "--node_rank": None, "--node-rank": None, "--master_addr": None, "--master-addr": None,
                 "--master_port": None, "--master-port": None, "--rdzv_backend": None, "--rdzv-backend": None,
                 "--rdzv_endpoint": None, "--rdzv-endpoint": None, "--rdzv_id": None, "--rdzv-id": None,
                 "--max_restarts": None, "--max-restarts": None, "--monitor_interval": None, "--log_dir": None,
                 "--role": None, "--rdzv_conf": None, "--local_addr": None, "--tee": None, "--redirects": None}
TORCHRUN_FLAGS = {"--standalone": None, "-m": "module", "--module": "module", "--no_python": None,
                  "--no-python": None}
DEEPSPEED_OPTS = {"--num_gpus": "num_gpus", "--num-gpus": "num_gpus", "--num_nodes": "num_machines",
                  "--num-nodes": "num_machines", "--hostfile": None, "-H": None, "--include": "include", "-i": "include",
                  "--exclude": None, "-e": None, "--master_port": None, "--master_addr": None, "--launcher": None,
                  "--launcher_args": None, "--module": None, "--node_rank": None, "--autotuning": "autotuning"}


@dataclass
class Parsed:
    """A launch command read into fields (None = the command does not say)."""

    launcher: str = ""
    values: dict = field(default_factory=dict)  # field -> raw string
    script: str = ""
    args: list = field(default_factory=list)  # what follows the script
    env: dict = field(default_factory=dict)
    options: list = field(default_factory=list)  # the launcher's own options as given (`--num_processes`, ...)


def _read_opts(tokens: list[str], i: int, opts: dict, flags: dict, values: dict, seen: list | None = None) -> int:
    """Consume launcher options from tokens[i:]; return the index of the first non-option (`seen` collects the
    options' names)."""
    while i < len(tokens):
        tok = tokens[i]
        if not tok.startswith("-"):
            return i
        name, eq, val = tok.partition("=")
        if seen is not None and name not in ("-m", "--module"):
            seen.append(name)
        if name in flags:
            field_name = flags[name]
            if field_name == "module":
                return i  # `-m module`: the module is the script
            if field_name:
                values[field_name] = "1"
            i += 1
            continue
        if name in opts or name.startswith("--"):
            field_name = opts.get(name)
            if eq:
                value = val
                i += 1
            elif i + 1 < len(tokens) and (name in opts or not tokens[i + 1].startswith("-")) and \
                    not (name not in opts and re.search(r"\.(py|ya?ml|json)$", tokens[i + 1])):
                value = tokens[i + 1]
                i += 2
            else:
                value, i = "1", i + 1
            if field_name:
                values[field_name] = value
            continue
        i += 1
    return i


def _with_script(p, tokens: list[str], i: int):
    """After a launcher's own options: the script (or `-m module`) it runs, and the script's arguments."""
    if i < len(tokens) and tokens[i] in ("-m", "--module"):
        p.script, i = (tokens[i + 1] if i + 1 < len(tokens) else ""), i + 2
    elif i < len(tokens):
        p.script, i = tokens[i], i + 1
    p.args = tokens[i:]
    return p


def parse_command(text: str, env: dict | None = None, depth: int = 0) -> Parsed | None:
    """Read one launch command line (already joined); None when it launches nothing trainlint knows. The string
    of a `bash -c "..."` / `sh -c` is read as the command (`depth`: how many such strings in)."""
    env = dict(env or {})
    tokens = [_expand(t, env) for t in _tokens(_split_variables(text, env))]
    # leading VAR=value assignments (FORCE_TORCHRUN=1 NNODES=2 llamafactory-cli train x.yaml)
    while tokens and _ASSIGN.match(tokens[0]) and "=" in tokens[0] and not tokens[0].startswith("-"):
        name, _, value = tokens[0].partition("=")
        env[name] = value.strip("\"'")
        tokens = tokens[1:]
    for pos in range(len(tokens)):  # the launcher may come after `srun`, `CUDA_VISIBLE_DEVICES=0 `, `uv run`, ...
        tok = tokens[pos]
        base = Path(tok).name
        nxt = tokens[pos + 1] if pos + 1 < len(tokens) else ""
        if base in ("bash", "sh", "zsh") and nxt == "-c" and pos + 2 < len(tokens) and depth < 4:
            return parse_command(tokens[pos + 2], env, depth + 1)  # `bash -c "$LAUNCHER $CMD"`: the string it runs
        if base == "accelerate" and nxt == "launch":
            p = Parsed("accelerate", env=env)
            return _with_script(p, tokens, _read_opts(tokens, pos + 2, ACCELERATE_OPTS, ACCELERATE_FLAGS, p.values,
                                                      p.options))
        if base == "torchrun" or (base.startswith("python") and nxt == "-m" and pos + 2 < len(tokens)
                                  and tokens[pos + 2] in ("torch.distributed.run", "torch.distributed.launch")):
            p = Parsed("torchrun", env=env)
            start = pos + 1 if base == "torchrun" else pos + 3
            return _with_script(p, tokens, _read_opts(tokens, start, TORCHRUN_OPTS, TORCHRUN_FLAGS, p.values))
        if base == "deepspeed" and nxt and not nxt.endswith(".json"):
            p = Parsed("deepspeed", env=env)
            i = _read_opts(tokens, pos + 1, DEEPSPEED_OPTS, {}, p.values)
            if i < len(tokens):
                p.script, i = tokens[i], i + 1
            p.args = tokens[i:]
            return p
        if base == "tune" and nxt == "run":
            p = Parsed("tune", env=env)
            i = _read_opts(tokens, pos + 2, TORCHRUN_OPTS, TORCHRUN_FLAGS, p.values)
            if i < len(tokens):
                p.script, i = tokens[i], i + 1
            p.args = tokens[i:]
            return p
        if base == "litgpt" and nxt:
            return Parsed("litgpt", script=nxt, args=tokens[pos + 2:], env=env)
        if base == "axolotl" and nxt in ("train", "preprocess", "inference", "merge-lora", "evaluate"):
            p = Parsed("axolotl", script="axolotl." + nxt, env=env)
            i = _read_opts(tokens, pos + 2, {"--launcher": None, "--num-processes": "num_processes",
                                             "--num_processes": "num_processes"}, {}, p.values)
            p.args = tokens[i:] if i < len(tokens) else tokens[pos + 2:]
            return p
        if base == "llamafactory-cli" and nxt == "train":
            return Parsed("llamafactory", script="llamafactory-cli train", args=tokens[pos + 2:], env=env)
        if base == "megatron" and nxt in ("sft", "pt", "rlhf", "export"):
            # ms-swift's Megatron entry point (swift/cli/_megatron/main.py): the same argv handling as `swift`
            return Parsed("swift", script=f"megatron {nxt}", args=tokens[pos + 2:], env=env)
        if base in ("trl", "swift") and nxt and not nxt.startswith("-"):
            p = Parsed(base, script=f"{base} {nxt}", env=env)
            p.args = tokens[pos + 2:]
            _read_opts(list(p.args), 0, {"--num_processes": "num_processes", "--config_file": "config_file",
                                         "--num_machines": "num_machines"}, {}, p.values) if base == "trl" else None
            return p
        if base.startswith("python") and re.fullmatch(r"python[0-9.]*", base):
            rest = tokens[pos + 1:]
            while rest and rest[0] in ("-u", "-O", "-B"):
                rest = rest[1:]
            if rest[:1] == ["-m"] and len(rest) > 1:
                return Parsed("python", script=rest[1], args=rest[2:], env=env)
            if rest and rest[0].endswith(".py"):
                return Parsed("python", script=rest[0], args=rest[1:], env=env)
            return None
    return None


def _int(text) -> int | None:
    try:
        value = int(str(text).strip())
    except (TypeError, ValueError):
        return None
    return value if value >= 1 else None


# Options of the trl CLI that belong to accelerate launch (trl/cli.py hands them on), not to the script.
_TRL_LAUNCH_OPTS = {"num_processes", "config_file", "num_machines", "machine_rank", "main_process_ip",
                    "main_process_port", "mixed_precision", "deepspeed_config_file", "zero_stage"}


CONFIG_SUFFIXES = (".yaml", ".yml", ".json")


# A script argument: (key, value (None: removed, torchtune's `~key`), the option as written, the argument as shown).
Argument = tuple[str, str | None, str, str]


def _flag_tokens(args: list[str], dashes: bool = True) -> list[tuple[str, str, str, str]]:
    """`--key value`, `--key=value` and bare `--flag` (= "true") tokens: (key, value, the option as written, the
    whole argument as shown).
    `dashes`: the parser also accepts `--per-device-train-batch-size` for `per_device_train_batch_size`
    (HfArgumentParser adds that alias; click options are written with dashes)."""
    out: list[tuple[str, str, str, str]] = []
    i = 0
    while i < len(args):
        tok = args[i]
        if not tok.startswith("--") or tok == "--":
            i += 1
            continue
        name, eq, value = tok[2:].partition("=")
        bare = False
        if eq:
            i += 1
        elif i + 1 < len(args) and not args[i + 1].startswith("--"):
            value, i = args[i + 1], i + 2
        else:
            value, i, bare = "true", i + 1, True  # a bare flag: shown as written
        key = name.replace("-", "_") if dashes else name
        if key:
            shown = "--" + name if bare else (tok if eq else f"--{name} {value}")
            out.append((key, value, "--" + name, shown))
    return out


def _dotlist_tokens(args: list[str]) -> list[Argument]:
    """OmegaConf dotlist overrides (`key=value`, `a.b=value`; torchtune's `~key` removes one): (key, value,
    the token's `key=` part as written, the token)."""
    out: list[Argument] = []
    for tok in args:
        if tok.startswith("~") and "=" not in tok and len(tok) > 1:
            out.append((tok[1:], None, tok, tok))
            continue
        name, eq, value = tok.lstrip("+").partition("=")
        if eq and name and not name.startswith("-") and re.fullmatch(r"[A-Za-z_][\w.\-]*", name):
            out.append((name, value, name + "=", tok))
    return out


# The argument syntax of a script a generic launcher (accelerate launch, torchrun, deepspeed, python) runs, by the
# module or path: axolotl's CLI modules, LLaMA-Factory's entry points (read_args), ms-swift's CLI scripts.
_SCRIPT_SYNTAX = (("axolotl.cli", "axolotl"), ("axolotl/cli", "axolotl"), ("llamafactory", "llamafactory"),
                  ("swift/cli/", "swift"), ("swift.cli.", "swift"))


# The syntax of each dialect's own parser (for a script whose dialect is known from its imports).
SYNTAX_OF_DIALECT = {"llamafactory": "llamafactory", "axolotl": "axolotl", "ms-swift": "swift",
                     "ms-swift-megatron": "swift", "torchtune": "tune", "litgpt": "litgpt"}


def SYNTAX_OF_SCRIPT(p: Parsed) -> str:  # noqa: N802 - a table lookup
    if p.launcher in ("llamafactory", "tune", "litgpt", "axolotl", "swift", "trl"):
        return p.launcher
    script = (p.script or "").replace("\\", "/")
    return next((syntax for needle, syntax in _SCRIPT_SYNTAX if needle in script), p.launcher)


def script_arguments(p: Parsed, syntax: str = "") -> tuple[Sequence[Argument], str, str]:
    """What the launch hands the script's parser: its arguments (`Argument`s), the config file the script reads
    (as written, "" when none) and how the parser combines the two (see `Launch.parser_reads`). Per launcher,
    from the frameworks' parsers:

    - `llamafactory-cli train cfg.yaml key=value`: llamafactory/hparams/parser.py `read_args` merges
      `OmegaConf.from_cli(sys.argv[2:])` over the file; without a file, `--key value` for HfArgumentParser.
    - `tune run recipe --config cfg key=value`: torchtune's TuneRecipeArgumentParser, dotlist overrides over the
      config (`~key` removes one).
    - `litgpt <command> --config cfg --train.micro_batch_size 4`: jsonargparse, the command line over the file.
    - `axolotl train cfg.yml --learning-rate=1e-4`: axolotl/cli/utils/args.py (click options named after the
      config fields, dashes for underscores, `--no-flag`), over the file.
    - `swift sft|pt|rlhf cfg.yaml --key value` / `megatron sft cfg.yaml ...`: ms-swift's parse_yaml_args writes
      the file's keys as `--key value` in front of the rest, so the command line wins (argparse keeps the last).
    - a Python script (accelerate launch / torchrun / deepspeed / python / trl): `--config cfg` is TrlParser's
      `parse_args_and_config` (the file, then the command line); a lone `cfg.yaml` argument is HfArgumentParser's
      `parse_yaml_file` (the file alone); only options is `parse_args_into_dataclasses` over the command line.
    """
    args = [a for a in p.args if a]
    syntax = syntax or SYNTAX_OF_SCRIPT(p)
    if syntax == "llamafactory":
        if args and args[0].endswith(CONFIG_SUFFIXES):
            return _dotlist_tokens(args[1:]), args[0], "override"
        return _flag_tokens(args), "", "command-line"
    if syntax == "tune":
        flags = _flag_tokens(args, dashes=False)
        config = next((v for k, v, _, _ in flags if k == "config"), "")
        return _dotlist_tokens(args), config, "override"
    if syntax == "litgpt":
        flags = _flag_tokens(args, dashes=False)
        config = next((v for k, v, _, _ in flags if k == "config"), "")
        return [f for f in flags if f[0] != "config"], config, "override"
    if syntax == "axolotl":
        config = next((a for a in args if not a.startswith("-") and a.endswith(CONFIG_SUFFIXES)), "")
        flags = []
        for key, value, written, shown in _flag_tokens(args):
            if key.startswith("no_") and value == "true":
                key, value = key[3:], "false"  # click's --flag/--no-flag pair
            flags.append((key, value, written, shown))
        return [f for f in flags if f[0] not in ("launcher", "num_processes")], config, "override"
    if syntax == "h4":  # alignment-handbook's H4ArgumentParser.parse_yaml_and_args(sys.argv[1], sys.argv[2:])
        config = args[0] if args and args[0].endswith(CONFIG_SUFFIXES) else ""
        if not config:
            return _flag_tokens(args), "", "command-line"
        out: list[Argument] = []
        for tok in args[1:]:  # `--key=value` (a bare `--key value` stops H4 with an IndexError):
            # {arg.split("=")[0].strip("-"): arg.split("=")[1] for arg in other_args}
            name, eq, value = tok.partition("=")
            if eq and name.startswith("-") and name.strip("-"):
                out.append((name.strip("-"), value.split("=")[0], name, tok))
        return out, config, "override"
    if syntax == "swift":
        config = args[0] if args and args[0].endswith(CONFIG_SUFFIXES) else ""
        return _flag_tokens(args[1:] if config else args), config, "override" if config else "command-line"
    flags = _flag_tokens(args)
    if p.launcher == "trl":
        flags = [f for f in flags if f[0] not in _TRL_LAUNCH_OPTS]
    config = next((v for k, v, _, _ in flags if k == "config"), "")
    if config:
        return [f for f in flags if f[0] != "config"], config, "override"
    positional = [a for a in args if not a.startswith("-")]
    if args and not args[0].startswith("-") and args[0].endswith(CONFIG_SUFFIXES):
        # parse_yaml_file / parse_json_file(sys.argv[1]): the file alone; anything after it depends on the script
        return flags, args[0], "file" if len(args) == 1 else ""
    if positional and any(a.endswith(CONFIG_SUFFIXES) for a in positional if a not in {f[1] for f in flags}):
        return flags, "", ""  # a config file the parser may read some other way
    return flags, "", "command-line"


def _plain_arguments(p: Parsed) -> tuple:
    """((key, raw value), ...) of what a launch passes its script (the last of a repeated key), unknown as None."""
    tokens, _config, _reads = script_arguments(p)
    out = {key: (None if value is not None and "\0" in value else value) for key, value, _w, _s in tokens}
    return tuple(sorted(out.items()))


def _short(p: Parsed) -> str:
    return p.launcher + (f" {p.script}" if p.script else "")


# `accelerate launch` options that set an accelerate config key (commands/launch.py: _validate_launch_command copies
# a config value only onto the options left at None, and a deepspeed_config / fsdp_config entry only onto those not
# given: `args.nondefault`); the flags that choose the distributed type set distributed_type.
_ACCELERATE_OPTION_KEYS = {
    **{k: k for k in ("num_processes", "num_machines", "machine_rank", "main_process_ip", "main_process_port",
                      "mixed_precision", "gpu_ids", "same_network", "rdzv_backend", "main_training_function",
                      "debug", "enable_cpu_affinity", "downcast_bf16")},
    "use_deepspeed": "distributed_type", "use_fsdp": "distributed_type", "multi_gpu": "distributed_type",
    "use_megatron_lm": "distributed_type", "tpu": "distributed_type", "cpu": "use_cpu",
    "dynamo_backend": "dynamo_config.dynamo_backend", "dynamo_mode": "dynamo_config.dynamo_mode",
    **{k: "deepspeed_config." + k for k in (
        "zero_stage", "offload_optimizer_device", "offload_param_device", "offload_optimizer_nvme_path",
        "offload_param_nvme_path", "gradient_accumulation_steps", "gradient_clipping", "zero3_init_flag",
        "zero3_save_16bit_model", "deepspeed_config_file", "deepspeed_hostfile", "deepspeed_exclusion_filter",
        "deepspeed_inclusion_filter", "deepspeed_multinode_launcher", "deepspeed_moe_layer_cls_names")},
}


def accelerate_option_for(key: str) -> str | None:
    """The `accelerate launch` option that sets accelerate config key `key` (dotted), or None."""
    for option, target in _ACCELERATE_OPTION_KEYS.items():
        if target == key and target != "distributed_type":
            return "--" + option
    if key.startswith("fsdp_config.fsdp_"):
        return "--" + key.split(".", 1)[1]
    return None


def accelerate_overrides(p: Parsed) -> set[str]:
    """The accelerate config keys an `accelerate launch` command sets with its own options."""
    if p.launcher != "accelerate":
        return set()
    out = set()
    for option in p.options:
        name = option.lstrip("-").replace("-", "_")
        if name in _ACCELERATE_OPTION_KEYS:
            out.add(_ACCELERATE_OPTION_KEYS[name])
        elif name.startswith("fsdp_"):
            out.add("fsdp_config." + name)
    return out


# What a usage line in a comment starts with (after VAR=value assignments): a launcher, or a wrapper of one.
_COMMAND_STARTS = ("accelerate", "torchrun", "deepspeed", "tune", "litgpt", "axolotl", "llamafactory-cli", "srun",
                   "uv", "env", "CUDA_VISIBLE_DEVICES", "$", "sbatch", "bash", "sh", "nohup", "time")


def _starts_a_command(body: str) -> bool:
    words = body.lstrip("$> ").split()
    while words and _ASSIGN.match(words[0]) and "=" in words[0]:
        words = words[1:]
    if not words:
        return False
    first = Path(words[0]).name
    return first in _COMMAND_STARTS or bool(re.fullmatch(r"python[0-9.]*", first))
