"""A script's parameters and its invocations elsewhere in the repository: the shell or SLURM script that builds its
launch command from its own arguments (`MODEL=$1`, or a `while [[ $# -gt 0 ]]; case $1 in --model) MODEL="$2"`
loop) is read once per invocation (`sbatch --nodes=2 slurm/train.slurm --model M --task sft ...` in a README,
`bash scripts/run.sh llama sft` in another script), with the variables that invocation's arguments set (and
SLURM_NNODES / SLURM_GPUS_ON_NODE from its `sbatch` options or the script's own `#SBATCH` lines)."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import NamedTuple

from trainlint._patterns import compile_later
from trainlint.context.launch.resolving import _ASSIGN, _expand, bases_for, working_dirs
from trainlint.context.launch.values import Command

# a script that reads its arguments: `$1`, `${1}`, `${1:-x}`, `"$@"`, `$#`, `shift`
_READS_ARGUMENTS = compile_later(r"\$\{?[1-9]|\bshift\b")
_CASE = compile_later(r"^\s*case\s+\"?\$\{?1\}?\"?\s+in\b")
_PATTERN = compile_later(r"^\s*\(?\s*((?:[\"']?-[\w\-=*\"']+)(?:\s*\|\s*[\"']?-[\w\-=*\"']+)*)\s*\)\s*(.*)$")
_SBATCH_LINE = compile_later(r"^#SBATCH\s+(.*)$")
# commands that run a script file given as their first word
_RUNNERS = ("bash", "sh", "zsh", "source", ".", "srun", "nohup", "time", "exec")
_STOPS = (";", "&&", "||", "|", "&")
MAX_INVOCATIONS = 16  # invocations followed per script


class Option(NamedTuple):
    """One branch of a script's argument loop: the options it matches and the variable it sets."""

    names: tuple  # `--model`, `-m`; a `--model=*` branch as `--model=`
    variable: str
    takes: str  # "next" (the next argument: `"$2"`), "inline" (`${1#*=}`), "flag" (a constant)
    constant: str = ""


def reads_arguments(text: str) -> bool:
    return _READS_ARGUMENTS.search(text) is not None


def options_of(text: str) -> list[Option]:
    """The branches of the script's `case $1 in` argument loops that set a variable."""
    out: list[Option] = []
    in_case = False
    names: tuple = ()
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not in_case:
            in_case = bool(_CASE.match(line))
            continue
        if line.startswith("esac"):
            in_case, names = False, ()
            continue
        m = _PATTERN.match(line)
        if m:
            names = tuple(n.strip().strip("\"'") for n in m.group(1).split("|"))
            line = m.group(2).strip()
        for part in re.split(r"\s*;;?\s*", line):
            a = _ASSIGN.match(part) if names and "=" in part else None
            if a is None:
                continue
            value = a.group(2).strip("\"'")
            if re.fullmatch(r"\$\{?2\}?", value):
                out.append(Option(tuple(n for n in names if not n.endswith("*")), a.group(1), "next"))
            elif re.fullmatch(r"\$\{1#[^}]*=\}", value):
                out.append(Option(tuple(n.rstrip("*") for n in names if n.endswith("=*")), a.group(1), "inline"))
            elif "$" not in value:
                out.append(Option(tuple(n for n in names if not n.endswith("*")), a.group(1), "flag", value))
        if line.endswith(";;"):
            names = ()
    return out


def bindings(options: list[Option], args: list[str]) -> dict:
    """{variable or position: value} an invocation's arguments set: `$1`... by position, and each option variable
    (None for one the invocation does not give: its assignment does not run)."""
    out: dict = {str(n + 1): a for n, a in enumerate(args[:9])}
    for option in options:
        out.setdefault(option.variable, None)
    i = 0
    while i < len(args):
        arg = args[i]
        step = 1
        for option in options:
            if option.takes == "next" and arg in option.names and i + 1 < len(args):
                out[option.variable], step = args[i + 1], 2
            elif option.takes == "inline" and any(arg.startswith(n) for n in option.names):
                out[option.variable] = arg.split("=", 1)[1]
            elif option.takes == "flag" and arg in option.names:
                out[option.variable] = option.constant
            else:
                continue
            break
        i += step
    return out


def slurm_defaults(text: str) -> dict:
    """The SLURM variables a script's own `#SBATCH` lines set (SLURM_NNODES, SLURM_GPUS_ON_NODE)."""
    words: list[str] = []
    for raw in text.splitlines()[:200]:
        m = _SBATCH_LINE.match(raw.strip())
        if m:
            words.extend(m.group(1).split(" #", 1)[0].split())
    return slurm_env(words)


def slurm_env(words: list[str]) -> dict:
    """The SLURM variables `sbatch` / `srun` options set: `--nodes=N` / `-N N` -> SLURM_NNODES (and
    SLURM_JOB_NUM_NODES), `--gres=gpu:N` / `--gpus-per-node=N` -> SLURM_GPUS_ON_NODE."""
    out: dict = {}
    i = 0
    while i < len(words):
        word = words[i]
        name, eq, value = word.partition("=")
        if not eq and i + 1 < len(words) and name in ("--nodes", "-N", "--gres", "--gpus-per-node"):
            value, i = words[i + 1], i + 1
        elif name.startswith("-N") and len(name) > 2 and not eq:
            name, value = "-N", name[2:]
        if name in ("--nodes", "-N") and value.split("-")[0].isdigit():
            out["SLURM_NNODES"] = out["SLURM_JOB_NUM_NODES"] = value.split("-")[0]
        elif name == "--gres" and re.fullmatch(r"gpu(?::[\w.-]+)?:\d+", value):
            out["SLURM_GPUS_ON_NODE"] = value.rsplit(":", 1)[1]
        elif name == "--gpus-per-node" and value.split(":")[-1].isdigit():
            out["SLURM_GPUS_ON_NODE"] = value.split(":")[-1]
        i += 1
    return out


def invocation_in(line: str, env: dict, script: Path, dirs: list[Path]) -> tuple[list[str], dict, str] | None:
    """(the arguments, the environment it gives the script (`NAME=value` before it, the SLURM variables sbatch's
    options set), the folder it runs from when one of `dirs` alone names the script) when the shell line runs `script` (`sbatch [options]
    script args`, `bash script args`, `./script args`), its path read from one of `dirs`; None otherwise."""
    if script.name not in line or line.lstrip().startswith(("echo", "printf")):
        return None
    try:
        tokens = shlex.split(line.split(" #", 1)[0])
    except ValueError:
        return None
    for k, tok in enumerate(tokens):
        if os.path.basename(tok) != script.name:
            continue
        path = _expand(tok, env)
        matched = [d for d in dirs if os.path.normpath(str(d / path)) == str(script)]
        if not matched:
            continue
        before = tokens[:k]
        slurm: dict = {}
        while before and _ASSIGN.match(before[0]) and "=" in before[0] and not before[0].startswith("-"):
            name, _, value = before[0].partition("=")  # `NPROC_PER_NODE=8 bash train.sh`: the script's environment
            slurm[name] = _expand(value, env)
            before = before[1:]
        if "sbatch" in before:
            at = before.index("sbatch")
            options = before[at + 1:]
            if options and not all(o.startswith("-") or (i and options[i - 1].startswith("-") and "=" not in options[i - 1])
                                   for i, o in enumerate(options)):
                continue
            slurm.update(slurm_env(options))
        elif before and os.path.basename(before[-1]) not in _RUNNERS:
            continue
        elif not before and not tok.startswith(("./", "/")):
            continue
        args = []
        for arg in tokens[k + 1:]:
            if arg in _STOPS or arg.startswith((">", "2>", "1>")):
                break
            args.append(_expand(arg, env))
        # the folder it runs in: the one its path names the script from (when only one does)
        here = str(matched[0]) if len({os.path.realpath(d) for d in matched}) == 1 else ""
        return args, slurm, here
    return None


def invocations(script: Path, script_text: str, entries: list, root: str, lines_of) -> list[tuple]:
    """The invocations of `script` in the repository's indexed files (`entries`: [path, rank, bytes, ...]):
    (arguments, SLURM variables, where: `path:line`, the line, the folder it runs in when certain: sbatch and
    bash keep the invoker's) each, at most MAX_INVOCATIONS. `lines_of(text, path)`
    gives a file's shell lines (index.shell_lines)."""
    needle = script.name.encode("utf-8", errors="surrogateescape")
    out: list[tuple] = []
    for entry in entries:
        path = entry[0]
        if needle not in entry[2] or os.path.normpath(path) == os.path.normpath(str(script)):
            continue
        text = entry[2].decode("utf-8", errors="replace")
        for start, line, pieces, env, cds in lines_of(text, path):
            if script.name not in line:
                continue
            command = Command(path, start, line, entry[1], env, pieces, cds)
            dirs, _certain = working_dirs(command, root)
            candidates = list(dirs) if _certain else list(dirs) + bases_for(path, root)
            found = invocation_in(line, dict(env), script, candidates)
            if found is None:
                continue
            args, slurm, here = found  # the script runs where it is invoked from
            if entry[1] == 0 or path.endswith((".md", ".rst")):
                slurm = {**_exported(text, start, dict(env), script_text), **slurm}
            out.append((args, slurm, f"{os.path.relpath(path, root)}:{start + 1}", line, here))
            if len(out) >= MAX_INVOCATIONS:
                return out
    return out


_EXPORT = compile_later(r"^\s*export\s+(.*)$")
_NAME = compile_later(r"[A-Za-z_][A-Za-z0-9_]*")


def _exported(text: str, before: int, env: dict, script_text: str) -> dict:
    """The variables the invoking file exports before line `before` (`export NAME=value`, `export NAME`) that the
    invoked script reads (`$NAME`, `${NAME...}`): bash hands exported variables to the processes it starts, so the
    script sees them (plain assignments stay in the invoking shell). Values as the invoking file's lines set them
    (`env`); a script's own shell session or README only (a Makefile's `export` is make's, a CI step a shell of its
    own)."""
    names: list[str] = []
    for raw in text.splitlines()[:before]:
        if "export" not in raw:
            continue
        m = _EXPORT.match(raw)
        if m is None:
            continue
        for word in m.group(1).split("#", 1)[0].replace(";", " ").split():
            name = word.split("=", 1)[0]
            if _NAME.fullmatch(name):
                names.append(name)
    return {name: env[name] for name in dict.fromkeys(names)
            if name in env and re.search(r"\$\{?" + name + r"\b", script_text) is not None}

