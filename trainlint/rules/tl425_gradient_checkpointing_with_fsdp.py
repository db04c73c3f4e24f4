"""TL425 gradient-checkpointing-with-fsdp: TrainingArguments gradient checkpointing under FSDP full_shard.

**What**: `gradient_checkpointing: true` together with `fsdp: full_shard ...` (or `hybrid_shard`) in an
HF TrainingArguments/TRL file.

**Why**: the HF Trainer's model-level checkpointing re-runs forward inside FSDP's backward and gathers
each layer's parameters again. transformers logs it: up to 5.9 `TrainingArguments.__post_init__`
(`training_args.py`, full_shard/hybrid_shard only) "When using FSDP full shard, instead of using
`gradient_checkpointing` in TrainingArguments, please use `activation_checkpointing` in `fsdp_config`.
The former introduces a redundant AllGather operation in backward pass."; from 5.10
`TrainingArguments._process_fsdp_args` (any FSDP) "When using FSDP, prefer `activation_checkpointing` in
`fsdp_config` over `gradient_checkpointing`; the latter introduces a redundant AllGather in the backward
pass." (5.23 renamed the training argument `activation_checkpointing`; `gradient_checkpointing` is its
deprecated alias). The run works but spends extra communication on every step: a warning. The rule
reports full_shard/hybrid_shard, and shard_grad_op too where transformers is known to be >= 5.10.

**Evidence**: `transformers/training_args.py: TrainingArguments._process_fsdp_args` (logs); verified
against transformers 4.52 - 5.24. First message: "When using FSDP, prefer `activation_checkpointing` in
`fsdp_config` over `gradient_checkpointing`; the latter introduces a redundant AllGather in the backward
pass.".

**Example**: `gradient_checkpointing: true` + `fsdp: full_shard auto_wrap` →
`gradient_checkpointing: false` + `fsdp_config: {activation_checkpointing: true}`.

**Fix** (unsafe: it moves the setting): turn `gradient_checkpointing` off and set
`fsdp_config.activation_checkpointing: true`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, insert_entry, replace_value
from trainlint.rules._frameworks import flag, version_status, words
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL425", "gradient-checkpointing-with-fsdp", Severity.WARNING,
            "gradient_checkpointing with FSDP full/hybrid shard: use fsdp_config.activation_checkpointing", flavors=("huggingface",),
            framework="transformers", evidence="transformers/training_args.py: TrainingArguments._process_fsdp_args",
            raises="When using FSDP, prefer `activation_checkpointing` in `fsdp_config` over `gradient_checkpointing`; "
                   "the latter introduces a redundant AllGather in the backward pass.")


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    ckpt = root.entry("gradient_checkpointing")
    options = words(root.get("fsdp"))
    sharded = {"full_shard", "hybrid_shard"}
    if version_status(ctx, "transformers", ">=5.10")[0]:
        sharded |= {"shard_grad_op", "hybrid_shard_zero2"}  # 5.10+ warns for any FSDP
    if ckpt is None or flag(ckpt.value) is not True or not (sharded & set(options)):
        return
    config = root.get("fsdp_config")
    if config is not None and config.kind == "mapping":
        for key in ("activation_checkpointing", "fsdp_activation_checkpointing"):
            entry = config.entry(key)
            if entry is not None and flag(entry.value):
                return  # both on: HF raises on that; not this rule's business
    fixes = []
    on = "true"
    if config is None:
        value = '{"activation_checkpointing": true}' if doc.kind == "json" else "{activation_checkpointing: true}"
        fixes = [fix("use fsdp_config.activation_checkpointing instead", replace_value(doc, ckpt.value, False),
                     insert_entry(doc, root, "fsdp_config", value), safe=False)]
    elif config.kind == "mapping":
        existing = config.entry("activation_checkpointing") or config.entry("fsdp_activation_checkpointing")
        edit = (replace_value(doc, existing.value, True) if existing is not None
                else insert_entry(doc, config, "activation_checkpointing", on))
        fixes = [fix("use fsdp_config.activation_checkpointing instead", replace_value(doc, ckpt.value, False), edit,
                     safe=False)]
    yield RULE.at(doc, ckpt.key_span,
                  f"`gradient_checkpointing: true` with FSDP {next(o for o in options if o in sharded)}: a redundant "
                  "AllGather per recomputed layer", fixes,
                  detail="Each recomputed layer gathers its parameters again, \"a redundant AllGather in the backward "
                         "pass\" (transformers warns). Set `fsdp_config.activation_checkpointing: true` instead and "
                         "turn `gradient_checkpointing` off.")
