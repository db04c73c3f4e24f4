"""What a launch command decides (`from_parsed`): world size, nodes, sharding and precision, with the accelerate
config it names read; the script arguments it passes, each with the line that passes it; and a `launch` setting
(`declared`: an accelerate config file or a whole command line)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from trainlint.context.launch.index import MAX_FILE_BYTES
from trainlint.context.launch.parsing import (SYNTAX_OF_DIALECT, SYNTAX_OF_SCRIPT, Parsed, _int, _short,
                                              parse_command, script_arguments)
from trainlint.context.launch.resolving import _resolve_path
from trainlint.context.launch.values import Command, Launch
from trainlint.diagnostics import Pos, Span
from trainlint.document.reading import read_regular_file
from trainlint.plan import Origin, Setting

_YAML_CACHE: dict[str, dict | None] = {}  # the accelerate configs read, by path (None: unreadable, or no mapping)


def clear_cache() -> None:
    """Forget the accelerate configs read."""
    _YAML_CACHE.clear()


def is_cached_config(path: str) -> bool:
    """Whether `path` is an accelerate config some launch named (read into the cache)."""
    try:
        return str(Path(path).resolve()) in _YAML_CACHE or path in _YAML_CACHE
    except OSError:
        return False


def read_accelerate_config(path: Path) -> dict | None:
    """The accelerate config YAML (or JSON) as a dict; None when unreadable. Parsed with yaml.safe_load."""
    key = str(path)
    if key not in _YAML_CACHE:
        try:
            raw, _why = read_regular_file(path, MAX_FILE_BYTES)  # a FIFO or device named by a launch: not read
            data = yaml.safe_load(raw.decode("utf-8", errors="replace")) if raw is not None else None
        except Exception:  # noqa: BLE001 - unreadable or malformed: no launch facts
            data = None
        _YAML_CACHE[key] = data if isinstance(data, dict) else None
    return _YAML_CACHE[key]


def _sharding_from_accelerate(data: dict) -> tuple[str | None, dict]:
    kind = str(data.get("distributed_type", "")).upper()
    extra: dict = {}
    if kind == "DEEPSPEED":
        ds = data.get("deepspeed_config") or {}
        stage = _int(ds.get("zero_stage")) if isinstance(ds, dict) else None
        if isinstance(ds, dict):
            for key, name in (("offload_optimizer_device", "offload_optimizer"), ("offload_param_device",
                                                                                 "offload_param")):
                if isinstance(ds.get(key), str) and ds[key].lower() in ("cpu", "nvme"):
                    extra[name] = ds[key].lower()
            if isinstance(ds.get("zero3_save_16bit_model"), bool):
                extra["zero3_save_16bit_model"] = str(ds["zero3_save_16bit_model"]).lower()
            if isinstance(ds.get("deepspeed_config_file"), str):
                extra["deepspeed_config"] = ds["deepspeed_config_file"]
        if stage is None and isinstance(ds, dict) and ds.get("zero_stage") == 0:
            return "zero0", extra
        return (f"zero{stage}" if stage is not None else "deepspeed"), extra
    if kind == "FSDP":
        fsdp = data.get("fsdp_config") or {}
        strategy = fsdp.get("fsdp_sharding_strategy") if isinstance(fsdp, dict) else None
        if isinstance(fsdp, dict) and fsdp.get("fsdp_reshard_after_forward") is False:
            strategy = "SHARD_GRAD_OP"
        extra["fsdp_strategy"] = str(strategy or "FULL_SHARD")
        if isinstance(fsdp, dict):  # how checkpoints are saved (memory/phases.py)
            if _int(fsdp.get("fsdp_version")) in (1, 2):
                extra["fsdp_version"] = str(_int(fsdp.get("fsdp_version")))
            if isinstance(fsdp.get("fsdp_state_dict_type"), str):
                extra["fsdp_state_dict_type"] = fsdp["fsdp_state_dict_type"].upper()
        return "fsdp", extra
    if kind in ("MULTI_GPU", "NO", "MULTI_CPU", "MULTI_NPU", "MULTI_XPU", "MULTI_MLU"):
        return "none", extra
    return None, extra


def from_parsed(p: Parsed, origin: Origin, bases: list[Path], text: str = "", command: Command | None = None) -> Launch:
    """What a launch command decides, with its accelerate config (when it names one) read, and the arguments it
    passes to the script (`command`, when given, says on which line each one is)."""
    values = dict(p.values)
    notes = []
    acc_path = ""
    acc_origin = origin
    sharding: str | None = None
    extra: dict = {}
    mixed = values.get("mixed_precision")
    procs = _int(values.get("num_processes"))
    machines = _int(values.get("num_machines"))
    if p.launcher in ("accelerate", "trl"):
        cfg_value = values.get("config_file")
        if cfg_value:
            found = _resolve_path(cfg_value, bases)
            data = read_accelerate_config(found) if found else None
            if data is not None:
                acc_path = str(found)
                acc_origin = Origin("launch", acc_path, note=f"accelerate config named by {origin.path}"
                                    + (f":{origin.span.start.line + 1}" if origin.span else ""))
                sharding, extra = _sharding_from_accelerate(data)
                # a value the command line gives wins, even one a shell variable leaves unknown (accelerate's
                # _validate_launch_command reads the file only for the options not given)
                procs = procs if "num_processes" in values else _int(data.get("num_processes"))
                machines = machines if "num_machines" in values else _int(data.get("num_machines"))
                mixed = mixed or (str(data["mixed_precision"]) if data.get("mixed_precision") is not None else None)
            else:
                notes.append(f"accelerate config {cfg_value} not found")
        if values.get("deepspeed") or values.get("zero_stage") or values.get("deepspeed_config"):
            stage = _int(values.get("zero_stage"))
            sharding = f"zero{stage}" if stage else (sharding if (sharding or "").startswith("zero") else "deepspeed")
            if values.get("deepspeed_config"):
                extra["deepspeed_config"] = values["deepspeed_config"]
        elif values.get("fsdp"):
            sharding = "fsdp"
        elif sharding is None and (values.get("multi_gpu") or values.get("cpu")):
            sharding = "none"
        if sharding is None and not cfg_value and p.launcher == "accelerate":
            notes.append("no --config_file: accelerate reads the default config of the machine it runs on")
    elif p.launcher == "torchrun":
        # torch/distributed/argparse_util.py `env`: an option not given takes PET_<OPTION> from the environment
        procs_per_node = procs if "num_processes" in values else _int(p.env.get("PET_NPROC_PER_NODE"))
        machines = machines if "num_machines" in values else _int(p.env.get("PET_NNODES"))
        nodes = machines or 1
        procs = procs_per_node * nodes if procs_per_node else None
        sharding = None
    elif p.launcher == "deepspeed":
        gpus = _int(values.get("num_gpus"))
        include = values.get("include")
        if gpus is None and include and ":" in include:
            gpus = len(include.split(":", 1)[1].split(","))
        nodes = machines or 1
        procs = gpus * nodes if gpus else None
        sharding = "deepspeed"
    elif p.launcher == "tune":
        recipe = p.script
        per_node = _int(values.get("num_processes"))
        nodes = machines or 1
        if recipe.endswith("_single_device") or "single_device" in recipe:
            procs, sharding = 1, "none"
        elif recipe.endswith("_distributed") or "distributed" in recipe:
            procs, sharding = (per_node or 1) * nodes, "fsdp"
            extra["fsdp_strategy"] = "FULL_SHARD"
        else:
            procs = (per_node or 1) * nodes if per_node else None
    elif p.launcher == "llamafactory":
        force = str(p.env.get("FORCE_TORCHRUN", "")).lower() in ("1", "true")
        nproc = _int(p.env.get("NPROC_PER_NODE"))
        nnodes = _int(p.env.get("NNODES")) or 1
        if nproc:
            procs, machines = nproc * nnodes, nnodes
        elif not force and nnodes == 1:
            notes.append("llamafactory-cli uses torchrun over every visible GPU when more than one is visible")
    elif p.launcher == "swift":
        nproc = _int(p.env.get("NPROC_PER_NODE"))
        nnodes = _int(p.env.get("NNODES")) or 1
        if nproc:
            procs, machines = nproc * nnodes, nnodes
    elif p.launcher == "python":
        if "CUDA_VISIBLE_DEVICES" in p.env and p.env["CUDA_VISIBLE_DEVICES"] not in ("", "\0"):
            procs = 1  # one process, whatever the visible devices
        else:
            procs = 1
        sharding = None
    if p.launcher == "torchrun" or p.launcher == "deepspeed":
        machines = machines or 1
    if command is not None and command.via:
        notes.insert(0, f"the script's parameters as {command.via} passes them")
    note = p.launcher + " command" + ("; " + "; ".join(notes) if notes else "")
    o = Origin("launch", origin.path, span=origin.span, note=note)
    arguments, script_config, reads = _arguments(p, origin, command)
    so = acc_origin if acc_path else o
    return Launch(
        launcher=p.launcher, command=(text or _short(p))[:400], origin=o,
        script=p.script,
        num_processes=Setting(procs, so if acc_path and not values.get("num_processes") else o),
        num_machines=Setting(machines, so if acc_path and not values.get("num_machines") else o),
        sharding=Setting(sharding, so if acc_path and not (values.get("deepspeed") or values.get("fsdp")
                                                          or values.get("zero_stage")) else o),
        mixed_precision=Setting(mixed, so if acc_path and not values.get("mixed_precision") else o),
        accelerate_config=acc_path, deepspeed_config=str(extra.get("deepspeed_config", "")),
        extra=tuple(sorted((k, v) for k, v in extra.items() if k != "deepspeed_config")),
        arguments=arguments, parser_reads=reads, script_config=script_config,
        autotuning=str(values.get("autotuning") or "") if p.launcher == "deepspeed" else "",
        script_args=tuple(p.args), command_lines=tuple(command.lines) if command is not None else (),
    )


def _line_of(written: str, command: Command | None) -> int | None:
    """The 0-based line of the command that holds `written` (an option as written), None when unknown."""
    if command is None:
        return None
    if not command.lines:
        return command.line
    pattern = r"(?<![\w-])" + re.escape(written) + ("" if written.endswith("=") else r"(?![\w-])")
    for offset, text in enumerate(command.lines):
        if re.search(pattern, text):
            return command.line + offset
    return command.line


def _arguments(p: Parsed, origin: Origin, command: Command | None, syntax: str = "") -> tuple[tuple, str, str]:
    tokens, config, reads = script_arguments(p, syntax)
    script = (p.script or p.launcher).replace("\0", "$…")  # a path through a shell variable this file does not set
    out: dict[str, Setting] = {}
    for key, value, written, shown in tokens:
        if value is not None and "\0" in value:
            value, how = None, "a shell variable this file does not set"
            shown = shown.replace("\0", "$?")
        else:
            how = ""
        line = _line_of(written, command)
        note = f"`{shown}` passed to {script}" + (f" ({how})" if how else "")
        span = _span_of(line) if line is not None else origin.span
        # key_path names the argument: a script argument, not a launcher decision (fixes do not edit scripts)
        out[key] = Setting(value, Origin("launch", origin.path, key_path=("--" + key,), span=span, note=note))
    return tuple(out.items()), config, reads


def for_dialect(launch: Launch, dialect: str, syntax: str = "") -> Launch:
    """The launch with its script arguments read the way `dialect`'s parser reads them (or `syntax`, when the
    script's own text names its parser: "h4"), where a generic launcher (accelerate launch, torchrun, deepspeed,
    python) runs a script whose parser is known only from its imports (`torchrun src/train.py cfg.yaml key=value`
    is LLaMA-Factory's read_args). Unchanged otherwise."""
    syntax = syntax or SYNTAX_OF_DIALECT.get(dialect, "")
    if not launch.found or not syntax or launch.launcher not in ("accelerate", "torchrun", "deepspeed", "python"):
        return launch
    p = Parsed(launch.launcher, script=launch.script, args=list(launch.script_args))
    if SYNTAX_OF_SCRIPT(p) == syntax:
        return launch  # already read that way
    command = Command(launch.origin.path, launch.origin.span.start.line if launch.origin.span else 0, "", 0, (),
                      launch.command_lines)
    arguments, script_config, reads = _arguments(p, launch.origin, command if launch.origin.span else None, syntax)
    return launch._replace(arguments=arguments, script_config=script_config, parser_reads=reads,
                   script_parser="h4" if syntax == "h4" else launch.script_parser)


def _span_of(line: int) -> Span:
    return Span(Pos(line, 0, 0), Pos(line, 0, 0))


def from_command_line(text: str, origin: Origin, bases: list[Path]) -> Launch | None:
    parsed = parse_command(text)
    if parsed is None:
        return None
    return from_parsed(parsed, origin, bases, text)


def from_accelerate_file(path: Path, origin: Origin) -> Launch | None:
    data = read_accelerate_config(path)
    if data is None:
        return None
    p = Parsed("accelerate", values={"config_file": str(path)})
    launch = from_parsed(p, origin, [path.parent], f"accelerate launch --config_file {path}")
    return launch


def declared(value: str, origin: Origin, bases: list[Path]) -> Launch | None:
    """A `launch` setting: an accelerate config file, or a whole launch command line."""
    value = value.strip()
    if re.search(r"\.(ya?ml|json)$", value) and " " not in value:
        found = _resolve_path(value, bases)
        if found is not None:
            launch = from_accelerate_file(found, origin)
            if launch is not None:
                return _relabel(launch, origin, "settings")
        return None
    launch = from_command_line(value, origin, bases)
    return _relabel(launch, origin, launch.launcher) if launch is not None else None


def _relabel(launch: Launch, origin: Origin, launcher: str) -> Launch:
    src = origin.describe()
    def re_o(s: Setting) -> Setting:
        if s.origin.kind == "launch" and s.origin.path == launch.origin.path and not launch.accelerate_config:
            return Setting(s.value, Origin("launch", origin.path, span=origin.span, note=f"declared in {src}"))
        if s.origin.kind == "launch" and launch.accelerate_config and s.origin.path == launch.accelerate_config:
            return Setting(s.value, Origin("launch", s.origin.path, note=f"accelerate config declared in {src}"))
        return Setting(s.value, Origin("launch", origin.path, span=origin.span, note=f"declared in {src}"))
    return launch._replace(launcher=launcher, origin=Origin("launch", origin.path, span=origin.span,
                                                            note=f"declared in {src}"),
                   num_processes=re_o(launch.num_processes), num_machines=re_o(launch.num_machines),
                   sharding=re_o(launch.sharding), mixed_precision=re_o(launch.mixed_precision))
