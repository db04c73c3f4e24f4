"""Applying fixes: `--fix` (safe), `--unsafe-fixes`, `--diff`.

Fixes are applied as text edits, then the files are linted again and the remaining fixes applied,
until nothing changes (at most MAX_ROUNDS). Overlapping edits wait for the next round. A result that
no longer parses is never written. Files are written atomically (temp file + rename).
"""

from __future__ import annotations

import difflib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from trainlint.document.reading import overlay, parse_document, read_document
from trainlint.fixes.edits import apply_edits

MAX_ROUNDS = 8


@dataclass
class FixOutcome:
    original: dict[str, str] = field(default_factory=dict)  # path -> text before
    fixed: dict[str, str] = field(default_factory=dict)  # path -> text after (changed files only)
    applied: int = 0
    problems: list[str] = field(default_factory=list)  # files left alone, and why

    def diff(self) -> str:
        chunks = []
        for path, new in self.fixed.items():
            old = self.original[path]
            chunks.extend(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                               fromfile=f"a/{path}", tofile=f"b/{path}"))
        return "".join(chunks)


def compute_fixes(paths: list[str], lint: Callable[[str], object], unsafe: bool) -> FixOutcome:
    """Fix `paths` in memory. `lint(path)` returns a FileResult, reading files through the overlay."""
    outcome = FixOutcome()
    texts: dict[str, str] = {}

    def current(path: str) -> str | None:
        if path in texts:
            return texts[path]
        doc = read_document(path)
        if doc.kind == "unreadable":
            return None
        text = ("\ufeff" if doc.bom else "") + doc.text
        outcome.original.setdefault(path, text)
        return text

    for _ in range(MAX_ROUNDS):
        changed = False
        with overlay({p: t for p, t in texts.items()}):
            results = [lint(p) for p in paths]
        edits_by_path: dict[str, list] = {}
        for result in results:
            for diagnostic in result.diagnostics:
                for fix in diagnostic.fixes:
                    if fix.safe or unsafe:
                        for edit in fix.edits:
                            edits_by_path.setdefault(edit.path, []).append(edit)
                        break  # the first applicable fix of a diagnostic is its preferred one
        for path, edits in edits_by_path.items():
            text = current(path)
            if text is None:
                continue
            bom = text.startswith("\ufeff")
            body = text[1:] if bom else text
            new_body, _skipped = apply_edits(body, edits)
            if new_body == body:
                continue
            check = parse_document(new_body, path)
            if check.syntax_error is not None:
                outcome.problems.append(f"{path}: a fix would leave the file unparsable ({check.syntax_error.message}); "
                                        "it was not applied")
                continue
            texts[path] = ("\ufeff" if bom else "") + new_body
            outcome.applied += len(edits) - len(_skipped)
            changed = True
        if not changed:
            break
    else:
        outcome.problems.append(f"fixes did not settle after {MAX_ROUNDS} rounds; the last state is kept")
    for path, text in texts.items():
        if text != outcome.original.get(path):
            outcome.fixed[path] = text
    return outcome


def write_atomically(path: str, text: str) -> None:
    target = Path(path)
    mode = target.stat().st_mode & 0o7777 if target.exists() else 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=str(target.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
