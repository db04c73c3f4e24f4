"""Applying fixes: `--fix` (safe), `--unsafe-fixes`, `--diff`.

Fixes are applied as text edits, then the files are linted again and the remaining fixes applied,
until nothing changes (at most MAX_ROUNDS; a file still changing then is not written). Each round
applies exactly the edits the diagnostics advertise (the first applicable fix of each, overlapping
edits waiting for the next round). A result that no longer parses, or no longer parses strictly
(`json.load`, `yaml.safe_load`) where the original did, is never written.

Writing (`write_fixed`): through symlinks to their target; the file must be a regular, writable file
(a read-only one is refused with a message, even where the permissions would allow replacing it) and
unchanged since it was read (else it is skipped with a message). A temp file beside it, with the
original's mode and owner, is renamed over it; a file with several hard links is rewritten in place
instead, so every name keeps seeing it. No temp file survives an error or an interrupt (SIGINT, SIGTERM).
"""

from __future__ import annotations

import difflib
import json
import os
import signal
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import yaml

from trainlint.diagnostics import Diagnostic
from trainlint.document.reading import overlay, parse_document, read_document, read_regular_file
from trainlint.fixes.edits import apply_edits

MAX_ROUNDS = 8


@dataclass
class FixOutcome:
    """What applying fixes did: the texts before and after, and the fixes or files left alone."""
    original: dict[str, str] = field(default_factory=dict)  # path -> text before
    fixed: dict[str, str] = field(default_factory=dict)  # path -> text after (changed files only)
    applied: int = 0
    problems: list[str] = field(default_factory=list)  # files left alone, and why
    not_applied: list[str] = field(default_factory=list)  # fixes that edit files not being fixed, and where

    def diff(self) -> str:
        """A unified diff that `patch -p1` applies to give exactly what --fix writes: lines split at
        \\n only (as patch splits them: CR, NEL, LS, PS stay inside a line), and a last line without
        a line break marked `\\ No newline at end of file`."""
        chunks = []
        for path, new in self.fixed.items():
            old = self.original[path]
            for line in difflib.unified_diff(patch_lines(old), patch_lines(new), fromfile=f"a/{path}",
                                             tofile=f"b/{path}"):
                chunks.append(line)
                if not line.endswith("\n"):
                    chunks.append("\n\\ No newline at end of file\n")
        return "".join(chunks)


def patch_lines(text: str) -> list[str]:
    """Lines as `patch` and `diff` see them: ended by \\n only, each keeping its \\n."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def strictly_parses(text: str, kind: str) -> bool:
    """What the stricter readers accept: `json.loads` (the HF Trainer reads DeepSpeed JSON so) or
    `yaml.safe_load` (every YAML consumer)."""
    body = text[1:] if text.startswith("\ufeff") else text
    try:
        if kind == "json":
            json.loads(body)
        else:
            for _ in yaml.load_all(body, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
                pass
    except Exception:  # noqa: BLE001
        return False
    return True


class LintResult(Protocol):
    """What compute_fixes reads of a lint (the engine's FileResult, which this stage does not import)."""

    path: str
    diagnostics: list[Diagnostic]


def compute_fixes(paths: list[str], lint: Callable[[str], LintResult], unsafe: bool,
                  writable: set[str] | None = None) -> FixOutcome:
    """Fix `paths` in memory. `lint(path)` returns a FileResult, reading files through the overlay.

    With `writable` (resolved paths: the files named on the command line or found in a named folder), a fix
    whose edits touch any other file (a linked DeepSpeed JSON, the config that links a checked JSON) is not
    applied; it is listed in `not_applied`."""
    outcome = FixOutcome()
    texts: dict[str, str] = {}
    refused: set = set()
    spelling: dict[str, str] = {}  # resolved path -> the name used for it (the checked file's own, when it is one)

    def current(path: str) -> str | None:
        if path in texts:
            return texts[path]
        doc = read_document(path)
        if doc.kind == "unreadable":
            return None
        text = ("\ufeff" if doc.bom else "") + doc.text
        outcome.original.setdefault(path, text)
        return text

    changing: set[str] = set()
    for _ in range(MAX_ROUNDS):
        changed = False
        changing = set()
        with overlay({p: t for p, t in texts.items()}):
            results = [lint(p) for p in paths]
        edits_by_path: dict[str, list] = {}
        for result in results:
            spelling.setdefault(_resolved(result.path), result.path)
            for diagnostic in result.diagnostics:
                for fix in diagnostic.fixes:
                    if fix.safe or unsafe:
                        if writable is not None and not all(_resolved(e.path) in writable for e in fix.edits):
                            _refuse(outcome, refused, diagnostic, fix, writable)
                            break
                        for edit in fix.edits:
                            # one file, one name: a linked file may be spelled `configs/../ds/z.json` by one config
                            name = spelling.setdefault(_resolved(edit.path), edit.path)
                            edits_by_path.setdefault(name, []).append(edit)
                        break  # the first applicable fix of a diagnostic is its preferred one
        for path, edits in edits_by_path.items():
            try:
                text = current(path)
                if text is None:
                    continue
                bom = text.startswith("\ufeff")
                body = text[1:] if bom else text
                new_body, _skipped = apply_edits(body, edits)
                if new_body == body:
                    continue
                problem = _unparsable(body, new_body, path)
            except Exception as exc:  # noqa: BLE001 - one file's fixes failing must not stop the others
                problem = f"{path}: the fixes could not be applied ({type(exc).__name__}: {str(exc)[:200]})"
            if problem:
                if problem not in outcome.problems:
                    outcome.problems.append(problem)
                continue
            texts[path] = ("\ufeff" if bom else "") + new_body
            outcome.applied += len(edits) - len(_skipped)
            changed = True
            changing.add(path)
        if not changed:
            break
    else:
        for path in sorted(changing):
            outcome.problems.append(f"{path}: the fixes did not settle after {MAX_ROUNDS} rounds (each round changed "
                                    "the file again); it was not fixed")
            texts.pop(path, None)
    for path, text in texts.items():
        if text != outcome.original.get(path):
            outcome.fixed[path] = text
    return outcome


def _resolved(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return os.path.abspath(path)


def _shown(path: str) -> str:
    absolute, cwd = os.path.abspath(path), os.getcwd()
    return os.path.relpath(absolute, cwd) if absolute.startswith(cwd.rstrip(os.sep) + os.sep) else path


def _refuse(outcome: FixOutcome, refused: set, diagnostic, fix, writable: set[str]) -> None:
    others = sorted({_shown(e.path) for e in fix.edits if _resolved(e.path) not in writable})
    key = (diagnostic.code, _resolved(diagnostic.path), diagnostic.span.start.offset, fix.title)
    if key in refused:
        return
    refused.add(key)
    where = f"{_shown(diagnostic.path)}:{diagnostic.span.start.line + 1}:{diagnostic.span.start.column + 1}"
    outcome.not_applied.append(f"{where}: {diagnostic.code} fix not applied ({fix.title}): it edits "
                               f"{', '.join(others)}, which {'is' if len(others) == 1 else 'are'} not among the files "
                               "being checked; name it to fix it")


def _unparsable(body: str, new_body: str, path: str) -> str | None:
    check = parse_document(new_body, path)
    before = parse_document(body, path) if check.errors or check.syntax_error is not None else None
    # a file that did not parse before the fix (a launch script or README a launch finding fixes) is not made so by it
    if (check.syntax_error is not None and (before is None or before.syntax_error is None)) or \
            (before is not None and len(check.errors) > len(before.errors)):
        reason = (check.syntax_error or check.errors[-1]).message
        return f"{path}: a fix would leave the file unparsable ({reason}); it was not applied"
    kind = check.kind
    if strictly_parses(body, kind) and not strictly_parses(new_body, kind):
        reader = "json.load" if kind == "json" else "yaml.safe_load"
        return f"{path}: a fix would leave the file unreadable by {reader}; it was not applied"
    return None


def write_fixed(path: str, text: str, original: str) -> str | None:
    """Write a fixed text over `path` safely; None when written, else why it was not (a message)."""
    real = os.path.realpath(path)  # a symlink: edit its target, keep the link
    try:
        st = os.stat(real)
    except OSError as exc:
        return f"{path}: cannot write the fix: {exc.strerror or exc}"
    if not stat.S_ISREG(st.st_mode):
        return f"{path}: not a regular file; it was not fixed"
    if not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(real, os.W_OK):
        return f"{path}: the file is read-only; it was not fixed (make it writable to apply the fixes)"
    data, why = read_regular_file(real)
    if data is None:
        return f"{path}: cannot read it again before writing ({why}); it was not fixed"
    try:
        current = data.decode("utf-8")
    except UnicodeDecodeError:
        current = None
    if current != original:
        return f"{path}: the file changed since trainlint read it; it was not fixed (run trainlint again)"
    try:
        encoded = text.encode("utf-8")
    except UnicodeEncodeError:
        return f"{path}: the fixed text is not valid Unicode; it was not fixed"
    folder = os.path.dirname(real) or "."
    with _interrupts_as_keyboard_interrupt():
        try:
            if st.st_nlink > 1:
                _write_in_place(real, encoded)
                return None
            if not os.access(folder, os.W_OK | os.X_OK):
                return (f"{path}: its folder {folder} is read-only (the fixed file is written beside the original, "
                        "then renamed over it); it was not fixed")
            return _replace(real, encoded, st)
        except OSError as exc:
            return f"{path}: cannot write the fix: {exc.strerror or exc}"


def _write_in_place(real: str, data: bytes) -> None:
    """Rewrite the file's own inode (hard links keep seeing it; mode and owner untouched)."""
    with open(real, "r+b") as handle:
        handle.write(data)
        handle.truncate()
        handle.flush()
        os.fsync(handle.fileno())


def _replace(real: str, data: bytes, st: os.stat_result) -> str | None:
    import tempfile  # with shutil and random, only when a fix is written: `check` without --fix never needs it

    folder, name = os.path.split(real)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".trainlint-tmp", dir=folder or ".")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fchmod(handle.fileno(), stat.S_IMODE(st.st_mode))
            if hasattr(os, "fchown"):
                try:
                    os.fchown(handle.fileno(), st.st_uid, st.st_gid)
                except OSError:
                    if os.stat(tmp).st_uid != st.st_uid:  # cannot keep the owner: keep the inode instead
                        os.unlink(tmp)
                        _write_in_place(real, data)
                        return None
            os.fsync(handle.fileno())
        now = os.stat(real)
        if (now.st_mtime_ns, now.st_size, now.st_ino) != (st.st_mtime_ns, st.st_size, st.st_ino):
            os.unlink(tmp)
            return f"{real}: the file changed while the fix was written; it was not fixed (run trainlint again)"
        os.replace(tmp, real)
        return None
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class _Interrupt:
    def __init__(self) -> None:
        self.saved = None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            try:
                self.saved = signal.signal(signal.SIGTERM, _raise_interrupt)
            except (ValueError, OSError):
                self.saved = None
        return self

    def __exit__(self, *exc) -> None:
        if self.saved is not None:
            signal.signal(signal.SIGTERM, self.saved)


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt()


def _interrupts_as_keyboard_interrupt() -> _Interrupt:
    return _Interrupt()


def write_atomically(path: str, text: str) -> None:
    """Write `text` over `path` (kept for callers that have no original text to compare with)."""
    problem = write_fixed(path, text, _current_text(path))
    if problem:
        raise OSError(problem)


def _current_text(path: str) -> str:
    data, _why = read_regular_file(os.path.realpath(path))
    try:
        return data.decode("utf-8") if data is not None else ""
    except UnicodeDecodeError:
        return ""
