"""TL603 deepspeed-zero-section-missing: a DeepSpeed config without `zero_optimization` used through HF or Accelerate.

**What**: a DeepSpeed config linked from HF Trainer, Axolotl or Accelerate (or written for them:
it holds `"auto"` values) that has no `zero_optimization` section.

**Why**: Accelerate's `DeepSpeedPlugin` (`utils/dataclasses.py`), which HF Trainer runs too, stops:
"Please specify the ZeRO optimization config in the DeepSpeed config." Raw DeepSpeed and
Lightning accept such a file (ZeRO off), e.g. DeepSpeedExamples' pipeline-parallel config.

**Example**: `{"train_micro_batch_size_per_gpu": "auto", "fp16": {"enabled": "auto"}}`.

A file that a launch passes to an HF Trainer script as `--deepspeed X` is read by HF Trainer (an error). Under
`deepspeed --autotuning run|tune` it is not reported: the autotuner writes `zero_optimization` (the tuning
space's stage) into every experiment's config before HF or Accelerate read it (`deepspeed/autotuning/autotuner.py:
Autotuner._generate_experiments`, `run_tuning_micro_batch_sizes`).

**Fix** (unsafe): add `"zero_optimization": {"stage": 0}` (ZeRO off, as the file meant).

**Evidence**: `accelerate/utils/dataclasses.py` `DeepSpeedPlugin.__post_init__` (Accelerate 1.12 to 1.15), built
by HF's `TrainingArguments.__post_init__` (transformers 5.0 to 5.24) and by Accelerate: "Please specify the ZeRO
optimization config in the DeepSpeed config." (ValueError, a stop). A file on its own is a warning: that it is
meant for HF or Accelerate is an assumption (its "auto" values).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, insert_entry
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL603", "deepspeed-zero-section-missing", Severity.ERROR,
            "A DeepSpeed config without zero_optimization cannot be used through HF Trainer or Accelerate",
            flavors=("deepspeed", "huggingface", "axolotl", "accelerate"),
            framework="accelerate", versions="",
            evidence="accelerate/utils/dataclasses.py: DeepSpeedPlugin.__post_init__",
            raises="Please specify the ZeRO optimization config in the DeepSpeed config.")


def check(ctx: LintContext):
    for cfg in ds.ds_configs(ctx):
        root = cfg.root
        if root is None or root.get("zero_optimization") is not None or cfg.host == "lightning":
            continue
        if cfg.autotuner_writes(("zero_optimization",)):
            continue  # `deepspeed --autotuning`: each experiment's config gets its tuning space's zero_optimization
        if cfg.host is None and not ds.looks_integrated(cfg):
            continue
        value = '{"stage": 0}' if cfg.doc.kind == "json" else "{stage: 0}"
        fixes = [fix("add zero_optimization with stage 0", insert_entry(cfg.doc, root, "zero_optimization", value),
                     safe=False)]
        if cfg.host is None:
            first = root.entries[0].key_span if root.entries else None
            yield RULE.at(cfg.doc, first,
                          "no zero_optimization section in a config with \"auto\" values: under HF Trainer or "
                          "Accelerate, Accelerate stops",
                          fixes, severity=Severity.WARNING,
                          detail="This config holds \"auto\" values, so it is meant for HF Trainer or Accelerate, but "
                                 "it has no zero_optimization section: Accelerate stops with \"Please specify the ZeRO "
                                 "optimization config in the DeepSpeed config.\" Add \"zero_optimization\": "
                                 "{\"stage\": 0} (or the stage you want).",
                          assumptions=["assumed this file is for HF Trainer or Accelerate (it holds \"auto\" values); raw "
                                       "DeepSpeed and Lightning accept a config without zero_optimization"])
        else:
            target_doc = ctx.document if cfg.link is not None else cfg.doc
            where = ds.entry_of(target_doc, cfg.link) if cfg.link is not None else None
            yield RULE.at(target_doc, where[1].key_span if where and cfg.link is not None and cfg.link.kind == "mapping"
                          else cfg.link,
                          f"{cfg.short_name} has no zero_optimization section: Accelerate's DeepSpeedPlugin stops",
                          fixes,
                          detail=f"{cfg.name} has no zero_optimization section: {ds.HOST_NAMES[cfg.host]} goes through "
                                 "Accelerate's DeepSpeedPlugin, which stops with \"Please specify the ZeRO "
                                 "optimization config in the DeepSpeed config.\" Add \"zero_optimization\": "
                                 "{\"stage\": 0} (or the stage you want).")
