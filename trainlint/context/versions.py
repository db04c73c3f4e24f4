"""Framework versions a file will run under: which transformers / trl / deepspeed / ... and where that came from.

`FrameworkVersion` is one resolved distribution: its version, the origin of that answer (a settings source, the
repository's pins, the installed environment, or trainlint's newest known release), and whether it is assumed
(a pin range or no information resolved to the newest known release inside it). `Versions` maps distribution
names to them. Rules ask through `LintContext.version_of(name)` / `LintContext.version_in(name, spec)`; a rule
whose `Rule.framework` + `Rule.versions` range excludes the resolved version is not run at all.

Versions and specifiers are PEP 440 (`trainlint._versions`, as `packaging` reads them). Nothing here imports a framework or runs code.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

from trainlint._versions import Version, canonical, normalized, parse_specifier, parse_version
from trainlint.catalog import frameworks
from trainlint.context import narrowing
from trainlint.context import pins as pin_files

# The distributions rules may name in `Rule.framework` (PyPI names, lower case).
FRAMEWORKS = ("transformers", "trl", "accelerate", "deepspeed", "peft", "lightning", "torchtune", "axolotl",
              "llamafactory", "ms-swift", "litgpt", "torch")


class FrameworkVersion(NamedTuple):
    """The release of one framework the file is judged under, and where that version came from."""
    name: str  # canonical distribution name
    version: str  # PEP 440 version string
    origin: str  # "cli" | "directive" | "project" | "pin" | "installed" | "known"
    source: str = ""  # where: the file (pin, pyproject.toml) or the note ("newest release trainlint knows")
    assumed: bool = False  # True when not the exact version: a range resolved, or nothing known
    spec: str = ""  # the pin's specifier as written (">=4.40,<5"), when a range; narrowed where `narrowed` says
    narrowed: tuple = ()  # why the range is narrower than the pin (trainlint.context.narrowing): requirements, imports
    sure: str = ""  # the range without the cuts that rest on an assumption ("" = `spec`): only it makes a claim certain

    @property
    def parsed(self) -> Version | None:
        return parse_version(self.version)

    def describe(self) -> str:
        where = f" ({self.origin}: {self.source})" if self.source else f" ({self.origin})"
        guess = ", assumed" if self.assumed else ""
        spec = f" from {self.spec}" if self.spec and self.spec != f"=={self.version}" else ""
        why = f"; narrowed: {'; '.join(self.narrowed)}" if self.narrowed else ""
        return f"{self.name} {self.version}{spec}{where}{guess}{why}"

    def declare_hint(self) -> str:
        return (f"declare it with `versions = {{{self.name} = \"X.Y.Z\"}}` in [tool.trainlint] "
                f"or `# trainlint: {self.name}=X.Y.Z`")


@dataclass(frozen=True)
class Versions:
    """Resolved framework versions for one file (empty = nothing known)."""

    items: dict = field(default_factory=dict)  # canonical name -> FrameworkVersion

    def get(self, name: str) -> FrameworkVersion | None:
        found = self.items.get(name)  # the keys are canonical names, as rules mostly ask: no normalizing then
        return found if found is not None else self.items.get(canonical(name))

    def includes(self, name: str, spec: str) -> bool | None:
        """Whether the resolved version of `name` satisfies the PEP 440 `spec`; None when unknown or unparsable."""
        found = self.get(name)
        specifier = parse_specifier(spec)
        if found is None or specifier is None or found.parsed is None:
            return None
        return specifier.contains(found.parsed, prereleases=True)

    def admits(self, name: str, spec: str) -> bool | None:
        """Whether `spec` holds for the version `name` runs under, as far as it is known: an exact version
        (a setting, an exact pin, the installed distribution) decides; a pin range decides when every release
        trainlint knows inside it agrees (True: all satisfy `spec`, False: none does); a range that requirements or
        imports narrowed (`FrameworkVersion.narrowed`) with nothing pinned decides only False (no release left
        satisfies `spec`), and one cut by an assumption decides True only on the range without that cut
        (`FrameworkVersion.sure`); else None (unknown, the newest known release assumed, or a range where it depends on the
        release)."""
        found = self.get(name)
        return _admits(found, spec) if found is not None else None

    def __iter__(self):
        return iter(sorted(self.items.values(), key=lambda v: v.name))

    def __bool__(self) -> bool:
        return bool(self.items)


# Versions.admits for one resolved version: the rules of every file ask it of the same few versions and ranges.
@lru_cache(maxsize=1024)
def _admits(found: FrameworkVersion, spec: str) -> bool | None:
    specifier = parse_specifier(spec)
    if specifier is None:
        return None
    if not found.assumed:  # an exact version decides (Versions.includes)
        parsed = found.parsed
        return None if parsed is None else specifier.contains(parsed, prereleases=True)
    pin = parse_specifier(found.spec) if found.spec else None
    if pin is None or (found.origin == "known" and not found.narrowed):
        return None
    inside = [v for v in frameworks.known_versions(found.name) if pin.contains(v, prereleases=True)]
    if not inside:
        return None
    hits = [specifier.contains(v, prereleases=True) for v in inside]
    if not any(hits):
        return False
    if found.origin == "known":  # nothing pinned it: the cuts rule releases out, they never make one certain
        return None
    if found.sure:  # part of the cut rests on an assumption (which script runs): certain only without it
        sure = parse_specifier(found.sure)
        inside = [v for v in frameworks.known_versions(found.name)
                  if sure is None or sure.contains(v, prereleases=True)]
        hits = [specifier.contains(v, prereleases=True) for v in inside]
    return True if hits and all(hits) else None


# --- resolution -------------------------------------------------------------------------------------------------

_INSTALLED: dict[str, str | None] = {}


_DIST_INFO: dict[str, str] | None = None


def _dist_info_versions() -> dict[str, str]:
    """Installed distributions by normalized name, from the `NAME-VERSION.dist-info` folder names on sys.path: one
    listing per folder, without importing importlib.metadata (which costs more than a lint)."""
    global _DIST_INFO
    if _DIST_INFO is None:
        found: dict[str, str] = {}
        stdlib = os.path.dirname(os.__file__)  # ~200 modules and never a .dist-info: not listed
        for folder in sys.path:
            if folder in (stdlib, os.path.join(stdlib, "lib-dynload")) or folder.endswith(".zip"):
                continue
            try:
                names = os.listdir(folder or ".")
            except OSError:
                continue
            for entry in names:
                if entry.endswith(".dist-info") and "-" in entry:
                    dist, _, version = entry[: -len(".dist-info")].partition("-")
                    found.setdefault(normalized(dist), version)
        _DIST_INFO = found
    return _DIST_INFO


def installed(name: str) -> str | None:
    """The version of `name` installed in the environment running trainlint, from its `.dist-info` folder (what
    pip, uv and conda's pip install; never imported). Legacy `.egg-info` installs are not seen."""
    if name not in _INSTALLED:
        aliases = {"lightning": ("lightning", "pytorch-lightning"), "llamafactory": ("llamafactory",)}
        found = None
        listed = _dist_info_versions()
        for dist in aliases.get(name, (name,)):
            found = listed.get(normalized(dist))
            if found is not None:
                break
        _INSTALLED[name] = found
    return _INSTALLED[name]


def _from_spec(name: str, spec: str, origin: str, source: str) -> FrameworkVersion | None:
    text = spec.strip()
    bare = text[2:].strip() if text.startswith("==") and not text.startswith("===") else text
    exact = parse_version(bare) if "*" not in bare and "," not in bare else None
    if exact is not None:
        return FrameworkVersion(name, str(exact), origin, source, False, text)
    specifier = parse_specifier(spec)
    if specifier is None:
        return None
    best = frameworks.newest_in(name, specifier)
    if best is None:
        return None
    return FrameworkVersion(name, best, origin, source, True, spec)


def resolve(path: str, declared: dict[str, tuple[str, str, str]] | None = None,
            use_repository: bool = True, use_environment: bool = True) -> Versions:
    """The versions one file runs under, strongest first: declared (name -> (version or range, origin kind,
    source)), the repository's pins nearest the file, the installed distributions, the newest known release.
    A range resolves to the newest known release inside it, flagged as assumed; ranges are then narrowed by what
    the known releases require of each other and of the repository's other pins (`narrow`)."""
    declared = {canonical(k): v for k, v in (declared or {}).items()}
    pins = pin_files.pins_for(path)[0] if use_repository and path else {}
    root = _root(path) if use_repository and path else ""
    # the configs of a repository mostly declare nothing and share its pins: equal inputs resolve once (the catalog
    # and the installed distributions do not change within a run; the reasons name paths from the working directory)
    key = (tuple(declared.items()), tuple(pins.items()), use_environment, root, os.getcwd())
    try:
        hash(key)
    except TypeError:  # a declared value or pin of another shape: nothing to key it by
        return _resolve(declared, pins, use_environment, root)
    return Versions(dict(_resolved(key).items))  # a dict of its own: the caller may change its copy


@lru_cache(maxsize=256)
def _resolved(key: tuple) -> Versions:
    declared, pins, use_environment, root, _cwd = key
    return _resolve(dict(declared), dict(pins), use_environment, root)


def _resolve(declared: dict, pins: dict, use_environment: bool, root: str) -> Versions:
    out: dict[str, FrameworkVersion] = {}
    for name in sorted(set(FRAMEWORKS) | set(declared)):
        found = None
        if name in declared:
            spec, origin, source = declared[name]
            found = _from_spec(name, spec, origin, source)
        pin = pins.get(name)
        if found is None and pin is not None and pin.spec:
            found = _from_spec(name, pin.spec, "pin", pin.where())
        if found is None and use_environment:
            version = installed(name)
            if version:
                found = FrameworkVersion(name, version, "installed", "the environment running trainlint")
        if found is None and pin is not None and pin.note:  # a git pin at no release trainlint can name
            newest = frameworks.newest(name)
            if newest:  # unknown: a placeholder every rule reads as an assumption (no range: nothing decided)
                found = FrameworkVersion(name, newest, "pin", f"{pin.where()}; {newest} assumed", True)
        if found is None:
            newest = frameworks.newest(name)
            if newest:
                note = "newest release trainlint knows" + (f"; {pin.where()} names it without a version" if pin else
                                                           "; no pin found")
                found = FrameworkVersion(name, newest, "known", note, True)
        if found is not None:
            out[name] = found
    return _narrowed(Versions(out), pins, (), root)


def _root(path: str) -> str:
    """The repository folder of `path` as the narrowing's reasons name paths from it ("" where it cannot be
    resolved)."""
    try:
        return str(pin_files.repo_root(pin_files.resolved(path).parent))
    except (OSError, RuntimeError, ValueError):
        return ""


def narrow(versions: Versions, path: str = "", pins: dict | None = None, cuts: tuple = ()) -> Versions:
    """`versions` narrowed by what the known releases require of each other, the repository's other pins (those
    of `path`, unless given) and `cuts` (trainlint.context.narrowing); the reasons go into each narrowed entry."""
    root = ""
    if path:
        if pins is None:
            pins = pin_files.pins_for(path)[0]
        root = _root(path)
    return _narrowed(versions, pins or {}, tuple(cuts), root)


def _narrowed(versions: Versions, pins: dict, cuts: tuple, root: str) -> Versions:
    if not cuts and not any(p.spec for p in pins.values()) and \
            all(v.origin == "known" for v in versions.items.values()):
        return versions  # nothing pinned, declared or installed: nothing to narrow by
    try:
        return narrowing.apply(versions, pins, cuts, root)
    except Exception:  # noqa: BLE001 - narrowing is a refinement: never a crash
        return versions
