"""Which configs in the repository link a file: the reverse of `deepspeed: ds/zero2.json`.

A DeepSpeed JSON is read by the config that names it (an HF / TRL / axolotl / LLaMA-Factory `deepspeed:` key,
Lightning's `DeepSpeedStrategy` `config:`, an accelerate config's `deepspeed_config_file`), and most of what can
go wrong with it is about that pair. When only the JSON is checked (pre-commit passes just the changed file; the
editor has only the JSON open), the configs that link it must be found: this module finds the candidates.

`index_for(path)` walks the repository of `path` once per run (cached per root) and records, for every config
file that mentions DeepSpeed, the file names it mentions (`zero2.json`, `accel.yaml`, ...). `candidates(path)`
returns the files that mention the name of `path`: a superset of those that link it. Whether a candidate really
links the file is decided by its flavor reader (the engine does that: `engine.linking_results`), so the index
never disagrees with what a lint of the candidate reads.

Bounds: the walk starts at the git root above the file (else the folder of the project settings, else the
nearest folder above with a pyproject.toml, else the file's folder); it skips what git ignores, the `exclude` /
`extend-exclude` settings (default: virtual environments, caches, build output), vendored folders, and hidden
folders; it looks at no more than MAX_FILES config files, MAX_FILE_BYTES each, MAX_TOTAL_BYTES in all, in
MAX_DIRS folders at most MAX_DEPTH deep; past a bound the index is marked `truncated` (and says where it
stopped), and the CLI says so on stderr.
"""

from __future__ import annotations

import functools
import os
import re
import stat
import time
from pathlib import Path

from dataclasses import dataclass, field

from trainlint._patterns import compile_later
from trainlint.context import launch, pins
from trainlint.context.discovery import CONFIG_SUFFIXES, DEFAULT_EXCLUDE, _git_root, _Ignores
from trainlint.context.settings import find_project_config
from trainlint.document.reading import read_regular_file

MAX_FILES = 5000  # config files looked at per repository
MAX_FILE_BYTES = 1024 * 1024  # a config that links a DeepSpeed file is small; bigger files are not read
MAX_TOTAL_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 12
MAX_DIRS = 20000  # folders walked (a monorepo with few configs and many folders)
VENDORED = ("vendor", "vendored", "third_party", "third-party", "thirdparty", "3rdparty", "external", "externals",
            "site-packages", "node_modules", "wandb", "outputs", "runs", "mlruns", "lightning_logs", "checkpoints")

SYSTEM_FOLDERS = ("/dev/", "/proc/", "/sys/", "/run/")

# A file can only link a DeepSpeed config if it names DeepSpeed: `deepspeed:`, `deepspeed_config_file`,
# `DeepSpeedStrategy`. Cheap to test before looking for file names.
_MENTIONS = compile_later(rb"deepspeed", re.IGNORECASE)
# A name starts after a delimiter (the lookbehind): without it a long run of name characters with no
# extension is rescanned from every position in it (quadratic: 100k characters took minutes).
_NAMES = compile_later(
    r"""(?<![^\s"'`:,=\[\]{}()<>|;/\\])([^\s"'`:,=\[\]{}()<>|;/\\]+\.(?:json|jsonc|hjson|conf|ya?ml))(?=$|[\s"'`,\]}#;)])""",
    re.IGNORECASE | re.MULTILINE)


@dataclass(eq=False)  # state, compared by identity
class LinkIndex:
    """Which configs of a repository mention a file name: the index behind 'the configs linking this file'."""
    root: str
    by_name: dict[str, list[str]] = field(default_factory=dict)  # file name -> files that mention it
    files: int = 0  # config files looked at
    read: int = 0  # of them, read (they mention DeepSpeed or were small enough to test)
    bytes: int = 0
    truncated: str = ""  # why the walk stopped early, if it did
    seconds: float = 0.0  # how long the walk took
    built: float = field(default_factory=time.monotonic)

    def candidates(self, path: str | Path) -> list[str]:
        target = key(path)
        return [p for p in self.by_name.get(Path(path).name, ()) if key(p) != target]


_INDEX: dict[str, LinkIndex] = {}


def clear_cache() -> None:
    """Forget the indexes (the language server calls it when files are saved, created or deleted)."""
    _INDEX.clear()
    _key.cache_clear()


def key(path: str | Path) -> str:
    text = os.fspath(path)
    # remembered for the run (a file is compared with each candidate of each config checked): the working directory
    # is part of the key where the path is relative
    return _key(text, "" if os.path.isabs(text) else os.getcwd())


@functools.lru_cache(maxsize=4096)
def _key(path: str, cwd: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return os.path.abspath(path)


def notes() -> list[str]:
    """What the indexes built so far could not look at (a bound was reached), one line each."""
    return [f"the index of linking configs stopped early ({index.truncated}): configs beyond it that link the "
            "checked files were not checked" for index in _INDEX.values() if index.truncated]


def root_of(path: str | Path) -> Path:
    """The repository a file belongs to: its git root, else the folder of its project settings, else the nearest
    folder above with a pyproject.toml or setup.py, else its own folder."""
    here = Path(key(path))
    folder = here if here.is_dir() else here.parent
    git = _git_root(folder)
    if git is not None:
        return git
    try:
        settings = find_project_config(str(folder)).path
    except Exception:  # noqa: BLE001 - unusable settings are reported elsewhere; fall back to the folder
        settings = ""
    if settings:
        return Path(settings).parent
    for above in (folder, *folder.parents):  # a project without trainlint settings: its pyproject.toml
        if (above / "pyproject.toml").is_file() or (above / "setup.py").is_file():
            return above
    return folder


def index_for(path: str | Path, max_age: float | None = None) -> LinkIndex:
    """The link index of the repository of `path`, built on first use and cached for the run (a long-running
    caller, the language server, passes `max_age` in seconds, or calls clear_cache when files change)."""
    root = str(root_of(path))
    index = _INDEX.get(root)
    if index is None or max_age is not None and time.monotonic() - index.built > max_age:
        index = _INDEX[root] = build(Path(root))
    return index


def candidates(path: str | Path, max_age: float | None = None) -> list[str]:
    """Config files in the repository of `path` that mention its file name (a superset of those linking it).
    Only a regular file outside the system folders has a repository to look in."""
    real = key(path)
    if _regular(Path(real)) is None or real.startswith(SYSTEM_FOLDERS) or real == os.sep:
        return []
    try:
        return index_for(path, max_age).candidates(path)
    except (OSError, ValueError, RuntimeError):
        return []


def launched_with(path: str | Path) -> list[str]:
    """Configs that launch commands in the repository run with `path` as their accelerate config
    (`--config_file`) or DeepSpeed config (`--deepspeed_config_file`): the commands come from the launch
    context's index (context/launch/index.py: scripts, Makefiles, CI, READMEs; its walk and cache, not a second one)."""
    try:
        target = Path(key(path))
        if _regular(target) is None:
            return []
        repo = pins.repo_root(target.parent)
        commands = launch.index_for(str(repo)).commands_naming(target.name)
    except (OSError, ValueError, RuntimeError):
        return []
    out: list[str] = []
    for command in commands:
        if target.name not in command.text and not (command.via and launch.may_name(command, target)):
            continue  # a command that names the file through a script's parameters an invocation binds
        parsed, bases, _certain = launch.parsed_command(command, repo)  # parsed once per command, as `find` reads it
        if parsed is None:
            continue
        named = [parsed.values.get(name) for name in ("config_file", "deepspeed_config")]
        if not any(value and launch.names_config(value, target, bases, repo) for value in named):
            continue
        for token in parsed.args:
            value = token.split("=", 1)[1] if token.startswith("--") and "=" in token else token
            if os.path.splitext(value)[1].lower() in CONFIG_SUFFIXES:
                for base in bases:
                    found = base / value
                    if _regular(found) is not None and key(found) != str(target) and str(found) not in out:
                        out.append(str(found))
                        break
    return out


def _ignores(root: Path) -> _Ignores:
    exclude: tuple[str, ...] | None = None
    extend: tuple[str, ...] = ()
    respect = True
    try:
        project = find_project_config(str(root))
        if project.path and Path(project.path).parent == root:
            exclude, extend, respect = project.exclude, project.extend_exclude, project.respect_gitignore
    except Exception:  # noqa: BLE001
        pass
    patterns = list(DEFAULT_EXCLUDE if exclude is None else exclude) + list(extend)
    return _Ignores(root, patterns, respect)


def build(root: Path) -> LinkIndex:
    started = time.perf_counter()
    index = LinkIndex(str(root))
    ignores = _ignores(root)
    folders = 0
    for folder, dirs, names in os.walk(root):
        folders += 1
        if folders > MAX_DIRS:
            index.truncated = f"more than {MAX_DIRS} folders under {root}"
            break
        here = Path(folder)
        depth = len(here.relative_to(root).parts)
        dirs[:] = sorted(d for d in dirs if depth < MAX_DEPTH and not d.startswith(".") and d not in VENDORED
                         and not d.endswith(".egg-info") and not ignores.ignored(here / d, True))
        for name in sorted(names):
            if os.path.splitext(name)[1].lower() not in CONFIG_SUFFIXES:
                continue
            path = here / name
            if ignores.ignored(path, False):
                continue
            index.files += 1
            if index.files > MAX_FILES:
                index.truncated = f"more than {MAX_FILES} config files under {root}"
                break
            if index.bytes > MAX_TOTAL_BYTES:
                index.truncated = f"more than {MAX_TOTAL_BYTES // 2**20} MiB of config files under {root}"
                break
            _scan(path, index)
        if index.truncated:
            break
    index.seconds = time.perf_counter() - started
    return index


def _regular(path: Path) -> os.stat_result | None:
    """The file's status when it is a regular file (not a FIFO, device, socket or folder: reading those can
    block or never end), else None."""
    try:
        status = path.stat()
    except (OSError, ValueError, RuntimeError):
        return None
    return status if stat.S_ISREG(status.st_mode) else None


def _scan(path: Path, index: LinkIndex) -> None:
    # Regular files only, never more than the limit (a FIFO or a device named like a config must not block).
    data, _why = read_regular_file(path, MAX_FILE_BYTES)
    if data is None:
        return
    index.read += 1
    index.bytes += len(data)
    if not _MENTIONS.search(data):
        return
    text = data.decode("utf-8", errors="replace")
    for name in {Path(m.group(1)).name for m in _NAMES.finditer(text)}:
        if name != path.name:
            index.by_name.setdefault(name, []).append(str(path))


__all__ = ["LinkIndex", "index_for", "candidates", "key", "root_of", "clear_cache", "build", "MAX_FILES",
           "MAX_TOTAL_BYTES", "MAX_FILE_BYTES"]
