"""TL646 litgpt-logger-choice: a LitGPT `logger_name` that names no logger LitGPT has.

**What**: a LitGPT finetune/pretrain config whose top-level `logger_name` is empty (null) or a name outside
LitGPT's logger choices (`csv`, `tensorboard`, `wandb`; `mlflow` since 0.5.9; `litlogger` on newer releases).

**Why**: LitGPT types the argument as a `Literal` of those names (`litgpt/types.py: LoggerChoice`; before that
`Literal[...]` in each `setup()`), with a non-null default (`csv` for finetuning, `tensorboard` for pretraining).
jsonargparse refuses a value outside the Literal when it validates the config (`_typehints.py: adapt_typehints`,
"Expected a typing.Literal[...]"); where its validation skips nulls, `litgpt/utils.py: choose_logger` raises
"`--logger_name=None` is not a valid option" before training. An empty `logger_name:` in the YAML is that null:
it does not mean "no logger" or "the default".

**Evidence**: `litgpt/utils.py: choose_logger` (error at start-up); verified against LitGPT 0.4 - 0.5.13 and
calvintwr/litgpt (a fork whose `config_hub/pretrain/htxsutd-tinyllama.yaml` has `logger_name: ` and is run by
`python -m litgpt.pretrain --config` without `--logger_name`).

**Fix**: none automatic: name a logger (`csv` writes to out_dir/logs), or remove the key for the default.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL646", "litgpt-logger-choice", Severity.ERROR,
            "LitGPT logger_name names no LitGPT logger", flavors=("litgpt",),
            framework="litgpt", evidence="litgpt/utils.py: choose_logger",
            raises="`--logger_name=None` is not a valid option. Choose from 'csv', 'tensorboard', 'wandb'.")

# Every name some LitGPT release accepts (a name valid only on newer releases is not reported here).
CHOICES = ("csv", "tensorboard", "wandb", "mlflow", "litlogger")


def check(ctx: LintContext):
    doc = ctx.document
    node = doc.find(("logger_name",))
    if node is None or node.kind != "scalar":
        return
    value = node.value
    if value is None or (isinstance(value, str) and not value.strip()):
        yield RULE.at(doc, node,
                      "`logger_name` is empty (null), and LitGPT has no null logger: the run stops before training",
                      detail="YAML reads an empty value as null, and LitGPT has no null logger: jsonargparse refuses "
                             "it against the logger choices (csv, tensorboard, wandb, ...), or choose_logger raises "
                             "\"`--logger_name=None` is not a valid option\" before training. Name a logger (csv "
                             "writes to out_dir/logs) or remove the key for the default.")
        return
    if isinstance(value, str) and value.strip() not in CHOICES:
        yield RULE.at(doc, node,
                      f"`logger_name: {value}` is not one of LitGPT's loggers: the run stops before training",
                      detail=f"LitGPT's loggers: {', '.join(CHOICES)} (mlflow since 0.5.9). jsonargparse refuses it, "
                             "or choose_logger raises \"`--logger_name=...` is not a valid option\" before training.")
