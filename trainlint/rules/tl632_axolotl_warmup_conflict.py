"""TL632 axolotl-warmup-conflict: Axolotl `warmup_steps` and `warmup_ratio` both set.

**What**: an Axolotl config that sets both `warmup_steps` and `warmup_ratio` to non-zero values.

**Why**: Axolotl's validation stops with "warmup_steps and warmup_ratio are mutually exclusive".

**Evidence**: axolotl `src/axolotl/utils/schemas/validation.py`, `check_warmup` (a `model_validator(mode="before")`
testing both values for truthiness, so `0` does not count), since v0.4.0 (2023-11) to main (2026-07).

**Example**: `warmup_steps: 10` + `warmup_ratio: 0.03` → keep one.

**Fix** (unsafe: the warmup length changes): remove `warmup_ratio`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL632", "axolotl-warmup-conflict", Severity.ERROR,
            "warmup_steps and warmup_ratio are mutually exclusive", flavors=("axolotl",),
            framework="axolotl", versions="",
            evidence="axolotl/utils/schemas/validation.py: check_warmup",
            raises="warmup_steps and warmup_ratio are mutually exclusive")


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    steps, ratio = root.entry("warmup_steps"), root.entry("warmup_ratio")
    if steps is None or ratio is None or not steps.value.value or not ratio.value.value:
        return  # Axolotl tests truthiness: a 0 does not count
    yield RULE.at(doc, ratio.key_span,
                  "`warmup_steps` and `warmup_ratio` are both set: Axolotl stops",
                  [fix("remove `warmup_ratio`", delete_entry(doc, root, ratio), safe=False)],
                  detail="Axolotl stops with \"warmup_steps and warmup_ratio are mutually exclusive\". Keep one of "
                         "them.")
