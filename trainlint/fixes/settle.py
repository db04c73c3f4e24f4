"""Fixes that settle: what a lint advertises is what `--fix` applies, and applying it reaches a fixed point.

A rule proposes its fixes alone; applied together, one may produce what another rule reports (a rename to a key that
is wrong at the file's ZeRO stage, a planner value that another check refuses) or undo another. `settle` checks the
fixes a lint offers the way `--fix` applies them: for each selection (safe fixes, then safe and unsafe), the first
applicable fix of each diagnostic, applied together (`fixes.apply.apply_edits`, overlapping edits skipped), then the
result linted again. The selection is settled when that lint offers no fix of the selection: one round of `--fix`
reaches the fixed point, and the edits the JSON/SARIF output and the language server's code actions show are those it
applies. A fix whose result is reported again (a finding the file did not have: one with a fix, or a warning or error of a
new code; or its own finding still there) is made whole with the fix that result gets, when the two reach a fixed
point in the file alone (`_composed`: TL631's `load_in_8bit: false`, then TL630's `load_in_4bit: true`; never for the
memory findings, whose titles state re-estimated figures), else withdrawn (its diagnostic's next fix, if any, takes
its place, and the diagnostic's detail says why); edits that overlap another fix's wait for a further round of
`--fix`, and the finding says so (FURTHER_ROUND). The selection is then checked again; a few rounds at most (`MAX_PASSES`), after which every fix of the selection still
unsettled is withdrawn. A finding counts as the same after the edits when its code and message are the same (positions
move with the edits).

Pure: `relint(texts)` (the engine's lint of the file with `texts`, path -> text, standing in for the files) is the only
way it sees a result; it never writes.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Callable
from dataclasses import replace

from trainlint.diagnostics import Diagnostic, Edit, Fix, Severity
from trainlint.document.tree import Document
from trainlint.fixes.edits import apply_edits

MAX_PASSES = 4
MAX_COMPOSED = 8  # culprits of one pass made whole at most (two lints each); more are withdrawn: a lint stays bounded
MEMORY_CODES = frozenset({"TL100", "TL101", "TL103", "TL104"})  # findings whose fixes carry re-estimated figures
FURTHER_ROUND = "Fixed in a further round"  # how a finding says its fix waits for a next round of --fix


def _preferred(d: Diagnostic, unsafe: bool) -> Fix | None:
    """The fix `--fix` (or `--fix --unsafe-fixes`) applies for a diagnostic: its first applicable one."""
    return next((f for f in d.fixes if f.safe or unsafe), None)


def _key(d: Diagnostic) -> tuple[str, str, str]:
    return (d.path, d.code, d.message)


def _applied(fixes: list[Fix], current: Callable[[str], str | None]) -> tuple[dict[str, str] | None, set[int]]:
    """The texts after the fixes' edits (path -> text, changed files only; None when a file cannot be read), and the
    indices (into `fixes`) of those with an edit skipped for overlapping an earlier one (`apply_edits`)."""
    by_path: dict[str, list] = {}
    owner: dict[int, int] = {}
    for n, fix in enumerate(fixes):
        for edit in fix.edits:
            by_path.setdefault(edit.path, []).append(edit)
            owner[id(edit)] = n
    out: dict[str, str] = {}
    overlapping: set[int] = set()
    for path, edits in by_path.items():
        text = current(path)
        if text is None:
            return None, overlapping
        new, skipped = apply_edits(text, edits)
        overlapping.update(owner[id(e)] for e in skipped)
        if new != text:
            out[path] = new
    return out, overlapping


def settle(diagnostics: list[Diagnostic], current: Callable[[str], str | None],
           relint: Callable[[dict[str, str]], list[Diagnostic]], doc: Document | None = None) -> list[Diagnostic]:
    """`diagnostics` with every fix withdrawn whose result the file's lint reports again (see the module's doc).
    `current(path)` is the text a fix's edits apply to (None when unreadable); `relint(texts)` lints with them.
    With `doc` (the linted document), a fix whose result another finding fixes in one more step, in `doc` alone
    (`load_in_8bit: false` under `adapter: qlora`, then `load_in_4bit: true`), becomes the two in one (`_composed`)."""
    if not any(d.fixes for d in diagnostics):
        return diagnostics
    out = list(diagnostics)
    withdrawn: dict[int, list[str]] = {}  # index in out -> titles of the fixes withdrawn
    later: dict[int, list[str]] = {}  # index in out -> titles of the fixes left to a next round (overlapping edits)
    composed: set[int] = set()  # diagnostics whose preferred fix was made whole with its follow-up
    for unsafe in (False, True):
        if unsafe and all(_preferred(d, True) is _preferred(d, False) for d in out):
            break  # no unsafe fix changes the selection: checked already
        for _ in range(MAX_PASSES):
            chosen = [(i, f) for i, d in enumerate(out) if (f := _preferred(d, unsafe)) is not None]
            if not chosen:
                break
            texts, overlapping = _applied([f for _, f in chosen], current)
            if texts is None:
                break
            if overlapping:
                # Edits that overlap another fix's wait for a next round of --fix: offered then, not now.
                for n in sorted(overlapping):
                    i, fix = chosen[n]
                    later.setdefault(i, []).append(fix.title)
                    out[i] = replace(out[i], fixes=tuple(f for f in out[i].fixes if f is not fix))
                continue
            culprits = _unsettled(out, chosen, relint(texts)) if texts else []
            if not culprits:
                break
            for i in culprits:
                blamed = _preferred(out[i], unsafe)
                if blamed is None:
                    continue
                fix = blamed
                if i not in composed and doc is not None and len(culprits) <= MAX_COMPOSED:
                    whole = _composed(out, i, fix, unsafe, doc, relint)
                    if whole is not None:
                        composed.add(i)
                        out[i] = replace(out[i], fixes=tuple(whole if f is fix else f for f in out[i].fixes))
                        continue
                withdrawn.setdefault(i, []).append(fix.title)
                out[i] = replace(out[i], fixes=tuple(f for f in out[i].fixes if f is not fix))
        else:
            # Still not settled after MAX_PASSES: withdraw the rest of the selection rather than offer a loop.
            for i, d in enumerate(out):
                rest = _preferred(d, unsafe)
                if rest is not None:
                    withdrawn.setdefault(i, []).append(rest.title)
                    out[i] = replace(d, fixes=tuple(f for f in d.fixes if f is not rest))
    for i, titles in withdrawn.items():
        d = out[i]
        note = (f"Not offered as a fix: {'; '.join(titles)} (applied with the file's other fixes, the result is "
                "reported again).")
        out[i] = replace(d, detail=f"{d.detail} {note}".strip())
    for i, titles in later.items():
        d = out[i]
        note = (f"{FURTHER_ROUND}: {'; '.join(titles)} (its edits overlap another fix's; `trainlint check "
                "--fix` applies it next, and `--diff` shows the final file).")
        out[i] = replace(d, detail=f"{d.detail} {note}".strip())
    return out


def _unsettled(out: list[Diagnostic], chosen: list[tuple[int, Fix]], after: list[Diagnostic]) -> list[int]:
    """The indices of the chosen fixes to withdraw. After them, a finding they were to fix that is still there (same
    code and message) blames its own fix; a finding the file did not have (fixable or not: another rule reports the
    result: one with a fix, or a warning or error of a code the file did not have; an updated figure of a finding it
    had, such as the host RAM an offload needs, is no new finding) blames the fixes whose edits lie nearest to it in
    its file, or all the chosen ones when none edits it.
    Findings the file had whose fixes are not chosen (withdrawn, or not of this selection) stay as they were."""
    before = Counter(_key(d) for d in out)
    codes = {(d.path, d.code) for d in out}
    index_of: dict[tuple, list[int]] = {}
    for i, _fix in chosen:
        index_of.setdefault(_key(out[i]), []).append(i)
    blamed: set[int] = set()
    for d in after:
        key = _key(d)
        own = index_of.get(key)
        if own:
            blamed.update(own)  # its own fix did not take
        elif before[key] == 0 and (d.fixes or (d.path, d.code) not in codes and d.severity.rank >= Severity.WARNING.rank):
            blamed.update(_nearest(chosen, d) or [i for i, _ in chosen])
    return sorted(blamed)


def _nearest(chosen: list[tuple[int, Fix]], d: Diagnostic) -> list[int]:
    """The chosen fixes whose edits, in the finding's file, lie closest (by line, as the text was before) to it."""
    best: list[int] = []
    distance: int | None = None
    line = d.span.start.line
    for i, fix in chosen:
        lines = [e.span.start.line for e in fix.edits if e.path == d.path]
        if not lines:
            continue
        gap = min(abs(x - line) for x in lines)
        if distance is None or gap < distance:
            best, distance = [i], gap
        elif gap == distance:
            best.append(i)
    return best


def _composed(out: list[Diagnostic], i: int, fix: Fix, unsafe: bool, doc: Document,
              relint: Callable[[dict[str, str]], list[Diagnostic]]) -> Fix | None:
    """The fix and the fixes of what its result reports, as one fix of `doc` (edits from the difference of the two
    texts), when that reaches a fixed point in `doc` alone: applied, the file has no finding with a fix of the
    selection and no warning or error of a code it did not have. None when it does not."""
    if any(e.path != doc.path for e in fix.edits):
        return None
    text, _ = apply_edits(doc.text, list(fix.edits))
    after = relint({doc.path: text})
    before = Counter(_key(d) for d in out)
    if out[i].code in MEMORY_CODES:
        return None  # a memory fix's title states its re-estimated figures: another change would make them wrong
    follow = [f for d in after if before[_key(d)] == 0 and d.code not in MEMORY_CODES
              and (f := _preferred(d, unsafe)) is not None]
    if not follow or any(e.path != doc.path for f in follow for e in f.edits):
        return None
    final, skipped = apply_edits(text, [e for f in follow for e in f.edits])
    if skipped or final == doc.text:
        return None
    codes = {d.code for d in out}
    for d in relint({doc.path: final}):
        if before[_key(d)] == 0 and (_preferred(d, unsafe) is not None or
                                     d.code not in codes and d.severity.rank >= Severity.WARNING.rank):
            return None
        if _key(d) == _key(out[i]):
            return None
    edits = _difference(doc, final)
    if not edits:
        return None
    title = fix.title + "".join(f", and {f.title}" for f in follow)
    return Fix(title, edits, fix.safe and all(f.safe for f in follow))


def _difference(doc: Document, new: str) -> tuple[Edit, ...]:
    """Minimal edits of `doc` that give `new`: the changed line blocks, each trimmed to its changed characters."""
    old = doc.text
    old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    starts = [0]
    for line in old_lines:
        starts.append(starts[-1] + len(line))
    new_starts = [0]
    for line in new_lines:
        new_starts.append(new_starts[-1] + len(line))
    edits = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, a1, a2, b1, b2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        start, end = starts[a1], starts[a2]
        piece = new[new_starts[b1]:new_starts[b2]]
        chunk = old[start:end]
        head = 0
        while head < min(len(chunk), len(piece)) and chunk[head] == piece[head]:
            head += 1
        tail = 0
        while tail < min(len(chunk), len(piece)) - head and chunk[len(chunk) - 1 - tail] == piece[len(piece) - 1 - tail]:
            tail += 1
        edits.append(Edit(doc.path, doc.span(start + head, end - tail), piece[head:len(piece) - tail]))
    return tuple(edits)
