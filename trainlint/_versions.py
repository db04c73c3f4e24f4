"""PEP 440 versions and specifiers, read with `packaging`: the names every stage uses, and the two forgiving
parsers (None instead of an exception) that the pin and release readers want."""

from __future__ import annotations

import re
from functools import lru_cache

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

__all__ = ["InvalidSpecifier", "InvalidVersion", "SpecifierSet", "Version", "canonical", "normalized", "parse_specifier",
           "parse_version"]

# Names people write for a distribution that PyPI knows under another one.
_ALIASES = {"pytorch-lightning": "lightning", "llama-factory": "llamafactory", "pytorch": "torch"}


def parse_version(text: object) -> Version | None:
    """The version `text` names, or None where it is no PEP 440 version."""
    return _version(str(text).strip())


def parse_specifier(text: object) -> SpecifierSet | None:
    """The specifier set `text` names, or None where it is none."""
    return _specifier(str(text).strip())


# Both are immutable, and the same few texts (pins, rule ranges, release rows) are read for every file of a run.
@lru_cache(maxsize=4096)
def _version(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


@lru_cache(maxsize=4096)
def _specifier(text: str) -> SpecifierSet | None:
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        return None


def normalized(name: str) -> str:
    """PyPI's name normalization, as PEP 503 writes it (packaging.utils.canonicalize_name gives the same; importing
    packaging.utils imports packaging.tags, with logging, platform and sysconfig, for this one line)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def canonical(name: str) -> str:
    """PyPI's name normalization (PEP 503), plus the aliases people write."""
    norm = normalized(name.strip())
    return _ALIASES.get(norm, norm)
