"""TL602 hf-optim-ignored-by-deepspeed: HF's `optim` next to a DeepSpeed `optimizer` section.

**What**: `optim` (Axolotl `optimizer`) set in the training config while the linked DeepSpeed config
defines an `optimizer`.

**Why**: HF Trainer then builds the DeepSpeed optimizer and passes a `DummyOptim`
(`transformers/integrations/deepspeed.py::deepspeed_optim_sched`); the `optim` choice is not used.
Only its learning rate and Adam arguments matter, through the `"auto"` fill (TL600).

**Example**: `optim: adamw_bnb_8bit` + `"optimizer": {"type": "AdamW", ...}`.

**Fix**: none; remove one of the two.

**Evidence**: `transformers/integrations/deepspeed.py` `deepspeed_optim_sched` (transformers 5.0 to 5.24):
`"optimizer" in config` → `DummyOptim`, HF's optimizer is never built. Silent; only `adafactor=True` stops:
"--adafactor was passed, but also found `optimizer` configured in the DeepSpeed config. Only one optimizer can be
configured."
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.flavors.base import as_str
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule
from trainlint.rules.tl601_hf_optimizer_replaced_by_offload import optim_node

RULE = Rule("TL602", "hf-optim-ignored-by-deepspeed", Severity.INFO,
            "HF optim is ignored when the DeepSpeed config defines an optimizer", flavors=("huggingface", "axolotl"),
            framework="transformers", versions="",
            evidence="transformers/integrations/deepspeed.py: deepspeed_optim_sched",
            raises="")


def check(ctx: LintContext):
    node = optim_node(ctx)
    if node is None:
        return
    for cfg in ds.ds_configs(ctx):
        section = cfg.find("optimizer")
        if section is None or section.kind != "mapping":
            continue
        type_node = section.get("type")
        kind = as_str(type_node.value) if type_node is not None and type_node.kind == "scalar" else None
        yield RULE.at(ctx.document, node,
                      f"{node.key_path[-1]}: {node.value} is not used: HF Trainer builds the DeepSpeed config's "
                      f"optimizer{f' ({kind})' if kind else ''} instead",
                      detail=f"{cfg.name} defines its own optimizer{f' ({kind})' if kind else ''}, which HF Trainer "
                             "builds instead. Remove one of the two.")
        return
