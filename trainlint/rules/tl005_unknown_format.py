"""TL005 unknown-format: trainlint does not recognise this file as a training config.

**What**: a readable YAML/JSON file that is none of the formats trainlint knows (DeepSpeed, Hugging
Face TrainingArguments/TRL/LLaMA-Factory, Lightning CLI, Accelerate, Axolotl, torchtune, LitGPT).

**Why**: only its syntax was checked; no memory estimate or format rule applies. If it is a
training config, name its format in an issue; if it is not, exclude it from the hook's `files`.

A JSON template whose values are bare placeholders a launch script substitutes (Megatron-DeepSpeed's
`ds_config_gpt_TEMPLATE.json`: `"train_batch_size": CONFIG_BATCH_SIZE`, filled in with `sed` before the run) is
not a syntax error (TL001) but a template: named as such when checked by name, skipped when a folder is walked.
The same holds for a YAML file that parses once its Jinja2 markup is masked (Azure's torchtune-azureml configs:
`path: {{model_dir}}/tokenizer.model`, rendered by the launcher with jinja2 and written back before `tune run`).

Files of formats trainlint recognises but does not read (GPT-NeoX with its DeepSpeed sections, Megatron-LM,
NeMo, Hydra apps, trlx TRLConfigs, CI / compose / Kubernetes files, a model's config.json; `schemas/dialects.json`) are
named as such and not linted as the format they resemble.

**Fix**: none.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.flavors import FOREIGN_LABELS
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL005", "unknown-format", Severity.INFO, "Not a training config format trainlint knows")


def check(ctx: LintContext):
    doc = ctx.document
    if ctx.flavor != "unknown" or doc.syntax_error is not None:
        return
    if doc.root is None and doc.placeholders:
        names = ", ".join(doc.placeholders[:4]) + (", ..." if len(doc.placeholders) > 4 else "")
        shown = names if len(names) <= 40 else ", ".join(doc.placeholders[:1]) + ", ..."
        yield RULE.at(doc, None, f"a template, not a config: placeholders ({shown}) a script replaces; not linted",
                      detail=f"Its placeholders ({names}) are replaced by a script (sed, envsubst, a Jinja2 render) "
                             "before the framework reads the result; it is not linted, the generated file is.")
        return
    if doc.root is None:
        yield RULE.at(doc, None, "the file is empty; nothing to check")
        return
    foreign = ctx.dialect.name if ctx.dialect.name in FOREIGN_LABELS else None
    if foreign is not None:
        yield RULE.at(doc, None,
                      f"recognised as {FOREIGN_LABELS[foreign]}: not a format trainlint reads, so it is not linted",
                      detail=("It is not linted as the format it resembles: its training sections are read by that "
                              "program, not by DeepSpeed, HF or Lightning directly."
                              if foreign in ("gpt-neox", "megatron-lm", "nemo", "hydra") else ""))
        return
    yield RULE.at(doc, None, "not a training config format trainlint knows; only its syntax was checked",
                  detail="trainlint does not recognise this file as a DeepSpeed, Hugging Face, Lightning, Accelerate, "
                         "Axolotl, torchtune or LitGPT training config.")
