"""`--output-format github`: GitHub Actions workflow commands, which GitHub shows as annotations on
the pull request's changed lines.

`::error file=configs/ds.json,line=3,col=5,endLine=3,endColumn=12,title=trainlint (TL101)::message`
(`::warning` for warnings, `::notice` for info), 1-based. Columns are sent only for a range on one line
(the annotation API drops ranges that have columns and span lines). Message data escapes `%`, CR and
LF; property values also `:` and `,` (as actions/toolkit does). GitHub shows only some annotations per
step, so a plain summary line ends the output, after the per-file memory summaries.
"""

from __future__ import annotations

from trainlint.output.sarif import relative_path
from trainlint.output.summary import estimate_line

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(d, base: str | None = None) -> str:
    start, end = d.span.start, d.span.end
    end_line, end_column = end.line + 1, end.column + 1
    if end.line > start.line and end.column == 0:  # ends at the start of a line: the lines before it
        end_line, end_column = end.line, None
    props = [("file", relative_path(d.path, base) or d.path), ("line", str(start.line + 1))]
    if end_line == start.line + 1:  # one line: columns too
        props.append(("col", str(start.column + 1)))
        if end_column is not None and end_column > start.column + 1:
            props += [("endLine", str(end_line)), ("endColumn", str(end_column))]
    else:
        props.append(("endLine", str(end_line)))
    props.append(("title", f"trainlint ({d.code})"))
    message = d.message
    for fix in d.fixes:
        message += f"\nfix ({fix.applicability}): {fix.title}"
    fields = ",".join(f"{key}={escape_property(value)}" for key, value in props)
    return f"::{COMMANDS[d.severity.value]} {fields}::{escape_data(message)}"


def summary(results: list) -> str:
    diagnostics = [d for r in results for d in r.diagnostics]
    files = f"{len(results)} file{'s' if len(results) != 1 else ''}"
    if not diagnostics:
        return f"trainlint: no findings in {files}."
    counts = []
    for severity in ("error", "warning", "info"):
        n = sum(d.severity.value == severity for d in diagnostics)
        if n:
            counts.append(f"{n} {severity}{'s' if n != 1 and severity != 'info' else ''}")
    fixable = sum(any(f.safe for f in d.fixes) for d in diagnostics)
    n = len(diagnostics)
    tail = f" {fixable} fixable with `trainlint check --fix`." if fixable else ""
    return f"trainlint: {n} finding{'s' if n != 1 else ''} ({', '.join(counts)}) in {files}.{tail}"


def render(results: list, base: str | None = None, **_: object) -> str:
    lines = [annotation(d, base) for r in results for d in r.diagnostics]
    for result in results:
        line = estimate_line(result)
        if line:
            lines.append(f"{result.path}: {line}")
    lines.append(summary(results))
    return "\n".join(lines) + "\n"
