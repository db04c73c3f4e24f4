"""PEP 440 versions and specifiers, read with `packaging`: the names every stage uses, and the two forgiving
parsers (None instead of an exception) that the pin and release readers want."""

from __future__ import annotations

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

__all__ = ["InvalidSpecifier", "InvalidVersion", "SpecifierSet", "Version", "canonical", "parse_specifier",
           "parse_version"]

# Names people write for a distribution that PyPI knows under another one.
_ALIASES = {"pytorch-lightning": "lightning", "llama-factory": "llamafactory", "pytorch": "torch"}


def parse_version(text: object) -> Version | None:
    """The version `text` names, or None where it is no PEP 440 version."""
    try:
        return Version(str(text).strip())
    except InvalidVersion:
        return None


def parse_specifier(text: object) -> SpecifierSet | None:
    """The specifier set `text` names, or None where it is none."""
    try:
        return SpecifierSet(str(text).strip())
    except InvalidSpecifier:
        return None


def canonical(name: str) -> str:
    """PyPI's name normalization (PEP 503), plus the aliases people write."""
    norm = canonicalize_name(name.strip())
    return _ALIASES.get(norm, norm)
