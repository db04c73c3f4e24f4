"""TL529 load-best-model-strategy-mismatch: `load_best_model_at_end` with save and eval out of step.

**What**: `load_best_model_at_end: true` in TrainingArguments whose `save_strategy` differs from
`eval_strategy` (defaults: save "steps", eval "no"), or, both being "steps", `save_steps` that is not
a multiple of `eval_steps` (default: `logging_steps`, 500).

**Why**: the best checkpoint can only be reloaded if a checkpoint is saved at every evaluation.
TrainingArguments stops with "--load_best_model_at_end requires the save and eval strategy to match,
except when --save_strategy="best", but found\n- Evaluation strategy: ...\n- Save strategy: ..."
(transformers 5.8 - 5.24; 4.52 - 5.3 without the "except when" clause)
or "--load_best_model_at_end requires the saving steps to be a round multiple of the evaluation
steps, but found {s}, which is not a round multiple of {e}." (transformers `training_args.py`).

**Evidence**: `transformers/training_args.py: TrainingArguments.__post_init__` (stops); verified against
transformers 4.52 - 5.24. First message: "--load_best_model_at_end requires the save and eval strategy
to match".

**Example**: `eval_strategy: epoch` with `save_strategy: steps`.

**Fix** (unsafe: it changes when checkpoints are written): set `save_strategy` to the eval strategy.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, insert_entry, replace_value
from trainlint.rules._frameworks import flag, number
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL529", "load-best-model-strategy-mismatch", Severity.ERROR,
            "load_best_model_at_end with save and eval strategies that differ", flavors=("huggingface",),
            framework="transformers", evidence="transformers/training_args.py: TrainingArguments.__post_init__",
            raises="--load_best_model_at_end requires the save and eval strategy to match")


def _strategy(node, default: str) -> str:
    if node is None or node.kind != "scalar":
        return default
    if node.value is False:
        return "no"
    return str(node.value).lower()


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    best = root.entry("load_best_model_at_end")
    if best is None or flag(best.value) is not True:
        return
    eval_entry = root.entry("eval_strategy") or root.entry("evaluation_strategy")
    save_entry = root.entry("save_strategy")
    eval_s = _strategy(eval_entry.value if eval_entry else None, "no")
    save_s = _strategy(save_entry.value if save_entry else None, "steps")
    if save_s == "best":
        return
    if eval_s != save_s:
        fixes = []
        if eval_s in ("steps", "epoch"):
            edit = (replace_value(doc, save_entry.value, eval_s) if save_entry is not None
                    else insert_entry(doc, root, "save_strategy", eval_s, after=best))
            fixes = [fix(f"save at every evaluation (`save_strategy: {eval_s}`)", edit, safe=False)]
        target = save_entry.key_span if save_entry is not None else best.key_span
        yield RULE.at(doc, target,
                      f"`load_best_model_at_end: true` with eval strategy \"{eval_s}\" and save strategy "
                      f"\"{save_s}\": TrainingArguments stops", fixes,
                      detail="`load_best_model_at_end` needs a checkpoint at every evaluation: TrainingArguments stops "
                             "with \"--load_best_model_at_end requires the save and eval strategy to match\". Make "
                             "them the same.")
        return
    if eval_s != "steps":
        return
    eval_steps = number(root.get("eval_steps")) or number(root.get("logging_steps")) or 500
    save_node = root.get("save_steps")
    save_steps = number(save_node) or 500
    if eval_steps <= 0 or save_steps % eval_steps == 0 or eval_steps < 1 or save_steps < 1:
        return
    save_entry = root.entry("save_steps")
    target = save_entry.key_span if save_entry is not None else best.key_span
    yield RULE.at(doc, target,
                  f"`load_best_model_at_end: true` with save_steps {save_steps} and eval_steps {eval_steps}: "
                  "TrainingArguments stops",
                  detail="TrainingArguments stops with \"--load_best_model_at_end requires the saving steps to be a "
                         f"round multiple of the evaluation steps, but found {save_steps}, which is not a round multiple "
                         f"of {eval_steps}.\" Use a save_steps that is a multiple of eval_steps.")
