"""TL001 syntax-error: the file cannot be read as YAML or JSON.

**What**: a YAML or JSON syntax error, a binary or non-UTF-8 file, a file too large to be a config,
or a YAML "bomb" (anchors and aliases that expand to millions of values); a file that cannot be read
(a FIFO, a device, a socket or a folder named as a config or as a linked file, a symlink loop, a name
too long); a value the loader fails on although the text parses (`!!bool maybe`, `!!timestamp x`, an
integer of more than 4,300 digits), at its position.

**Why**: every framework reads the file before training starts; a syntax error fails the launch
(after the job has waited for its GPUs). trainlint reports the position of the error and moves on.

**Example**: `zero_optimization: {"stage": 3,,}` → JSON syntax error at the second comma.

**Fix**: none; correct the syntax at the position shown.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL001", "syntax-error", Severity.ERROR, "The file is not valid YAML or JSON")


def check(ctx: LintContext):
    for doc in [ctx.document, *ctx.linked]:
        if doc.syntax_error is not None:
            yield RULE.at(doc, doc.syntax_error.span, doc.syntax_error.message)
        for problem in getattr(doc, "errors", ())[:20]:
            yield RULE.at(doc, problem.span, problem.message)
