"""TL202 deepspeed-missing-gradient-accumulation: `"auto"` batch keys without `gradient_accumulation_steps`.

**What**: a DeepSpeed config meant for HF Trainer or Accelerate (its `train_batch_size` or
`train_micro_batch_size_per_gpu` is `"auto"`) that has no `gradient_accumulation_steps` key.
An error when `train_batch_size` is `"auto"` and the HF config that uses it accumulates
(`gradient_accumulation_steps` > 1), a warning otherwise (without `train_batch_size` the run starts,
but Accelerate uses DeepSpeed's accumulation of 1: "Gradient accumulation steps mismatch:
GradientAccumulationPlugin has 4, DeepSpeed config has 1. Using DeepSpeed's value.").

**Why**: HF Trainer fills only keys that are present, so it fills `train_batch_size` with
`world × per_device_train_batch_size × gradient_accumulation_steps`; then Accelerate's
`DeepSpeedPlugin` inserts the missing key as 1 (`if "gradient_accumulation_steps" not in config:
config["gradient_accumulation_steps"] = 1`, accelerate `utils/dataclasses.py`), and DeepSpeed stops:
"Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu *
gradient_acc_step * world_size 256 != 8 * 1 * 8" (sahil280114/codealpaca#14, already inside
`from_pretrained` under ZeRO-3). Lightning sets the accumulation itself and is not flagged.

The accumulation is the launch's where a launch command names the file: the `--gradient_accumulation_steps`
it passes the script (or the training config's value when the script's parser lets the command line override
it, TrlParser / ms-swift / LLaMA-Factory style), else the TrainingArguments default of a script that reads the
command line alone (`deepspeed run_glue.py --deepspeed ds.json ...`). A launch that runs with accumulation 1 is
not reported: Accelerate's inserted 1 is then the run's own value. Under `deepspeed --autotuning run|tune` the
autotuner writes `gradient_accumulation_steps` into every experiment's config
(`deepspeed/autotuning/autotuner.py`), so the file is a template and is not reported either.

**Example**: `{"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto", ...}` with
`--gradient_accumulation_steps 4`.

**Fix** (safe): add `"gradient_accumulation_steps": "auto"`.

**Evidence**: `accelerate/utils/dataclasses.py` `DeepSpeedPlugin.__post_init__` (`if "gradient_accumulation_steps"
not in self.hf_ds_config.config: ... = 1`) and `accelerator.py` `Accelerator._prepare_deepspeed` (Accelerate 1.12
to 1.15); `transformers/integrations/deepspeed.py` `HfTrainerDeepSpeedConfig.fill_match` fills only present keys
(transformers 5.0 to 5.24); `deepspeed/runtime/config.py` `_batch_assertion` (DeepSpeed 0.17.0 to 0.19.8). First
message: "Gradient accumulation steps mismatch: GradientAccumulationPlugin has 4, DeepSpeed config has 1. Using
DeepSpeed's value." (a warning line), then, with `train_batch_size` "auto", "Check batch related parameters.
train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size 256 != 8 * 1 * 8" (assert,
a stop).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, insert_entry
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL202", "deepspeed-missing-gradient-accumulation", Severity.WARNING,
            '"auto" DeepSpeed batch keys without gradient_accumulation_steps (Accelerate inserts 1)',
            flavors=("deepspeed", "huggingface", "axolotl", "accelerate"),
            framework="accelerate", versions="",
            evidence="accelerate/utils/dataclasses.py: DeepSpeedPlugin.__post_init__; accelerate/accelerator.py: Accelerator._prepare_deepspeed",
            raises="Gradient accumulation steps mismatch: GradientAccumulationPlugin has 4, DeepSpeed config has 1. Using DeepSpeed's value.")


def check(ctx: LintContext):
    for cfg in ds.ds_configs(ctx):
        root = cfg.root
        if root is None or root.get("gradient_accumulation_steps") is not None:
            continue
        autos = [k for k in ("train_batch_size", "train_micro_batch_size_per_gpu") if ds.is_auto(root.get(k))]
        if not autos or cfg.autotuner_writes(("gradient_accumulation_steps",)):
            continue  # `deepspeed --autotuning`: every experiment's config sets the accumulation itself
        anchor = root.entry(autos[-1] if "train_micro_batch_size_per_gpu" not in autos else "train_micro_batch_size_per_gpu")
        target = root.get(autos[0])
        fixes = [fix('add "gradient_accumulation_steps": "auto"',
                     insert_entry(cfg.doc, root, "gradient_accumulation_steps", ds.auto_text(cfg.doc), after=anchor))]
        gas = ds.host_value(cfg, "gas") if cfg.host in ds.HF_HOSTS else None
        if gas is not None and gas.known and gas.value == 1:
            continue  # the launch runs without accumulation: Accelerate's inserted 1 is the run's own value
        if gas is not None and gas.value > 1 and "train_batch_size" in autos:
            where = gas.describe(cfg.host_doc)
            yield RULE.at(cfg.doc, target,
                          f"no gradient_accumulation_steps while the training arguments accumulate {gas.value}: "
                          "Accelerate inserts 1 and DeepSpeed stops",
                          fixes, severity=Severity.ERROR,
                          detail=f"{' and '.join(autos)} {'are' if len(autos) > 1 else 'is'} \"auto\" but there is no "
                                 "gradient_accumulation_steps key while the training arguments accumulate "
                                 f"({where}): HF fills train_batch_size with accumulation {gas.value}, Accelerate then "
                                 "inserts gradient_accumulation_steps = 1, and DeepSpeed stops with "
                                 f"\"{ds.BATCH_ASSERT}\". Add \"gradient_accumulation_steps\": \"auto\".")
            continue
        if gas is not None and gas.value > 1:
            headline = (f"no gradient_accumulation_steps: Accelerate inserts 1 and the run trains without its "
                        f"accumulation of {gas.value}")
            what = (f"the training arguments' accumulation ({gas.describe(cfg.host_doc)}) loses to DeepSpeed's 1 "
                    f"(\"Gradient accumulation steps mismatch: GradientAccumulationPlugin has {gas.value}, DeepSpeed config "
                    "has 1. Using DeepSpeed's value.\") and the run silently trains without accumulation")
        elif "train_batch_size" in autos:
            headline = ("no gradient_accumulation_steps beside \"auto\" batch keys: a run with accumulation > 1 stops "
                        "at start-up")
            what = (f"any run with --gradient_accumulation_steps > 1 stops with \"{ds.BATCH_ASSERT}\" (codealpaca#14)")
        else:
            headline = ("no gradient_accumulation_steps beside an \"auto\" micro-batch: accumulation > 1 is silently "
                        "replaced by 1")
            what = ("with --gradient_accumulation_steps > 1 DeepSpeed's 1 wins (\"Gradient accumulation steps mismatch: "
                    "GradientAccumulationPlugin has 4, DeepSpeed config has 1. Using DeepSpeed's value.\") and the "
                    "run silently trains without accumulation")
        yield RULE.at(cfg.doc, target, headline, fixes,
                      detail=f"{' and '.join(autos)} {'are' if len(autos) > 1 else 'is'} \"auto\" but "
                             "gradient_accumulation_steps is missing: HF Trainer fills only keys that are present and "
                             f"Accelerate inserts 1, so {what}. Add \"gradient_accumulation_steps\": \"auto\".")
