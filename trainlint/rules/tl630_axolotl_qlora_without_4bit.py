"""TL630 axolotl-qlora-without-4bit: Axolotl `adapter: qlora` without `load_in_4bit: true`.

**What**: an Axolotl config with `adapter: qlora` whose `load_in_4bit` is missing or false (and that
does not merge an adapter, `merge_lora`).

**Why**: QLoRA means LoRA on a 4-bit NF4 base; Axolotl's validation stops with "Require
cfg.load_in_4bit to be True for qlora".

**Evidence**: axolotl `src/axolotl/utils/schemas/peft.py`, `LoraConfig.validate_qlora` (a pydantic
`model_validator(mode="after")`, so the run stops while the config is read), every release from v0.1.0 to
main (2026-07). With `merge_lora` the same validator checks other things ("Can't merge qlora if loaded in
4bit"), so merging configs are left alone; `load_in_8bit` is TL631's, `gptq` is refused on its own ("Can't load
qlora if gptq").

**Example**: `adapter: qlora` → add `load_in_4bit: true`.

**Fix** (safe: it is what qlora means): set `load_in_4bit: true`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, insert_entry, replace_value
from trainlint.rules._frameworks import flag
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL630", "axolotl-qlora-without-4bit", Severity.ERROR,
            "adapter: qlora needs load_in_4bit: true", flavors=("axolotl",),
            framework="axolotl", versions="",
            evidence="axolotl/utils/schemas/peft.py: LoraConfig.validate_qlora",
            raises="Require cfg.load_in_4bit to be True for qlora")


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    adapter = root.entry("adapter")
    if adapter is None or adapter.value.kind != "scalar" or str(adapter.value.value).lower() != "qlora":
        return
    if flag(root.get("merge_lora")) or flag(root.get("load_in_8bit")) or root.get("gptq") is not None:
        return  # merging, or another error (TL631)
    four = root.entry("load_in_4bit")
    if four is not None and flag(four.value) is True:
        return
    edit = (replace_value(doc, four.value, True) if four is not None
            else insert_entry(doc, root, "load_in_4bit", "true", after=adapter))
    yield RULE.at(doc, four.key_span if four is not None else adapter.key_span,
                  "`adapter: qlora` without `load_in_4bit: true`: Axolotl stops",
                  [fix("set `load_in_4bit: true`", edit, safe=True)],
                  detail="Axolotl stops with \"Require cfg.load_in_4bit to be True for qlora\". Set `load_in_4bit: "
                         "true` (QLoRA trains LoRA on a 4-bit base).")
