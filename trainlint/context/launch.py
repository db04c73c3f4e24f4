"""How a config is launched and what the launch decides: world size, nodes, sharding, precision, and the
accelerate / DeepSpeed config that applies.

`Launch` is the answer for one file. Each value is a `Setting` with an `Origin` (kind "launch": a launch
command found in the repository, an accelerate config it names, the recipe itself, or a `launch` entry in the
settings), so rules and the estimate can say which command decided it. `Launch()` (the default) means no launch
was found: everything in it is unknown, and a verdict that depends on it says what it assumed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from trainlint.plan import MASTER_BF16, MASTER_FP16, Origin, Setting

NO_LAUNCH = Origin("default", note="no launch command names this file")


def _unknown() -> Setting:
    return Setting(None, NO_LAUNCH)


@dataclass(frozen=True)
class Launch:
    launcher: str = ""  # accelerate | torchrun | deepspeed | tune | litgpt | axolotl | llamafactory | python | recipe | settings | ""
    command: str = ""  # the command line as written (joined continuation lines), when one was found
    origin: Origin = NO_LAUNCH  # where the command / setting was found (file and line)
    script: str = ""  # the script or module the launch runs (scripts/run_sft.py, -m axolotl.cli.train, a recipe)
    num_processes: Setting = _unknown()  # world size (GPUs x nodes, total processes), int or None
    num_machines: Setting = _unknown()  # nodes, int or None
    sharding: Setting = _unknown()  # "none" | "zero1" | "zero2" | "zero3" | "fsdp" | None (unknown)
    mixed_precision: Setting = _unknown()  # "no" | "bf16" | "fp16" | "fp8" | None
    accelerate_config: str = ""  # the accelerate config file that applies (resolved path), when any
    deepspeed_config: str = ""  # a DeepSpeed JSON the launch names (--deepspeed_config_file / --deepspeed)
    extra: tuple = ()  # (name, value): offload_optimizer / offload_param devices, fsdp_strategy
    others: int = 0  # further launch commands that name the file (the first, by script kind and path, decides)
    # The script's own command-line arguments, as its parser reads them: (key, Setting) with the raw value (a
    # string, "true" for a bare flag, None when a shell variable left it unknown) and the script file and line
    # that set it. Keys are field names (`gradient_accumulation_steps`; dotted for LitGPT / torchtune nesting).
    arguments: tuple = ()
    # How the script's parser combines a config file with those arguments: "override" (the config file, then
    # the command line wins: TrlParser --config, ms-swift, LLaMA-Factory, axolotl, torchtune, LitGPT),
    # "command-line" (no config file: HfArgumentParser reads the command line alone, every other field keeps
    # its default), "file" (HfArgumentParser's parse_yaml_file: the file alone), "" (unknown).
    parser_reads: str = ""
    # The parser class the script's own text names, when it differs from its dialect's: "h4" (alignment-handbook's
    # H4ArgumentParser: HfArgumentParser.parse_yaml_file, so unknown keys stop it the HfArgumentParser way).
    script_parser: str = ""
    script_config: str = ""  # the config file the script reads (as written), when it names one
    # How the launch names the linted file: "config" (the script's config), "hf-deepspeed" (`--deepspeed X`, the
    # TrainingArguments field), "deepspeed" (`--deepspeed_config X`, `--deepspeed_config_file X`), "accelerate"
    # (`--config_file X` of accelerate launch / trl).
    role: str = ""
    autotuning: str = ""  # "run" | "tune": `deepspeed --autotuning ...` (the autotuner writes each experiment's config)
    script_args: tuple = ()  # the tokens after the script, as the command has them (to read them again per parser)
    command_lines: tuple = ()  # the physical lines of the command (to say on which line an argument is)
    other_scripts: tuple = ()  # the scripts the other launch commands that name the file run
    other_arguments: tuple = ()  # per other launch command: ((key, raw value), ...) it passes its script
    # Where the command runs is not certain (a script in a subfolder run from any of the folders above it, a README
    # below the root): the relative path matched from one of several candidate working directories, so the launch
    # is an assumption, said here; a finding it makes an error is then at most a warning (engine.calibrate).
    assumed: str = ""
    cwd: str = ""  # the directory the command runs in, when certain (relative paths in it are read from there)
    # The accelerate config keys (dotted: `num_processes`, `deepspeed_config.zero_stage`) that every accelerate
    # launch naming the file as its --config_file sets on its own command line: the file's value is never used.
    overrides: tuple = ()

    def get(self, name: str):
        return dict(self.extra).get(name)

    def agreed(self, key: str) -> bool:
        """Whether every other launch command that names the file passes the script the same `key` (or, like
        this one, none): then the first launch's value is the run's whichever command is used."""
        mine = self.argument(key)
        value = mine.value if mine is not None else None
        return all(dict(other).get(key) == value for other in self.other_arguments)

    def argument(self, key: str) -> Setting | None:
        """The script argument `key` the launch passes (its Setting), None when the command line does not set it."""
        for name, setting in self.arguments:
            if name == key:
                return setting
        return None

    @property
    def found(self) -> bool:
        return bool(self.launcher)

    def describe(self) -> str:
        if not self.found:
            return "none found (" + NO_LAUNCH.note + ")"
        where = self.origin.path + (f":{self.origin.span.start.line + 1}" if self.origin.span else "")
        parts = [self.launcher]
        if self.num_processes.value is not None:
            parts.append(f"{self.num_processes.value} processes")
        if self.num_machines.value is not None:
            parts.append(f"{self.num_machines.value} node(s)")
        if self.sharding.value is not None:
            parts.append(f"sharding {self.sharding.value}")
        if self.mixed_precision.value is not None:
            parts.append(f"mixed precision {self.mixed_precision.value}")
        if self.accelerate_config:
            parts.append(f"accelerate config {self.accelerate_config}")
        if self.autotuning:
            parts.append(f"DeepSpeed autotuning ({self.autotuning})")
        return ", ".join(parts) + (f" ({where})" if where else "") + (f"; assumed: {self.assumed}" if self.assumed else "")


# --- finding the launch -----------------------------------------------------------------------------------------

import fnmatch  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import shlex  # noqa: E402
from pathlib import Path  # noqa: E402

from trainlint.document.reading import read_regular_file  # noqa: E402

from trainlint.diagnostics import Pos, Span  # noqa: E402

SKIP_DIRS = {".git", "node_modules", ".venv", "venv", "env", ".env", "__pycache__", "site-packages", ".tox", ".nox",
             ".mypy_cache", ".pytest_cache", ".ruff_cache", "build", "dist", "wandb", ".idea", ".vscode", ".cache",
             "htmlcov", ".eggs"}
MAX_FILES = 5000  # files looked at per repository
MAX_FILE_BYTES = 512 * 1024
MAX_TOTAL_BYTES = 24 * 1024 * 1024
MAX_DEPTH = 8
# Files that hold launch commands; the number orders them (a script beats a README's example).
SCRIPT_KINDS = ((".sh", 0), (".bash", 0), (".slurm", 0), (".sbatch", 0), (".job", 0), ("Makefile", 1), (".mk", 1),
                (".yml", 2), (".yaml", 2), (".md", 3), (".rst", 3), (".txt", 4))
LAUNCH_WORDS = re.compile(r"accelerate\s+launch|torchrun|torch\.distributed\.(run|launch)|\bdeepspeed\b|\btune\s+run|"
                    r"\blitgpt\s|\baxolotl\b|llamafactory-cli|\bpython[0-9.]*\s|\btrl\s+\w+|\bswift\s+\w+|"
                    r"\bsbatch\b|\bsrun\b|\bmegatron\s+(?:sft|pt|rlhf|export)\b")
_BRACE_BYTES = re.compile(rb"\{[^{}\s,]*,[^{}\s]*\}")  # a shell brace expansion (`config_{a,b}.yaml`)
# A word every match of LAUNCH_WORDS contains (held to it by tests/test_startup.py): this plain alternation scans
# text an order of magnitude faster than LAUNCH_WORDS (whose \b-led alternatives have no literal prefix), so a line
# or file without any of them is not scanned with it.
_LAUNCH_LITERALS = re.compile(r"accelerate|torchrun|torch\.distributed\.|deepspeed|tune|litgpt|axolotl|"
                        r"llamafactory-cli|python|trl|swift|sbatch|srun|megatron")


def has_launch_words(text: str) -> bool:
    """LAUNCH_WORDS.search(text) is not None, faster."""
    return _LAUNCH_LITERALS.search(text) is not None and LAUNCH_WORDS.search(text) is not None


_ASSIGN = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(\"[^\"]*\"|'[^']*'|[^\s;#]*)")


@dataclass(frozen=True)
class Command:
    path: str  # the file holding it
    line: int  # 0-based first line
    text: str  # continuation lines joined
    rank: int  # SCRIPT_KINDS order
    env: tuple = ()  # (name, value) assignments seen in the file before it
    lines: tuple = ()  # the physical lines it spans, as written (to say on which line an argument is)
    cd: tuple = ()  # the `cd X` (and CI `working-directory: X`) before it in the file, in order, as written


@dataclass
class LaunchIndex:
    """The files of a repository that may hold launch commands, read once; each file's commands are parsed when a
    lookup first needs them (most files name none of the configs looked up)."""

    root: str
    scripts: list  # [path, rank, bytes or the parsed commands] per file read, in walk order
    files: int = 0
    truncated: bool = False

    def _commands_of(self, entry: list) -> list:
        if isinstance(entry[2], bytes):
            text = entry[2].decode("utf-8", errors="replace")
            # one scan of the file before the line-by-line reading
            entry[2] = commands_in(text, entry[0], entry[1]) if has_launch_words(text) else []
        return entry[2]

    def commands_naming(self, name: str, variables: bool = True) -> list:
        """The commands of the files that contain `name` (and, with `variables`, of those with a `$` or a brace
        expansion: a command may name a file through a variable or `config_{a,b}.yaml`), in walk order: a superset
        of the commands whose text contains it."""
        needle = name.encode("utf-8", errors="surrogateescape")
        return [command for entry in self.scripts
                if not isinstance(entry[2], bytes) or needle in entry[2]
                or (variables and (b"$" in entry[2] or (b"{" in entry[2] and _BRACE_BYTES.search(entry[2]) is not None)))
                for command in self._commands_of(entry)]

    @property
    def commands(self) -> list:
        return [command for entry in self.scripts for command in self._commands_of(entry)]


_INDEX: dict[str, LaunchIndex] = {}
_YAML_CACHE: dict[str, object] = {}
# id(command) -> (the command, its Parsed or None, {repo: its working folders}): an index's commands live until
# clear_cache, and the language server looks the same file up on every edit.
_PARSED: dict[int, tuple] = {}


def clear_cache() -> None:
    """Forget the launch indexes and the accelerate configs read (the language server calls it on changes)."""
    _INDEX.clear()
    _YAML_CACHE.clear()
    _PARSED.clear()


def _parsed_command(command: "Command", repo: Path):
    """(Parsed or None, working folders, certain) of an index command, computed once per command and repository."""
    entry = _PARSED.get(id(command))
    if entry is None or entry[0] is not command:
        entry = (command, parse_command(command.text, dict(command.env)), {})
        _PARSED[id(command)] = entry
    _, parsed, dirs = entry
    if parsed is None:
        return None, [], False
    key = str(repo)
    if key not in dirs:
        dirs[key] = working_dirs(command, repo)
    bases, certain = dirs[key]
    return parsed, bases, certain


def is_cached_config(path: str) -> bool:
    """Whether `path` is an accelerate config some launch named (read into the cache)."""
    try:
        return str(Path(path).resolve()) in _YAML_CACHE or path in _YAML_CACHE
    except OSError:
        return False


def is_launch_file(path: str) -> bool:
    name = Path(path).name
    return name == "Makefile" or name.endswith((".sh", ".bash", ".slurm", ".sbatch", ".job", ".mk", ".md")) or \
        "/.github/workflows/" in Path(path).as_posix()


def _kind(path: Path | str) -> int | None:
    text = str(path)
    name = os.path.basename(text)
    for suffix, rank in SCRIPT_KINDS:
        if name == suffix or name.endswith(suffix):
            if suffix in (".yml", ".yaml"):
                parts = text.replace(os.sep, "/").split("/")
                return rank if ".github" in parts or "ci" in name.lower() or name.startswith(".gitlab") else None
            if suffix == ".txt":
                return None
            return rank
    return None


def index_for(root: str) -> LaunchIndex:
    if root not in _INDEX:
        _INDEX[root] = _build_index(Path(root))
    return _INDEX[root]


def _build_index(root: Path) -> LaunchIndex:
    scripts: list[list] = []
    files = total = 0
    truncated = False
    base = str(root)
    # Plain strings, not Path objects: a repository has thousands of folders and files to look at.
    for folder, dirs, names in os.walk(base):
        depth = 0 if folder == base else folder[len(base):].strip(os.sep).count(os.sep) + 1
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info")
                         and (not d.startswith(".") or d == ".github") and depth < MAX_DEPTH)
        for name in sorted(names):
            path = os.path.join(folder, name)
            rank = _kind(path)
            if rank is None:
                continue
            files += 1
            if files > MAX_FILES or total > MAX_TOTAL_BYTES:
                truncated = True
                break
            # Regular files only, never more than the limit: a FIFO named run.sh would block.
            data, _why = read_regular_file(path, MAX_FILE_BYTES)
            if data is None:
                continue
            total += len(data)
            scripts.append([path, rank, data])
        if truncated:
            break
    return LaunchIndex(str(root), scripts, files, truncated)


def commands_in(text: str, path: str, rank: int = 0, markdown: bool | None = None) -> list[Command]:
    """Launch-like command lines in a script, Makefile, workflow or the code blocks of a README."""
    markdown = path.endswith((".md", ".rst")) if markdown is None else markdown
    out: list[Command] = []
    env: list[tuple[str, str]] = []
    cds: list[str] = []  # the `cd X` seen so far (a README's shell session, a script's own cd)
    step_dir = ""  # a CI step's `working-directory: X`
    workflow = path.endswith((".yml", ".yaml"))
    makefile = os.path.basename(path) == "Makefile" or path.endswith(".mk")
    lines = text.splitlines()
    in_block = not markdown
    i = 0
    while i < len(lines):
        raw = lines[i]
        if markdown and raw.lstrip().startswith(("```", "~~~")):
            in_block = not in_block
            i += 1
            continue
        if not in_block and not (markdown and raw.startswith("    ")):
            i += 1
            continue
        start = i
        joined = raw.rstrip()
        while joined.endswith("\\") and i + 1 < len(lines):
            i += 1
            joined = joined[:-1] + " " + lines[i].strip()
        i += 1
        pieces = tuple(lines[start:i]) if i - start > 1 else ()
        line = joined.strip().lstrip("$> ").strip()
        if workflow:
            wd = _WORKING_DIR.match(line)
            if wd:
                step_dir = wd.group(1).strip("\"'")
                continue
            if line.startswith("- "):
                step_dir = ""  # the next step
        if line.startswith("- "):  # a YAML list item in a workflow: `- run: accelerate launch ...`
            line = line[2:]
        if line.startswith(("run", "script", "command")):
            line = re.sub(r"^(run|script|command)\s*:\s*[|>]?\s*", "", line)
        if line.startswith("#") and "trainlint" not in line:
            line = line.lstrip("#").strip()  # commented examples (`# tune run ... --config X`) still tell
        assign = _ASSIGN.match(line) if "=" in line else None
        if assign and not has_launch_words(line[assign.end():]):
            env.append((assign.group(1), assign.group(2).strip("\"'")))
            continue
        if makefile:
            cds.clear()  # each recipe line runs in a shell of its own
        change = _CD.match(line) if "cd" in line or "pushd" in line or "popd" in line else None
        if change:
            if change.group(1) == "popd":
                cds.append("\0popd")
            else:
                cds.append(_expand(_cd_target(change.group(2)), dict(env)))
            line = line[change.end():].strip()
            if not line:
                continue
        if has_launch_words(line):
            where = tuple(cds[-16:]) + ((step_dir,) if step_dir else ())
            out.append(Command(path, start, line, rank, tuple(env[-64:]), pieces, where))
    return out


_CD = re.compile(r"^\(?\s*(cd|pushd|popd)\b\s*((?:\"[^\"]*\"|'[^']*'|\$\([^)]*\)[^\s;&|)]*|[^\s;&|)])*)\s*(?:&&|;|$)\s*")
_WORKING_DIR = re.compile(r"^(?:-\s+)?working-directory\s*:\s*(\S+)\s*$")


def _cd_target(text: str) -> str:
    """The folder a `cd` names, as written; "$0" for the script's own folder (`cd "$(dirname "$0")"`)."""
    text = text.strip()
    if "dirname" in text and ("$0" in text or "BASH_SOURCE" in text):
        rest = text.rsplit(")", 1)[1] if ")" in text else ""
        rest = rest.strip("\"'")
        return "\0self" + rest
    return text.strip("\"'")


def _tokens(text: str) -> list[str]:
    text = text.split(" #", 1)[0]
    try:
        return shlex.split(text, comments=False)
    except ValueError:
        return text.split()


def _expand(token: str, env: dict) -> str:
    def sub(m: re.Match) -> str:
        name = m.group(1) or m.group(2)
        default = m.group(3)
        if name in env:
            return env[name]
        return default if default is not None else "\0"
    if "$" not in token:
        return token
    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)",
                  lambda m: sub(_Match(m)), token)


class _Match:
    """Normalizes the two spellings of a shell variable (${X:-d} and $X) for _expand."""

    def __init__(self, m: re.Match):
        self._m = m

    def group(self, n: int):
        if n == 1:
            return self._m.group(1)
        if n == 2:
            return self._m.group(3)
        if n == 3:
            return self._m.group(2)
        return self._m.group(0)


_BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")
MAX_BRACE_WORDS = 32


def brace_words(token: str) -> list[str]:
    """The words a shell brace expansion makes of a token (`config_{grok,anthropic}.yaml` -> two), at most
    MAX_BRACE_WORDS; the token itself when it has none."""
    words = [token]
    while len(words) <= MAX_BRACE_WORDS:
        expanded, grew = [], False
        for word in words:
            match = _BRACES.search(word)
            if match is None:
                expanded.append(word)
                continue
            grew = True
            expanded.extend(word[:match.start()] + part + word[match.end():] for part in match.group(1).split(","))
        words = expanded
        if not grew:
            break
    return words[:MAX_BRACE_WORDS]


def names_config(token: str, config: Path, base_dirs: list[Path], root: Path) -> bool:
    """Whether a command-line token (a path, maybe with `$VAR` parts or a brace expansion) names this config
    file."""
    token = token.split("=", 1)[1] if token.startswith("--") and "=" in token else token
    token = token.strip("\"'")
    if "{" in token and "," in token:
        words = brace_words(token)
        if words != [token]:
            return any(names_config(word, config, base_dirs, root) for word in words)
    if not token or "\0" not in token and Path(token).name != config.name:
        if "\0" not in token:
            return False
    pattern = token.replace("\0", "*")
    literal = Path(pattern).name.replace("*", "")
    if len(literal) < 5 or not pattern.endswith((".yaml", ".yml", ".json", ".toml")):
        return False  # `$CONFIG` alone, or `$X.yaml`: it could name any file
    if not fnmatch.fnmatch(config.name, Path(pattern).name):
        return False
    if Path(pattern).is_absolute():
        return fnmatch.fnmatch(str(config), os.path.normpath(pattern))
    for base in base_dirs:
        try:
            text = os.path.normpath(str(base / pattern))
        except ValueError:
            continue
        if fnmatch.fnmatch(str(config), text):
            return True
        if "*" not in pattern and os.path.isfile(text):
            return False  # the path names another file from a working directory tried before (exact, not plausible)
    # A path written from some other working directory, whose trailing components only match, names nothing: it is
    # another project's file as often as this one's (WizardLM: WizardCoder's README `configs/deepspeed_config.json`
    # is not training/src/configs/deepspeed_config.json).
    return False


def working_dirs(command: Command, repo: Path | str | None) -> tuple[list[Path], bool]:
    """The directories the command may run in, the likeliest first, and whether that is certain. A relative path in
    the command is read from there (`names_config`, `_resolve_path`).

    Where it starts: a CI workflow at the repository root; a README at the root runs there, one below the root in
    its own folder or at the root (not certain); a Makefile's recipes in the Makefile's folder; a shell script in
    any folder from the root down to its own (`bash scripts/run.sh` from the root or from `train/`: certain only for
    a script at the root). Then each `cd X` before the command in the file (`cd X && ...`, `cd X; ...`, a line of
    its own, a CI step's `working-directory: X`; in a Makefile only on the recipe line itself, each line being a
    shell of its own): `cd "$(dirname "$0")"` is the script's own folder (certain); a
    relative folder is kept from the starting folders that hold it (certain when exactly one does); a folder
    through a shell variable the file does not set, or an absolute one, leaves the candidates as they were, not
    certain."""
    here = Path(command.path).parent
    root = Path(repo) if repo else None
    if command.rank == 2 and root is not None:
        start, certain = [root], True
    elif command.rank == 3 and root is not None:
        at_root = _resolved(here) == _resolved(root)
        start, certain = ([root], True) if at_root else ([here, root], False)
    elif command.rank == 1:
        start, certain = [here], True
    else:
        start = _unique(bases_for(command.path, repo))
        certain = len(start) == 1
    dirs = list(start)
    history: list[tuple[list[Path], bool]] = []
    for target in command.cd:
        if target == "\0popd":
            if history:
                dirs, certain = history.pop()
            continue
        history.append((dirs, certain))
        if target.startswith("\0self"):
            rest = target[len("\0self"):].lstrip("/")
            dirs, certain = [Path(os.path.normpath(str(here / rest))) if rest else here], True
            continue
        if not target or "\0" in target or target.startswith(("~", "-", "/")):
            dirs, certain = list(start), False
            continue
        inside = [Path(os.path.normpath(str(d / target))) for d in dirs]
        existing = [d for d in inside if d.is_dir()]
        if not existing and dirs != start:  # each README block's `cd demo` starts from a fresh shell
            fresh = [Path(os.path.normpath(str(d / target))) for d in start]
            if any(d.is_dir() for d in fresh):
                inside, existing, certain = fresh, [d for d in fresh if d.is_dir()], len(start) == 1
        if existing:
            dirs, certain = _unique(existing), certain or len(_unique(existing)) == 1
        else:
            dirs = _unique(inside)
    return dirs, certain


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):
        return path


def _unique(paths: list[Path]) -> list[Path]:
    """`paths` without the ones naming a folder already listed (each path resolved once)."""
    out: list[Path] = []
    seen: set[Path] = set()
    for path in paths:
        real = _resolved(path)
        if real not in seen:
            seen.add(real)
            out.append(path)
    return out


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
    values: dict = None  # field -> raw string
    script: str = ""
    args: list = None  # what follows the script
    env: dict = None
    options: list = None  # the launcher's own options as given (`--num_processes`, `--use_deepspeed`, ...)

    def __post_init__(self):
        self.values = {} if self.values is None else self.values
        self.options = [] if self.options is None else self.options
        self.args = [] if self.args is None else self.args
        self.env = {} if self.env is None else self.env


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


def parse_command(text: str, env: dict | None = None) -> Parsed | None:
    """Read one launch command line (already joined); None when it launches nothing trainlint knows."""
    env = dict(env or {})
    tokens = [_expand(t, env) for t in _tokens(text)]
    # leading VAR=value assignments (FORCE_TORCHRUN=1 NNODES=2 llamafactory-cli train x.yaml)
    while tokens and _ASSIGN.match(tokens[0]) and "=" in tokens[0] and not tokens[0].startswith("-"):
        name, _, value = tokens[0].partition("=")
        env[name] = value.strip("\"'")
        tokens = tokens[1:]
    for pos in range(len(tokens)):  # the launcher may come after `srun`, `CUDA_VISIBLE_DEVICES=0 `, `uv run`, ...
        tok = tokens[pos]
        base = Path(tok).name
        nxt = tokens[pos + 1] if pos + 1 < len(tokens) else ""
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


def read_accelerate_config(path: Path) -> dict | None:
    """The accelerate config YAML (or JSON) as a dict; None when unreadable. Parsed with yaml.safe_load."""
    key = str(path)
    if key not in _YAML_CACHE:
        import yaml

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
        return "fsdp", extra
    if kind in ("MULTI_GPU", "NO", "MULTI_CPU", "MULTI_NPU", "MULTI_XPU", "MULTI_MLU"):
        return "none", extra
    return None, extra


def _resolve_path(value: str, bases: list[Path]) -> Path | None:
    if not value or "\0" in value:
        return None
    candidate = Path(value).expanduser()
    if candidate.is_absolute():
        return candidate if candidate.is_file() else None
    for base in bases:
        full = (base / candidate)
        if full.is_file():
            return full.resolve()
    return None


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
        procs_per_node = procs
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


# --- the script's own arguments ----------------------------------------------------------------------------------
# Options of the trl CLI that belong to accelerate launch (trl/cli.py hands them on), not to the script.
_TRL_LAUNCH_OPTS = {"num_processes", "config_file", "num_machines", "machine_rank", "main_process_ip",
                    "main_process_port", "mixed_precision", "deepspeed_config_file", "zero_stage"}
CONFIG_SUFFIXES = (".yaml", ".yml", ".json")


def _flag_tokens(args: list[str], dashes: bool = True) -> list[tuple[str, str, str, str]]:
    """`--key value`, `--key=value` and bare `--flag` (= "true") tokens: (key, value, the option as written, the
    whole argument as shown).
    `dashes`: the parser also accepts `--per-device-train-batch-size` for `per_device_train_batch_size`
    (HfArgumentParser adds that alias; click options are written with dashes)."""
    out = []
    i = 0
    while i < len(args):
        tok = args[i]
        if not tok.startswith("--") or tok == "--":
            i += 1
            continue
        name, eq, value = tok[2:].partition("=")
        if eq:
            i += 1
        elif i + 1 < len(args) and not args[i + 1].startswith("--"):
            value, i = args[i + 1], i + 2
        else:
            value, i = "true", i + 1
            eq = None  # a bare flag: shown as written
        key = name.replace("-", "_") if dashes else name
        if key:
            shown = "--" + name if eq is None else (tok if eq else f"--{name} {value}")
            out.append((key, value, "--" + name, shown))
    return out


def _dotlist_tokens(args: list[str]) -> list[tuple[str, str | None, str, str]]:
    """OmegaConf dotlist overrides (`key=value`, `a.b=value`; torchtune's `~key` removes one): (key, value,
    the token's `key=` part as written, the token)."""
    out = []
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


def script_arguments(p: Parsed, syntax: str = "") -> tuple[list[tuple[str, str | None, str, str]], str, str]:
    """What the launch hands the script's parser: its arguments as (key, value, the option as written, the
    argument as shown), the
    config file the script reads (as written, "" when none) and how the parser combines the two (see
    `Launch.parser_reads`). Per launcher, from the frameworks' parsers:

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
        out = []
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
    syntax = syntax or SYNTAX_OF_DIALECT.get(dialect)
    if not launch.found or not syntax or launch.launcher not in ("accelerate", "torchrun", "deepspeed", "python"):
        return launch
    p = Parsed(launch.launcher, script=launch.script, args=list(launch.script_args))
    if SYNTAX_OF_SCRIPT(p) == syntax:
        return launch  # already read that way
    command = Command(launch.origin.path, launch.origin.span.start.line if launch.origin.span else 0, "", 0, (),
                      launch.command_lines)
    arguments, script_config, reads = _arguments(p, launch.origin, command if launch.origin.span else None, syntax)
    from dataclasses import replace as _replace

    return _replace(launch, arguments=arguments, script_config=script_config, parser_reads=reads,
                    script_parser="h4" if syntax == "h4" else launch.script_parser)


def _plain_arguments(p: Parsed) -> tuple:
    """((key, raw value), ...) of what a launch passes its script (the last of a repeated key), unknown as None."""
    tokens, _config, _reads = script_arguments(p)
    out = {key: (None if value is not None and "\0" in value else value) for key, value, _w, _s in tokens}
    return tuple(sorted(out.items()))


def _role(p: Parsed, config: Path, bases: list[Path], root: Path, script_config: str) -> str:
    """How the command names the file: "config", "hf-deepspeed", "deepspeed" or "accelerate"."""
    flags = _flag_tokens([a for a in p.args if a])
    for key, value, _written, _shown in flags:
        if key in ("deepspeed", "deepspeed_config") and value.endswith(CONFIG_SUFFIXES) and \
                names_config(value, config, bases, root):
            return "hf-deepspeed" if key == "deepspeed" else "deepspeed"
    for field_name, role in (("config_file", "accelerate"), ("deepspeed_config", "deepspeed")):
        value = p.values.get(field_name)
        if value and names_config(value, config, bases, root) and not (script_config and
                                                                      names_config(script_config, config, bases, root)):
            return role
    return "config"


def _short(p: Parsed) -> str:
    return p.launcher + (f" {p.script}" if p.script else "")


def _config_args(p: Parsed) -> list[str]:
    """The tokens after the script that may name a config file."""
    return list(p.args) + ([p.values["config_file"]] if p.launcher == "trl" and "config_file" in p.values else [])


def _names_file(p: Parsed, config: Path, bases: list[Path], root: Path) -> bool:
    for tok in _config_args(p):
        if tok.startswith("--") and "=" not in tok:
            continue
        if tok.endswith((".yaml", ".yml", ".json", ".toml")) or "\0" in tok or "=" in tok:
            if names_config(tok, config, bases, root):
                return True
    # the launcher's own options: accelerate launch --config_file X / --deepspeed_config_file X
    return any(names_config(p.values[name], config, bases, root) for name in ("config_file", "deepspeed_config")
               if p.launcher in ("accelerate", "trl") and p.values.get(name))


def _span_of(line: int) -> Span:
    return Span(Pos(line, 0, 0), Pos(line, 0, 0))


def _relative_folder(path: Path, repo) -> str:
    try:
        rel = Path(os.path.relpath(path, repo)).as_posix() if repo else str(path)
    except ValueError:
        return str(path)
    return "the repository root" if rel == "." else rel + ("/" if Path(path).is_dir() else "")


def bases_for(command_path: str, repo: Path | str | None = None) -> list[Path]:
    """The folders a launch command's relative paths are read from: the repository root, the folder of the file
    holding the command, and the folders between the two (`train/scripts/run_rm.sh` is run from `train/`, as
    `bash scripts/run_rm.sh`: its `configs/x.yaml` and `src/train.py` are train/'s)."""
    here = Path(command_path).parent
    out: list[Path] = [Path(repo)] if repo else []
    out.append(here)
    if repo:
        try:
            inner = here.resolve().relative_to(Path(repo).resolve())
        except (ValueError, OSError, RuntimeError):
            inner = None
        if inner is not None:
            for n in range(len(inner.parts) - 1, 0, -1):
                out.append(Path(repo) / Path(*inner.parts[:n]))
    return out


def bases_of(launch: Launch, repo: Path | str | None = None) -> list[Path]:
    """The folders the launch's relative paths (its script, the config it passes) are read from: the folder it
    runs in when that is certain (`Launch.cwd`), then `bases_for` its file."""
    bases = bases_for(launch.origin.path, repo)
    return [Path(launch.cwd)] + bases if launch.cwd else bases


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
    from dataclasses import replace as _replace

    src = origin.describe()
    def re_o(s: Setting) -> Setting:
        if s.origin.kind == "launch" and s.origin.path == launch.origin.path and not launch.accelerate_config:
            return Setting(s.value, Origin("launch", origin.path, span=origin.span, note=f"declared in {src}"))
        if s.origin.kind == "launch" and launch.accelerate_config and s.origin.path == launch.accelerate_config:
            return Setting(s.value, Origin("launch", s.origin.path, note=f"accelerate config declared in {src}"))
        return Setting(s.value, Origin("launch", origin.path, span=origin.span, note=f"declared in {src}"))
    return _replace(launch, launcher=launcher, origin=Origin("launch", origin.path, span=origin.span,
                                                             note=f"declared in {src}"),
                    num_processes=re_o(launch.num_processes), num_machines=re_o(launch.num_machines),
                    sharding=re_o(launch.sharding), mixed_precision=re_o(launch.mixed_precision))


_UNQUOTE = str.maketrans("", "", "\"'\\")


def may_name(command: Command, config: Path) -> bool:
    """False only when the command cannot name `config` (a cheap superset of what parse_command + names_config
    match; shlex's split costs about half a millisecond a command): a token names it with its exact name once its
    variables are expanded, or, with a variable left unknown, as a pattern that ends in the name's own extension.
    The test is on the whole text, its quotes and backslashes dropped, its variables expanded: a token's characters
    are contiguous there. A brace expansion, or a name holding a quote or backslash, is always parsed."""
    name = config.name
    if name in command.text or "{" in command.text or any(c in name for c in "\"'\\"):
        return True
    plain = _expand(command.text.translate(_UNQUOTE), dict(command.env))
    return name in plain or ("\0" in plain and bool(config.suffix) and config.suffix.lower() in plain.lower())


def find(config_path: str, comments: list[tuple[int, int, str]] = (), root: str | None = None) -> Launch:
    """The launch of a config file: a command in the repository that names it (scripts, Makefiles, CI
    workflows, README code blocks), else one in the file's own comments (torchtune and LitGPT configs carry
    their `tune run ...` usage line), else nothing (`Launch()`)."""
    from trainlint.context import pins

    try:
        config = Path(config_path).resolve()
        if not config.parent.is_dir():
            return Launch()
    except (OSError, RuntimeError, ValueError):  # a symlink loop, an unreadable path
        return Launch()
    repo = Path(root) if root else pins.repo_root(config.parent)
    index = index_for(str(repo))
    matches: list[tuple[tuple, Command, Parsed]] = []
    for command in index.commands_naming(config.name):
        if config.name not in command.text and "$" not in command.text and "{" not in command.text:
            continue
        if not may_name(command, config):
            continue
        parsed, bases, certain = _parsed_command(command, repo)
        if parsed is None:
            continue
        if _names_file(parsed, config, bases, repo):
            distance = len(os.path.relpath(command.path, config.parent).split(os.sep))
            # by kind (a script before a README), then a command certain of where it runs first
            matches.append(((command.rank, not certain, distance, command.path, command.line), command, parsed,
                            bases, certain))
    if matches:
        matches.sort(key=lambda m: m[0])
        _, command, parsed, bases, certain = matches[0]
        origin = Origin("launch", command.path, span=_span_of(command.line))
        launch = from_parsed(parsed, origin, bases, command.text, command)
        from dataclasses import replace as _replace

        assumed = ""
        if not certain:
            rel = _relative_folder(bases[0] if bases else Path(command.path).parent, repo)
            where = ", ".join(_relative_folder(b, repo) for b in bases[1:])
            assumed = (f"the command in {_relative_folder(Path(command.path), repo)}:{command.line + 1} does not say "
                       f"which folder it runs in; its relative paths are read from {rel}"
                       + (f" (it may also run from {where})" if where else "")
                       + " (add `cd <folder> &&` before it, or declare the launch: `launch = \"...\"`)")
        return _replace(launch, others=len(matches) - 1, role=_role(parsed, config, bases, repo, launch.script_config),
                        other_scripts=tuple(sorted({(m[2].script, m[1].path) for m in matches[1:] if m[2].script})),
                        other_arguments=tuple(_plain_arguments(m[2]) for m in matches[1:]),
                        assumed=assumed, cwd=str(bases[0]) if certain and bases else "",
                        overrides=_common_overrides([(m[2], m[3]) for m in matches], config, repo))
    return find_in_comments(config_path, comments, [repo, config.parent])


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


def _runs_accelerate_config(p: Parsed, config: Path, bases: list[Path], repo: Path) -> bool:
    """Whether the `accelerate launch` command `p` runs `config` as its --config_file."""
    return p.launcher == "accelerate" and bool(p.values.get("config_file")) and \
        names_config(p.values["config_file"], config, [*bases, repo, config.parent], repo)


def _common_overrides(parsed: list, config: Path, repo: Path) -> tuple:
    """The accelerate config keys every launch in `parsed` ((Parsed, its bases) pairs) that runs `config` as its accelerate config sets itself
    (none unless each of them is one)."""
    sets = []
    for p, bases in parsed:
        if not _runs_accelerate_config(p, config, bases, repo):
            return ()
        sets.append(accelerate_overrides(p))
    return tuple(sorted(set.intersection(*sets))) if sets else ()


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


def find_in_comments(config_path: str, comments: list[tuple[int, int, str]] = (),
                     bases: list[Path] | None = None) -> Launch:
    """A launch command in the file's own comments (torchtune configs carry their `tune run ...` line)."""
    if bases is None:
        try:
            bases = [Path(config_path).resolve().parent]
        except (OSError, RuntimeError, ValueError):
            bases = []
    for line, _column, text in comments:
        body = text.lstrip("#").strip()
        if "trainlint" in body or not has_launch_words(body):
            continue
        parsed = parse_command(body)
        if parsed is None or parsed.launcher not in ("tune", "litgpt", "accelerate", "torchrun", "deepspeed",
                                                     "axolotl", "llamafactory"):
            continue
        if not _starts_a_command(body):
            continue  # prose that names a launcher ("set your absolute deepspeed path here"), not a usage line
        origin = Origin("launch", str(config_path), span=_span_of(line), note=f"usage comment: {parsed.launcher} command")
        launch = from_parsed(parsed, origin, bases, body)
        from dataclasses import replace as _replace

        # an accelerate config whose usage line runs it (`# accelerate launch --config_file <this> --num_processes 8
        # train.py`): the launch's own options set those keys
        config = Path(config_path).resolve()
        if bases and _runs_accelerate_config(parsed, config, bases, bases[0]):
            return _replace(launch, origin=origin, role="accelerate",
                            overrides=tuple(sorted(accelerate_overrides(parsed))))
        return _replace(launch, origin=origin, role="config")
    return Launch()


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
    elif sharding == "fsdp" and unsharded:
        mode = FSDP_MODES.get(str(launch.get("fsdp_strategy") or "FULL_SHARD").lower(), "full_shard")
        changes["fsdp"] = Setting(mode, launch.sharding.origin)
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
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?)", re.I)


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
        out[path] = (_typed(setting.value), setting.origin)
    return out or None


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
        if value is None or current is None or (flavor == "deepspeed" and not weak(current)) or \
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
        return launch.launcher in CONFIG_DECIDES_SHARDING or launch.sharding.value is not None
    return False
