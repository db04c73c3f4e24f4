"""TL639 axolotl-muon-sharding: Axolotl's Muon optimizer under DeepSpeed or FSDP1.

**What**: an Axolotl config with `optimizer: muon` and a `deepspeed` config, or with FSDP (`fsdp` /
`fsdp_config`) at a version other than 2 (an `fsdp_config` without a version is FSDP1).

**Why**: Muon orthogonalizes whole weight matrices, which ZeRO's flat partitions and FSDP1's flattened
parameters do not provide; Axolotl's validation stops with "Muon optimizer is currently incompatible
with DeepSpeed" or "Muon optimizer is only compatible with FSDP2. Set fsdp_version: 2 to use Muon with
FSDP.".

**Evidence**: axolotl `src/axolotl/utils/schemas/validation.py`, `check_muon_deepspeed_fsdp`
(`model_validator(mode="before")`). v0.8.0 (2025-04) to v0.13.0 refused Muon with any FSDP, FSDP2 included:
"Muon optimizer is currently incompatible with DeepSpeed and FSDP"; from v0.13.1 (commit bbd3486, 2025-12-19)
FSDP2 is allowed and the messages are the two above. The version is read from the top-level `fsdp_version`,
else `fsdp_config.fsdp_version`, else 1.

**Example**: `optimizer: muon` + `deepspeed: deepspeed_configs/zero2.json`.

When the file's Axolotl version is known to be older than 0.13.1 (pins, installed, or
`# trainlint: axolotl=0.12.0`), FSDP2 is reported too, with the old message.

**Fix**: none automatic: use FSDP2 (`fsdp_version: 2`) or DDP with Muon, or another optimizer.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules._frameworks import is_set, number
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL639", "axolotl-muon-sharding", Severity.ERROR,
            "The Muon optimizer needs DDP or FSDP2 in Axolotl (not DeepSpeed, not FSDP1)", flavors=("axolotl",),
            framework="axolotl", versions=">=0.8.0",
            evidence="axolotl/utils/schemas/validation.py: check_muon_deepspeed_fsdp",
            raises="Muon optimizer is currently incompatible with DeepSpeed")


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    opt = root.get("optimizer")
    if opt is None or opt.kind != "scalar" or opt.value != "muon":
        return
    # axolotl 0.8.0 - 0.13.0 refused Muon with DeepSpeed and with any FSDP, FSDP2 included (one message)
    old = ctx.version_in("axolotl", "<0.13.1") is True
    said_old = "Muon optimizer is currently incompatible with DeepSpeed and FSDP"
    if is_set(root.get("deepspeed")):
        said = said_old if old else "Muon optimizer is currently incompatible with DeepSpeed"
        yield RULE.at(doc, opt,
                      "`optimizer: muon` with `deepspeed`: Axolotl stops",
                      detail=f"Axolotl stops with \"{said}\". Use {'plain DDP' if old else 'FSDP2 (or plain DDP)'} "
                             "with Muon, or another optimizer under DeepSpeed.")
        return
    config = root.get("fsdp_config")
    if not is_set(root.get("fsdp")) and not is_set(config):
        return
    version = number(root.get("fsdp_version"))
    if version is None and config is not None and config.kind == "mapping":
        version = number(config.get("fsdp_version"))
    if old:
        found = ctx.version_of("axolotl")
        release = found.version if found is not None else "< 0.13.1"  # `old`: the version is known
        yield RULE.at(doc, opt,
                      f"`optimizer: muon` with FSDP{version or 1}: Axolotl {release} stops",
                      detail=f"Axolotl {release} stops with \"{said_old}\" (FSDP2 support "
                             "came in 0.13.1). Use plain DDP with Muon, or upgrade Axolotl and use FSDP2.")
    elif (version or 1) != 2:
        yield RULE.at(doc, opt,
                      f"`optimizer: muon` with FSDP{version or 1}: Axolotl stops; Muon needs FSDP2",
                      detail="Axolotl stops with \"Muon optimizer is only compatible with FSDP2. Set fsdp_version: 2 "
                             "to use Muon with FSDP.\"")
