"""TL522 value-out-of-range: a number below (or above) what the framework accepts.

**What**: a zero or negative batch size or accumulation (`per_device_train_batch_size`,
`gradient_accumulation_steps`, Lightning `accumulate_grad_batches`, `num_nodes`), Accelerate
`num_processes: 0`, a negative `warmup_steps`, and the other minimums and maximums the JSON Schemas
carry (schemas/, from pydantic `ge`/`gt` constraints and validators).

**Why**: the frameworks check these in code: Lightning "`num_nodes` must be a positive integer, but
got 0.", DeepSpeed "Gradient accumulation steps: 0 has to be greater than 0", PyTorch's DataLoader
"batch_size should be a positive integer value, but got batch_size=0"; transformers rejects a
negative warmup ("warmup_steps must be an integer or a float" / must be 0 or positive).

**Evidence**: `transformers/training_args.py: TrainingArguments.__post_init__` (stops); verified against
transformers 4.52 - 5.24, accelerate 1.13 - 1.15, Lightning 2.6.

**Example**: `gradient_accumulation_steps: 0` → 1.

**Fix**: none automatic: the intended number is unknown.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules._schema_checks import findings
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL522", "value-out-of-range", Severity.ERROR,
            "A number outside the range the framework accepts (zero or negative batch sizes, ...)",
            flavors=("huggingface", "lightning", "accelerate"),
            framework="transformers", evidence="transformers/training_args.py: TrainingArguments.__post_init__")


def check(ctx: LintContext):
    doc = ctx.document
    for f in findings(ctx):
        if f.kind == "range":
            yield RULE.at(doc, f.node, f"{f.message.rstrip('.')}: the framework refuses it",
                          detail=f.detail or "The framework refuses it.")
