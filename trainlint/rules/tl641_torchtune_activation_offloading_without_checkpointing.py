"""TL641 torchtune-activation-offloading-without-checkpointing: torchtune activation offloading without checkpointing.

**What**: a torchtune recipe config with `enable_activation_offloading: true` while
`enable_activation_checkpointing` is false or missing.

**Why**: activation offloading moves the checkpointed layer inputs to the CPU, so there must be
checkpointing; the recipes refuse it at setup: "enable_activation_offloading should only be True when
enable_activation_checkpointing is True" (a RuntimeError).

**Evidence**: torchtune `recipes/full_finetune_{single_device,distributed}.py`,
`lora_finetune_{single_device,distributed}.py`, `lora_dpo_*.py`, `full_dpo_distributed.py`, `qat_*.py`
(`__init__`, after reading `enable_activation_checkpointing`, default False), since v0.4.0 (2024-10) to main
(2026-04). The same block refuses offloading on a device other than CUDA or XPU.

**Example**: `enable_activation_offloading: true`, `enable_activation_checkpointing: false`.

**Fix** (safe: offloading implies it): `enable_activation_checkpointing: true`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, insert_entry, replace_value
from trainlint.rules._frameworks import flag
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL641", "torchtune-activation-offloading-without-checkpointing", Severity.ERROR,
            "enable_activation_offloading needs enable_activation_checkpointing", flavors=("torchtune",),
            framework="torchtune", versions="",
            evidence="recipes/full_finetune_distributed.py: FullFinetuneRecipeDistributed.__init__",
            raises="enable_activation_offloading should only be True when enable_activation_checkpointing is True")


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    offload = root.entry("enable_activation_offloading")
    if offload is None or flag(offload.value) is not True:
        return
    ckpt = root.entry("enable_activation_checkpointing")
    if ckpt is not None and flag(ckpt.value) is True:
        return
    edit = (replace_value(doc, ckpt.value, True) if ckpt is not None
            else insert_entry(doc, root, "enable_activation_checkpointing", "true", after=offload))
    yield RULE.at(doc, offload.key_span,
                  "`enable_activation_offloading: true` without activation checkpointing: the recipe stops",
                  [fix("set `enable_activation_checkpointing: true`", edit, safe=True)],
                  detail="The recipe stops with \"enable_activation_offloading should only be True when "
                         "enable_activation_checkpointing is True\". Turn checkpointing on.")
