"""What the text and full formats share: the finding line, its colours, the order of findings, the footer."""

from __future__ import annotations

from trainlint import rules

GIB = 2**30

# ANSI styles (only when the shell asked for colour: a terminal, or FORCE_COLOR; never with NO_COLOR).
_RESET = "\x1b[0m"
_STYLES = {"path": "\x1b[1m", "position": "\x1b[2m", "error": "\x1b[1;31m", "warning": "\x1b[1;33m",
           "info": "\x1b[1;36m", "fix": "\x1b[1;32m", "note": "\x1b[2m"}
_ABBREVIATIONS = ("e.g", "i.e", "etc", "vs", "approx", "cf")


def paint(text: str, style: str, color: bool) -> str:
    return f"{_STYLES[style]}{text}{_RESET}" if color and text else text


def estimate_line(result) -> str:
    estimate = getattr(result, "estimate", None)
    if estimate is None:
        return ""
    return estimate.summary()


def first_sentence(message: str) -> str:
    """The message up to its first full stop outside quotes and code (`"...".`, `1.5`, `e.g.` do not end it)."""
    quote = None
    for i, ch in enumerate(message):
        if quote:
            if ch == quote:
                quote = None
            continue
        if ch in "\"`":
            quote = ch
            continue
        if ch == "." and (i + 1 == len(message) or message[i + 1] in " \n"):
            word = message[:i].rsplit(" ", 1)[-1].lower()
            if word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
                continue
            if i + 1 == len(message) or message[i + 1:].lstrip()[:1].isupper() or message[i + 1:].strip() == "":
                return message[: i + 1]
    return message


def finding_line(d, *, color: bool = False, concise: bool = False) -> str:
    """`path:line:col: CODE severity [*] message` (1-based; `[*]` when a safe fix exists)."""
    marker = " " + paint("[*]", "fix", color) if has_safe_fix(d) else ""
    message = first_sentence(d.message) if concise else d.message
    where = paint(d.path, "path", color) + paint(f":{d.span.start.line + 1}:{d.span.start.column + 1}:", "position",
                                                   color)
    severity = d.severity.value
    return f"{where} {paint(d.code, severity, color)} {paint(severity, severity, color)}{marker} {message}"


def has_safe_fix(d) -> bool:
    return any(f.safe for f in d.fixes)


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def sorted_findings(results) -> list:
    """(result, diagnostic) pairs in reading order: by file, line, column, then code. A cross-file finding (one a
    config reports in the DeepSpeed JSON it links) sorts with the file it points into."""
    pairs = [(result, d) for result in results for d in result.diagnostics]
    return sorted(pairs, key=lambda p: (p[1].path, p[1].span.start.line, p[1].span.start.column, p[1].code))


def counts_phrase(diagnostics) -> str:
    """`2 errors, 3 warnings and 1 info finding`."""
    by = {"error": 0, "warning": 0, "info": 0}
    for d in diagnostics:
        by[d.severity.value] = by.get(d.severity.value, 0) + 1
    parts = [plural(by["error"], "error") if by["error"] else "", plural(by["warning"], "warning") if by["warning"] else "",
             (f"{by['info']} info finding{'s' if by['info'] != 1 else ''}") if by["info"] else ""]
    parts = [p for p in parts if p]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def findings_footer(results, fixable: int, fixed: int = 0) -> str:
    """`Found 2 errors and 1 warning (3 fixed, 3 remaining). [*] 1 fixable with --fix.`, or `All checks passed`."""
    remaining = [d for r in results for d in r.diagnostics]
    if not remaining and not fixed:
        return f"All checks passed ({plural(len(results), 'file')})." if results else "No files checked."
    if not remaining:
        return f"Found {plural(fixed, 'finding')} ({fixed} fixed, 0 remaining)."
    tail = f"Found {counts_phrase(remaining)} in {plural(len({d.path for d in remaining}), 'file')}"
    tail += f" ({fixed} fixed, {len(remaining)} remaining)." if fixed else "."
    if fixable:
        tail += f" [*] {fixable} fixable with --fix."
    return tail


def statistics(results, *, color: bool = False) -> str:
    """`--statistics`: how often each rule fired, most first."""
    counts: dict[str, list] = {}
    for result in results:
        for d in result.diagnostics:
            counts.setdefault(d.code, []).append(d)
    lines = []
    for code, found in sorted(counts.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        rule = rules.get(code)
        name = rule.RULE.name if rule is not None else found[0].name or ""
        fixable = paint("[*]", "fix", color) if any(has_safe_fix(d) for d in found) else "   "
        lines.append(f"{len(found):>5}  {paint(code, found[0].severity.value, color)}  {fixable} {name}")
    return "\n".join(lines) + ("\n" if lines else "")
