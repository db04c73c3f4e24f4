"""TL421 fsdp-offload-alone: `fsdp: offload` without a sharding mode.

**What**: TrainingArguments `fsdp` that lists `offload` but neither `full_shard` nor
`shard_grad_op`.

**Why**: `TrainingArguments.__post_init__` refuses it: "`--fsdp offload` can't work on its own. It
needs to be added to `--fsdp full_shard` or `--fsdp shard_grad_op`. For example, `--fsdp "full_shard
offload"`." (transformers `training_args.py`).

**Example**: `fsdp: offload auto_wrap` → `fsdp: full_shard offload auto_wrap`.

**Fix** (unsafe: it picks the sharding mode): add `full_shard`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._frameworks import words
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL421", "fsdp-offload-alone", Severity.ERROR,
            "fsdp offload needs full_shard or shard_grad_op", flavors=("huggingface",))


def check(ctx: LintContext):
    doc = ctx.document
    node = doc.find(("fsdp",))
    options = words(node)
    if "offload" not in options or "full_shard" in options or "shard_grad_op" in options:
        return
    fixes = []
    if node.kind == "scalar" and isinstance(node.value, str):
        fixes = [fix("add full_shard", replace_value(doc, node, "full_shard " + node.value.strip()), safe=False)]
    yield RULE.at(doc, node,
                  "`fsdp` has `offload` without a sharding mode: TrainingArguments stops with \"`--fsdp offload` can't "
                  "work on its own. It needs to be added to `--fsdp full_shard` or `--fsdp shard_grad_op`\". Add "
                  "full_shard (or shard_grad_op).", fixes)
