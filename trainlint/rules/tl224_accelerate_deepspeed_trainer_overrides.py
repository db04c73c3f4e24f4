"""TL224 accelerate-deepspeed-trainer-overrides: Accelerate's `deepspeed_config` fixes values the HF Trainer also sets.

**What**: `gradient_accumulation_steps` or `gradient_clipping` set to a number inside the
`deepspeed_config` of an Accelerate config file.

**Why**: Accelerate builds the DeepSpeed config from these values (`utils/dataclasses.py`,
DeepSpeedPlugin). When the script is an HF Trainer (TRL, LLaMA-Factory, alignment-handbook, most
fine-tuning scripts), `HfTrainerDeepSpeedConfig` then compares them with the TrainingArguments
(`--gradient_accumulation_steps`, `--max_grad_norm`, default 1 and 1.0) and stops on any difference:
"Please correct the following DeepSpeed config values that mismatch TrainingArguments values:
- ds gradient_accumulation_steps=4 vs hf gradient_accumulation_steps=2" (LlamaFactory#201, with
`gradient_accumulation_steps: 4` and `gradient_clipping: 0.5` here and `--gradient_accumulation_steps 2`
on the command line). Under plain Accelerate the value silently overrides the script's
GradientAccumulationPlugin ("Gradient accumulation steps mismatch ... Using DeepSpeed's value.").
Either way the number is set in two places that must agree.

**Evidence**: `transformers/integrations/deepspeed.py: HfTrainerDeepSpeedConfig.trainer_config_finalize`
(stops at the start of training); verified against transformers 4.52 - 5.24 with accelerate 1.13 - 1.15.
First message: "Please correct the following DeepSpeed config values that mismatch TrainingArguments
values:".

Where a launch command runs the file (`accelerate launch --config_file this.yaml script.py --gradient_accumulation_steps 16 ...`),
the script's own argument decides, else the config file the launch passes the script (`... run_sft.py
recipes/sft.yaml`, `--config recipes/sft.yaml`), else, for a parser with TrainingArguments' defaults (plain
HfArgumentParser, TrlParser, LLaMA-Factory; not ms-swift, which derives its accumulation from the world size), the
default: the same value is not reported (the two cannot differ), a different one is an error when the script's
parser is an HF Trainer one (plain HfArgumentParser, TrlParser, LLaMA-Factory, ms-swift, ...) and a warning
otherwise (a plain Accelerate script: the DeepSpeed value silently wins), naming the script line or the file.

A file whose launch runs a script of the repository that trains without HF Trainer (its own
`accelerator.backward` loop, or trlx's Accelerator trainers) and names no Trainer, TrainingArguments or HF-style
parser, and whose other launches run no script that does, is not reported: nothing compares the values, and the
DeepSpeed config is the only place that sets them. So is a file no launch names inside a project whose every
trainer is such a loop (trlx: `trlx/trainer/accelerate_base_trainer.py`, AccelerateRLTrainer).

**Example**: `deepspeed_config: {gradient_accumulation_steps: 4, zero_stage: 2}`.

**Fix** (unsafe): remove it and set accumulation/clipping once, in the training arguments.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix
from trainlint.flavors.base import as_float, is_auto
from trainlint.context.dialect import HF_TRAINER
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL224", "accelerate-deepspeed-trainer-overrides", Severity.WARNING,
            "deepspeed_config sets accumulation/clipping that the HF Trainer also sets", flavors=("accelerate",),
            framework="transformers", evidence="transformers/integrations/deepspeed.py: HfTrainerDeepSpeedConfig.trainer_config_finalize",
            raises="Please correct the following DeepSpeed config values that mismatch TrainingArguments values:")

KEYS = {
    "gradient_accumulation_steps": ("gradient_accumulation_steps", "1"),
    "gradient_clipping": ("max_grad_norm", "1.0"),
}


def check(ctx: LintContext):
    doc = ctx.document
    section = doc.find(("deepspeed_config",))
    if section is None or section.kind != "mapping":
        return
    dist = doc.find(("distributed_type",))
    if dist is None or str(dist.value).upper() != "DEEPSPEED":
        return
    if _own_loop(ctx):
        return  # the launched script trains without an HF Trainer: nothing compares these with TrainingArguments
    for entry in section.entries:
        if entry.key not in KEYS or entry.value.kind != "scalar" or is_auto(entry.value):
            continue
        value = as_float(entry.value.value)
        if value is None:
            continue
        hf_key, hf_default = KEYS[entry.key]
        launched = _launched(ctx, hf_key, hf_default)
        if launched is not None:
            arg_value, shown, where = launched
            if arg_value == value:
                continue  # the script is launched with the same value: the two cannot differ
            trainer = ctx.dialect.name in HF_TRAINER
            stop = ("HF Trainer stops with \"Please correct the following DeepSpeed config values that mismatch "
                    f"TrainingArguments values: - ds {entry.key}={entry.value.raw} vs hf {hf_key}={shown}\"" if trainer
                    else "when the script runs HF Trainer it stops (\"Please correct the following DeepSpeed config "
                         "values that mismatch TrainingArguments values\"); under plain Accelerate the DeepSpeed value "
                         "silently wins")
            yield RULE.at(doc, entry.key_span,
                          f"`deepspeed_config.{entry.key}: {entry.value.raw}` differs from the script's {hf_key} "
                          f"{shown} ({where}): {stop}. Remove it here and set `{hf_key}` once, in the training "
                          "arguments.",
                          [fix(f"remove `{entry.key}` (set `{hf_key}` in the training arguments)",
                               delete_entry(doc, section, entry), safe=False)],
                          severity=Severity.ERROR if trainer else None)
            continue
        yield RULE.at(doc, entry.key_span,
                      f"`deepspeed_config.{entry.key}: {entry.value.raw}` is also set by an HF Trainer script "
                      f"(`--{hf_key}`, default {hf_default}); when the two differ the Trainer stops with \"Please "
                      f"correct the following DeepSpeed config values that mismatch TrainingArguments values\" "
                      f"(LlamaFactory#201). Remove it here and set `{hf_key}` in the training arguments.",
                      [fix(f"remove `{entry.key}` (set `{hf_key}` in the training arguments)",
                           delete_entry(doc, section, entry), safe=False)])


# Parsers whose gradient_accumulation_steps / max_grad_norm default is TrainingArguments' own (1, 1.0); ms-swift
# computes its accumulation from the world size when it is not set.
TRAINING_ARGUMENT_DEFAULTS = ("hf", "trl", "open-r1", "llamafactory")


def _launched(ctx: LintContext, hf_key: str, hf_default: str):
    """(value, as shown, where) of the training argument `hf_key` the script that a launch runs with this accelerate
    config will use: the command-line argument where its parser lets the command line decide, else the value in
    the config file the launch passes the script (or, for a parser with TrainingArguments' defaults, the default
    that file leaves); None when the launch does not decide it."""
    launch = ctx.launch
    if not launch.found or launch.role != "accelerate":
        return None
    from trainlint.rules.dscommon import where_launched

    arg = launch.argument(hf_key)
    if not launch.agreed(hf_key):
        return None  # its launches pass the script different values
    if launch.parser_reads in ("override", "command-line") and arg is not None:
        value = as_float(arg.value) if arg.value is not None else None
        return (value, arg.value, where_launched(arg.origin)) if value is not None else None
    if arg is not None or launch.parser_reads not in ("override", "file") or not launch.script_config:
        return None
    data, path = _script_config(launch)
    if data is None:
        return None
    if hf_key in data:
        value = as_float(data[hf_key]) if not isinstance(data[hf_key], bool) else None
        return (value, str(data[hf_key]), f"{hf_key} in {_shown(path)}, the config {where_launched(launch.origin)} "
                                          "passes the script") if value is not None else None
    if ctx.dialect.name not in TRAINING_ARGUMENT_DEFAULTS:
        return None
    return (float(hf_default), hf_default, f"the TrainingArguments default: {_shown(path)}, the config "
                                           f"{where_launched(launch.origin)} passes the script, does not set it")


def _script_config(launch):
    """The config file the launch passes the script, read (a mapping), and its path; (None, "") when unreadable."""
    from pathlib import Path

    from trainlint.context import launch as launch_context
    from trainlint.context import pins

    here = Path(launch.origin.path).parent
    found = launch_context._resolve_path(launch.script_config, launch_context.bases_of(launch,
                                                                                         pins.repo_root(here)))
    data = launch_context.read_accelerate_config(found) if found is not None else None
    return (data, str(found)) if isinstance(data, dict) else (None, "")


def _shown(path: str) -> str:
    import os

    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


# Projects whose every training entry point is an Accelerator loop of their own (no transformers Trainer): a
# config inside such a repository serves those loops. trlx: trlx/trainer/accelerate_*_trainer.py
# (AccelerateRLTrainer builds its own Accelerator) and the NeMo trainers.
OWN_LOOP_PROJECTS = ("trlx",)


def _own_loop(ctx: LintContext) -> bool:
    from pathlib import Path

    from trainlint.context import pins
    from trainlint.context.dialect import own_training_loop

    launch = ctx.launch
    if launch.found and launch.role == "accelerate":
        if own_training_loop(launch, str(pins.repo_root(Path(launch.origin.path).parent))):
            return True
        if launch.script.endswith(".py") and _script_found(launch):
            return False  # the launched script is there and is no loop of its own
    elif launch.found or not ctx.document.path:
        return False
    # no launch, or one whose script is not in the repository: a project whose trainers are their own loops
    try:
        _pins, projects = pins.pins_for(ctx.document.path)
    except (OSError, ValueError):
        return False
    return any(name in OWN_LOOP_PROJECTS for name in projects)


def _script_found(launch) -> bool:
    from pathlib import Path

    from trainlint.context import launch as launch_context
    from trainlint.context import pins

    root = pins.repo_root(Path(launch.origin.path).parent)
    return any((base / launch.script).is_file() for base in launch_context.bases_of(launch, root))
