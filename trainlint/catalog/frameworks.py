"""The framework releases trainlint knows (`data/frameworks.json`): the newest one, and the newest inside a range."""

from __future__ import annotations

import json
from functools import lru_cache

from trainlint._patterns import compile_later
from trainlint._versions import InvalidVersion, SpecifierSet, Version
from trainlint.catalog.files import read_data


@lru_cache(maxsize=1)
def _releases() -> dict[str, tuple[str, ...]]:
    data = json.loads(read_data("frameworks.json"))
    return {name: tuple(vs) for name, vs in data.items() if not name.startswith("_") and isinstance(vs, list)}


def known(name: str) -> tuple[str, ...]:
    return _releases().get(name, ())


def newest(name: str) -> str | None:
    releases = known(name)
    return releases[-1] if releases else None


@lru_cache(maxsize=None)
def known_versions(name: str) -> tuple[Version, ...]:
    """The known releases of `name` that are PEP 440 versions, parsed once per run, in the catalog's order."""
    parsed = []
    for text in known(name):
        try:
            parsed.append(Version(text))
        except InvalidVersion:
            continue
    return tuple(parsed)


@lru_cache(maxsize=1024)  # the same pins and rule ranges are asked about for every file of a run
def newest_in(name: str, spec: SpecifierSet) -> str | None:
    """The newest known release of `name` that `spec` allows, or None."""
    best = None
    for version in known_versions(name):
        if spec.contains(version, prereleases=True) and (best is None or version > best):
            best = version
    return str(best) if best is not None else None


def names() -> tuple[str, ...]:
    return tuple(_releases())


@lru_cache(maxsize=1)
def _repositories() -> dict[str, str]:
    data = json.loads(read_data("frameworks.json")).get("_repositories") or {}
    return {k.lower(): v for k, v in data.items() if not k.startswith("_") and isinstance(v, str)}


_GITHUB = compile_later(r"(?:github\.com[/:])([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?$")


def repository(url: str) -> str:
    """The framework distribution a GitHub repository's checkout installs (`https://github.com/huggingface/
    transformers.git` -> "transformers"), "" for any other repository."""
    match = _GITHUB.search(url.strip().strip("'\""))
    if match is None:
        return ""
    return _repositories().get(f"{match.group(1)}/{match.group(2)}".lower(), "")
