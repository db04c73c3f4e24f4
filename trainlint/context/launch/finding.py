"""The launch of one config file: the commands of the repository's index that name it (the best by kind of file,
then by certainty of where it runs), else a usage line in the file's own comments, else `Launch()`; and how the
command names the file (`Launch.role`)."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from pathlib import Path

from trainlint.context import pins
from trainlint.context.launch import deciding, index
from trainlint.context.launch.deciding import _span_of, from_parsed
from trainlint.context.launch.index import has_launch_words, index_for, may_name
from trainlint.context.launch.parsing import (CONFIG_SUFFIXES, Parsed, _flag_tokens, _plain_arguments,
                                              _starts_a_command, accelerate_overrides, parse_command)
from trainlint.context.launch.resolving import (CONFIG_NAME_SUFFIXES, _relative_folder, name_pattern, names_config,
                                                token_words, working_dirs)
from trainlint.context.launch.values import Command, Launch
from trainlint.plan import Origin, Setting

# id(command) -> (the command, its Parsed or None, {repo: its working folders}, the file names it may name): an
# index's commands live until clear_cache, and each config of a repository is looked up in them.
_PARSED: dict[int, tuple] = {}
# (config, repository) -> (the index looked in, the launch its commands give, None for none): what `find` makes of
# the index depends on the file's path, not its text, so a file's edits (the language server), the fix-settling
# stage's re-lints and a linked file's configs look it up once per index.
_FOUND: dict[tuple[str, str], tuple] = {}
MAX_FOUND = 4096


def clear_cache() -> None:
    """Forget the launch indexes and the accelerate configs read (the language server calls it on changes)."""
    index.clear_cache()
    deciding.clear_cache()
    _PARSED.clear()
    _FOUND.clear()


def forget_lookups() -> None:
    """Forget the launches found for configs, keeping the indexes: a file created or deleted may change which one a
    command's relative path names (`names_config` asks whether a path is a file)."""
    _FOUND.clear()


def parsed_command(command: "Command", repo: Path, config: Path | None = None):
    """(Parsed or None, working folders, certain) of an index command, computed once per command and repository.
    With `config`, None as well when the command cannot name it: before it is parsed by `may_name`'s test of its
    text (parsing costs more), after by the file names its tokens may name."""
    entry = _PARSED.get(id(command))
    if entry is None or entry[0] is not command:
        if config is not None and not may_name(command, config):
            return None, [], False
        parsed = parse_command(command.text, dict(command.env))
        entry = (command, parsed, {}, _file_names(parsed) if parsed is not None else None)
        _PARSED[id(command)] = entry
    _, parsed, dirs, names = entry
    if parsed is None or config is not None and not _may_be_named(names, config.name):
        return None, [], False
    key = str(repo)
    if key not in dirs:
        dirs[key] = working_dirs(command, repo)
    bases, certain = dirs[key]
    return parsed, bases, certain


def _role(p: Parsed, config: Path, bases: list[Path], root: Path, script_config: str) -> str:
    """How the command names the file: "config", "hf-deepspeed", "deepspeed" or "accelerate"."""
    flags = _flag_tokens([a for a in p.args if a])
    for key, value, _written, _shown in flags:
        if key in ("deepspeed", "deepspeed_config") and value.endswith(CONFIG_SUFFIXES) and \
                names_config(value, config, bases, root):
            return "hf-deepspeed" if key == "deepspeed" else "deepspeed"
    for field_name, role in (("config_file", "accelerate"), ("deepspeed_config", "deepspeed")):
        given = p.values.get(field_name)
        if given and names_config(given, config, bases, root) and not (script_config and
                                                                      names_config(script_config, config, bases, root)):
            return role
    return "config"


def _config_args(p: Parsed) -> list[str]:
    """The tokens after the script that may name a config file."""
    return list(p.args) + ([p.values["config_file"]] if p.launcher == "trl" and "config_file" in p.values else [])


def _named_tokens(p: Parsed) -> list[str]:
    """The tokens of a command that may name a config file, in the order `_names_file` tries them."""
    tokens = [tok for tok in _config_args(p) if not (tok.startswith("--") and "=" not in tok)
              and (tok.endswith(CONFIG_NAME_SUFFIXES) or "\0" in tok or "=" in tok)]
    return tokens + [p.values[name] for name in ("config_file", "deepspeed_config")
                     if p.launcher in ("accelerate", "trl") and p.values.get(name)]


def _file_names(p: Parsed) -> tuple[frozenset[str], tuple[str, ...]]:
    """The file names a command's tokens may name, as `names_config` reads a token: the exact names, and the name
    patterns of those with a shell variable left unknown (`*` for it). `names_config` is true of a config only if
    its name is one of them or matches one: the test that spares a config every other command of the repository."""
    exact: set[str] = set()
    patterns: list[str] = []
    for token in _named_tokens(p):
        for word in token_words(token):
            name = name_pattern(word) if word else None
            if name is None:
                continue
            if "\0" in word:
                patterns.append(name)
            else:
                exact.add(name)
    return frozenset(exact), tuple(patterns)


def _may_be_named(names: tuple[frozenset[str], tuple[str, ...]] | None, name: str) -> bool:
    if names is None:
        return True
    exact, patterns = names
    return name in exact or any(fnmatch.fnmatch(name, pattern) for pattern in patterns)


def _names_file(p: Parsed, config: Path, bases: list[Path], root: Path) -> bool:
    """Whether one of the command's tokens that may name a config (`_named_tokens`: the script's arguments, then the
    launcher's own `--config_file X` / `--deepspeed_config_file X`) names this one."""
    return any(names_config(tok, config, bases, root) for tok in _named_tokens(p))


def find(config_path: str, comments: Sequence[tuple[int, int, str]] = (), root: str | None = None) -> Launch:
    """The launch of a config file: a command in the repository that names it (scripts, Makefiles, CI
    workflows, README code blocks), else one in the file's own comments (torchtune and LitGPT configs carry
    their `tune run ...` usage line), else nothing (`Launch()`)."""
    try:
        config = pins.resolved(config_path)
        if not config.parent.is_dir():
            return Launch()
    except (OSError, RuntimeError, ValueError):  # a symlink loop, an unreadable path
        return Launch()
    repo = Path(root) if root else pins.repo_root(config.parent)
    repo_index = index_for(str(repo))
    key = (str(config), str(repo))
    found = _FOUND.get(key)
    if found is None or found[0] is not repo_index:
        if len(_FOUND) >= MAX_FOUND:
            _FOUND.clear()
        found = _FOUND[key] = (repo_index, _from_index(repo_index, config, repo))
    return found[1] if found[1] is not None else find_in_comments(config_path, comments, [repo, config.parent])


def _from_index(repo_index: index.LaunchIndex, config: Path, repo: Path) -> Launch | None:
    """The launch the index's commands give a config (the best that names it), None when none names it."""
    matches: list[tuple[tuple, Command, Parsed, list[Path], bool]] = []  # (sort key, command, parsed, bases, certain)
    name = config.name
    for command in repo_index.commands_naming(name):
        if name not in command.text and "$" not in command.text and "{" not in command.text:
            continue
        parsed, bases, certain = parsed_command(command, repo, config)
        if parsed is None:
            continue
        if _names_file(parsed, config, bases, repo):
            if command.rank == 3 and not certain and bases and not command.cd and \
                    _names_file(parsed, config, bases[:1], repo):
                # a README's code block runs from the README's own folder (no `cd` says otherwise), and its path
                # names the file from there
                bases, certain = bases[:1], True
            distance = len(os.path.relpath(command.path, config.parent).split(os.sep))
            # by kind (a script before a README), then a command certain of where it runs first
            matches.append(((command.rank, not certain, distance, command.path, command.line), command, parsed,
                            bases, certain))
    if matches:
        matches.sort(key=lambda m: m[0])
        _, command, parsed, bases, certain = matches[0]
        origin = Origin("launch", command.path, span=_span_of(command.line))
        launch = from_parsed(parsed, origin, bases, command.text, command)
        assumed = ""
        if not certain:
            rel = _relative_folder(bases[0] if bases else Path(command.path).parent, repo)
            where = ", ".join(_relative_folder(b, repo) for b in bases[1:])
            assumed = (f"the command in {_relative_folder(Path(command.path), repo)}:{command.line + 1} does not say "
                       f"which folder it runs in; its relative paths are read from {rel}"
                       + (f" (it may also run from {where})" if where else "")
                       + " (add `cd <folder> &&` before it, or declare the launch: `launch = \"...\"`)")
        launch, disagree = _disagreements(launch, matches, repo)
        if disagree:
            assumed = disagree + (f"; {assumed}" if assumed else "")
        return launch._replace(others=len(matches) - 1, role=_role(parsed, config, bases, repo, launch.script_config),
                       other_scripts=tuple(sorted({(m[2].script, m[1].path) for m in matches[1:] if m[2].script})),
                       other_arguments=tuple(_plain_arguments(m[2]) for m in matches[1:]),
                       assumed=assumed, cwd=str(bases[0]) if certain and bases else "",
                       dirs=tuple(str(b) for b in bases),
                       overrides=_common_overrides([(m[2], m[3]) for m in matches], config, repo))
    return None


def cuts_for(config_path: str) -> tuple:
    """The launch commands cut short by a backslash followed by blanks (index.Cut) in the repository of a file:
    from the folder above its project folder that holds `.git`, or the working directory, when one is within
    reach (a repository's scripts sit beside the Python package whose setup.py marks the project), else from
    its project folder."""
    try:
        config = pins.resolved(config_path)
        if not config.parent.is_dir():
            return ()
        root = pins.repo_root(config.parent)
        cwd = pins.working_dir()
        for folder in [root, *root.parents][:pins.MAX_LEVELS]:
            if (folder / ".git").exists() or folder == cwd:
                root = folder
                break
        return index_for(str(root)).cuts()
    except (OSError, RuntimeError, ValueError):
        return ()


MAX_COMPARED = 16  # launches compared per file


def _where(command: Command, repo: Path) -> str:
    try:
        rel = os.path.relpath(command.path, repo)
    except ValueError:
        rel = command.path
    return f"{rel}:{command.line + 1}" + (f" as {command.via.split(': ', 1)[0]} runs it" if command.via else "")


def _disagreements(launch: Launch, matches: list, repo: Path) -> tuple[Launch, str]:
    """`launch` (the first of `matches`) with what the launches that name the file decide differently (world size,
    nodes, sharding, the accelerate config) made unknown, and the sentence that says so ("" when they agree): which
    of them runs is not known, so none is taken as fact."""
    if len(matches) < 2:
        return launch, ""
    decided: dict[str, dict] = {"sharding": {}, "num_processes": {}, "num_machines": {}}
    for _key, command, parsed, bases, _certain in matches[:MAX_COMPARED]:
        other = from_parsed(parsed, Origin("launch", command.path, span=_span_of(command.line)), bases, command.text,
                            command)
        for name, values in decided.items():
            value = getattr(other, name).value
            values.setdefault(value, _where(command, repo))
    changes: dict = {}
    said = []
    for name, values in decided.items():
        known = {v: w for v, w in values.items() if v is not None}
        if len(known) < 2:
            continue  # one value (a launch that leaves it unknown does not disagree)
        shown = ", ".join(f"{v} ({w})" for v, w in known.items())
        said.append(f"{name.replace('_', ' ')}: {shown}")
        changes[name] = Setting(None, Origin("default", note=f"the launches that name this file disagree on "
                                                             f"{name.replace('_', ' ')}: {shown}"))
        if name == "sharding":
            changes.update(accelerate_config="", extra=(), mixed_precision=Setting(None, changes[name].origin))
    if not said:
        return launch, ""
    return launch._replace(**changes), (f"the {len(matches)} launches that name this file disagree ("
                                        + "; ".join(said) + "): none is taken as the run's")


def _runs_accelerate_config(p: Parsed, config: Path, bases: list[Path], repo: Path) -> bool:
    """Whether the `accelerate launch` command `p` runs `config` as its --config_file."""
    return p.launcher == "accelerate" and bool(p.values.get("config_file")) and \
        names_config(p.values["config_file"], config, [*bases, repo, config.parent], repo)


def _common_overrides(parsed: list, config: Path, repo: Path) -> tuple:
    """The accelerate config keys that every launch in `parsed` ((Parsed, its bases) pairs) sets itself, when each
    of them runs `config` as its accelerate config (none otherwise)."""
    sets = []
    for p, bases in parsed:
        if not _runs_accelerate_config(p, config, bases, repo):
            return ()
        sets.append(accelerate_overrides(p))
    return tuple(sorted(set.intersection(*sets))) if sets else ()


def _names_another_config(p: Parsed, config: Path) -> bool:
    """Whether a usage line's command names config files and none of them is `config` (by file name, or by stem
    for a torchtune / LitGPT `--config llama3/8B_lora` written without its suffix)."""
    named = [value for key, value, _w, _s in _flag_tokens([a for a in p.args if a], dashes=False)
             if key in ("config", "config_file", "deepspeed", "deepspeed_config")]
    named += [a for a in p.args if not a.startswith("-") and "=" not in a and a.endswith(CONFIG_SUFFIXES)]
    named += [p.values[k] for k in ("config_file", "deepspeed_config") if p.values.get(k)]
    names = [Path(v.strip("\"'")).name for v in named if v and "\0" not in v and "$" not in v]
    if not names:
        return False
    return not any(n == config.name or (n == config.stem and not Path(n).suffix) for n in names)


def find_in_comments(config_path: str, comments: Sequence[tuple[int, int, str]] = (),
                     bases: list[Path] | None = None) -> Launch:
    """A launch command in the file's own comments (torchtune configs carry their `tune run ...` line)."""
    if bases is None:
        try:
            bases = [pins.resolved(config_path).parent]
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
        if _names_another_config(parsed, pins.resolved(config_path)):
            continue  # the usage line of another config (`# see also: tune run ... --config other.yaml`)
        origin = Origin("launch", str(config_path), span=_span_of(line), note=f"usage comment: {parsed.launcher} command")
        launch = from_parsed(parsed, origin, bases, body)
        # an accelerate config whose usage line runs it (`# accelerate launch --config_file <this> --num_processes 8
        # train.py`): the launch's own options set those keys
        config = pins.resolved(config_path)
        if bases and _runs_accelerate_config(parsed, config, bases, bases[0]):
            return launch._replace(origin=origin, role="accelerate",
                           overrides=tuple(sorted(accelerate_overrides(parsed))))
        return launch._replace(origin=origin, role="config")
    return Launch()
