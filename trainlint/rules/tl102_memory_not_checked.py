"""TL102 memory-not-checked: trainlint could not give a memory verdict for this config, and says why.

**What**: no estimate (the config names no model, or a model trainlint cannot size offline), or an
estimate without a verdict (the target GPU or the number of GPUs a sharded run uses is not known).

**Why**: a missing verdict is not a passing one. Naming the model (`--model`, or
`# trainlint: model=meta-llama/Llama-3.1-8B` / a local folder with its config.json), the GPU
(`--gpu`) and the GPU count (`--num-gpus`) turns it into a checked estimate. DeepSpeed and Accelerate
files never name a model: the training config that links them, or the launch that runs them, does.

**When**: off by default (`--select TL102`, or `extend-select = ["TL102"]` in `[tool.trainlint]`, asks for
it): many configs name no model, and a notice that points at nothing wrong was close to half of all findings. Even
when selected, it is not reported where no estimate is expected of the file: a DeepSpeed JSON or an Accelerate config (they never name a
model), a file a launch uses as other than its script's config (`--deepspeed ds.json`, `--config_file
accelerate.yaml`), and a config whose launch passes the model on the command line (`--model_name_or_path`,
`--model.*`).

**Fix**: none; add the missing settings.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules.base import LintContext, Rule
from trainlint.rules.memory_common import verdict_basis

RULE = Rule("TL102", "memory-not-checked", Severity.INFO, "No memory verdict could be made, and why",
            enabled_by_default=False)

# Formats that never name a model: the training config that links them, or the launch's script, does.
NO_MODEL_FLAVORS = ("deepspeed", "accelerate")
# Script arguments that name the model (HF/TRL, axolotl, torchtune, LitGPT, LightningCLI's `--model.*`).
MODEL_ARGUMENTS = ("model_name_or_path", "model", "base_model", "pretrained_model_name_or_path", "model_id",
                   "checkpoint_dir", "model_path")
SHOWN_NAME = 48  # a longer model name (a cluster path) is shown by its last part in the message


def model_named_elsewhere(ctx: LintContext) -> bool:
    """Whether the model of the run is named outside this file, so that its having none is expected: a DeepSpeed
    or Accelerate file, a file the launch uses as other than its script's config, a launch passing the model."""
    if ctx.flavor in NO_MODEL_FLAVORS:
        return True
    launch = ctx.launch
    if not launch.found:
        return False
    if launch.role not in ("", "config"):
        return True
    keys = [key for key, _ in launch.arguments]
    keys += [key for arguments in launch.other_arguments for key, _ in arguments]
    return any(key in MODEL_ARGUMENTS or key.startswith("model.") for key in keys)


def _shown(name: str) -> str:
    if len(name) <= SHOWN_NAME:
        return repr(name)
    return repr(".../" + name.rstrip("/").rsplit("/", 1)[-1])


def check(ctx: LintContext):
    if ctx.plan is None:
        return
    if ctx.estimate is None:
        problem = ctx.unestimable
        if problem is None:
            return
        setting = problem.setting
        target = setting.origin.span if setting is not None and setting.origin.path == ctx.document.path else None
        if setting is None:  # the config names no model
            if model_named_elsewhere(ctx):
                return
            reason, _, hint = problem.reason.partition("; ")
            yield RULE.at(ctx.document, target, f"no memory estimate: {reason}",
                          detail=f"{hint[:1].upper()}{hint[1:]}." if hint else "")
            return
        name = _shown(str(setting.value))
        why = "cannot be sized" if " cannot be sized: " in problem.reason else "is not a model trainlint can size offline"
        yield RULE.at(ctx.document, target, f"no memory estimate: the model {name} {why}",
                      detail=f"{problem.reason[:1].upper()}{problem.reason[1:]}.")
        return
    basis = verdict_basis(ctx)
    if basis is None:
        return
    est = ctx.estimate
    reason = basis.partition(" (")[0].partition(": ")[0]
    yield RULE.at(ctx.document, None, f"estimated {est.total / 2**30:.1f} GiB per GPU, but no fit verdict: {reason}",
                  detail=f"Estimated on {est.gpu_count} GPU(s); no fit verdict: {basis}.")
