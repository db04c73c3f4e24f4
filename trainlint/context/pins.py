"""The repository's dependency pins, read as text (never executed): requirements*.txt, pyproject.toml
(PEP 621 dependencies and optional dependencies, PEP 735 groups, Poetry), setup.py / setup.cfg (requirement-like
string literals), uv.lock / poetry.lock / Pipfile.lock (exact versions), Pipfile, environment.yml.

`pins_for(path)` walks from the config's folder up to the repository root (the folder holding `.git`, at most
`MAX_LEVELS` up) and returns, per distribution, the nearest folder's pin. Each folder is read once per process
(`clear_cache()` forgets them: the language server calls it when a pin file changes). Then it adds what the
repository's install commands install from elsewhere (`trainlint.context.installs`: `pip install -e src/sub`,
`conda env create -f docker/environment.yml`, ...) for the distributions the nearer pins leave unpinned.

A git pin (`trl @ git+https://...@REF`) is a development version (`git_pin`): a release tag is that release, a commit
catalog/data/release_commits.json places is the range between two releases, anything else has no version (its
`note` says so; never the newest release).
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
from pathlib import Path
from typing import NamedTuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same reader, as the tomli distribution
    import tomli as tomllib

from trainlint._patterns import compile_later
from trainlint._versions import InvalidSpecifier, SpecifierSet, canonical
from trainlint.catalog import releases
from trainlint.context import installs
from trainlint.document.reading import read_regular_file


MAX_LEVELS = 8
MAX_BYTES = 2_000_000  # a pin file larger than this is skipped (lock files of huge monorepos)
PIN_FILES = ("uv.lock", "poetry.lock", "Pipfile.lock", "pyproject.toml", "setup.cfg", "setup.py", "Pipfile",
             "environment.yml", "environment.yaml")
PIN_NAMES = frozenset({"uv.lock", "poetry.lock", "Pipfile", "Pipfile.lock", "pyproject.toml", "setup.py", "setup.cfg",
                       "environment.yml", "environment.yaml"})
_REQ_DIRECT = compile_later(r"""["']([A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]'"]*\])?\s*@\s*git\+[^'"\s]+)["']""")
_REQ_STRING = compile_later(r"""["']([A-Za-z0-9][A-Za-z0-9._-]*(\[[^\]'"]*\])?\s*(?:[<>=!~]=?|===)[^'"]*)["']""")


class Pin(NamedTuple):
    """One package requirement of the repository: its specifier and the file that says it."""
    name: str  # canonical
    spec: str  # PEP 440 specifier ("==0.18.0", ">=4.40,<5", "" = unpinned)
    path: str  # the file that says it
    exact: bool = False  # a lock file's resolved version or ==X.Y.Z
    note: str = ""  # how a git pin's reference was read ("git commit 69ad852e, between releases 0.15.2 and 0.16.0")
    via: str = ""  # the install command that reads `path` when it is not next to or above the config ("setup.sh:3")

    def where(self) -> str:
        """The pin's source as `--show-settings` prints it: the file, the install command that uses it, the note."""
        out = self.path + (f" (installed by {self.via})" if self.via else "")
        return out + (f": {self.note}" if self.note else "")


class FolderPins(NamedTuple):
    """The pins a folder's pin files declare, the strongest per package, and the files read."""
    pins: dict  # name -> Pin (the strongest in this folder: exact beats range beats unpinned)
    project_names: tuple[str, ...] = ()  # the package names this folder's pyproject / setup.py define
    files: tuple[str, ...] = ()


_CACHE: dict[str, FolderPins] = {}


def clear_cache() -> None:
    installs.clear_cache()
    _CACHE.clear()
    _ROOTS.clear()
    _CWDS.clear()
    _resolved.cache_clear()
    _marks_root.cache_clear()
    _folders_up.cache_clear()


def is_pin_file(path: str) -> bool:
    """A file that pins versions: PIN_NAMES, requirements*.txt or *requirements.txt (dev-requirements.txt)."""
    name = Path(path).name
    return name in PIN_NAMES or (name.endswith(".txt") and (name.startswith("requirements")
                                                            or name.endswith("requirements.txt")))


ROOT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")


_ROOTS: dict[tuple[Path, Path | None], Path] = {}
_CWDS: dict[str, Path] = {}


def repo_root(start: Path) -> Path:
    """The project folder above `start` (inclusive, within MAX_LEVELS): the nearest holding `.git`, a
    pyproject.toml, setup.py or setup.cfg, or the working directory when the walk reaches it first (trainlint
    run from a repository's root); else `start` itself: outside any project only the config's own folder is read.
    Remembered per folder for the run (cleared with the other caches)."""
    cwd = working_dir()
    key = (start, cwd)
    if key not in _ROOTS:
        _ROOTS[key] = _repo_root(start, cwd)
    return _ROOTS[key]


def working_dir() -> Path | None:
    """The working directory with its links resolved (None when it is gone): resolving walks every component with
    lstat, so once per working directory."""
    try:
        here = os.getcwd()
        if here not in _CWDS:
            _CWDS[here] = Path(here).resolve()
        return _CWDS[here]
    except OSError:
        return None


def _repo_root(start: Path, cwd: Path | None) -> Path:
    folder = start
    for _ in range(MAX_LEVELS):
        if _marks_root(folder) or folder == cwd:
            return folder
        if folder.parent == folder:
            break
        folder = folder.parent
    return start


@functools.lru_cache(maxsize=4096)
def _marks_root(folder: Path) -> bool:
    """Whether `folder` holds one of the ROOT_MARKERS, remembered for the run: the configs of a repository share
    the folders above their own."""
    return any((folder / marker).exists() for marker in ROOT_MARKERS)


def resolved(path: str) -> Path:
    """`Path(path).resolve()`, remembered for the run: each stage of a file's check asks for its folder, and
    resolving walks every component with lstat."""
    return _resolved(path, "" if os.path.isabs(path) else os.getcwd())


@functools.lru_cache(maxsize=1024)
def _resolved(path: str, cwd: str) -> Path:
    return Path(path).resolve()


def folders_up(path: str) -> list[Path]:
    """The folders from the config's up to the repository root (`repo_root`), nearest first."""
    try:
        start = resolved(path)
    except (OSError, RuntimeError, ValueError):  # a symlink loop, an unreadable path: no repository
        return []
    return list(_folders_up(start, os.getcwd()))  # the working directory may end the walk (`repo_root`)


@functools.lru_cache(maxsize=1024)
def _folders_up(start: Path, cwd: str) -> tuple[Path, ...]:
    try:
        start = start if start.is_dir() else start.parent
    except (OSError, RuntimeError, ValueError):
        return ()
    if not start.is_dir():
        return ()
    root = repo_root(start)
    out, folder = [], start
    while True:
        out.append(folder)
        if folder == root or folder.parent == folder or len(out) >= MAX_LEVELS:
            return tuple(out)
        folder = folder.parent


def pins_for(path: str) -> tuple[dict, tuple[str, ...]]:
    """(name -> nearest Pin, the project names defined on the way up)."""
    merged: dict[str, Pin] = {}
    projects: list[str] = []
    folders = folders_up(path)
    for folder in folders:
        found = read_folder(folder)
        for name, pin in found.pins.items():
            merged.setdefault(name, pin)
        projects.extend(found.project_names)
    if folders:  # then what the repository's install commands install from elsewhere (trainlint.context.installs)
        elsewhere, names, _files = installs.installed_pins(folders[-1], sys.modules[__name__])
        for name, pin in elsewhere.items():
            if name not in merged or (not merged[name].spec and not merged[name].note and (pin.spec or pin.note)):
                merged[name] = pin
        projects.extend(n for n in names if n not in projects)
    return merged, tuple(projects)


def read_folder(folder: Path) -> FolderPins:
    key = str(folder)
    if key not in _CACHE:
        _CACHE[key] = _read_folder(folder)
    return _CACHE[key]


def _read_folder(folder: Path) -> FolderPins:
    pins: dict[str, Pin] = {}
    projects: list[str] = []
    files: list[str] = []
    try:
        names = sorted(p.name for p in folder.iterdir() if is_pin_file(p.name) and p.is_file())
    except OSError:
        return FolderPins({})
    extra = []
    for sub in ("requirements",):  # requirements/*.txt folders
        if (folder / sub).is_dir():
            try:
                extra = sorted(f"{sub}/{p.name}" for p in (folder / sub).iterdir() if p.suffix == ".txt")
            except OSError:
                extra = []
    for name in names + extra:
        path = folder / name
        data, _ = read_regular_file(path, MAX_BYTES)  # never blocks on a FIFO named like a pin file
        if data is None:
            continue
        text = data.decode("utf-8", errors="replace")
        files.append(str(path))
        try:
            found, defined = _parse(Path(name).name, text)
        except Exception:  # noqa: BLE001 - a broken pin file is no pin, never a crash
            continue
        projects.extend(defined)
        for pin in found:
            pin = Pin(pin.name, pin.spec, str(path), pin.exact, pin.note)
            old = pins.get(pin.name)
            if old is None or _strength(pin) > _strength(old):
                pins[pin.name] = pin
    return FolderPins(pins, tuple(projects), tuple(files))


def _strength(pin: Pin) -> float:
    return 2 if pin.exact else (1 if pin.spec else (0.5 if pin.note else 0))  # a git pin's note beats a bare name


# PEP 508, as far as a pin's framework and versions go: `name[extras] (specifiers) ; marker`. A direct reference
# (`name @ url`) pins no version. (packaging.requirements would pull in markers, tags, platform and subprocess:
# more CPU than a lint.)
_PEP508 = compile_later(r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[[^\]]*\])?\s*"
               r"(\(?\s*(?:(?:===|==|!=|~=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+\s*,?\s*)*\)?)\s*(;.*)?$")


def _requirement(text: str) -> Pin | None:
    text = text.split(" #")[0].strip()
    if text.startswith("git+"):  # a bare git URL: the distribution is #egg=NAME, else the repository's name
        egg = re.search(r"#egg=([A-Za-z0-9][A-Za-z0-9._-]*)", text)
        repo = re.search(r"/([A-Za-z0-9][A-Za-z0-9._-]*?)(?:\.git)?(?:@[^/#\s]*)?(?:#.*)?$", text)
        name = egg.group(1) if egg else (repo.group(1) if repo else "")
        return git_pin(canonical(name), text) if name else None
    if not text or text.startswith(("#", "-", "http:", "https:", "file:", ".")):
        return None
    direct = re.match(r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[[^\]]*\])?\s*@\s*(\S*)", text)
    if direct:  # `name @ url`: the dependency is there, at a release only a git reference may name
        return git_pin(canonical(direct.group(1)), direct.group(2))
    match = _PEP508.match(text)
    if match is None:
        return None
    try:
        specifier = SpecifierSet(match.group(2).strip().strip("()").strip())
    except InvalidSpecifier:
        return None
    spec = str(specifier)
    exact = len(specifier) == 1 and next(iter(specifier)).operator in ("==", "===") and "*" not in spec
    return Pin(canonical(match.group(1)), spec, "", exact)


_GIT_REF = compile_later(r"^git\+[^@#\s]+?(?:\.git)?(?:@([^#\s]+))?(?:#.*)?$")
_RELEASE_TAG = compile_later(r"^v?(\d+(?:\.\d+){1,2})$")


def git_pin(name: str, url: str) -> Pin:
    """`name @ git+https://...@REF`: a tag naming a release (`@v0.16.0`) is that release; a commit that
    catalog/data/release_commits.json places (`@69ad852e`) lies between two releases, a range; any other reference
    (a branch, an unknown commit, no reference) is a development version trainlint cannot name: no spec, and the
    note says so (never the newest release). A URL that is no git URL (a wheel, a file) pins nothing."""
    match = _GIT_REF.match(url.strip())
    if match is None:
        return Pin(name, "", "", False)
    ref = (match.group(1) or "").strip()
    tag = _RELEASE_TAG.match(ref)
    if tag:
        return Pin(name, f"=={tag.group(1)}", "", True, f"git tag {ref}")
    if re.fullmatch(r"[0-9a-fA-F]{7,40}", ref):
        window = releases.commit_window(name, ref)
        if window is not None:
            after, before = window
            if after == before:
                return Pin(name, f"=={after}", "", True, f"git commit {ref[:10]}, the commit of release {after}")
            spec = f">={after}" + (f",<={before}" if before else "")
            between = f"between releases {after} and {before}" if before else f"after release {after}, unreleased"
            return Pin(name, spec, "", False, f"git commit {ref[:10]}, {between} (release_commits.json)")
        return Pin(name, "", "", False, f"git commit {ref[:10]}: a development version, release unknown")
    what = f"git reference {ref}" if ref else "git default branch"
    return Pin(name, "", "", False, f"{what}: a development version, release unknown")


def _git_table(dist: str, spec: dict) -> Pin:
    """A Pipfile / Poetry git dependency table: `{git = URL, ref | rev | tag | branch = REF}`."""
    ref = next((spec[k] for k in ("tag", "rev", "ref", "branch") if isinstance(spec.get(k), str)), "")
    url = spec["git"] if spec["git"].startswith("git+") else "git+" + spec["git"]
    return git_pin(canonical(dist), url + (f"@{ref}" if ref else ""))


def _parse(name: str, text: str) -> tuple[list[Pin], list[str]]:
    if name in ("uv.lock", "poetry.lock"):
        data = tomllib.loads(text)
        return [Pin(canonical(p["name"]), f"=={p['version']}", "", True) for p in data.get("package", [])
                if isinstance(p, dict) and isinstance(p.get("name"), str) and isinstance(p.get("version"), str)], []
    if name == "Pipfile.lock":
        data = json.loads(text)
        out = []
        for section in ("default", "develop"):
            for dist, info in (data.get(section) or {}).items():
                if isinstance(info, dict) and isinstance(info.get("version"), str):
                    out.append(Pin(canonical(dist), info["version"], "", info["version"].startswith("==")))
        return out, []
    if name == "pyproject.toml":
        return _pyproject(tomllib.loads(text))
    if name == "Pipfile":
        data = tomllib.loads(text)
        out = []
        for section in ("packages", "dev-packages"):
            for dist, spec in (data.get(section) or {}).items():
                if isinstance(spec, dict) and isinstance(spec.get("git"), str):  # trl = {git = "...", ref = "..."}
                    out.append(_git_table(dist, spec))
                    continue
                spec = spec if isinstance(spec, str) else (spec.get("version", "") if isinstance(spec, dict) else "")
                pin = _requirement(dist + ("" if spec in ("*", "") else spec))
                if pin:
                    out.append(pin)
        return out, []
    if name.startswith("environment."):
        out = []
        for line in text.splitlines():
            item = line.strip()
            if not item.startswith("- "):
                continue
            item = item[2:].strip().strip("'\"")
            conda = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)=([0-9][^=\s]*)(?:=[^=\s]+)?$", item)  # name=version(=build)
            if conda:
                out.append(Pin(canonical(conda.group(1)), f"=={conda.group(2)}", "", "*" not in conda.group(2)))
                continue
            pin = _requirement(item)
            if pin:
                out.append(pin)
        return out, []
    if name in ("setup.py", "setup.cfg"):
        out = [p for p in (_requirement(m.group(1)) for m in _REQ_STRING.finditer(text)) if p]
        if "git+" in text:  # "trl @ git+https://...@69ad852e" (a direct reference: no specifier)
            out += [p for p in (_requirement(m.group(1)) for m in _REQ_DIRECT.finditer(text)) if p]
        if name == "setup.cfg":
            out += [p for p in (_requirement(line) for line in text.splitlines() if line[:1].isspace()) if p]
        defined = re.findall(r"""\bname\s*=\s*["']([A-Za-z0-9._-]+)["']""", text)
        if name == "setup.cfg" and not defined:  # [metadata] name = trlx (INI: no quotes)
            defined = re.findall(r"^name\s*=\s*([A-Za-z0-9._-]+)\s*$", text, re.M)
        return out, [canonical(d) for d in defined[:1]]
    # requirements*.txt
    return [p for p in (_requirement(line.strip()) for line in text.splitlines()) if p], []


def _pyproject(data: dict) -> tuple[list[Pin], list[str]]:
    out: list[Pin] = []
    project = data.get("project") or {}
    strings = list(project.get("dependencies") or [])
    for group in (project.get("optional-dependencies") or {}).values():
        strings.extend(group if isinstance(group, list) else [])
    for group in (data.get("dependency-groups") or {}).values():
        strings.extend(g for g in (group if isinstance(group, list) else []) if isinstance(g, str))
    out.extend(p for p in (_requirement(s) for s in strings if isinstance(s, str)) if p)
    poetry = (data.get("tool") or {}).get("poetry") or {}
    for dist, spec in (poetry.get("dependencies") or {}).items():
        if isinstance(spec, dict) and isinstance(spec.get("git"), str):  # trl = {git = "...", rev/tag/branch = ...}
            out.append(_git_table(dist, spec))
            continue
        if isinstance(spec, dict):
            spec = spec.get("version", "")
        if isinstance(spec, str) and dist.lower() != "python":
            pin = _requirement(dist + _poetry_spec(spec))
            if pin:
                out.append(pin)
    names = [canonical(n) for n in (project.get("name"), poetry.get("name")) if isinstance(n, str)]
    return out, names


def _poetry_spec(spec: str) -> str:
    spec = spec.strip()
    if spec in ("", "*"):
        return ""
    caret = re.match(r"^\^(\d+)(?:\.(\d+))?(?:\.(\d+))?$", spec)
    if caret:
        major, minor = int(caret.group(1)), int(caret.group(2) or 0)
        upper = f"{major + 1}.0" if major else f"0.{minor + 1}"
        return f">={spec[1:]},<{upper}"
    tilde = re.match(r"^~(\d+)\.(\d+)", spec)
    if tilde and not spec.startswith("~="):
        return f">={spec[1:]},<{tilde.group(1)}.{int(tilde.group(2)) + 1}"
    if spec[0].isdigit():
        return "==" + spec
    return spec
