"""TL635 axolotl-batch-size-and-accumulation: Axolotl `batch_size` together with `gradient_accumulation_steps`.

**What**: an Axolotl config that sets both `batch_size` (the discouraged total-batch key) and
`gradient_accumulation_steps`.

**Why**: Axolotl derives one from the other (`gradient_accumulation_steps = batch_size //
micro_batch_size`) and refuses both: "please set only one of gradient_accumulation_steps or
batch_size".

**Evidence**: axolotl `src/axolotl/utils/schemas/validation.py`, `check_gas_bsz` (`model_validator(mode="before")`,
both truthy), since v0.2.1 (2023-05) to main (2026-07).

**Example**: `batch_size: 32`, `micro_batch_size: 4`, `gradient_accumulation_steps: 8` → drop
`batch_size`.

**Fix** (unsafe when the two disagree): remove `batch_size`; safe when `batch_size` equals
micro_batch_size x gradient_accumulation_steps.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix
from trainlint.rules._frameworks import number
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL635", "axolotl-batch-size-and-accumulation", Severity.ERROR,
            "batch_size and gradient_accumulation_steps both set", flavors=("axolotl",),
            framework="axolotl", versions="",
            evidence="axolotl/utils/schemas/validation.py: check_gas_bsz",
            raises="please set only one of gradient_accumulation_steps or batch_size")


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    batch, gas = root.entry("batch_size"), root.entry("gradient_accumulation_steps")
    batch_size = number(batch.value) if batch is not None else None
    steps = number(gas.value) if gas is not None else None
    if batch is None or gas is None or not batch_size or not steps:
        return
    micro = number(root.get("micro_batch_size")) or 1
    same = batch_size == micro * steps
    yield RULE.at(doc, batch.key_span,
                  f"`batch_size: {batch.value.raw}` and `gradient_accumulation_steps: {gas.value.raw}` are both set: "
                  "Axolotl stops",
                  [fix("remove `batch_size`", delete_entry(doc, root, batch), safe=same)],
                  detail="Axolotl stops with \"please set only one of gradient_accumulation_steps or batch_size\". "
                         "Keep `gradient_accumulation_steps` (total batch = micro_batch_size x accumulation x GPUs).")
