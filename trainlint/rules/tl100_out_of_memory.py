"""TL100 out-of-memory: the run (its training step, evaluation, loading or saving) needs more memory than the GPU has.

**What**: trainlint's estimate of the per-GPU peak (weights, gradients, optimizer states,
activations, logits and loss, buffers, the CUDA context) exceeds the target GPU's memory, for the
GPU and world size given by `--gpu`/`--num-gpus`, a `# trainlint:` comment, `[tool.trainlint]` or
the config itself.

**Why**: the job would die with "CUDA out of memory" at its first step (or its first optimizer
step), after waiting for its allocation; or at its first evaluation or checkpoint, when that phase's peak is the
run's (docs/memory-model.md §9): the message then ends "out of memory in evaluation" (or loading, saving).

**Severity**: an error only when the GPU, the sharding and (for a sharded run) the world size are all
known: from the settings, the config, or the launch that names the file (`accelerate launch --config_file
zero3.yaml ... this.yaml` in a script, Makefile, CI workflow or README; a torchtune recipe; see
docs/architecture.md). An HF-style YAML that no launch command names may still be run under ZeRO-3 on 8
GPUs: the finding is then a warning that says it assumed one GPU without sharding, and how to declare
the launch (`# trainlint: launch="accelerate launch --config_file ..."` or `launch = ...` in
`[tool.trainlint]`), and which sharding over how many of the target GPUs fits the config as written (the least
of ZeRO-1, ZeRO-2 / FSDP shard_grad_op, ZeRO-3 / FSDP full_shard over the fewest of 2 - 64 GPUs, or over the GPU
count declared): "needs 98.5 GiB per GPU on 1 x A100-80GB unsharded: out of memory; ZeRO-3 over 2 GPUs fits".

**Example**: full fine-tuning of Llama-3.1-8B with AdamW on one 80 GB card: ~16 bytes per parameter
of model states alone (128 GB) before activations.

**Fix**: the planner re-estimates the changes this config can make (activation checkpointing, a
smaller micro-batch with more accumulation at the same effective batch, a higher ZeRO stage, CPU
offload of the optimizer, SDPA instead of eager attention, an 8-bit optimizer, fused cross-entropy)
and offers only those that fit, cheapest first, each titled with the new estimate. Checkpointing,
attention and micro-batch/accumulation changes are safe (same training, more time); optimizer and
loss-kernel changes are unsafe. When nothing in the config can make it fit, the finding's detail says what
would (sharding on the GPUs it has, more GPUs with ZeRO-3, or LoRA/QLoRA) and no edit is offered; LoRA/QLoRA
edits (unsafe: they change what is trained) are offered only when nothing else fits, and then the detail
also says what would fit while training the full model. A value a `# trainlint:` directive of the file sets (the
micro-batch of `# trainlint: micro-batch=16`) is changed in the directive, and the detail says so; one a flag,
`[tool.trainlint]` or a launch script argument sets has no edit in the file, so when the cheapest change that fits
needs it the detail names it, where it is set and the value that fits: "micro-batch 16 is set by the `--micro-batch`
flag; 4 fits: change it there".
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.context.launch import sharding_known
from trainlint.fixes.planner import held_change, launch_sharding_that_fits, plan_fixes
from trainlint.rules.base import LintContext, Rule
from trainlint.rules.memory_common import anchor, breakdown_text, model_caveats, need_text, run_assumptions, verdict_basis

RULE = Rule("TL100", "out-of-memory", Severity.ERROR, "The training step needs more GPU memory than the GPU has")


def check(ctx: LintContext):
    est = ctx.estimate
    if est is None or verdict_basis(ctx) is not None or est.fits is not False:
        return
    gpu = ctx.gpu
    offers, advice = plan_fixes(ctx)
    detail = f"{breakdown_text(est)} The run would stop with CUDA out of memory."
    assumptions = run_assumptions(ctx)
    caveats = list(model_caveats(ctx))
    if offers:
        detail += f" Cheapest change that fits: {offers[0].candidate.title}."
    if advice:
        detail += f" {advice[0].upper()}{advice[1:]}."
    held = held_change(ctx, offers)
    if held:
        detail += f" {held}"
    phase = est.deciding_phase
    where = "" if phase == "training step" else f" in {phase}"
    headline = f"{need_text(est, gpu)}: out of memory{where}"
    if not sharding_known(ctx.plan, ctx.launch, ctx.flavor):
        # the launch decides the sharding and it is not known: say which sharding over how many GPUs fits
        fitting = launch_sharding_that_fits(ctx)
        if fitting is not None:
            how, count, total = fitting
            headline = (f"{need_text(est, gpu)} unsharded: out of memory{where}; {how.split(' (')[0]} over {count} "
                        f"GPUs fits ({total:.1f} GiB)")
            detail += (f" The launch decides the sharding, and which it chooses is not known: with {how} over {count} x "
                       f"{gpu.name} the config fits as written ({total:.1f} GiB per GPU); declare the launch to have "
                       "it checked.")
    # An error only when the GPU, the sharding and the world size are known; else a warning saying what it assumed.
    if phase != "training step":
        step = next((p for p in est.run_phases if p.name == "training step"), None)
        detail += (f" The peak is in {phase} ({next(p.note for p in est.run_phases if p.name == phase)})"
                   + (f"; the training step needs {step.total / 2**30:.1f} GiB." if step is not None else "."))
    yield RULE.at(ctx.document, anchor(ctx), headline,
                  [o.fix(est.total, gpu.memory_bytes) for o in offers], assumptions=assumptions + caveats, detail=detail)
