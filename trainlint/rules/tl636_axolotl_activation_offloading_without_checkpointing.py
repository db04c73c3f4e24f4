"""TL636 axolotl-activation-offloading-without-checkpointing: Axolotl `activation_offloading` without checkpointing.

**What**: an Axolotl config with `activation_offloading` on (`true`, `legacy`, `disk`) while
`gradient_checkpointing` is missing or false.

**Why**: activation offloading moves the checkpointed layer inputs to the CPU; without checkpointing
there is nothing to offload. Axolotl's validation stops with "activation_offloading requires
gradient_checkpointing".

**Evidence**: axolotl `src/axolotl/utils/schemas/validation.py`, `check_activation_offloading_wo_gc`
(`model_validator(mode="after")`), since v0.12.0 (2025-07) to main (2026-07). A validator before it turns
`gradient_checkpointing: offload` / `offload_disk` into checkpointing plus offloading, so those values pass.

**Example**: `activation_offloading: true` → add `gradient_checkpointing: true`.

**Fix** (safe: offloading implies it): set `gradient_checkpointing: true`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, insert_entry, replace_value
from trainlint.rules._frameworks import flag, is_set
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL636", "axolotl-activation-offloading-without-checkpointing", Severity.ERROR,
            "activation_offloading requires gradient_checkpointing", flavors=("axolotl",),
            framework="axolotl", versions=">=0.12.0",
            evidence="axolotl/utils/schemas/validation.py: check_activation_offloading_wo_gc",
            raises="activation_offloading requires gradient_checkpointing")


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    offload = root.entry("activation_offloading")
    if offload is None or not is_set(offload.value) or flag(offload.value) is False:
        return
    ckpt = root.entry("gradient_checkpointing")
    if ckpt is not None and is_set(ckpt.value) and flag(ckpt.value) is not False:
        return
    edit = (replace_value(doc, ckpt.value, True) if ckpt is not None
            else insert_entry(doc, root, "gradient_checkpointing", "true", after=offload))
    yield RULE.at(doc, offload.key_span,
                  "`activation_offloading` without `gradient_checkpointing`: Axolotl stops",
                  [fix("set `gradient_checkpointing: true`", edit, safe=True)],
                  detail="Axolotl stops with \"activation_offloading requires gradient_checkpointing\" (it offloads "
                         "the checkpointed activations). Turn checkpointing on.")
