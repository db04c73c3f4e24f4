"""TL423 fsdp-config-without-fsdp: `fsdp_config` set while FSDP is off.

**What**: an HF TrainingArguments/TRL file with a non-empty `fsdp_config` (or the old top-level
`fsdp_min_num_params` / `fsdp_transformer_layer_cls_to_wrap`) but no `fsdp` option.

**Why**: the FSDP settings are read only when `--fsdp` is given. Up to transformers 5.9
`TrainingArguments.__post_init__` (`training_args.py`) warns "`--fsdp_config` is useful only when
`--fsdp` is specified."; from 5.10 `TrainingArguments._process_fsdp_args` returns at `if not self.fsdp`
without a word. Either way the run trains without FSDP: every GPU holds the whole model. Usually
`fsdp: full_shard auto_wrap` was forgotten (or the run is meant to get FSDP from an Accelerate config,
which this file does not show: hence a warning).

**Evidence**: `transformers/training_args.py: TrainingArguments._process_fsdp_args` (logs up to 5.9;
silent from 5.10); verified against transformers 4.40 - 5.24. First message: "`--fsdp_config` is useful
only when `--fsdp` is specified.".

**Example**: `fsdp_config: {transformer_layer_cls_to_wrap: [LlamaDecoderLayer]}` without `fsdp`.

**Fix**: none automatic: add `fsdp: full_shard auto_wrap`, or delete `fsdp_config`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules._frameworks import is_set, words
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL423", "fsdp-config-without-fsdp", Severity.WARNING,
            "fsdp_config has no effect without fsdp", flavors=("huggingface",),
            framework="transformers", evidence="transformers/training_args.py: TrainingArguments._process_fsdp_args",
            raises="`--fsdp_config` is useful only when `--fsdp` is specified.")


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    options = [w for w in words(root.get("fsdp")) if w not in ("false", "no", "none")]
    if options:
        return
    entry = root.entry("fsdp_config")
    if entry is None or not is_set(entry.value):
        return
    yield RULE.at(doc, entry.key_span,
                  "`fsdp_config` is set but `fsdp` is not: it is ignored and every GPU holds the whole model",
                  detail="transformers ignores it (up to 5.9 with the warning \"`--fsdp_config` is useful only when "
                         "`--fsdp` is specified.\", from 5.10 without a word) and trains without FSDP, so every GPU "
                         "holds the whole model. Add `fsdp: full_shard auto_wrap` (or remove `fsdp_config`).")
