"""Pins the repository installs from outside the config's ancestor folders, found from the install commands it
ships: `pip install -r docker/requirements.txt`, `conda env create -f docker/environment.yml`, `pip install -e
src/sub` (that folder's pin files), `pip install trl==0.17.0` (a pin of its own), `git clone <a framework's repository>` + `git checkout REF` (that
framework at REF, `pins.git_pin`), in shell scripts, Dockerfiles,
README / docs code blocks and CI workflows; failing those, the single environment or requirements file of a
conventional subfolder (docker/, env/, envs/, environment/, conda/) when the repository root pins nothing.

`installed_pins(root, pins)` -> (name -> Pin, project names, files read); each Pin's `via` names the command that
installs it ("setup.sh:5"), or why the file was taken. Bounded: a fixed list of places (never the whole repository),
at most `MAX_FILES` files of at most `MAX_BYTES` each, a bytes prefilter before any line is looked at. Read once per
repository root per process (`clear_cache()`).
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from types import ModuleType

from trainlint._patterns import compile_later
from trainlint.catalog import frameworks
from trainlint.document.reading import read_regular_file

MAX_FILES = 60
MAX_BYTES = 400_000
MAX_LISTED = 200  # entries looked at per folder
ENV_FOLDERS = ("docker", "env", "envs", "environment", "conda")
PLACES = ("", "docker", "scripts", "docs", ".github/workflows", ".devcontainer") + ENV_FOLDERS[1:]
_PREFILTER = (b"install", b"env create", b"env update", b"create -f", b"create --file", b"git clone")
_CACHE: dict[str, tuple[dict, tuple[str, ...], tuple[str, ...]]] = {}


def clear_cache() -> None:
    _CACHE.clear()


def is_install_file(path: str) -> bool:
    """Whether a changed file may change what the repository installs: a Dockerfile (the other install evidence,
    shell scripts, Markdown, workflows, Makefiles, are launch files already), or a file a scan read (an
    environment file under any name `conda env create -f` gave)."""
    low = os.path.basename(path).lower()
    if low.startswith("dockerfile") or low.endswith(".dockerfile"):
        return True
    return any(path in files for _pins, _names, files in _CACHE.values())


def installed_pins(root: Path, pin_files: ModuleType) -> tuple[dict, tuple[str, ...], tuple[str, ...]]:
    """`pin_files`: trainlint.context.pins (Pin, read_folder, the file parsers), handed in by pins_for: pins
    imports this module, so this one does not import it back."""
    key = str(root)
    if key not in _CACHE:
        try:
            _CACHE[key] = _scan(root, pin_files)
        except Exception:  # noqa: BLE001 - install evidence is a refinement: never a crash
            _CACHE[key] = ({}, (), ())
    return _CACHE[key]


def _evidence_file(name: str, place: str) -> bool:
    low = name.lower()
    if low.endswith(".sh") or low.startswith("dockerfile") or low.endswith(".dockerfile") or low == "makefile":
        return True
    if place == ".github/workflows":
        return low.endswith((".yml", ".yaml"))
    if low.endswith((".md", ".rst")):
        return place in ("", "docs", "docker") or "install" in low or "readme" in low
    return False


def _evidence(root: Path) -> list[Path]:
    out: list[Path] = []
    for place in PLACES:
        folder = root / place if place else root
        try:
            entries = sorted(os.listdir(folder))[:MAX_LISTED]
        except OSError:
            continue
        for name in entries:
            if _evidence_file(name, place) and (folder / name).is_file():
                out.append(folder / name)
                if len(out) >= MAX_FILES:
                    return out
    return out


def _scan(root: Path, pin_files: ModuleType) -> tuple[dict, tuple[str, ...], tuple[str, ...]]:
    found: dict = {}
    projects: list[str] = []
    files: list[str] = []

    def add(pin, via: str) -> None:
        pin = pin_files.Pin(pin.name, pin.spec, pin.path, pin.exact, pin.note, via)
        old = found.get(pin.name)
        if old is None or pin_files._strength(pin) > pin_files._strength(old):
            found[pin.name] = pin

    seen: set[str] = set()
    for path in _evidence(root):
        data, _ = read_regular_file(path, MAX_BYTES)
        if data is None:
            continue
        if not any(word in data for word in _PREFILTER):
            continue
        rel = _rel(path, root)
        text = data.decode("utf-8", errors="replace")
        for line_no, target, kind in _commands(text, path, root, pin_files):
            via = f"{rel}:{line_no}"
            if kind == "pin":
                add(target, via)
                continue
            where = str(target)
            if where in seen:
                continue
            seen.add(where)
            if kind == "folder":
                if target == root:
                    continue  # the root's own pins are read anyway
                folder = pin_files.read_folder(target)
                projects.extend(folder.project_names)
                files.extend(folder.files)
                for pin in folder.pins.values():
                    add(pin, via)
            else:
                for pin in _read_file(target, kind, pin_files):
                    add(pin, via)
                files.append(where)
    if not found and not any(p.spec for p in pin_files.read_folder(root).pins.values()):
        only = _conventional(root)
        if only is not None:
            for pin in _read_file(only, "env" if only.suffix in (".yml", ".yaml") else "requirements", pin_files):
                add(pin, f"the only environment file; {_rel(root, root) or 'the repository root'} pins nothing")
            files.append(str(only))
    return found, tuple(dict.fromkeys(projects)), tuple(files)


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _conventional(root: Path) -> Path | None:
    """The one environment / requirements file of the conventional subfolders (None: none, or several)."""
    candidates = []
    for sub in ENV_FOLDERS:
        folder = root / sub
        try:
            names = sorted(os.listdir(folder))[:MAX_LISTED]
        except OSError:
            continue
        for name in names:
            low = name.lower()
            if re.match(r"^(environment.*\.ya?ml|.*requirements.*\.txt|conda.*\.ya?ml)$", low) and \
                    (folder / name).is_file():
                candidates.append(folder / name)
    return candidates[0] if len(candidates) == 1 else None


def _read_file(path: Path, kind: str, pin_files: ModuleType) -> list:
    try:
        if path.stat().st_size > pin_files.MAX_BYTES:
            return []
        text = path.read_text(encoding="utf-8", errors="replace")
        name = "environment.yml" if kind == "env" else ("requirements.txt" if kind == "requirements" else path.name)
        if kind == "requirements" and pin_files.is_pin_file(path.name):
            name = path.name
        found, _defined = pin_files._parse(name, text)
    except Exception:  # noqa: BLE001 - a broken file pins nothing
        return []
    return [pin_files.Pin(p.name, p.spec, str(path), p.exact, p.note) for p in found]


_PIP = compile_later(r"(?:^|[\s;&|(`])(?:\S*/)?(?:pip3?|uv\s+pip|python3?\s+-m\s+pip)\s+install\b(.*)$")
_CONDA = compile_later(r"(?:^|[\s;&|(`])(?:\S*/)?(?:conda|mamba|micromamba)\s+(?:env\s+)?(?:create|update)\b(.*)$")
_CD = compile_later(r"(?:^|[\s;&|(])(?:cd|pushd)\s+([^\s;&|)]+)")
_OPTS_WITH_VALUE = ("-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--target", "-t", "--prefix",
                    "--root", "--platform", "--python-version", "--trusted-host", "--src", "--cache-dir")


def _commands(text: str, path: Path, root: Path, pin_files: ModuleType):
    """(line number, target, kind) per install command: kind "requirements" / "env" (a file), "folder" (a local
    project installed), "pin" (a Pin written on the command line)."""
    cwd = root  # scripts are run from the repository root (`bash scripts/setup.sh`); the file's folder is tried too
    start, joined = 0, ""
    lines = text.splitlines()
    checkouts = _Checkouts()
    for number, raw in enumerate(lines, 1):
        if not joined:
            start = number
        line = raw.rstrip()
        if line.endswith("\\"):
            joined += line[:-1] + " "
            continue
        line, joined = joined + line, ""
        stripped = line.strip().lstrip("$>").strip()
        if stripped.startswith("#") and not stripped.startswith("#!"):
            continue
        stripped = stripped.split(" #")[0]
        if stripped.upper().startswith("WORKDIR "):
            where = stripped[8:].strip()
            cwd = _local(where, root, root) or cwd
            continue
        for match in _CD.finditer(stripped):
            moved = _local(match.group(1), cwd, root)
            if moved is not None and moved.is_dir():
                cwd = moved
        if "git" in stripped or "cd" in stripped:
            for segment in re.split(r"&&|\|\||;", stripped):
                checkouts.read(segment, start)
        if "install" not in stripped and "create" not in stripped and "update" not in stripped:
            continue
        for segment in re.split(r"&&|\|\||;", stripped):
            yield from ((start, target, kind) for target, kind in _segment(segment, cwd, path, root, text, pin_files))
    for line_no, name, url, ref in checkouts.pins():
        pin = pin_files.git_pin(name, f"git+{url}" + (f"@{ref}" if ref else ""))
        yield line_no, pin_files.Pin(pin.name, pin.spec, str(path), pin.exact, pin.note), "pin"


class _Checkouts:
    """The framework repositories a file clones (`git clone https://github.com/huggingface/transformers.git [dir]`,
    `-b REF`) and the reference each is then checked out at (`cd transformers && git checkout v4.43.4`, `git -C dir
    checkout SHA`, `git reset --hard SHA`): the distribution at that reference, as a git pin (pins.git_pin: a release
    tag is that release, a commit release_commits.json places a range, anything else a development version)."""

    def __init__(self) -> None:
        self.clones: dict[str, list] = {}  # folder -> [line, distribution, url, ref]
        self.inside = ""  # the clone folder the commands run in

    def read(self, segment: str, line_no: int) -> None:
        words = _words(segment)
        if not words:
            return
        if words[0] in ("cd", "pushd") and len(words) > 1:
            target = words[1].strip("'\"").rstrip("/")
            self.inside = target if target in self.clones else ("" if target in ("..", "-", "~") else
                                                               os.path.basename(target) if os.path.basename(target)
                                                               in self.clones else "")
            return
        if words[0] != "git" or len(words) < 2:
            return
        folder = self.inside
        rest = words[1:]
        if rest[0] == "-C" and len(rest) > 2:
            folder, rest = rest[1].strip("'\"").rstrip("/"), rest[2:]
            folder = folder if folder in self.clones else os.path.basename(folder)
        if rest[0] == "clone":
            self._clone(rest[1:], line_no)
        elif rest[0] in ("checkout", "switch", "reset") and folder in self.clones:
            refs = [w for w in rest[1:] if not w.startswith("-") and w not in ("--",)]
            if refs:
                self.clones[folder][3] = refs[0]
                self.clones[folder][0] = line_no

    def _clone(self, args: list[str], line_no: int) -> None:
        ref, positional, i = "", [], 0
        while i < len(args):
            word = args[i]
            if word in ("-b", "--branch") and i + 1 < len(args):
                ref, i = args[i + 1], i + 2
                continue
            if word.startswith("--branch="):
                ref = word.split("=", 1)[1]
            elif word in ("--depth", "--origin", "-o", "--reference", "--config", "-c", "--filter", "-j", "--jobs"):
                i += 1
            elif not word.startswith("-"):
                positional.append(word)
            i += 1
        if not positional:
            return
        url = positional[0]
        name = frameworks.repository(url)
        if not name:
            return
        folder = positional[1].rstrip("/") if len(positional) > 1 else \
            re.sub(r"\.git$", "", url.rstrip("/").rsplit("/", 1)[-1])
        self.clones[folder] = [line_no, name, url if "://" in url else url.replace(":", "/", 1), ref]

    def pins(self) -> list[tuple[int, str, str, str]]:
        return [(line_no, name, url, ref) for line_no, name, url, ref in self.clones.values()]


def _segment(stripped: str, cwd: Path, path: Path, root: Path, text: str, pin_files: ModuleType):
    """(target, kind) for one shell command: a conda environment file, or what `pip install` installs."""
    conda = _CONDA.search(stripped)
    if conda:
        words = _words(conda.group(1))
        for i, word in enumerate(words):
            value = words[i + 1] if i + 1 < len(words) else ""
            if word in ("-f", "--file") and value:
                target = _local(value, cwd, root) or _local(value, path.parent, root)
                if target is not None and target.is_file():
                    yield target, "env" if target.suffix in (".yml", ".yaml") else "requirements"
            elif word.startswith("--file="):
                target = _local(word[7:], cwd, root)
                if target is not None and target.is_file():
                    yield target, "env"
        return
    pip = _PIP.search(stripped)
    if not pip:
        return
    words = _words(pip.group(1).split(" | ")[0])
    i = 0
    while i < len(words):
        word = words[i]
        value = words[i + 1] if i + 1 < len(words) else ""
        if word in ("-r", "--requirement", "-c", "--constraint") or re.match(r"^-[rc]\S", word) or \
                word.startswith(("--requirement=", "--constraint=")):
            name = value if word in ("-r", "--requirement", "-c", "--constraint") else \
                (word.split("=", 1)[1] if "=" in word else word[2:])
            i += 2 if word in ("-r", "--requirement", "-c", "--constraint") else 1
            target = _local(name, cwd, root) or _local(name, path.parent, root) or _copied(name, text, root)
            if target is not None and target.is_file():
                yield target, "requirements"
            continue
        if word in ("-e", "--editable"):
            i += 2
            target = _local(_strip_extras(value), cwd, root) or _local(_strip_extras(value), path.parent, root)
            if target is not None and target.is_dir():
                yield target, "folder"
            continue
        if word in _OPTS_WITH_VALUE:
            i += 2
            continue
        i += 1
        if word.startswith("-"):
            continue
        if word.startswith((".", "/")) or ("/" in word and "://" not in word and not word.startswith("git+")):
            target = _local(_strip_extras(word), cwd, root)
            if target is not None and target.is_dir():
                yield target, "folder"
            continue
        if "==" in word or word.startswith("git+") or " @ " in word or _RANGE.match(word):
            pin = pin_files._requirement(word)
            if pin is not None and (pin.spec or pin.note):
                yield pin_files.Pin(pin.name, pin.spec, str(path), pin.exact, pin.note), "pin"


# `pip install 'transformers>=4.43,<4.45'`: a requirement with a range of its own
_RANGE = compile_later(r"^[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?\s*(?:~=|>=|<=|!=|<|>)\s*[0-9]")


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text, comments=True)
    except ValueError:
        return text.split()


def _strip_extras(text: str) -> str:
    return re.sub(r"\[[^\]]*\]$", "", text.strip().strip("'\""))


def _local(name: str, base: Path, root: Path) -> Path | None:
    """`name` as a path inside the repository (relative to `base`, or to the root for an absolute path that
    names none), else None."""
    name = name.strip().strip("'\"")
    if not name or "$" in name or "://" in name:
        return None
    candidate = Path(name) if os.path.isabs(name) else base / name
    try:
        candidate = Path(os.path.normpath(candidate))
        if os.path.isabs(name) and not candidate.exists():
            return None
        candidate.relative_to(root)
    except (ValueError, OSError):
        return None
    return candidate if candidate.exists() else None


def _copied(name: str, text: str, root: Path) -> Path | None:
    """A Dockerfile's `COPY docker/requirements.txt /tmp/` that put the file `pip install -r` names in place."""
    base = Path(name).name
    for match in re.finditer(r"(?im)^\s*(?:COPY|ADD)\s+(?:--\S+\s+)*(.+)$", text):
        for source in match.group(1).split()[:-1]:
            if Path(source).name == base:
                found = _local(source, root, root)
                if found is not None and found.is_file():
                    return found
    return None
