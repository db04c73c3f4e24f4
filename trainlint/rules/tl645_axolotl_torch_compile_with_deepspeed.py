"""TL645 axolotl-torch-compile-with-deepspeed: Axolotl `torch_compile` beside `deepspeed` on Axolotl 0.5 - 0.12.

**What**: an Axolotl config that sets `torch_compile` (true or "auto") and `deepspeed`, on an Axolotl release
from 0.5.0 to 0.12.x known from a pin or setting.

**Why**: those releases refuse the pair before training: `check_torch_compile_deepspeed` stops with
"torch_compile should be set within your deepspeed config file" (axolotl#2544, on 0.8/0.9). Axolotl 0.13.0
removed the check (#3195), so newer releases run the same file and nothing is reported with the release
assumed.

**Evidence**: axolotl `src/axolotl/utils/schemas/validation.py` (`utils/schemas/config.py` in 0.8 - 0.10,
`utils/config/models/input/v0_4_1/__init__.py` in 0.5 - 0.7): `check_torch_compile_deepspeed`
(`model_validator(mode="before")`, both truthy), present in v0.5.0 - v0.12.2, gone from v0.13.0. First
message: "torch_compile should be set within your deepspeed config file".

**Example**: `torch_compile: true` + `deepspeed: deepspeed_configs/zero2.json` on axolotl==0.9.2 → remove
`torch_compile` (or upgrade Axolotl to 0.13 or later).

**Fix** (unsafe: the run then trains without torch.compile): remove `torch_compile`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix
from trainlint.rules._frameworks import flag, is_set
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL645", "axolotl-torch-compile-with-deepspeed", Severity.ERROR,
            "torch_compile together with deepspeed on Axolotl 0.5 - 0.12", flavors=("axolotl",),
            framework="axolotl", versions="",
            evidence="axolotl/utils/schemas/validation.py: check_torch_compile_deepspeed",
            raises="torch_compile should be set within your deepspeed config file")

RANGE = ">=0.5.0,<0.13.0"


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    compile_entry = root.entry("torch_compile")
    if compile_entry is None or not is_set(root.get("deepspeed")):
        return
    value = compile_entry.value
    on = value.kind == "scalar" and (flag(value) is True or value.value == "auto")
    if not on or ctx.version_in("axolotl", RANGE) is not True:
        return  # Axolotl 0.13 and later run the pair; a claim only for a release known to be in the range
    version = ctx.version_of("axolotl")
    release = version.version if version is not None else "0.5 - 0.12"
    yield RULE.at(doc, compile_entry.key_span,
                  f"`torch_compile: {value.raw}` with `deepspeed`: Axolotl {release} stops",
                  [fix("remove `torch_compile`", delete_entry(doc, root, compile_entry), safe=False)],
                  detail=f"Axolotl {release} stops with \"torch_compile should be set within your deepspeed config "
                         "file\" (the check is in Axolotl 0.5 - 0.12; 0.13 removed it). Remove `torch_compile`, or "
                         "use Axolotl 0.13 or later.")
