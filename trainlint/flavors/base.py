"""Shared pieces of the flavor readers: typed reads with provenance, lenient number parsing, linked files."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trainlint._patterns import compile_later
from trainlint.document.reading import in_overlay
from trainlint.document.tree import Document, Node
from trainlint.plan import COUNT_LIMIT, Origin, Setting

KeyStep = str | int  # one step of a key path: a mapping key or a sequence index

_FLOAT_TEXT = compile_later(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def may_be_number(text: str) -> bool:
    """Whether `text` can be a number in digits (it begins with a sign, a point or a digit): the cheap test before a
    number pattern, so that "auto" and the like are never matched against one."""
    head = text[:1]
    return head in ("+", "-", ".") or head.isdigit()


# A number beyond this magnitude is no setting of a run (int64's range, which every framework's counts fit in):
# the readers and rules get None for it, so no arithmetic on it overflows a float.
NUMBER_LIMIT = 2**63


def as_int(value: Any) -> int | None:
    """An integer the way the frameworks would end up using it; None for "auto", text, non-finite and fractional
    numbers, and magnitudes beyond NUMBER_LIMIT."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if -NUMBER_LIMIT <= value <= NUMBER_LIMIT else None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value) if abs(value) <= NUMBER_LIMIT else None
    if isinstance(value, str) and may_be_number(value.strip()) and _FLOAT_TEXT.fullmatch(value.strip()):
        return as_int(float(value))
    return None


def as_float(value: Any) -> float | None:
    """A finite float; None for text, infinities, NaN and magnitudes beyond NUMBER_LIMIT."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return float(value) if -NUMBER_LIMIT <= value <= NUMBER_LIMIT else None
    if isinstance(value, float):
        return value if math.isfinite(value) and abs(value) <= NUMBER_LIMIT else None
    if isinstance(value, str) and may_be_number(value.strip()) and _FLOAT_TEXT.fullmatch(value.strip()):
        return as_float(float(value))
    return None


# What ConfigView.int gives for a number no count can be (infinite, NaN, fractional, beyond NUMBER_LIMIT): a value
# outside the plan's count bounds, with its origin, so the plan rejects it there and TL011 reports it at the value.
UNUSABLE_COUNT = COUNT_LIMIT + 1


def _as_count(value: Any) -> int | None:
    found = as_int(value)
    if found is None and not isinstance(value, bool) and (isinstance(value, (int, float)) or isinstance(
            value, str) and may_be_number(value.strip()) and _FLOAT_TEXT.fullmatch(value.strip())):
        return UNUSABLE_COUNT
    return found


def as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    return None


def as_targets(value: Any) -> Any:
    """LoRA target modules as PEFT takes them: a name/regex string, a list of names, or None."""
    if isinstance(value, str) and value.strip():
        return value.strip()
    if isinstance(value, list):
        names = [v.strip() for v in value if isinstance(v, str) and v.strip()]
        return names or None
    return None


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def is_auto(node: Node | None) -> bool:
    return node is not None and node.kind == "scalar" and isinstance(node.value, str) and node.value.strip() == "auto"


def uses_auto(doc: Document) -> bool:
    """A document holding "auto" values anywhere: a DeepSpeed file written for the HF Trainer or Accelerate."""
    return doc.root is not None and any(is_auto(n) for n in doc.root.walk())


class ConfigView:
    """Typed, provenance-carrying reads from one document. `overrides` ({key path: (value, Origin)}) are values
    that win over the document's (the arguments a launch passes the script, where its parser lets the command line
    override the file): reads of those paths return them with their own origin."""

    def __init__(self, doc: Document, origin_kind: str = "config", overrides: dict | None = None):
        self.doc = doc
        self.origin_kind = origin_kind
        self.overrides = overrides or {}

    @property
    def root(self) -> Node | None:
        return self.doc.root if self.doc.root is not None and self.doc.root.kind == "mapping" else None

    def node(self, *path: KeyStep) -> Node | None:
        return self.root.find(path) if self.root is not None else None

    def has(self, *path: KeyStep) -> bool:
        return tuple(path) in self.overrides or self.node(*path) is not None

    def value(self, *path: KeyStep) -> Any:
        if tuple(path) in self.overrides:
            return self.overrides[tuple(path)][0]
        node = self.node(*path)
        return node.to_python() if node is not None else None

    def origin(self, path: tuple, note: str = "") -> Origin:
        node = self.node(*path)
        span = None
        if node is not None:
            parent = self.node(*path[:-1]) if path else None
            entry = parent.entry(path[-1]) if parent is not None and isinstance(path[-1], str) else None
            span = node.span if node.alias_of is None else (entry.key_span if entry else node.span)
        return Origin(self.origin_kind, self.doc.path, tuple(path), span, note)

    def setting(self, path: tuple, convert: Callable[[Any], Any], note: str = "") -> Setting | None:
        """The converted value at `path` with its origin; None when absent, null, "auto" or unconvertible."""
        if tuple(path) in self.overrides:
            raw, origin = self.overrides[tuple(path)]
            value = convert(raw) if raw is not None else None
            return Setting(value, origin) if value is not None else None
        node = self.node(*path)
        if node is None or node.kind != "scalar":
            return None
        value = convert(node.value)
        if value is None:
            return None
        return Setting(value, self.origin(path, note))

    def int(self, *path: KeyStep) -> Setting | None:
        """The integer at `path`; a number that is none (`.inf`, `.nan`, `2.5`, 4,400 digits) is UNUSABLE_COUNT,
        which the plan's bounds reject with this origin (the conversion boundary: plan.COUNT_BOUNDS)."""
        return self.setting(path, _as_count)

    def bool(self, *path: KeyStep) -> Setting | None:
        return self.setting(path, as_bool)

    def str(self, *path: KeyStep) -> Setting | None:
        return self.setting(path, as_str)

    def first(self, *paths: tuple, convert: Callable[[Any], Any] = _as_count) -> Setting | None:
        for path in paths:
            found = self.setting(path, convert)
            if found is not None:
                return found
        return None


_PROJECT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")


def _project_folders(doc_path: str, levels: int = 8) -> list[Path]:
    """The folders above the config up to its project's root (a `.git`, pyproject.toml, setup.py): launches run
    from there, and the frameworks resolve `deepspeed: configs/ds.json` against the launch folder."""
    out: list[Path] = []
    try:
        folder = Path(os.path.abspath(doc_path)).parent
    except (OSError, ValueError):
        return out
    for _ in range(levels):
        parent = folder.parent
        if parent == folder:
            break
        folder = parent
        out.append(folder)
        try:
            if any((folder / marker).exists() for marker in _PROJECT_MARKERS):
                break
        except (OSError, ValueError):
            break
    return out


def resolve_link(doc_path: str, target: str) -> Path | None:
    """A path written in a config, relative to the config's folder first, then the working directory, then the
    folders above the config up to its project's root (where the launch runs)."""
    target = target.strip()
    if not target or "\n" in target or "${" in target:
        return None
    candidate = Path(target).expanduser()
    tries = [candidate] if candidate.is_absolute() else [Path(doc_path).parent / candidate, Path.cwd() / candidate] + [
        folder / candidate for folder in _project_folders(doc_path)]
    for path in tries:
        try:
            if in_overlay(path) or path.is_file():
                return path
            # Something is there but is no regular file (a FIFO, a device, a folder, a symlink loop):
            # the reader reports what it is, without opening it.
            path.lstat()
            return path
        except (OSError, ValueError):
            continue
    return None


def top_keys(doc: Document) -> set[str]:
    root = doc.root
    return set(root.keys()) if root is not None and root.kind == "mapping" else set()
