"""The `trainlint estimate` table: one row per component with a proportional bar, the GPU's
capacity line, and the assumptions. Plain text; no terminal codes."""

from __future__ import annotations

from trainlint.memory.breakdown import GIB

WIDTH = 40


def _bar(value: float, scale: float) -> str:
    cells = value / scale * WIDTH if scale > 0 else 0
    full = int(cells)
    rest = cells - full
    partial = " ▏▎▍▌▋▊▉"[int(rest * 8)] if full < WIDTH else ""
    return ("█" * full + partial.strip()).ljust(WIDTH)


def describe_run(plan, arch) -> str:
    mode = "LoRA" if plan.peft.value is not None else "full fine-tuning"
    if plan.peft.value is not None and plan.peft.value.base_bits:
        mode = f"QLoRA ({plan.peft.value.base_bits}-bit base)" if plan.peft.value.base_bits == 4 else "LoRA on an 8-bit base"
    parts = [mode, plan.precision.value.label, f"optimizer {plan.optimizer.value}"]
    if plan.zero_stage.value:
        parts.append(f"ZeRO-{plan.zero_stage.value}")
    if plan.fsdp.value:
        parts.append(f"FSDP {plan.fsdp.value}")
    offload = [what for what, value in (("optimizer", plan.offload_optimizer.value), ("params", plan.offload_params.value)) if value]
    if offload:
        parts.append("offload " + "+".join(offload))
    seq = plan.seq_len.value
    parts.append(f"micro-batch {plan.micro_batch.value} x {seq or '?'} tokens, accumulation {plan.grad_accum.value}")
    parts.append(f"checkpointing {plan.grad_ckpt.value}, attention {plan.attn_impl.value}")
    return "; ".join(parts)


def render_table(est, plan, arch) -> str:
    capacity = est.capacity
    scale = max(est.total, capacity or 0)
    gpu = f"{est.gpu_count} x {est.gpu.name} ({capacity / GIB:.1f} GiB each)" if est.gpu is not None else \
        f"{est.gpu_count} GPU(s), no target GPU given (--gpu)"
    lines = [f"{arch.summary()}", f"on {gpu}", describe_run(plan, arch), ""]
    lines.append(f"{'per GPU':<34}{'GiB':>8}")
    for c in est.components:
        lines.append(f"  {c.label:<32}{c.bytes / GIB:8.2f}  {_bar(c.bytes, scale)}")
    lines.append(f"  {'= peak allocated (' + est.peak_phase + ')':<34}{est.peak_allocated / GIB:8.2f}  "
                 f"{_bar(est.peak_allocated, scale)}")
    lines.append(f"  {'+ allocator fragmentation':<32}{(est.peak_reserved - est.peak_allocated) / GIB:8.2f}")
    for c in est.overhead:
        lines.append(f"  {'+ ' + c.label:<32}{c.bytes / GIB:8.2f}")
    lines.append(f"  {'= total':<32}{est.total / GIB:8.2f}  {_bar(est.total, scale)}")
    if capacity is not None:
        marker = min(WIDTH, int(capacity / scale * WIDTH)) if scale else WIDTH
        lines.append(f"  {'GPU capacity':<32}{capacity / GIB:8.2f}  {' ' * max(0, marker - 1)}|")
        verdict = "fits" if est.fits else "DOES NOT FIT"
        lines.append(f"  {verdict}: {est.utilization:.0%} of {est.gpu.name}")
    if est.host_bytes:
        lines.append(f"  host RAM for offloaded state: {est.host_bytes / GIB:.1f} GiB per node")
    lines.append("")
    lines.append("assumptions:")
    for c in (*est.components, *est.overhead):
        if c.assumption:
            lines.append(f"  - {c.label}: {c.assumption}")
    for note in est.assumptions:
        lines.append(f"  - {note}")
    return "\n".join(lines) + "\n"
