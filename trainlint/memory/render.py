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


LABEL = 36  # label column width, after the two-space indent


def _row(label: str, value: float | None = None, bar: str = "") -> str:
    if len(label) >= LABEL:
        label = label[:LABEL - 2] + "…"
    number = f"{value / GIB:8.2f}" if value is not None else " " * 8
    return f"  {label:<{LABEL}}{number}  {bar}".rstrip()


def _phase_rows(est) -> list[str]:
    """Each phase's per-GPU total (and its own host RAM), the deciding one marked."""
    if not est.run_phases:
        return []
    deciding = est.deciding_phase
    lines = ["", f"  {'phases (per-GPU total)':<{LABEL}}{'GiB':>8}"]
    for phase in est.run_phases:
        row = _row(phase.name, phase.total)
        extra = []
        if phase.name == deciding:
            extra.append("<- decides")
        if phase.note:
            extra.append(phase.note)
        if phase.host_bytes:
            extra.append(f"host RAM {phase.host_bytes / GIB:.1f} GiB" + (" on rank 0's node" if phase.name == "saving"
                                                                        else " per node"))
        lines.append(row + ("  " + "; ".join(extra) if extra else ""))
    return lines


def render_table(est, plan, arch, suggestions: list[str] | None = None, advice: str | None = None) -> str:
    capacity = est.capacity
    scale = max(est.total, capacity or 0)
    gpu = f"{est.gpu_count} x {est.gpu.name} ({capacity / GIB:.1f} GiB each)" if est.gpu is not None else \
        f"{est.gpu_count} GPU(s), no target GPU given (--gpu)"
    lines = [f"{arch.summary()}", f"on {gpu}", describe_run(plan, arch), ""]
    lines.append(f"  {'per GPU':<{LABEL}}{'GiB':>8}")
    for c in est.components:
        lines.append(_row(c.label, c.bytes, _bar(c.bytes, scale)))
    lines.append(_row(f"= peak allocated ({est.peak_phase})", est.peak_allocated, _bar(est.peak_allocated, scale)))
    lines.append(_row("+ allocator fragmentation", est.peak_reserved - est.peak_allocated))
    for c in est.overhead:
        lines.append(_row("+ " + c.label, c.bytes))
    lines.append(_row("= total", est.total, _bar(est.total, scale)))
    if capacity is not None:
        marker = min(WIDTH, int(capacity / scale * WIDTH)) if scale else WIDTH
        lines.append(_row("GPU capacity", capacity, " " * max(0, marker - 1) + "|"))
        verdict = "fits" if est.fits else "DOES NOT FIT"
        lines.append(f"  {verdict}: {est.utilization:.0%} of {est.gpu.name}")
    scaled_to = "the total" if capacity is None or est.total >= capacity else "the GPU's capacity"
    lines.append(f"  bars: {WIDTH} cells = {scale / GIB:.2f} GiB ({scaled_to})"
                 + ("; | marks the GPU's capacity" if capacity is not None else ""))
    if est.host_bytes:
        lines.append(f"  host RAM for offloaded state: {est.host_bytes / GIB:.1f} GiB per node")
    lines.extend(_phase_rows(est))
    if suggestions:
        lines.append("")
        lines.append("changes that fit (cheapest first, each re-estimated):")
        lines.extend(f"  - {s}" for s in suggestions)
    elif advice:
        lines.append("")
        lines.append(f"what would fit: {advice}")
    lines.append("")
    lines.append("assumptions:")
    for c in (*est.components, *est.overhead):
        if c.assumption:
            lines.append(f"  - {c.label}: {c.assumption}")
    for note in est.assumptions:
        lines.append(f"  - {note}")
    return "\n".join(lines) + "\n"
