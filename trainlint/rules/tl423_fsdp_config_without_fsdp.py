"""TL423 fsdp-config-without-fsdp: `fsdp_config` set while FSDP is off.

**What**: an HF TrainingArguments/TRL file with a non-empty `fsdp_config` (or the old top-level
`fsdp_min_num_params` / `fsdp_transformer_layer_cls_to_wrap`) but no `fsdp` option.

**Why**: the FSDP settings are read only when `--fsdp` is given; otherwise TrainingArguments warns
"`--fsdp_config` is useful only when `--fsdp` is specified." and trains without FSDP - every GPU holds
the whole model (transformers `training_args.py`). Usually `fsdp: full_shard auto_wrap` was forgotten
(or the run is meant to get FSDP from an Accelerate config, which this file does not show).

**Example**: `fsdp_config: {transformer_layer_cls_to_wrap: [LlamaDecoderLayer]}` without `fsdp`.

**Fix**: none automatic: add `fsdp: full_shard auto_wrap`, or delete `fsdp_config`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules._frameworks import is_set, words
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL423", "fsdp-config-without-fsdp", Severity.WARNING,
            "fsdp_config has no effect without fsdp", flavors=("huggingface",))


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
                  "`fsdp_config` is set but `fsdp` is not: TrainingArguments warns \"`--fsdp_config` is useful only when "
                  "`--fsdp` is specified.\" and trains without FSDP, so every GPU holds the whole model. Add `fsdp: "
                  "full_shard auto_wrap` (or remove `fsdp_config`).")
