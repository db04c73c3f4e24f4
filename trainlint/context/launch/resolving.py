"""Where a launch command runs and what its words name: the shell variables a file sets and their expansion, brace
expansions, the folders a command may run in (`working_dirs`), and the files its relative paths name from there
(`names_config`, `bases_for`, `bases_of`, `_resolve_path`)."""

from __future__ import annotations

import ast
import fnmatch
import os
import re
from pathlib import Path

from trainlint._patterns import compile_later
from trainlint.context import pins
from trainlint.context.launch.values import Command, Launch

# `NAME=value` / `export NAME=value`: a shell variable a file (or a command's prefix) sets
_ASSIGN = compile_later(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(\"[^\"]*\"|'[^']*'|[^\s;#]*)")


def _cd_target(text: str) -> str:
    """The folder a `cd` names, as written; "$0" for the script's own folder (`cd "$(dirname "$0")"`)."""
    text = text.strip()
    if "dirname" in text and ("$0" in text or "BASH_SOURCE" in text):
        rest = text.rsplit(")", 1)[1] if ")" in text else ""
        rest = rest.strip("\"'")
        return "\0self" + rest
    return text.strip("\"'")


# `${NAME}`, `${NAME:-default}` / `${NAME-default}`, `$NAME`, and the positional parameters `$1`, `${1}`,
# `${1:-default}` (a script's arguments: set only where an invocation of the script binds them); `${1#*=}` (the
# value of a `--key=value` argument) and other `${...}` operations are unknown.
_VARIABLE = compile_later(r"\$\{([A-Za-z_][A-Za-z0-9_]*|[0-9])(?::?-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*|[0-9])"
                          r"|\$\{[^}]*\}")
_ARITHMETIC = compile_later(r"\$\(\(([^()]*(?:\([^()]*\)[^()]*)*)\)\)")
_ARITHMETIC_TEXT = compile_later(r"[0-9+\-*/%() ]+")
_NAME = compile_later(r"\b[A-Za-z_][A-Za-z0-9_]*\b")


def _expand(token: str, env: dict) -> str:
    """`token` with the shell variables `env` sets replaced by their values (an unset one by its default, else by
    "\\0", which stands for a part that is not known); an arithmetic expansion `$((A*B))` of known integers
    evaluated, any other command substitution (`$(...)`, backquotes) unknown."""
    def value(m: re.Match) -> str:
        name, default = m.group(1) or m.group(3), m.group(2)
        if name is None:
            return "\0"  # ${NAME#pattern}, ${#NAME}, ${ARRAY[0]}: not followed
        if name in env:
            return env[name]
        return default if default is not None else "\0"
    if "$" not in token and "`" not in token:
        return token
    if "$((" in token:
        token = _ARITHMETIC.sub(lambda m: _arithmetic(m.group(1), env), token)
    if "$(" in token or "`" in token:
        token = _substitutions(token)
    return _VARIABLE.sub(value, token)


def _arithmetic(expr: str, env: dict) -> str:
    """The value of a shell arithmetic expression over integers whose variables `env` sets (bare names or `$NAME`),
    "\\0" when any part is unknown."""
    text = _VARIABLE.sub(lambda m: env.get(m.group(1) or m.group(3) or "", "\0"), expr)
    text = _NAME.sub(lambda m: env.get(m.group(0), "\0"), text)
    if "\0" in text or len(text) > 200 or not _ARITHMETIC_TEXT.fullmatch(text) or "**" in text:
        return "\0"
    try:
        result = _integer(ast.parse(text.strip(), mode="eval").body)
    except (SyntaxError, ZeroDivisionError, ValueError, TypeError, RecursionError, MemoryError):
        return "\0"
    return str(result) if result is not None and abs(result) < 10 ** 12 else "\0"


_OPERATORS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
              ast.Div: lambda a, b: int(a / b), ast.FloorDiv: lambda a, b: int(a / b),
              ast.Mod: lambda a, b: a - b * int(a / b)}


def _integer(node: ast.AST) -> int | None:
    """A shell arithmetic expression (integers, + - * / %, parentheses, unary minus) read as Python's `ast` has it;
    shell division truncates toward zero. None for anything else."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _integer(node.operand)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _integer(node.left), _integer(node.right)
        return None if left is None or right is None else _OPERATORS[type(node.op)](left, right)
    return None


def _substitutions(token: str) -> str:
    """`token` with each command substitution (`$(...)`, nested parentheses included, and backquotes) unknown."""
    out, i = [], 0
    while i < len(token):
        if token.startswith("$(", i):
            depth, j = 0, i + 1
            while j < len(token):
                depth += {"(": 1, ")": -1}.get(token[j], 0)
                if depth == 0:
                    break
                j += 1
            out.append("\0")
            i = j + 1
            continue
        if token[i] == "`":
            end = token.find("`", i + 1)
            out.append("\0")
            i = len(token) if end < 0 else end + 1
            continue
        out.append(token[i])
        i += 1
    return "".join(out)


_BRACES = compile_later(r"\{([^{}]*,[^{}]*)\}")
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


CONFIG_NAME_SUFFIXES = (".yaml", ".yml", ".json", ".toml")  # what a token must end with to name a config


def token_words(token: str) -> list[str]:
    """The words a command-line token stands for, as `names_config` reads it: without a leading `--option=` and its
    quotes, and each word of a brace expansion read the same way in turn."""
    token = token.split("=", 1)[1] if token.startswith("--") and "=" in token else token
    token = token.strip("\"'")
    if "{" in token and "," in token:
        words = brace_words(token)
        if words != [token]:
            return [w for word in words for w in token_words(word)]
    return [token]


def name_pattern(word: str) -> str | None:
    """The file name a word of `token_words` may name, `*` standing for a shell variable left unknown; None when it
    names no config whatever the config (`$CONFIG` alone, `$X.yaml`: it could name any file; another suffix)."""
    name = Path(word.replace("\0", "*")).name
    literal = name.replace("*", "")
    stem = literal.rsplit(".", 1)[0] if "." in literal else literal
    if len(literal) < 5 or ("*" in name and len(stem) < 2) or not word.endswith(CONFIG_NAME_SUFFIXES):
        return None
    return name


def names_config(token: str, config: Path, base_dirs: list[Path], root: Path) -> bool:
    """Whether a command-line token (a path, maybe with `$VAR` parts or a brace expansion) names this config
    file."""
    return any(_word_names_config(word, config, base_dirs) for word in token_words(token))


def _word_names_config(word: str, config: Path, base_dirs: list[Path]) -> bool:
    if not word or "\0" not in word and Path(word).name != config.name:
        return False
    name = name_pattern(word)
    if name is None or not fnmatch.fnmatch(config.name, name):
        return False
    pattern = word.replace("\0", "*")
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
        if target.startswith("\0at"):  # the folder the invocation of this script runs it in (invoking)
            dirs, certain = [Path(target[len("\0at"):])], True
            start = list(dirs)
            continue
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
        return pins.resolved(str(path))  # kept for the run: the same folders are resolved for every config
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
            inner = pins.resolved(str(here)).relative_to(pins.resolved(str(repo)))
        except (ValueError, OSError, RuntimeError):
            inner = None
        if inner is not None:
            for n in range(len(inner.parts) - 1, 0, -1):
                out.append(Path(repo) / Path(*inner.parts[:n]))
    return out


def bases_of(launch: Launch, repo: Path | str | None = None) -> list[Path]:
    """The folders the launch's relative paths (its script, the config it passes) are read from: the folder it
    runs in when that is certain (`Launch.cwd`), else the folders it may run in (`Launch.dirs`, the likeliest
    first), then `bases_for` its file."""
    bases = bases_for(launch.origin.path, repo)
    first = [Path(launch.cwd)] if launch.cwd else [Path(d) for d in launch.dirs]
    return first + [b for b in bases if b not in first]
