"""What the memory rules share: whether a fit verdict can be trusted, and where to point."""

from __future__ import annotations

from trainlint.context.launch import sharding_known
from trainlint.diagnostics import Span


def model_caveats(ctx) -> tuple[str, ...]:
    """What a memory finding assumes about the model's size: an approximate count (the generic tier, or
    a vision tower counted by the generic formula). Passed as a diagnostic's assumptions, so the engine
    keeps such a finding at warning severity."""
    arch = getattr(ctx, "architecture", None)
    if arch is not None and getattr(arch, "approximate", False):
        return (f"the model's parameter count is approximate: {arch.sizing_note}",)
    return ()


def verdict_basis(ctx) -> str | None:
    """None when a fit verdict is sound; else what is missing for one."""
    plan = ctx.plan
    if ctx.estimate is None:
        return "no estimate"
    if ctx.gpu is None:
        return "the target GPU is not known (pass --gpu or add `# trainlint: gpu=H100-80GB`)"
    sharded = (plan.zero_stage.value or 0) > 0 or plan.fsdp.value or plan.offload_optimizer.value \
        or plan.tensor_parallel.value > 1 or plan.pipeline_parallel.value > 1
    if plan.num_gpus.origin.kind == "default" and sharded:
        return ("the GPU count of this sharded run is not known: the model states are sharded across its GPUs "
                "(pass --num-gpus or add `# trainlint: num-gpus=8`)")
    return None


def run_assumptions(ctx) -> list[str]:
    """What a fit verdict assumed about the run that decides it, each with how to declare it. Empty when the
    GPU, the sharding and (where sharding makes it matter) the world size are all known: then TL100 is an error.
    Per-GPU memory does not depend on the world size without sharding, so a known unsharded run needs no count."""
    plan = ctx.plan
    out: list[str] = []
    if plan is None:
        return out
    if plan.gpu.origin.kind in ("default", "inferred") and ctx.gpu is not None:
        out.append(f"assumed the GPU is {ctx.gpu.name} ({plan.gpu.origin.describe()}): declare it with --gpu or "
                   "`# trainlint: gpu=...`")
    if not sharding_known(plan, ctx.launch, ctx.flavor):
        n = plan.num_gpus.value
        count = f"{n} GPU{'s' if n != 1 else ''}"
        why = ("no launch command names this file" if not ctx.launch.found else
               f"the {ctx.launch.launcher} launch ({ctx.launch.origin.describe()}) names no config that decides it")
        out.append(f"assumed {count} without sharding: {why}; set `# trainlint: launch=...` (the launch command "
                   "or its accelerate config) or `num-gpus`")
    return out


def need_text(est, gpu) -> str:
    """What a fit verdict's message leads with: `needs 1116.9 GiB per GPU on 8 x A100-80GB (79.2 GiB)`."""
    return (f"needs {est.total / 2**30:.1f} GiB per GPU on {est.gpu_count} x {gpu.name} "
            f"({gpu.memory_bytes / 2**30:.1f} GiB)")


def anchor(ctx) -> Span | None:
    """The line most responsible for the memory: the micro-batch or sequence length when activations
    dominate, else the model; only settings written in this file."""
    est, plan, doc = ctx.estimate, ctx.plan, ctx.document
    activation_heavy = est is not None and (est.component("activations") + est.component("logits")) > \
        (est.component("weights") + est.component("optimizer_states") + est.component("gradients"))
    order = ("micro_batch", "seq_len", "model") if activation_heavy else ("model", "micro_batch", "seq_len")
    for field in order:
        origin = getattr(plan, field).origin
        if origin.kind == "config" and origin.path == doc.path and origin.span is not None:
            return origin.span
    return None


def breakdown_text(est) -> str:
    """The peak and what makes it up, for a finding's detail: `Peak in backward: weights 28.4, ... GiB.`"""
    parts = [f"{c.label} {c.bytes / 2**30:.1f}" for c in est.components if c.bytes >= 2**30 // 10]
    return f"Peak in {est.peak_phase}: " + ", ".join(parts) + " GiB."
