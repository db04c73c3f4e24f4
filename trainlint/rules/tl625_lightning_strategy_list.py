"""TL625 lightning-strategy-list: Lightning `strategy` (or `accelerator`) written as a list.

**What**: a Lightning Trainer `strategy:` or `accelerator:` given as a YAML list (`strategy: [ddp]`,
`strategy: [deepspeed_stage_2, fsdp]`) in a LightningCLI config or a Hydra Trainer config.

**Why**: `Trainer(strategy: Union[str, Strategy] = "auto", accelerator: Union[str, Accelerator] = "auto")` takes
one name or one object. LightningCLI validates the file with jsonargparse, which stops before training with
'Parser key "trainer.strategy": Does not validate against any of the Union subtypes' (jsonargparse
`_typehints.py: raise_union_unexpected_value`); a Hydra config that instantiates the Trainer directly reaches
`_AcceleratorConnector._check_config_and_set_final_flags`: "You selected an invalid strategy name: ...". Lists
are for `devices` (`devices: [0, 1]`), not for the strategy.

**Evidence**: `jsonargparse/_typehints.py: raise_union_unexpected_value` (first message above) for LightningCLI;
`lightning/pytorch/trainer/connectors/accelerator_connector.py: _AcceleratorConnector._check_config_and_set_final_flags`
for a Trainer built directly. Lightning 2.0 - 2.6, jsonargparse 4.x.

**Example**: `strategy: [ddp]` → `strategy: ddp`.

**Fix** (safe): a one-item list becomes its item.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._frameworks import dotted, lightning_trainer
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL625", "lightning-strategy-list", Severity.ERROR,
            "Lightning strategy/accelerator written as a list", flavors=("lightning",),
            framework="lightning", evidence="jsonargparse/_typehints.py: raise_union_unexpected_value",
            raises='Parser key "trainer.strategy": Does not validate against any of the Union subtypes')


def check(ctx: LintContext):
    doc = ctx.document
    base = lightning_trainer(doc)
    if base is None:
        return
    for key in ("strategy", "accelerator"):
        node = doc.find(base + (key,))
        if node is None or node.kind != "sequence":
            continue
        items = [i for i in node.items]
        where = dotted(base + (key,)) if base else key
        parser = (f"LightningCLI's jsonargparse stops with 'Parser key \"{where}\": Does not validate against any "
                  "of the Union subtypes'" if base else
                  "the Trainer stops with \"You selected an invalid strategy name\"")
        fixes = []
        if len(items) == 1 and items[0].kind == "scalar" and isinstance(items[0].value, str):
            fixes = [fix(f"write `{key}: {items[0].value}`", replace_value(doc, node, items[0].value))]
        short = "LightningCLI stops" if base else "the Trainer stops"
        yield RULE.at(doc, node, f"`{key}` is a list, but the Trainer takes one {key}: {short}", fixes,
                      detail=f"The Trainer takes one {key} (a name or an object): {parser}. Write a single {key}"
                             + (" (devices go in `devices`)." if key == "strategy" else "."))
