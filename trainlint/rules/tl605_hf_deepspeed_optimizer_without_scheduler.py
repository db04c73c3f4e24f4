"""TL605 hf-deepspeed-optimizer-without-scheduler: a DeepSpeed `optimizer` without a `scheduler` under HF Trainer 4.30 - 4.32.

**What**: a DeepSpeed config that an HF Trainer reads (linked from a TrainingArguments / Axolotl file, or passed
as `--deepspeed X` to an HF Trainer script) with an `optimizer` section and no `scheduler` section, on a
transformers release from 4.30.0 to 4.32.1 known from a pin or setting.

**Why**: those releases build a `DummyOptim` for the DeepSpeed optimizer and cannot put HF's scheduler on it:
`deepspeed_optim_sched` stops with "Found `optimizer` configured in the DeepSpeed config, but no `scheduler`.
Please configure a scheduler in the DeepSpeed config." (transformers#24359, zjunlp/KnowLM#30,
DeepSpeedExamples#600). 4.29 and older passed a scheduler factory to DeepSpeed, and 4.33.0 and later hand
DeepSpeed a `DummyScheduler` with HF's scheduler as its callable (transformers#25863), so the same file works
there; with the release unknown or assumed nothing is reported.

**Evidence**: `transformers/deepspeed.py: deepspeed_optim_sched` (the `isinstance(optimizer, DummyOptim)` branch
raises ValueError), read in the wheels of 4.28.1, 4.29.2, 4.30.0, 4.30.2, 4.31.0, 4.32.1 (raise), 4.33.0,
4.33.3 and 4.34.0 (`transformers/integrations/deepspeed.py`, no raise). First message: "Found `optimizer`
configured in the DeepSpeed config, but no `scheduler`. Please configure a scheduler in the DeepSpeed config."

**Example**: `"optimizer": {"type": "AdamW", "params": {"lr": "auto"}}` and no `scheduler`, on
transformers==4.31.0 → add `"scheduler": {"type": "WarmupDecayLR", "params": {"warmup_min_lr": "auto",
"warmup_max_lr": "auto", "warmup_num_steps": "auto", "total_num_steps": "auto"}}` (HF's default linear schedule),
remove the `optimizer` section (HF's AdamW), or upgrade transformers to 4.33 or later.

**Fix**: none (which of the three is meant is the author's choice).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL605", "hf-deepspeed-optimizer-without-scheduler", Severity.ERROR,
            "A DeepSpeed optimizer without a scheduler under HF Trainer 4.30 - 4.32",
            flavors=("deepspeed", "huggingface", "axolotl"), framework="transformers", versions="",
            evidence="transformers/deepspeed.py: deepspeed_optim_sched",
            raises="Found `optimizer` configured in the DeepSpeed config, but no `scheduler`. Please configure a "
                   "scheduler in the DeepSpeed config.")

RANGE = ">=4.30.0,<4.33.0"


def check(ctx: LintContext):
    if ctx.version_in("transformers", RANGE) is not True:
        return  # other releases run this combination: a claim only for a release known to be in the range
    for cfg in ds.ds_configs(ctx):
        if cfg.host not in ("huggingface", "axolotl") or cfg.root is None:
            continue
        entry = cfg.root.entry("optimizer")
        if entry is None or entry.value.kind != "mapping" or cfg.root.entry("scheduler") is not None:
            continue
        version = ctx.version_of("transformers")
        release = version.version if version is not None else "4.30 - 4.32"
        yield RULE.at(cfg.doc, entry.key_span,
                      f"{cfg.short_name} defines `optimizer` but no `scheduler`: HF Trainer on transformers {release} "
                      "stops",
                      detail=f"{cfg.name} defines `optimizer` but no `scheduler`: HF Trainer stops with \"Found "
                             "`optimizer` configured in the DeepSpeed config, but no `scheduler`. Please configure a "
                             "scheduler in the DeepSpeed config.\" Add a `scheduler` section (WarmupDecayLR with "
                             "\"auto\" params is HF's default linear schedule), drop the `optimizer` section, or use "
                             "transformers 4.33 or later.")
