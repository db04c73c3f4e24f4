"""TL401 deepspeed-offload-optimizer-without-zero: optimizer offload with ZeRO off does nothing.

**What**: `zero_optimization.offload_optimizer` with `device` `cpu` or `nvme` while `stage` is 0
(or missing).

**Why**: optimizer offload is a feature of the ZeRO optimizers (`runtime/zero/stage_1_and_2.py`,
`stage3.py`); with stage 0 `deepspeed/runtime/engine.py` builds the plain (fp16/bf16) optimizer
wrapper and never reads `offload_optimizer`, so the fp32 optimizer states stay on the GPU without
a message.

**Example**: `"zero_optimization": {"offload_optimizer": {"device": "cpu"}}` (no `stage`).

**Fix** (unsafe): set `"stage"` to 1 or higher, or remove `offload_optimizer`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL401", "deepspeed-offload-optimizer-without-zero", Severity.WARNING,
            "offload_optimizer with ZeRO stage 0 is ignored", flavors=ds.ALL_FLAVORS)


def check(ctx: LintContext):
    for cfg in ds.ds_configs(ctx):
        if ds.stage(cfg) != 0:
            continue
        device, section = ds.offload_device(cfg, "offload_optimizer")
        if device not in ("cpu", "nvme"):
            continue
        zero = cfg.find("zero_optimization")
        entry = zero.entry("offload_optimizer")
        stage_node = zero.get("stage")
        fixes = []
        if stage_node is not None and stage_node.kind == "scalar":
            fixes.append(fix("set ZeRO stage 2", ds.replace_text(cfg.doc, stage_node, 2), safe=False))
        fixes.append(fix("remove offload_optimizer (ignored without ZeRO)", delete_entry(cfg.doc, zero, entry), safe=False))
        yield RULE.at(cfg.doc, entry.key_span,
                      f"offload_optimizer (device {device}) has no effect with ZeRO stage 0: only the ZeRO optimizers "
                      "offload, so the fp32 optimizer states stay on the GPU. Set \"stage\" to 1, 2 or 3, or remove it.",
                      fixes)
