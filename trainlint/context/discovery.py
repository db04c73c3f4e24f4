"""Which files a `trainlint check PATH...` run looks at, the way ruff finds files.

Walking a folder skips what git ignores (`.gitignore` files at every level, `.git/info/exclude`), the `exclude`
patterns (default: virtual environments, caches, build output, `node_modules`) and `extend-exclude`, and keeps
files with a config suffix. Files named on the command line are always checked, unless `force_exclude` is set
(pre-commit passes every changed file by name, so excludes must apply to them too). Patterns are gitignore-style,
relative to the folder of the settings file that gives them (or the working directory for flags).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from trainlint.context.launch.targets import is_target_file

if TYPE_CHECKING:
    import pathspec

CONFIG_SUFFIXES = frozenset({".json", ".yaml", ".yml", ".conf", ".hjson", ".jsonc"})
DEFAULT_EXCLUDE = (".git", ".hg", ".svn", "node_modules", ".venv", "venv", ".env", "env", "__pycache__", ".tox",
                   ".nox", ".mypy_cache", ".ruff_cache", ".pytest_cache", "dist", "build", "site-packages", ".idea",
                   ".vscode-test")


class Target(NamedTuple):
    """A file to check, and whether it was named on the command line or found by walking a folder."""
    path: str
    explicit: bool  # named on the command line (rather than found by walking a folder)
    launch: bool = False  # a walked shell script, Makefile or README: checked only for its launch targets


class _Ignores:
    """gitignore-style matching of paths under one root: the root's patterns plus nested .gitignore files."""

    def __init__(self, root: Path, patterns: list[str], use_gitignore: bool):
        self.root = root
        self.spec = gitignore_spec(patterns)
        self.use_gitignore = use_gitignore
        self._by_dir: dict[Path, pathspec.GitIgnoreSpec | None] = {}
        self.git_root = _git_root(root) if use_gitignore else None
        if self.git_root is not None:
            exclude = self.git_root / ".git" / "info" / "exclude"
            self._by_dir[self.git_root / ".git-info-exclude"] = _spec_of(exclude)

    def _gitignore(self, folder: Path) -> pathspec.GitIgnoreSpec | None:
        if folder not in self._by_dir:
            self._by_dir[folder] = _spec_of(folder / ".gitignore")
        return self._by_dir[folder]

    def ignored(self, path: Path, is_dir: bool) -> bool:
        suffix = "/" if is_dir else ""
        if self.spec is not None:
            rel = _relative(path, self.root)
            if rel is not None and self.spec.match_file(rel + suffix):
                return True
        if self.git_root is None:
            return False
        rel_git = _relative(path, self.git_root)
        if rel_git is None:
            return False
        info = self._by_dir.get(self.git_root / ".git-info-exclude")
        if info is not None and info.match_file(rel_git + suffix):
            return True
        # every .gitignore from the git root down to the file's folder, each relative to its own folder
        folder = self.git_root
        for part in Path(rel_git).parts[:-1] if rel_git else ():
            spec = self._gitignore(folder)
            if spec is not None and spec.match_file(_relative_to_ancestor(path, folder) + suffix):
                return True
            folder = folder / part
        spec = self._gitignore(folder)
        return spec is not None and spec.match_file(_relative_to_ancestor(path, folder) + suffix)


def gitignore_spec(lines: list[str]) -> pathspec.GitIgnoreSpec | None:
    """The matcher of these gitignore lines (None when none is a pattern). git skips a pattern it cannot use (a lone
    `!`, an unclosed `[`) where pathspec raises, and an ignore file never stops a run: such lines are left out."""
    # Imported here, when a matcher is first made (a folder walked, excludes applied to named files, the links
    # index's walk of a repository): with its pattern backends and typing_extensions it is ~6% of the instructions of
    # a one-file check of a config named on the command line (benchmarks/startup), which never matches a path.
    import pathspec

    try:
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
    except (ValueError, TypeError, IndexError):  # pathspec's GitWildMatchPatternError is a ValueError
        kept = []
        for line in lines:
            try:
                pathspec.GitIgnoreSpec.from_lines([line])
            except (ValueError, TypeError, IndexError):
                continue
            kept.append(line)
        spec = pathspec.GitIgnoreSpec.from_lines(kept)
    return spec if any(p.include is not None for p in spec.patterns) else None


def _spec_of(path: Path) -> pathspec.GitIgnoreSpec | None:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return gitignore_spec(lines)


def _relative(path: Path, root: Path) -> str | None:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return None


def _relative_to_ancestor(path: Path, folder: Path) -> str:
    return path.relative_to(folder).as_posix()  # `folder` is one of path's parents (under the git root)


def _kind(path: str) -> str:
    """"dir", "other" (a file, a link, or a name the system refuses: the check reports why it cannot read it), or
    "missing". Never raises: a 300-byte name or a NUL is for the reader to report, not a traceback."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "other" if os.path.islink(path) else "missing"
    except (OSError, ValueError):
        return "other"
    return "dir" if stat.S_ISDIR(st.st_mode) else "other"


def file_identity(path: str) -> object:
    """What is the same for every name of one file: its device and inode (symlinks followed, hard links alike),
    else (a dangling link, a name the system refuses) the path with its links resolved. `-` is standard input."""
    if path == "-":
        return path
    try:
        st = os.stat(path)
        return (st.st_dev, st.st_ino)
    except (OSError, ValueError):
        pass
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return os.path.abspath(path)


def _git_root(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def discover(paths: list[str], *, exclude: tuple[str, ...] | None = None, extend_exclude: tuple[str, ...] = (),
             pattern_root: Path | None = None, respect_gitignore: bool = True,
             force_exclude: bool = False, launches: bool = False) -> tuple[list[Target], list[str]]:
    """(the files to check, the paths given that do not exist). `-` stands for standard input. `launches`: a walk
    also gives the shell scripts, Makefiles and READMEs (context/launch/targets.py: their launch commands that carry
    their whole configuration are linted on their own), marked `launch`."""
    root = (pattern_root or Path.cwd()).resolve()
    patterns = list(DEFAULT_EXCLUDE if exclude is None else exclude) + list(extend_exclude)
    # Files named on the command line (pre-commit's case) need no matching unless --force-exclude: pathspec is
    # imported only when a folder is walked or excludes apply to named files.
    kinds = {raw: ("other" if raw == "-" else _kind(raw)) for raw in paths}
    needs_matching = force_exclude or "dir" in kinds.values()
    ignores = _Ignores(root, patterns, respect_gitignore) if needs_matching else None

    def matcher() -> _Ignores:
        nonlocal ignores
        if ignores is None:  # a path that was no folder when first looked at is one now
            ignores = _Ignores(root, patterns, respect_gitignore)
        return ignores
    targets: list[Target] = []
    missing: list[str] = []
    seen: dict[object, int] = {}  # file identity -> its place in targets

    def add(path: str, explicit: bool, launch: bool = False) -> None:
        # One file under two names (train.yaml ./train.yaml $PWD/train.yaml, a symlink, a hard link) is checked,
        # fixed and diffed once, under the first name given: twice, --diff printed two patches for one file.
        key = file_identity(path)
        if key not in seen:
            seen[key] = len(targets)
            targets.append(Target(path, explicit, launch and not explicit))
        elif explicit and not targets[seen[key]].explicit:
            targets[seen[key]] = Target(targets[seen[key]].path, True)

    for raw in paths:
        if raw == "-":
            add(raw, True)
            continue
        path = Path(raw)
        try:
            is_dir = path.is_dir()
            exists = is_dir or path.exists() or path.is_symlink()
        except (OSError, ValueError):  # a name too long, a NUL: the reader reports it (TL001)
            add(raw, True)
            continue
        if is_dir:
            base = path.resolve()
            if force_exclude and matcher().ignored(base, True):
                continue
            for folder, dirs, files in os.walk(path):
                here = Path(folder).resolve()
                dirs[:] = sorted(d for d in dirs if not matcher().ignored(here / d, True))
                for name in sorted(files):
                    child = Path(folder) / name
                    if child.suffix.lower() in CONFIG_SUFFIXES and not matcher().ignored(here / name, False):
                        add(str(child), False)
                    elif launches and is_target_file(name) and not matcher().ignored(here / name, False):
                        add(str(child), False, launch=True)
        elif exists:
            if force_exclude and matcher().ignored(path.resolve() if not path.is_symlink() else path.absolute(), False):
                continue
            add(raw, True)
        else:
            missing.append(raw)
    return targets, missing
