"""TL431 zero3-init-flag-below-stage3: Accelerate `zero3_init_flag: true` without ZeRO stage 3.

**What**: an Accelerate config with `deepspeed_config.zero3_init_flag: true` and a `zero_stage`
other than 3 (the plugin's default stage is 2).

**Why**: `zero.Init` (building the model already partitioned) exists only for ZeRO-3. Accelerate turns
the flag off with a warning: "DeepSpeed Zero3 Init flag is only applicable for ZeRO Stage 3. Setting
it to False." (`utils/dataclasses.py`, DeepSpeedPlugin). The flag does nothing; often the stage is
what was meant to be 3.

**Example**: `zero_stage: 2`, `zero3_init_flag: true`.

**Fix** (safe: Accelerate ignores the flag anyway): `zero3_init_flag: false`.

**Evidence**: `accelerate/utils/dataclasses.py` `DeepSpeedPlugin.__post_init__` (Accelerate 1.12 to 1.15):
`warnings.warn("DeepSpeed Zero3 Init flag is only applicable for ZeRO Stage 3. Setting it to False.")`, a
warning line; the default stage is `ACCELERATE_DEEPSPEED_ZERO_STAGE` or 2.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._frameworks import flag, number
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL431", "zero3-init-flag-below-stage3", Severity.INFO,
            "zero3_init_flag has no effect below ZeRO stage 3", flavors=("accelerate",),
            framework="accelerate", versions="",
            evidence="accelerate/utils/dataclasses.py: DeepSpeedPlugin.__post_init__",
            raises="DeepSpeed Zero3 Init flag is only applicable for ZeRO Stage 3. Setting it to False.")


def check(ctx: LintContext):
    doc = ctx.document
    section = doc.find(("deepspeed_config",))
    if section is None or section.kind != "mapping" or section.get("deepspeed_config_file") is not None:
        return
    entry = section.entry("zero3_init_flag")
    if entry is None or flag(entry.value) is not True:
        return
    stage_node = section.get("zero_stage")
    stage = number(stage_node) if stage_node is not None else 2
    if stage is None or stage == 3:
        return
    shown = f"`zero_stage: {stage_node.raw}`" if stage_node is not None else "the default ZeRO stage 2"
    yield RULE.at(doc, entry.key_span,
                  f"`zero3_init_flag: true` with {shown}: Accelerate ignores the flag",
                  [fix("set `zero3_init_flag: false`", replace_value(doc, entry.value, False), safe=True)],
                  detail="Accelerate warns \"DeepSpeed Zero3 Init flag is only applicable for ZeRO Stage 3. Setting it "
                         "to False.\" and ignores it. Set `zero_stage: 3` if partitioned loading was meant, else turn "
                         "the flag off.")
