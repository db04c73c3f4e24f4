"""TL604 lightning-deepspeed-gradient-accumulation: `gradient_accumulation_steps` in a DeepSpeed config under Lightning.

**What**: a DeepSpeed config passed to Lightning's `DeepSpeedStrategy(config=...)` that sets
`gradient_accumulation_steps`.

**Why**: `lightning/pytorch/strategies/deepspeed.py::_format_batch_size_and_grad_accum_config`
stops: "Do not set `gradient_accumulation_steps` in the DeepSpeed config as this will be set with the
`accumulate_grad_batches` argument passed via the Lightning Trainer."

**Example**: `"gradient_accumulation_steps": 4` with `strategy: {class_path: ...DeepSpeedStrategy,
init_args: {config: ds.json}}`.

**Fix** (unsafe): remove the key and set `trainer.accumulate_grad_batches` to the value instead.

**Evidence**: `lightning/pytorch/strategies/deepspeed.py` `DeepSpeedStrategy._format_batch_size_and_grad_accum_config`
(Lightning 2.4.0 to 2.6.6): "Do not set `gradient_accumulation_steps` in the DeepSpeed config as this will be set
with the `accumulate_grad_batches` argument passed via the Lightning Trainer." (MisconfigurationException, a
stop).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL604", "lightning-deepspeed-gradient-accumulation", Severity.ERROR,
            "gradient_accumulation_steps in a DeepSpeed config used by Lightning", flavors=("lightning",),
            framework="lightning", versions="",
            evidence="lightning/pytorch/strategies/deepspeed.py: DeepSpeedStrategy._format_batch_size_and_grad_accum_config",
            raises="Do not set `gradient_accumulation_steps` in the DeepSpeed config as this will be set with the `accumulate_grad_batches` argument passed via the Lightning Trainer.")


def check(ctx: LintContext):
    for cfg in ds.ds_configs(ctx):
        root = cfg.root
        entry = root.entry("gradient_accumulation_steps") if root is not None else None
        if cfg.host != "lightning" or root is None or entry is None:
            continue
        yield RULE.at(cfg.doc, entry.key_span,
                      "gradient_accumulation_steps in a DeepSpeed config used by Lightning: DeepSpeedStrategy stops",
                      [fix("remove gradient_accumulation_steps", delete_entry(cfg.doc, root, entry), safe=False)],
                      detail="DeepSpeedStrategy stops with \"Do not set `gradient_accumulation_steps` in the DeepSpeed "
                             "config as this will be set with the `accumulate_grad_batches` argument passed via the "
                             "Lightning Trainer.\" Remove it and set trainer.accumulate_grad_batches.")
