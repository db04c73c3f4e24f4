"""TL531 reduce-on-plateau-without-eval: `lr_scheduler_type: reduce_lr_on_plateau` without evaluation.

**What**: TrainingArguments with `lr_scheduler_type: reduce_lr_on_plateau` and `eval_strategy` "no"
(or absent: its default).

**Why**: the scheduler lowers the learning rate when the eval metric stops improving, so it needs
evaluations; TrainingArguments stops with "lr_scheduler_type reduce_lr_on_plateau requires an eval
strategy" (transformers `training_args.py`).

**Evidence**: `transformers/training_args.py: TrainingArguments.__post_init__` (stops); verified against
transformers 4.52 - 5.24. First message: "lr_scheduler_type reduce_lr_on_plateau requires an eval
strategy".

**Example**: `lr_scheduler_type: reduce_lr_on_plateau` → add `eval_strategy: epoch`.

**Fix**: none automatic: choose when to evaluate (`eval_strategy: steps` + `eval_steps`, or `epoch`).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL531", "reduce-on-plateau-without-eval", Severity.ERROR,
            "reduce_lr_on_plateau needs an eval strategy", flavors=("huggingface",),
            framework="transformers", evidence="transformers/training_args.py: TrainingArguments.__post_init__",
            raises="lr_scheduler_type reduce_lr_on_plateau requires an eval strategy")


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    scheduler = root.get("lr_scheduler_type")
    if scheduler is None or scheduler.kind != "scalar" or str(scheduler.value).lower() != "reduce_lr_on_plateau":
        return
    strategy = root.get("eval_strategy") or root.get("evaluation_strategy")
    value = "no" if strategy is None or strategy.value in (False, None) else str(strategy.value).lower()
    if value != "no":
        return
    yield RULE.at(doc, scheduler,
                  "`lr_scheduler_type: reduce_lr_on_plateau` without evaluation (eval_strategy is \"no\"): "
                  "TrainingArguments stops",
                  detail="The scheduler reacts to the eval metric and TrainingArguments stops with \"lr_scheduler_type "
                         "reduce_lr_on_plateau requires an eval strategy\". Set `eval_strategy: epoch` (or steps with "
                         "eval_steps).")
