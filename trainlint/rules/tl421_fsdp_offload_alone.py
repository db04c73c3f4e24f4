"""TL421 fsdp-offload-alone: `fsdp: offload` without a sharding mode.

**What**: TrainingArguments `fsdp` that lists `offload` but neither `full_shard` nor
`shard_grad_op`.

**Why**: transformers up to 5.9 refuses it in `TrainingArguments.__post_init__` (`training_args.py`):
"`--fsdp offload` can't work on its own. It needs to be added to `--fsdp full_shard` or `--fsdp
shard_grad_op`. For example, `--fsdp "full_shard offload"`." From 5.10 the string form is translated
by `TrainingArguments._apply_legacy_fsdp_to_config` (`offload` -> `cpu_offload`, the sharding mode left
to FSDP2's default, full sharding), with "Passing `fsdp` as a string is deprecated and will be removed
in Transformers v5.20." logged, so the run starts. The rule holds for transformers < 5.10: with the
release unknown it is a warning that says so, and it is not run on 5.10 and later.

**Evidence**: `transformers/training_args.py: TrainingArguments.__post_init__` (stops); verified against
transformers < 5.10 (4.40 - 5.9); from 5.10 accepted. First message: "`--fsdp offload` can't work on its
own. It needs to be added to `--fsdp full_shard` or `--fsdp shard_grad_op`.".

**Example**: `fsdp: offload auto_wrap` → `fsdp: full_shard offload auto_wrap`.

**Fix** (unsafe: it picks the sharding mode): add `full_shard`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._frameworks import words
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL421", "fsdp-offload-alone", Severity.ERROR,
            "fsdp offload needs full_shard or shard_grad_op", flavors=("huggingface",),
            framework="transformers", versions="<5.10", evidence="transformers/training_args.py: TrainingArguments.__post_init__",
            raises="`--fsdp offload` can't work on its own. It needs to be added to `--fsdp full_shard` or `--fsdp shard_grad_op`.")


def check(ctx: LintContext):
    doc = ctx.document
    node = doc.find(("fsdp",))
    options = words(node)
    if node is None or "offload" not in options or "full_shard" in options or "shard_grad_op" in options:
        return
    fixes = []
    if node.kind == "scalar" and isinstance(node.value, str):
        fixes = [fix("add full_shard", replace_value(doc, node, "full_shard " + node.value.strip()), safe=False)]
    yield RULE.at(doc, node,
                  "`fsdp` has `offload` without a sharding mode: TrainingArguments stops (transformers < 5.10)", fixes,
                  detail="TrainingArguments stops with \"`--fsdp offload` can't work on its own. It needs to be added "
                         "to `--fsdp full_shard` or `--fsdp shard_grad_op`\" (transformers < 5.10; from 5.10 FSDP2 "
                         "shards fully by default). Add full_shard (or shard_grad_op).")
