"""Shared wording of the per-file memory summary."""

from __future__ import annotations

GIB = 2**30


def estimate_line(result) -> str:
    estimate = getattr(result, "estimate", None)
    if estimate is None:
        return ""
    return estimate.summary()


def finding_line(d) -> str:
    """`path:line:col: CODE severity [*] message` (1-based; `[*]` when a safe fix exists)."""
    marker = " [*]" if has_safe_fix(d) else ""
    return f"{d.path}:{d.span.start.line + 1}:{d.span.start.column + 1}: {d.code} {d.severity.value}{marker} {d.message}"


def has_safe_fix(d) -> bool:
    return any(f.safe for f in d.fixes)


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def findings_footer(results, fixable: int) -> str | None:
    """`Found N findings in M files. [*] K fixable with --fix.`, or None without findings."""
    count = sum(len(r.diagnostics) for r in results)
    if not count:
        return None
    tail = f"Found {plural(count, 'finding')} in {plural(len(results), 'file')}."
    if fixable:
        tail += f" [*] {fixable} fixable with --fix."
    return tail
