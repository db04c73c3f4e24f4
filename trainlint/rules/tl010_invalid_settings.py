"""TL010 invalid-settings: a trainlint setting that cannot be used.

**What**: a bad value or an unknown key in a `# trainlint: key=value` directive comment, or in
`[tool.trainlint]` of pyproject.toml / trainlint.toml (for example `num-gpus = -3`, `gpus = "A100"`).

**Why**: the setting is ignored, so the memory verdict and the rule selection are not what you
asked for. The message names the source and the key.

**Example**: `# trainlint: num-gpus=many` → "num-gpus must be a whole number".

**Fix**: none; correct the setting.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL010", "invalid-settings", Severity.ERROR, "A trainlint setting that cannot be used")


def check(ctx: LintContext):
    for span, message in ctx.settings_problems:
        yield RULE.at(ctx.document, span, message)
