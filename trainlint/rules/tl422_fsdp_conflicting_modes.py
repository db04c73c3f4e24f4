"""TL422 fsdp-conflicting-modes: `fsdp` with both `full_shard` and `shard_grad_op`.

**What**: TrainingArguments `fsdp` listing both `full_shard` and `shard_grad_op`.

**Why**: they are two different sharding strategies (ZeRO-3-like vs ZeRO-2-like). Up to transformers
5.9 `TrainingArguments.__post_init__` (`training_args.py`) stops: "`--fsdp full_shard` is not compatible
with `--fsdp shard_grad_op`." From 5.10 `TrainingArguments._apply_legacy_fsdp_to_config` keeps the first
one listed (`fsdp_config.setdefault("reshard_after_forward", ...)`) without a word, so half of the
setting is silently ignored. An error where the release is known to be < 5.10, a warning otherwise.

**Evidence**: `transformers/training_args.py: TrainingArguments.__post_init__` (stops up to 5.9; silent
from 5.10 (the first mode wins)); verified against transformers 4.40 - 5.24. First message: "`--fsdp
full_shard` is not compatible with `--fsdp shard_grad_op`.".

**Example**: `fsdp: full_shard shard_grad_op auto_wrap` → keep one.

**Fix**: none automatic: choose full_shard (least memory) or shard_grad_op (less communication).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules._frameworks import Claim, version_status, words
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL422", "fsdp-conflicting-modes", Severity.ERROR,
            "fsdp full_shard and shard_grad_op together", flavors=("huggingface",),
            framework="transformers", evidence="transformers/training_args.py: TrainingArguments.__post_init__",
            raises="`--fsdp full_shard` is not compatible with `--fsdp shard_grad_op`.")

CLAIMS = (
    Claim("transformers", "training_args.py TrainingArguments.__post_init__",
          "`--fsdp full_shard` is not compatible with `--fsdp shard_grad_op`.", "stops", until="5.10.0"),
    Claim("transformers", "training_args.py TrainingArguments._apply_legacy_fsdp_to_config", "", "silent",
          since="5.10.0"),
)


def check(ctx: LintContext):
    doc = ctx.document
    node = doc.find(("fsdp",))
    options = words(node)
    if "full_shard" in options and "shard_grad_op" in options:
        old, assumptions = version_status(ctx, "transformers", "<5.10")
        first = next(o for o in options if o in ("full_shard", "shard_grad_op"))
        stop = ("TrainingArguments stops with \"`--fsdp full_shard` is not compatible with `--fsdp shard_grad_op`.\"")
        silent = f"transformers keeps the first one, {first}, and ignores the other without a word"
        what = stop if old else silent if old is False else f"on transformers < 5.10 {stop}; from 5.10 {silent}"
        short = ("TrainingArguments stops" if old else f"transformers ignores all but {first}" if old is False
                 else f"TrainingArguments stops (< 5.10) or keeps only {first}")
        yield RULE.at(doc, node,
                      f"`fsdp` lists both full_shard and shard_grad_op: {short}",
                      severity=None if old else Severity.WARNING, assumptions=assumptions,
                      detail=f"{what}. Keep full_shard (shards parameters too, least memory) or "
                             "shard_grad_op (gradients and optimizer states only).")
