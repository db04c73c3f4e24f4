"""TL631 axolotl-qlora-in-8bit: Axolotl `adapter: qlora` with `load_in_8bit: true`.

**What**: an Axolotl config with `adapter: qlora` and `load_in_8bit: true`.

**Why**: QLoRA loads the base in 4 bits; Axolotl's validation stops with "Can't load qlora in 8bit"
(when merging an adapter, `merge_lora: true`: "Can't merge qlora if loaded in 8bit"). For an 8-bit base
use `adapter: lora` with `load_in_8bit: true`.

**Evidence**: axolotl `src/axolotl/utils/schemas/peft.py`, `LoraConfig.validate_qlora` (pydantic
`model_validator(mode="after")`), both messages in every release from v0.1.0 to main (2026-07).

**Example**: `adapter: qlora`, `load_in_8bit: true` → `load_in_8bit: false`, `load_in_4bit: true`.

**Fix** (unsafe: 4-bit and 8-bit bases differ in memory and quality): set `load_in_8bit: false`
(TL630 then asks for `load_in_4bit: true`).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._frameworks import flag
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL631", "axolotl-qlora-in-8bit", Severity.ERROR,
            "adapter: qlora with load_in_8bit", flavors=("axolotl",),
            framework="axolotl", versions="",
            evidence="axolotl/utils/schemas/peft.py: LoraConfig.validate_qlora",
            raises="Can't load qlora in 8bit")


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    adapter = root.get("adapter")
    eight = root.entry("load_in_8bit")
    if adapter is None or str(adapter.value).lower() != "qlora" or eight is None or flag(eight.value) is not True:
        return
    said = "Can't merge qlora if loaded in 8bit" if flag(root.get("merge_lora")) else "Can't load qlora in 8bit"
    yield RULE.at(doc, eight.key_span,
                  "`load_in_8bit: true` with `adapter: qlora`: Axolotl stops",
                  [fix("set `load_in_8bit: false`", replace_value(doc, eight.value, False), safe=False)],
                  detail=f"Axolotl stops with \"{said}\". QLoRA uses a 4-bit base (`load_in_4bit: true`); for an "
                         "8-bit base use `adapter: lora`.")
