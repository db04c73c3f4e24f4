"""The default format: one concise line per finding (`path:line:col: CODE severity message`, the message's first
sentence; `--output-format full` shows the rest and the fixes), in reading order, then a memory summary per file
and a footer. Colour only when asked for (`color=True`)."""

from __future__ import annotations

from trainlint.output.summary import (estimate_line, finding_line, findings_footer, has_safe_fix, paint,
                                      sorted_findings, statistics)


def render(results: list, show_fixes: bool = False, color: bool = False, quiet: bool = False, fixed: int = 0,
           show_statistics: bool = False, **_: object) -> str:
    if show_statistics:
        return statistics(results, color=color)
    lines: list[str] = []
    fixable = 0
    for _result, d in sorted_findings(results):
        fixable += has_safe_fix(d)
        lines.append(finding_line(d, color=color, concise=True))
        if show_fixes:
            for fix in d.fixes:
                lines.append(f"    fix ({fix.applicability}): {fix.title}")
    if quiet:
        return "\n".join(lines) + ("\n" if lines else "")
    for result in results:
        summary = estimate_line(result)
        if summary:
            lines.append(paint(f"{result.path}: {summary}", "note", color))
    lines.append(findings_footer(results, fixable, fixed))
    return "\n".join(lines) + "\n"
