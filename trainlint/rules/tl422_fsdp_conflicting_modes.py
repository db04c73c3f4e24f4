"""TL422 fsdp-conflicting-modes: `fsdp` with both `full_shard` and `shard_grad_op`.

**What**: TrainingArguments `fsdp` listing both `full_shard` and `shard_grad_op`.

**Why**: they are two different sharding strategies (ZeRO-3-like vs ZeRO-2-like);
`TrainingArguments.__post_init__` refuses the pair: "`--fsdp full_shard` is not compatible with
`--fsdp shard_grad_op`." (transformers `training_args.py`).

**Example**: `fsdp: full_shard shard_grad_op auto_wrap` → keep one.

**Fix**: none automatic: choose full_shard (least memory) or shard_grad_op (less communication).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules._frameworks import words
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL422", "fsdp-conflicting-modes", Severity.ERROR,
            "fsdp full_shard and shard_grad_op together", flavors=("huggingface",))


def check(ctx: LintContext):
    doc = ctx.document
    node = doc.find(("fsdp",))
    options = words(node)
    if "full_shard" in options and "shard_grad_op" in options:
        yield RULE.at(doc, node,
                      "`fsdp` lists both full_shard and shard_grad_op: TrainingArguments stops with \"`--fsdp full_shard` "
                      "is not compatible with `--fsdp shard_grad_op`.\" Keep full_shard (shards parameters too, least "
                      "memory) or shard_grad_op (gradients and optimizer states only).")
