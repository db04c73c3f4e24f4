"""TL633 axolotl-sample-packing-rlhf: Axolotl `sample_packing: true` in a preference/RL run.

**What**: an Axolotl config with `rl:` set (dpo, ipo, kto, orpo, simpo, grpo, ...) and
`sample_packing: true`.

**Why**: preference and RL trainers need each example's chosen/rejected (or generated) sequences
intact; Axolotl's validation stops with "`sample_packing: true` does not work with RLHF training".

**Evidence**: axolotl `src/axolotl/utils/schemas/validation.py`, `RLValidationMixin.check_sample_packing_w_rl`
(`model_validator(mode="before")`: `sample_packing` and `rl` both truthy), since v0.4.0 (2024-01) to main (2026-07).

**Example**: `rl: dpo` + `sample_packing: true` → `sample_packing: false`.

**Fix** (unsafe: throughput changes): set `sample_packing: false`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._frameworks import flag, is_set
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL633", "axolotl-sample-packing-rlhf", Severity.ERROR,
            "sample_packing does not work with RLHF training", flavors=("axolotl",),
            framework="axolotl", versions="",
            evidence="axolotl/utils/schemas/validation.py: RLValidationMixin.check_sample_packing_w_rl",
            raises="`sample_packing: true` does not work with RLHF training")


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    rl, packing = root.get("rl"), root.entry("sample_packing")
    if rl is None or not is_set(rl) or packing is None or flag(packing.value) is not True:
        return
    yield RULE.at(doc, packing.key_span,
                  f"`sample_packing: true` with `rl: {rl.raw if rl.kind == 'scalar' else '...'}`: Axolotl stops",
                  [fix("set `sample_packing: false`", replace_value(doc, packing.value, False), safe=False)],
                  detail="Axolotl stops with \"`sample_packing: true` does not work with RLHF training\". Turn "
                         "packing off.")
