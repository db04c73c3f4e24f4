"""Matching names the way people write them: case, spaces and punctuation do not matter."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from trainlint._patterns import compile_later


_NOT_ALNUM = compile_later(r"[^0-9a-z]+")


def normalize(name: str) -> str:
    """`NVIDIA-A100-SXM4-80GB`, `a100 sxm4 80gb` and `A100_SXM4_80GB` all become `nvidiaa100sxm480gb`."""
    return _NOT_ALNUM.sub("", name.lower())


def closest(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """The candidates most like `name` (compared normalized), best first, for did-you-mean messages."""
    by_key: dict[str, str] = {}
    for cand in candidates:
        by_key.setdefault(normalize(cand), cand)
    keys = difflib.get_close_matches(normalize(name), list(by_key), n=n, cutoff=0.5)
    return [by_key[k] for k in keys]
