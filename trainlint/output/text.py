"""`path:line:col: CODE severity message`, one line per finding, then a one-line memory summary per file."""

from __future__ import annotations

from trainlint.output.summary import estimate_line, finding_line, findings_footer, has_safe_fix


def render(results: list, show_fixes: bool = False, **_: object) -> str:
    lines: list[str] = []
    fixable = 0
    for result in results:
        for d in result.diagnostics:
            fixable += has_safe_fix(d)
            lines.append(finding_line(d))
            if show_fixes:
                for fix in d.fixes:
                    lines.append(f"    fix ({fix.applicability}): {fix.title}")
        summary = estimate_line(result)
        if summary:
            lines.append(f"{result.path}: {summary}")
    tail = findings_footer(results, fixable)
    if tail:
        lines.append(tail)
    return "\n".join(lines) + ("\n" if lines else "")
