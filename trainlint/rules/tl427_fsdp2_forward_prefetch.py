"""TL427 fsdp2-forward-prefetch: `fsdp_forward_prefetch` with FSDP2.

**What**: an Accelerate config with `fsdp_config.fsdp_version: 2` and `fsdp_forward_prefetch: true`.

**Why**: FSDP2 (`fully_shard`) has no forward-prefetch option; Accelerate's
FullyShardedDataParallelPlugin refuses it (`utils/dataclasses.py`): "forward_prefetch is not yet
implemented in FSDP2, set to None or use `fsdp_version=1`". The launch stops.

**Example**: `fsdp_version: 2` with `fsdp_forward_prefetch: true` → remove the prefetch key.

**Fix** (unsafe): remove `fsdp_forward_prefetch` (or go back to `fsdp_version: 1`).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.edits import delete_entry, fix
from trainlint.rules._frameworks import flag, number
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL427", "fsdp2-forward-prefetch", Severity.ERROR,
            "forward_prefetch is not implemented in FSDP2", flavors=("accelerate",))


def check(ctx: LintContext):
    doc = ctx.document
    section = doc.find(("fsdp_config",))
    if section is None or section.kind != "mapping":
        return
    version = number(section.get("fsdp_version")) or number(section.get("version"))
    if version != 2:
        return
    for key in ("fsdp_forward_prefetch", "forward_prefetch"):
        entry = section.entry(key)
        if entry is not None and flag(entry.value):
            yield RULE.at(doc, entry.key_span,
                          f"`{key}: {entry.value.raw}` with `fsdp_version: 2`: Accelerate stops with \"forward_prefetch "
                          f"is not yet implemented in FSDP2, set to None or use `fsdp_version=1`\". Remove it, or use "
                          f"FSDP1.", [fix(f"remove `{key}`", delete_entry(doc, section, entry), safe=False)])
