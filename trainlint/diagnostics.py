"""Positions, findings and fixes: the values every layer passes around.

Positions are 0-based internally (line, column in code points, offset in code points into the
document text); output formats add 1 where people read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 2, "warning": 1, "info": 0}[self.value]


class Pos(NamedTuple):
    # A named tuple rather than a frozen dataclass: a parsed file makes two of these per node, and a tuple is built
    # ~3x faster than a frozen dataclass (whose __init__ goes through object.__setattr__); order is (line, column,
    # offset) either way.
    line: int
    column: int
    offset: int


class Span(NamedTuple):
    start: Pos
    end: Pos

    @staticmethod
    def point(pos: Pos) -> "Span":
        return Span(pos, pos)


class Edit(NamedTuple):
    """Replace text[start:end] (code-point offsets into the document text) with new_text."""

    path: str
    span: Span
    new_text: str


class Fix(NamedTuple):
    """A finding's fix: its title, the text edits it makes, and whether applying it is safe."""
    title: str
    edits: tuple[Edit, ...]
    safe: bool = True

    @property
    def applicability(self) -> str:
        return "safe" if self.safe else "unsafe"


@dataclass(frozen=True)
class Diagnostic:
    """One finding: its code, severity, one-line message, position and fixes."""
    code: str
    severity: Severity
    message: str
    path: str
    span: Span
    fixes: tuple[Fix, ...] = ()
    # Rules may attach the rule name for output formats; filled in by the engine.
    name: str = ""
    related: tuple[str, ...] = field(default=(), compare=False)
    # What the verdict assumed (a defaulted world size, GPU, sharding, framework version, ...) and how to
    # declare it. A diagnostic with assumptions is never an error (the engine caps it at warning).
    assumptions: tuple[str, ...] = field(default=(), compare=False)
    # The message is a one-line headline (what is wrong and what follows from it). The explanation, the evidence,
    # the framework's own message and the figures behind a verdict go here: `--output-format full`, JSON, SARIF,
    # the language server's hover and related information show it.
    detail: str = field(default="", compare=False)

    def sort_key(self) -> tuple:
        return (self.path, self.span.start.offset, self.code, self.message)
