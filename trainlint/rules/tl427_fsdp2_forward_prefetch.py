"""TL427 fsdp2-forward-prefetch: `fsdp_forward_prefetch` in an FSDP2 Accelerate config.

**What**: an Accelerate config with `fsdp_config.fsdp_version: 2` and `fsdp_forward_prefetch: true`.

**Why**: FSDP2 (`fully_shard`) has no forward-prefetch option. Accelerate's
FullyShardedDataParallelPlugin reads `FSDP_FORWARD_PREFETCH` (what `accelerate launch` makes of this
key) only for FSDP1 (`utils/dataclasses.py`: `if self.forward_prefetch is None and self.fsdp_version
== 1`), so under FSDP2 the setting is silently dropped; passed in code it is refused: "forward_prefetch
is not yet implemented in FSDP2, set to None or use `fsdp_version=1`". `accelerate to-fsdp2` lists it
as NOT_YET_IMPLEMENTED. The run gets no forward prefetching, whatever the file says.

**Evidence**: `accelerate/utils/dataclasses.py: FullyShardedDataParallelPlugin.__post_init__` (silent from
the config file; stops when passed in code); verified against accelerate 1.13 - 1.15. First message:
"forward_prefetch is not yet implemented in FSDP2, set to None or use `fsdp_version=1`".

**Example**: `fsdp_version: 2` with `fsdp_forward_prefetch: true` → remove the prefetch key.

**Fix** (safe: it has no effect under FSDP2): remove `fsdp_forward_prefetch`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix
from trainlint.rules._frameworks import flag, number
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL427", "fsdp2-forward-prefetch", Severity.WARNING,
            "forward_prefetch does nothing under FSDP2", flavors=("accelerate",),
            framework="accelerate", evidence="accelerate/utils/dataclasses.py: FullyShardedDataParallelPlugin.__post_init__",
            raises="forward_prefetch is not yet implemented in FSDP2, set to None or use `fsdp_version=1`")


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
                          f"`{key}: {entry.value.raw}` with `fsdp_version: 2` is silently ignored: FSDP2 has no "
                          "forward prefetch",
                          [fix(f"remove `{key}`", delete_entry(doc, section, entry), safe=True)],
                          detail="FSDP2 has no forward prefetch, and Accelerate reads this setting only for FSDP1, so "
                                 "it is silently ignored (passed in code it raises \"forward_prefetch is not yet "
                                 "implemented in FSDP2\"). Remove it, or use FSDP1 if you need it.")
