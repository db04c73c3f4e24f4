"""`spec(lines)`: gitignore patterns matched as `pathspec.GitIgnoreSpec` matches them, without importing pathspec
for the patterns ignore files hold.

Importing pathspec costs about 20 ms of CPU (it imports typing, dataclasses and its regex backends), more than a
check of one file, and every folder walk and link search reads the default excludes and the repository's
.gitignore files. The patterns read here: names and paths with `*`, `?` and simple `[...]` classes (not `[!...]`), a leading,
inner or trailing `/`, a leading `**/`, `!` negations (with GitIgnoreSpec's rule that a match of the path itself
outranks a match of one of its folders), comments and blank lines. A file with anything else (backslash escapes,
other `**`, spaces around a pattern) is handed to pathspec whole, so the answer is always pathspec's.
`tests/test_gitignore.py` holds the two to the same matches.
"""

from __future__ import annotations

import re

from trainlint._pattern import lazy

__all__ = ["spec"]

_CLASS = lazy(r"\[([A-Za-z0-9._-]+)\]")  # `[cod]`, `[0-9]`: the classes read here (not negated ones)


class Patterns:
    """Compiled gitignore patterns with pathspec's `match_file(path)` (a path relative to the patterns' folder,
    `/`-separated, a directory ending with `/`)."""

    def __init__(self, patterns: list[tuple[re.Pattern, bool]]):
        self._patterns = patterns  # (regex, ignores) in file order; False for a `!` negation
        self._plain = all(ignores for _, ignores in patterns)
        self._any = re.compile("|".join("(?:" + regex.pattern.replace("(?P<d>/)", "/") + ")"
                                        for regex, _ in patterns)) if self._plain else None

    def match_file(self, path: str) -> bool:
        if self._any is not None:  # no negation: any match ignores
            return self._any.match(path) is not None
        # GitIgnoreSpec's rule, from the last pattern back: the last pattern that matches the path itself decides,
        # else the last one that matches one of its folders (the `/` after the pattern)
        decided, priority = None, 0
        for regex, ignores in reversed(self._patterns):
            match = regex.match(path)
            if match is None:
                continue
            level = 1 if match.groupdict().get("d") else 2
            if level > priority:
                decided, priority = ignores, level
            if level == 2:
                break
        return bool(decided)


def spec(lines: list[str]):
    """The matcher of these gitignore lines (None when none is a pattern): ours, or pathspec's GitIgnoreSpec."""
    patterns = []
    for line in lines:
        translated = _translate(line)
        if translated:
            try:
                patterns.append((re.compile(translated[0]), translated[1]))
                continue
            except re.error:  # a class such as [z-a]
                translated = None
        if translated is None:  # not one of the patterns read here
            return _pathspec(lines)
    return Patterns(patterns) if patterns else None


def _pathspec(lines: list[str]):
    """pathspec's GitIgnoreSpec of the lines it can read: git skips a pattern it cannot use (a lone `!`, an
    unclosed `[`) where pathspec raises, and an ignore file never stops a run."""
    import pathspec

    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except Exception:  # noqa: BLE001 - pathspec's pattern errors
        kept = []
        for line in lines:
            try:
                pathspec.GitIgnoreSpec.from_lines([line])
            except Exception:  # noqa: BLE001
                continue
            kept.append(line)
        return pathspec.GitIgnoreSpec.from_lines(kept) if kept else None


def _translate(line: str) -> tuple[str, bool] | None:
    """(regular expression, ignores) of one line (() for a blank line or a comment), or None for a pattern not
    read here."""
    pattern = line.rstrip("\n\r")
    if not pattern.strip() or pattern.startswith("#"):
        return ()
    if "\\" in pattern or pattern != pattern.strip():
        return None  # escapes, spaces around the pattern
    ignores = not pattern.startswith("!")
    if not ignores:
        pattern = pattern[1:]
        if not pattern:
            return ()  # a lone `!`: git reads no pattern (pathspec would raise)
    if pattern == "*":  # every path, as the path itself (pathspec's special case)
        return "^.", ignores
    directory_only = pattern.endswith("/")
    body = pattern[:-1] if directory_only else pattern
    anywhere = True
    if body.startswith("**/"):
        body = body[3:]
    elif "/" in body:
        anywhere = False
        if body.startswith("/"):
            body = body[1:]
    segments = body.split("/")
    if not body or any(not s or "**" in s for s in segments):
        return None
    parts = [_segment(s) for s in segments]
    if any(p is None for p in parts):
        return None
    head = "(?:.+/)?" if anywhere else ""
    tail = "(?P<d>/).*" if directory_only else "(?:(?P<d>/).*)?"
    return f"^{head}{'/'.join(parts)}{tail}$", ignores


def _segment(segment: str) -> str | None:
    """One path component's pattern: `*`, `?` and `[...]` within the component, never an empty component."""
    out = ["(?=[^/])"]
    at = 0
    while at < len(segment):
        char = segment[at]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            match = _CLASS.match(segment, at)
            if match is None:
                return None
            out.append(f"[{match.group(1)}]")
            at = match.end()
            continue
        elif char in "]!":
            return None
        else:
            out.append(re.escape(char))
        at += 1
    return "".join(out)
