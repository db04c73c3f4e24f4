"""TL639 axolotl-muon-with-deepspeed: Axolotl's Muon optimizer under DeepSpeed.

**What**: an Axolotl config with `optimizer: muon` and a `deepspeed` config.

**Why**: Muon updates whole weight matrices (orthogonalized momentum), which ZeRO's flat, partitioned
optimizer states do not provide; Axolotl's validation stops with "Muon optimizer is currently
incompatible with DeepSpeed" (`utils/schemas/validation.py`).

**Example**: `optimizer: muon` + `deepspeed: deepspeed_configs/zero2.json`.

**Fix**: none automatic: use FSDP or DDP with Muon, or another optimizer with DeepSpeed.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules._frameworks import is_set
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL639", "axolotl-muon-with-deepspeed", Severity.ERROR,
            "The Muon optimizer does not work with DeepSpeed in Axolotl", flavors=("axolotl",))


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping" or not is_set(root.get("deepspeed")):
        return
    opt = root.get("optimizer")
    if opt is None or opt.kind != "scalar" or str(opt.value).lower() != "muon":
        return
    yield RULE.at(doc, opt,
                  "`optimizer: muon` with `deepspeed`: Axolotl stops with \"Muon optimizer is currently incompatible with "
                  "DeepSpeed\". Use FSDP (or plain DDP) with Muon, or another optimizer under DeepSpeed.")
