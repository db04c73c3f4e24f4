"""TL009 unused-suppression: a `# trainlint: disable=CODE` comment that suppresses nothing.

**What**: a suppression comment whose code did not fire where the comment applies.

**Why**: stale suppressions hide the next real finding of that code on the line, and mislead
readers about what is wrong with the config.

**Example**: `micro_batch: 4  # trainlint: disable=TL100` after the run already fits.

**Fix** (safe): remove the unused code (or the whole comment when no code is left in use).
"""

from __future__ import annotations

import re

from trainlint.diagnostics import Edit, Severity
from trainlint.fixes.edits import fix
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL009", "unused-suppression", Severity.WARNING, "A suppression comment that suppresses nothing")


def check(ctx: LintContext):
    """Runs inside the engine after all other rules (see `report`)."""
    return ()


def report(suppressions, doc):
    for item in suppressions.items:
        unused = [code for code in item.codes if code not in item.used]
        if not unused:
            continue
        line_text = doc.line_text(item.line)
        start = doc.line_start(item.line) + item.column
        end = doc.line_start(item.line) + len(line_text)
        codes = ", ".join(unused)
        if len(unused) == len(item.codes):
            # Remove the comment, and the spaces before it when it trails a line.
            before = line_text[:item.column]
            cut = start - (len(before) - len(before.rstrip())) if before.strip() else doc.line_start(item.line)
            if not before.strip():
                end = doc.line_start(item.line + 1) if item.line + 1 < doc.line_count else end
            edit = Edit(doc.path, doc.span(cut, end), "")
        else:
            kept = ",".join(code for code in item.codes if code not in unused)
            comment = doc.text[start:end]
            edit = Edit(doc.path, doc.span(start, end),
                        re.sub(r"(disable(?:-file)?\s*=\s*)[A-Za-z0-9_,\s]+", lambda m: m.group(1) + kept, comment, count=1))
        yield RULE.diagnostic(doc.path, doc.span(start, end),
                              f"the suppression of {codes} is unused: nothing it covers reports {codes}",
                              [fix(f"remove the unused suppression of {codes}", edit)], detail="Remove it.")
