"""Pure conversions between trainlint's values and LSP types: positions in the negotiated encoding,
diagnostics, edits, and the memory breakdown as markdown. No I/O and no server state here.

trainlint positions are 0-based lines and columns in Unicode code points, with code-point offsets into
the document text (a leading BOM is not part of that text). LSP positions count columns in the
negotiated position encoding (UTF-16 unless the client asked for UTF-8 or UTF-32). Lines are split
the way both LSP and trainlint's Document split them: at \\n, \\r\\n and \\r.
"""

from __future__ import annotations

import bisect
import re
from typing import Any, Iterable

from lsprotocol import types as t

from trainlint import rules
from trainlint.diagnostics import Diagnostic, Edit, Pos, Severity
from trainlint.document.tree import line_starts

SOURCE = "trainlint"
GIB = 2**30

SEVERITY = {
    Severity.ERROR: t.DiagnosticSeverity.Error,
    Severity.WARNING: t.DiagnosticSeverity.Warning,
    Severity.INFO: t.DiagnosticSeverity.Information,
}


def _units(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32":
        return len(text)
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


class LineIndex:
    """Offsets <-> LSP positions for one text (the editor's buffer, BOM included if it has one)."""

    def __init__(self, source: str, encoding: str = "utf-16") -> None:
        self.source = source
        self.encoding = str(getattr(encoding, "value", encoding) or "utf-16")
        self.bom = 1 if source.startswith("\ufeff") else 0
        # LSP lines end at \n, \r\n and \r only (not U+2028), as the document layer counts them.
        self.starts = line_starts(source)

    @property
    def line_count(self) -> int:
        return len(self.starts)

    def line_text(self, line: int) -> str:
        if not 0 <= line < len(self.starts):
            return ""
        start = self.starts[line]
        end = self.starts[line + 1] if line + 1 < len(self.starts) else len(self.source)
        return self.source[start:end].rstrip("\r\n")

    # -- source offsets (code points into the buffer) ------------------------------------------
    def position(self, offset: int) -> t.Position:
        offset = max(0, min(offset, len(self.source)))
        line = bisect.bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        prefix = self.source[start:offset]
        return t.Position(line=line, character=_units(prefix, self.encoding))

    def offset(self, position: t.Position) -> int:
        """The source offset of a client position (clamped to the line)."""
        line = position.line
        if line < 0:
            return 0
        if line >= len(self.starts):
            return len(self.source)
        text = self.line_text(line)
        want = max(0, position.character)
        if self.encoding == "utf-32" or text.isascii():
            column = min(want, len(text))
        else:
            column, used = 0, 0
            for ch in text:
                width = _units(ch, self.encoding)
                if used + width > want:
                    break
                used += width
                column += 1
        return self.starts[line] + column

    # -- trainlint positions (code-point offsets into the text without its BOM) -----------------
    def from_pos(self, pos: Pos) -> t.Position:
        return self.position(pos.offset + self.bom)

    def to_doc_offset(self, position: t.Position) -> int:
        """Client position -> code-point offset into the engine's Document text."""
        return max(0, self.offset(position) - self.bom)

    def range(self, start: Pos, end: Pos) -> t.Range:
        return t.Range(start=self.from_pos(start), end=self.from_pos(end))

    def full_range(self) -> t.Range:
        return t.Range(start=t.Position(line=0, character=0), end=self.position(len(self.source)))


def rule_url(code: str) -> str | None:
    try:
        module = rules.get(code)
        return module.RULE.url if module is not None else None
    except Exception:  # noqa: BLE001 - a docs link is never worth failing a report
        return None


def diagnostic(d: Diagnostic, index: LineIndex) -> t.Diagnostic:
    url = rule_url(d.code)
    return t.Diagnostic(
        range=index.range(d.span.start, d.span.end),
        message=d.message + "".join(f"\nAssumed: {a}" for a in d.assumptions),
        severity=SEVERITY.get(d.severity, t.DiagnosticSeverity.Warning),
        code=d.code,
        code_description=t.CodeDescription(href=url) if url else None,
        source=SOURCE,
    )


def text_edit(edit: Edit, index: LineIndex) -> t.TextEdit:
    return t.TextEdit(range=index.range(edit.span.start, edit.span.end), new_text=edit.new_text)


def minimal_edit(old: str, new: str, index: LineIndex) -> t.TextEdit | None:
    """One TextEdit turning `old` (the buffer `index` was built on) into `new`: the differing middle."""
    if old == new:
        return None
    limit = min(len(old), len(new))
    start = 0
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    # Never split a \r\n pair.
    if start > 0 and old[start - 1] == "\r" and start < len(old) and old[start] == "\n":
        start -= 1
    if 0 < end_old < len(old) and old[end_old - 1] == "\r" and old[end_old] == "\n":
        end_old += 1
    return t.TextEdit(range=t.Range(start=index.position(start), end=index.position(end_old)),
                      new_text=new[start:len(new) - (len(old) - end_old)])


def apply_text_edits(source: str, edits: Iterable[t.TextEdit], encoding: str = "utf-16") -> str:
    """Apply LSP TextEdits to a text the way an editor does (used by tests and fixAll checks)."""
    index = LineIndex(source, encoding)
    spans = sorted(((index.offset(e.range.start), index.offset(e.range.end), e.new_text) for e in edits),
                   key=lambda s: (s[0], s[1]), reverse=True)
    out = source
    for start, end, text in spans:
        out = out[:start] + text + out[end:]
    return out


# --------------------------------------------------------------------------------------------------
# memory breakdown as markdown


def gib(n: Any) -> str:
    try:
        return f"{float(n) / GIB:.1f} GiB"
    except (TypeError, ValueError):
        return "?"


def signed_gib(n: float) -> str:
    sign = "+" if n >= 0 else "\u2212"
    return f"{sign}{abs(n) / GIB:.1f} GiB"


def bar(fraction: float, width: int = 12) -> str:
    fraction = max(0.0, min(1.0, fraction))
    filled = int(round(fraction * width))
    if fraction > 0 and filled == 0:
        filled = 1
    return "\u2588" * filled + "\u2591" * (width - filled)


def _get(obj: Any, name: str, default: Any = None) -> Any:
    try:
        return getattr(obj, name, default)
    except Exception:  # noqa: BLE001
        return default


def breakdown_markdown(breakdown: Any, title: str = "Memory per GPU") -> str | None:
    """A small markdown table: one row per component with a bar against the GPU's capacity."""
    if breakdown is None:
        return None
    components = list(_get(breakdown, "components", ()) or ())
    gpu = _get(breakdown, "gpu")
    capacity = _get(gpu, "memory_bytes") if gpu is not None else None
    total = _get(breakdown, "total")
    scale = capacity or total or max((_get(c, "bytes", 0) or 0 for c in components), default=0) or 1
    lines = [f"**{title}**"]
    summary = None
    try:
        summary = breakdown.summary()
    except Exception:  # noqa: BLE001
        summary = None
    if summary:
        lines += ["", str(summary)]
    if components:
        lines += ["", "| component | | GiB |", "|---|---|--:|"]
        for c in components:
            size = _get(c, "bytes", 0) or 0
            label = _get(c, "label") or _get(c, "key") or "?"
            lines.append(f"| {label} | `{bar(size / scale)}` | {size / GIB:.1f} |")
        peak_a, peak_r = _get(breakdown, "peak_allocated"), _get(breakdown, "peak_reserved")
        if peak_a:
            lines.append(f"| peak allocated | `{bar(peak_a / scale)}` | {peak_a / GIB:.1f} |")
        if peak_r:
            lines.append(f"| peak reserved | `{bar(peak_r / scale)}` | {peak_r / GIB:.1f} |")
        if total:
            lines.append(f"| **total** | `{bar(total / scale)}` | **{total / GIB:.1f}** |")
    target = []
    if gpu is not None:
        name = _get(gpu, "name", "GPU")
        count = _get(breakdown, "gpu_count")
        target.append(f"target: {count} \u00d7 {name}" if count else f"target: {name}")
        if capacity:
            target.append(f"{gib(capacity)} each")
    fits = _get(breakdown, "fits")
    if fits is True:
        target.append("fits")
    elif fits is False:
        target.append("**does not fit**")
    phase = _get(breakdown, "peak_phase")
    if phase:
        target.append(f"peak during {phase}")
    if target:
        lines += ["", ", ".join(target)]
    assumptions = list(_get(breakdown, "assumptions", ()) or ())
    if assumptions:
        lines += ["", "Assumptions:"]
        lines += [f"- {a}" for a in assumptions]
    return "\n".join(lines)


def breakdown_title(breakdown: Any) -> str | None:
    """One line for a code lens."""
    if breakdown is None:
        return None
    total = _get(breakdown, "total")
    gpu = _get(breakdown, "gpu")
    capacity = _get(gpu, "memory_bytes") if gpu is not None else None
    if not total:
        try:
            return f"trainlint: {breakdown.summary()}"
        except Exception:  # noqa: BLE001
            return None
    text = f"trainlint: {gib(total)} per GPU"
    if capacity:
        text += f" of {gib(capacity)} ({_get(gpu, 'name', 'GPU')})"
    fits = _get(breakdown, "fits")
    if fits is False:
        text += " \u2014 does not fit"
    elif fits is True:
        text += " \u2014 fits"
    return text


# --------------------------------------------------------------------------------------------------
# markup for clients that do not render markdown


def preferred_markup(formats: Any) -> t.MarkupKind:
    """The first of markdown / plaintext in a client's `contentFormat` (or `documentationFormat`) list, in the
    client's order of preference; markdown when the client names neither (or sends no list at all)."""
    for value in formats or ():
        value = getattr(value, "value", value)
        if value == "markdown":
            return t.MarkupKind.Markdown
        if value == "plaintext":
            return t.MarkupKind.PlainText
    return t.MarkupKind.Markdown


def _plain_inline(text: str) -> str:
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = re.sub(r"\*\*(.+?)\*\*", r"\1", text)
    text = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\1", text)
    return text


def markdown_to_plaintext(text: str) -> str:
    """The markdown trainlint writes (bold, emphasis, code spans, pipe tables, rules, lists) as plain text that
    reads the same in a terminal or an editor's echo area: markup removed, table columns aligned, rules as
    blank lines."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
                if not all(re.fullmatch(r":?-+:?", c) for c in cells if c):
                    rows.append([_plain_inline(c) for c in cells])
                i += 1
            widths = [max(len(r[k]) if k < len(r) else 0 for r in rows) for k in range(max(map(len, rows)))]
            for r in rows:
                cells = [(r[k] if k < len(r) else "").ljust(widths[k]) for k in range(len(widths))]
                out.append("  ".join(cells).rstrip())
            continue
        if re.fullmatch(r"\s*(-{3,}|\*{3,}|_{3,})\s*", line):
            out.append("")
        else:
            out.append(_plain_inline(line))
        i += 1
    plain = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", plain).strip("\n")
