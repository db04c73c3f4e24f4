"""`# trainlint: disable=CODE[,CODE]` comments.

At the end of a line: that line. On a line of its own before the first key: the whole file. On a line
of its own further down: the next line that is not blank or a comment. `disable-file=CODE` anywhere:
the whole file. A code may be a prefix (`TL1` = the memory family) or `all`.
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field
from trainlint._patterns import compile_later
from trainlint.diagnostics import Diagnostic
from trainlint.document.tree import Document

_DISABLE = compile_later(
    r"#\s*trainlint:.*?\b(?P<kind>disable-file|disable)\s*=\s*(?P<codes>[A-Za-z0-9_,\s]+?)(?=\s+\w[\w-]*=|$)")


@dataclass
class Suppression:
    """One `# trainlint: disable=...` comment: the codes it silences and the line (or file) it covers."""
    line: int  # where the comment is
    column: int
    codes: tuple[str, ...]
    scope_line: int | None  # the line it covers; None = the whole file
    used: set[str] = field(default_factory=set)

    def covers(self, diagnostic: Diagnostic) -> str | None:
        if self.scope_line is not None and diagnostic.span.start.line != self.scope_line:
            return None
        for code in self.codes:
            if code == "ALL" or diagnostic.code.startswith(code):
                return code
        return None


@dataclass(eq=False)  # state, compared by identity
class Suppressions:
    """A file's suppression comments."""
    items: list[Suppression]
    path: str

    @classmethod
    def from_document(cls, doc: Document) -> "Suppressions":
        comments = doc.comments()
        first_content = _first_content_line(doc)
        items = []
        for line, column, text in comments:
            match = _DISABLE.search(text) if "disable" in text else None  # (most comments are not suppressions)
            if not match:
                continue
            codes = tuple(c.strip().upper() for c in re.split(r"[,\s]+", match.group("codes")) if c.strip())
            own_line = doc.line_text(line)[:column].strip() == ""
            if match.group("kind") == "disable-file" or (own_line and (first_content is None or line < first_content)):
                scope = None
            elif own_line:
                scope = _next_content_line(doc, line)
            else:
                scope = line
            items.append(Suppression(line, column, codes, scope))
        return cls(items, doc.path)

    def filter(self, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
        kept = []
        for diagnostic in diagnostics:
            suppressed = False
            if diagnostic.path == self.path:
                for item in self.items:
                    code = item.covers(diagnostic)
                    if code is not None:
                        item.used.add(code)
                        suppressed = True
            if not suppressed:
                kept.append(diagnostic)
        return kept


def _first_content_line(doc: Document) -> int | None:
    for line in range(doc.line_count):
        stripped = doc.line_text(line).strip()
        if stripped and not stripped.startswith(("#", "//", "---")):
            return line
    return None


def _next_content_line(doc: Document, line: int) -> int | None:
    for nxt in range(line + 1, doc.line_count):
        stripped = doc.line_text(nxt).strip()
        if stripped and not stripped.startswith(("#", "//")):
            return nxt
    return None
