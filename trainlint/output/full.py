"""`--output-format full`: the text format plus, under each finding, its source line(s) with the span
underlined, the finding's detail (the explanation and figures behind its one-line message), what it assumed
and the fixes on offer with their applicability.

```
train.yaml:3:16: TL003 warning [*] `learning_rate: 2e-5` is a string to YAML 1.1 readers, not a number
  |
3 | learning_rate: 2e-5
  |                ^^^^
  = PyYAML (YAML 1.1) reads a float only with a dot in the mantissa and a signed exponent; ...
  = fix (safe): write 2.0e-5
```
Columns are counted in code points; the underline is laid out for a terminal (tabs shown as four
spaces, East Asian wide characters as two cells, combining marks as none).
"""

from __future__ import annotations

import textwrap
import unicodedata

from trainlint.output.summary import (estimate_line, finding_line, findings_footer, has_safe_fix, paint,
                                      sorted_findings, statistics)

TAB = "    "
DETAIL_WIDTH = 100  # the detail's lines, wrapped for a terminal (after the "  = " they are shown with)


def document_for(result, d):
    """The document a diagnostic points into: the file itself or one it links (a DeepSpeed JSON)."""
    if result.document is not None and result.document.path == d.path:
        return result.document
    return next((doc for doc in getattr(result, "linked", ()) or () if doc.path == d.path), None)


def _cells(ch: str) -> int:
    if ch == "\t":
        return len(TAB)
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _shown(text: str) -> str:
    return "".join(TAB if ch == "\t" else ch if ch.isprintable() or ch == " " else "\ufffd" for ch in text)


def _underline(text: str, start: int, end: int) -> str:
    """Spaces up to code point `start`, then carets up to `end` (at least one caret)."""
    pad = sum(_cells(ch) for ch in text[:start])
    width = max(1, sum(_cells(ch) for ch in text[start:end]))
    return " " * pad + "^" * width


WINDOW = 160  # code points of a long source line shown on each side of a span


def _window(text: str, start: int, end: int) -> tuple[str, int, int]:
    """A long line cut to the span and WINDOW code points around it, each cut marked with `...`: a one-line file of
    50,000 characters with thousands of findings shows each at its place without copying the line each time."""
    if len(text) <= 3 * WINDOW:
        return text, start, end
    end = min(max(end, start), start + 2 * WINDOW)
    left, right = max(0, start - WINDOW), min(len(text), end + WINDOW)
    head = "..." if left > 0 else ""
    return head + text[left:right] + ("..." if right < len(text) else ""), start - left + len(head), end - left + len(head)


def snippet(doc, span) -> list[str]:
    """Source lines of `span` with the span underlined; a long span shows its first and last line."""
    first, last = span.start.line, span.end.line
    if last > first and span.end.column == 0:
        last -= 1  # a span ending at the start of a line does not cover that line
    shown = [first] if last == first else [first, last]
    gutter = len(str(shown[-1] + 1))
    out = [" " * gutter + " |"]
    for i, line in enumerate(shown):
        if i == 1 and last > first + 1:
            out.append(" " * gutter + " | ...")
        text = doc.line_text(line)
        start = span.start.column if line == first else 0
        end = span.end.column if line == span.end.line else len(text)
        text, start, end = _window(text, start, end)
        out.append(f"{line + 1:>{gutter}} | {_shown(text)}".rstrip())
        out.append(" " * gutter + " | " + _underline(text, start, max(start, end)))
    return out


def detail_lines(detail: str) -> list[str]:
    """The detail under a finding: `= ` and its text wrapped, each line of it (a list, a breakdown) its own."""
    out: list[str] = []
    for paragraph in detail.strip().splitlines():
        wrapped = textwrap.wrap(paragraph, DETAIL_WIDTH, break_long_words=False, break_on_hyphens=False) or [""]
        out.extend(("= " if not out else "  ") + line for line in wrapped)
    return out


def render(results: list, color: bool = False, quiet: bool = False, fixed: int = 0, show_statistics: bool = False,
           **_: object) -> str:
    if show_statistics:
        return statistics(results, color=color)
    lines: list[str] = []
    fixable = 0
    for result, d in sorted_findings(results):
        fixable += has_safe_fix(d)
        lines.append(finding_line(d, color=color))
        doc = document_for(result, d)
        whole_file = d.span.end.offset == 0  # (an empty span at the very start: the file as a whole)
        if doc is not None and doc.text and not whole_file:
            lines.extend("  " + line for line in snippet(doc, d.span))
        if d.detail:
            lines.extend("  " + line for line in detail_lines(d.detail))
        for assumption in d.assumptions:  # what a warning rests on, and how to declare it
            lines.append("  " + paint("= " + (assumption if assumption.startswith("assum") else f"assumed: {assumption}"),
                                      "note", color))
        for fix in d.fixes:
            how = "safe, applied by --fix" if fix.safe else "unsafe, applied by --fix --unsafe-fixes"
            lines.append("  " + paint(f"= fix ({how}):", "fix", color) + f" {fix.title}")
        lines.append("")
    if not quiet:
        for result in results:
            summary = estimate_line(result)
            if summary:
                lines.append(paint(f"{result.path}: {summary}", "note", color))
        lines.append(findings_footer(results, fixable, fixed))
    return "\n".join(lines) + ("\n" if lines else "")
