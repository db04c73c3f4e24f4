"""Shared wording of the per-file memory summary."""

from __future__ import annotations

GIB = 2**30


def estimate_line(result) -> str:
    estimate = getattr(result, "estimate", None)
    if estimate is None:
        return ""
    return estimate.summary()
