"""What the memory rules share: whether a fit verdict can be trusted, and where to point."""

from __future__ import annotations

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
        return ("the number of GPUs is not known and the model states are sharded across them "
                "(pass --num-gpus or add `# trainlint: num-gpus=8`)")
    return None


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
    parts = [f"{c.label} {c.bytes / 2**30:.1f}" for c in est.components if c.bytes >= 2**30 // 10]
    return ", ".join(parts) + " GiB"
