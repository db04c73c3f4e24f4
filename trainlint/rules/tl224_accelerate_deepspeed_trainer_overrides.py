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
default (unless the script sets it in its own code: context.codeargs): the same value is not reported (the two cannot differ), a different one is an error when the script's
parser is an HF Trainer one (plain HfArgumentParser, TrlParser, LLaMA-Factory, ms-swift, ...) and a warning
otherwise (a plain Accelerate script: the DeepSpeed value silently wins), naming the script line or the file.

Where it is not known whether the script reads the config file the launch passes it, and the launch passes no
`--gradient_accumulation_steps` / `--max_grad_norm`, the script's value is the file's or the default: decided (and
not reported) when both are the DeepSpeed value (uclaml/SPIN's tulu-70B recipe).

A file whose launch runs a script of the repository that trains without HF Trainer (its own
`accelerator.backward` loop, or trlx's Accelerator trainers) and names no Trainer, TrainingArguments or HF-style
parser, and whose other launches run no script that does, is not reported: nothing compares the values, and the
DeepSpeed config is the only place that sets them. So is a file no launch names inside a project whose every
trainer is such a loop (trlx: `trlx/trainer/accelerate_base_trainer.py`, AccelerateRLTrainer).

Only an HF Trainer compares the two (transformers' Trainer hands the DeepSpeedPlugin's config, built from these
keys, to `HfTrainerDeepSpeedConfig.trainer_config_process`, whose `fill_match` records every numeric mismatch with
TrainingArguments; a plain `Accelerator()` loop only warns "Gradient accumulation steps mismatch ... Using
DeepSpeed's value."). So where the launch decides no value, the warning needs evidence of an HF Trainer run: the
launched script's parser is an HF Trainer one, or its text names TrainingArguments, HfArgumentParser, TrlParser or a
transformers/trl trainer; with no launch, a script in the file's folder or the one above (or any repository script
that names the file) does, or the file belongs to a project whose scripts are HF Trainer ones (trl, transformers,
alignment-handbook, LLaMA-Factory, open-r1, open-instruct). When those nearby scripts are Accelerator loops of their
own (huggingface/peft's `examples/causal_language_modeling/*.py`; a class of the project's own called Trainer, such
as smollm's m4 Trainer, is no HF Trainer) nothing is reported; when nothing says which script runs the file (no
launch, no script near it: a folder of accelerate configs alone), the finding is information that says what would be
compared and how to name the launch.

Where the script's parser combines its config file and the command line in a way not known (`train.py cfg.yaml
--gradient_accumulation_steps 16`: a lone config file followed by options), the value is either the argument's or
the file's: when both equal this file's (or the file does not set it), nothing can differ and nothing is reported.

A key every launch of the file gives itself (`accelerate launch --gradient_accumulation_steps 8 ...`: its
`deepspeed_config` options win over the file's, `Launch.overrides`) is not reported: the file's value is never used.

**Example**: `deepspeed_config: {gradient_accumulation_steps: 4, zero_stage: 2}`.

**Fix** (unsafe): remove it and set accumulation/clipping once, in the training arguments.
"""

from __future__ import annotations

import os
from pathlib import Path

from trainlint.context import launch as launch_context
from trainlint.context import pins
from trainlint.context.dialect import HF_TRAINER, _script_text, own_training_loop, runs_hf_trainer, scripts_using
from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix
from trainlint.flavors.base import as_float, is_auto
from trainlint.rules._schema_checks import launch_sets
from trainlint.rules.base import LintContext, Rule
from trainlint.rules.dscommon import _set_in_code, where_launched

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
    evidence = None  # what shows an HF Trainer reads the file, looked up once the launch decides nothing
    for entry in section.entries:
        if entry.key not in KEYS or entry.value.kind != "scalar" or is_auto(entry.value):
            continue
        if launch_sets(ctx, ("deepspeed_config", entry.key)):
            continue  # every launch gives `--{entry.key}` itself: the file's value is never used
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
            outcome = "HF Trainer stops" if trainer else "HF Trainer stops, plain Accelerate uses this value"
            yield RULE.at(doc, entry.key_span,
                          f"`deepspeed_config.{entry.key}: {entry.value.raw}` differs from the script's {hf_key} "
                          f"{shown}: {outcome}",
                          [fix(f"remove `{entry.key}` (set `{hf_key}` in the training arguments)",
                               delete_entry(doc, section, entry), safe=False)],
                          severity=Severity.ERROR if trainer else None,
                          detail=f"The script's {hf_key} is {shown} ({where}): {stop}. Remove it here and set "
                                 f"`{hf_key}` once, in the training arguments.")
            continue
        if evidence is None:
            evidence = _trainer_evidence(ctx)
        kind, where = evidence
        if kind == "loop":
            return  # the scripts that could use it are Accelerator loops of their own: nothing compares the values
        remedy = [fix(f"remove `{entry.key}` (set `{hf_key}` in the training arguments)",
                      delete_entry(doc, section, entry), safe=False)]
        if kind == "trainer":
            yield RULE.at(doc, entry.key_span,
                          f"`deepspeed_config.{entry.key}: {entry.value.raw}` is also set by the HF Trainer script: "
                          "it stops when the two differ", remedy,
                          detail=f"The HF Trainer script that uses this config ({where}) sets it as `--{hf_key}`, "
                                 f"default {hf_default}; when the two differ the Trainer stops with \"Please correct the "
                                 "following DeepSpeed config values that mismatch TrainingArguments values\" "
                                 f"(LlamaFactory#201). Remove it here and set `{hf_key}` in the training arguments.")
            continue
        yield RULE.at(doc, entry.key_span,
                      f"`deepspeed_config.{entry.key}: {entry.value.raw}` must equal HF Trainer's `--{hf_key}` or it "
                      "stops", remedy, severity=Severity.INFO,
                      detail=f"If an HF Trainer script runs with this config, its `--{hf_key}` (default {hf_default}) "
                             "must equal it, or the Trainer stops with \"Please correct the following DeepSpeed config "
                             f"values that mismatch TrainingArguments values\" (LlamaFactory#201); {where}. Setting "
                             f"`{hf_key}` once, in the training arguments, avoids the question; name the launch "
                             "(`launch = \"accelerate launch --config_file ... script.py\"` in [tool.trainlint]) to "
                             "have it checked.")


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
    arg = launch.argument(hf_key)
    if not launch.agreed(hf_key):
        return None  # its launches pass the script different values
    if launch.parser_reads in ("override", "command-line") and arg is not None:
        value = as_float(arg.value) if arg.value is not None else None
        return (value, arg.value, where_launched(arg.origin)) if value is not None else None
    if launch.parser_reads == "" and arg is not None:
        # how the script combines its config file with the command line is not known (`train.py cfg.yaml --x 4`):
        # the value is the argument's or the file's; when both are one number, that is the script's value
        value = as_float(arg.value) if arg.value is not None else None
        data, _path = _script_config(launch) if launch.script_config else (None, "")
        other = data.get(hf_key) if isinstance(data, dict) else None
        if value is None or (launch.script_config and data is None) or \
                (other is not None and (isinstance(other, bool) or as_float(other) != value)):
            return None
        return value, arg.value, where_launched(arg.origin)
    if launch.parser_reads == "" and arg is None and launch.script_config:
        return _file_or_default(ctx, launch, hf_key, hf_default)
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
    code = _set_in_code(launch, hf_key, "gas" if hf_key == "gradient_accumulation_steps" else "clip")
    if code is not None:  # the script builds its TrainingArguments itself: its value, or unknown
        return (float(code.value), str(code.value), code.note) if code.known else None
    return (float(hf_default), hf_default, f"the TrainingArguments default: {_shown(path)}, the config "
                                           f"{where_launched(launch.origin)} passes the script, does not set it")


def _file_or_default(ctx: LintContext, launch, hf_key: str, hf_default: str):
    """The launch passes the script a config file and no `--{hf_key}`, and whether the script reads that file is not
    known: its value is the file's or TrainingArguments' default, so it is decided only when the two are one number
    (or the file leaves it at the default)."""
    if ctx.dialect.name not in TRAINING_ARGUMENT_DEFAULTS:
        return None
    data, path = _script_config(launch)
    if data is None or _set_in_code(launch, hf_key, "gas" if hf_key == "gradient_accumulation_steps" else "clip"):
        return None
    in_file = data.get(hf_key)
    if in_file is not None and (isinstance(in_file, bool) or as_float(in_file) != float(hf_default)):
        return None
    said = f"{hf_key}: {in_file} in {_shown(path)}" if in_file is not None else f"{_shown(path)} leaves it unset"
    return float(hf_default), hf_default, (f"the TrainingArguments default whether or not the script reads the config "
                                           f"{where_launched(launch.origin)} passes it ({said})")


def _script_config(launch):
    """The config file the launch passes the script, read (a mapping), and its path; (None, "") when unreadable."""
    here = Path(launch.origin.path).parent
    found = launch_context._resolve_path(launch.script_config, launch_context.bases_of(launch,
                                                                                         pins.repo_root(here)))
    data = launch_context.read_accelerate_config(found) if found is not None else None
    return (data, str(found)) if isinstance(data, dict) else (None, "")


def _shown(path: str) -> str:
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
    root = pins.repo_root(Path(launch.origin.path).parent)
    return any((base / launch.script).is_file() for base in launch_context.bases_of(launch, root))


def _trainer_evidence(ctx: LintContext) -> tuple[str, str]:
    """What says an HF Trainer reads this accelerate config when the launch decides no value: ("trainer", where)
    for the launched script or its parser (an HF Trainer one), or, with no launch, a script in or near the file's
    folder (or one naming it) that runs one; ("loop", path) when, with no launch, those scripts are Accelerator loops
    of their own; ("", why) when nothing says which script runs it."""
    launch = ctx.launch
    project = _trainer_project(ctx)
    if launch.found and launch.role == "accelerate":
        if ctx.dialect.name in HF_TRAINER:
            return "trainer", f"{launch.script or 'the script'} {where_launched(launch.origin)}"
        root = pins.repo_root(Path(launch.origin.path).parent)
        path, text = _script_text(launch.script, list(launch_context.bases_of(launch, root)))
        if text and runs_hf_trainer(text):
            return "trainer", f"{_shown(path)} {where_launched(launch.origin)}"
        if project and not text:
            return "trainer", project
        return "", (f"the script {where_launched(launch.origin)} ({launch.script or 'unknown'}) shows no HF Trainer"
                    if text else f"the script {where_launched(launch.origin)} ({launch.script or 'unknown'}) was not "
                                 "found, so nothing says it is an HF Trainer")
    if not ctx.document.path:
        return "", "no script near this file shows an HF Trainer using it"
    here = Path(ctx.document.path).resolve().parent
    kind, path = scripts_using(str(Path(ctx.document.path).resolve()), str(pins.repo_root(here)))
    if kind:
        return kind, _shown(path)
    if project:
        return "trainer", project
    return "", "no launch names this file and no script in or near its folder (or naming it) trains with it"



# Projects whose training entry points are HF Trainer scripts: an accelerate config they ship serves those (trl's
# examples/accelerate_configs/*.yaml are for `accelerate launch --config_file ... trl/scripts/sft.py ...`).
HF_TRAINER_PROJECTS = ("trl", "transformers", "alignment-handbook", "llamafactory", "open-r1", "open-instruct")


def _trainer_project(ctx: LintContext) -> str:
    if not ctx.document.path:
        return ""
    try:
        _pins, projects = pins.pins_for(ctx.document.path)
    except (OSError, ValueError):
        return ""
    name = next((p for p in projects if p in HF_TRAINER_PROJECTS), "")
    return f"a config of the {name} project, whose scripts train with HF Trainer" if name else ""
