"""The memory fix planner: when a run does not fit, try the knobs its flavor exposes, re-estimate each
candidate (and pairs when no single change is enough), and offer those that fit, cheapest first.

Time cost model (a simple one, stated in every title): recomputing activations adds about one forward
pass (+33% compute); halving a micro-batch below ~8k tokens costs GPU efficiency; ZeRO-3 adds
parameter all-gathers; CPU offload adds PCIe traffic and a CPU optimizer step.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from trainlint.fixes import knobs
from trainlint.diagnostics import Edit, Fix
from trainlint.memory.breakdown import GIB
from trainlint.plan import Origin, Peft, Setting

TARGET = 0.90  # a fix must bring the total under 90% of the card, so no near-capacity warning follows


@dataclass(frozen=True)
class Candidate:
    title: str  # what it does
    changes: dict  # plan field -> value
    cost: float  # extra time, fraction (0.33 = +33%)
    cost_text: str
    safe: bool = True
    edits: tuple[Edit, ...] = ()


@dataclass(frozen=True)
class Offer:
    candidate: Candidate
    total: int

    def fix(self, before: int, capacity: int) -> Fix:
        c = self.candidate
        title = (f"{c.title}: {before / GIB:.1f} -> {self.total / GIB:.1f} GiB of {capacity / GIB:.0f} GiB, "
                 f"{c.cost_text}")
        return Fix(title, c.edits, c.safe)


def _tokens(plan, seq: int | None = None) -> int:
    return plan.micro_batch.value * (seq or plan.seq_len.value or 2048)


def _efficiency_cost(tokens_before: int, tokens_after: int) -> float:
    """Small micro-batches use the GPU less well; below ~8k tokens each halving costs a few percent."""
    def slowdown(tokens: int) -> float:
        return max(0.0, (8192 - tokens) / 8192) * 0.15
    return slowdown(tokens_after) - slowdown(tokens_before)


def candidates(ctx) -> list[Candidate]:
    plan = ctx.plan
    out: list[Candidate] = []

    def add(title, changes, cost, cost_text, safe=True, edits=None):
        if edits:
            out.append(Candidate(title, changes, cost, cost_text, safe, tuple(edits)))

    if plan.attn_impl.value == "eager":
        add("use SDPA attention instead of eager", {"attn_impl": "sdpa"}, -0.1, "and faster",
            edits=knobs.setting_edits(ctx, "attn_impl", "sdpa"))
    if plan.grad_ckpt.value == "none":
        add("enable gradient checkpointing", {"grad_ckpt": "full"}, 0.33, "about +33% compute",
            edits=knobs.setting_edits(ctx, "grad_ckpt", "full"))
    micro, gas = plan.micro_batch.value, plan.grad_accum.value
    factor = 2
    while micro // factor >= 1 and micro % factor == 0:
        new_micro, new_gas = micro // factor, gas * factor
        edits_micro = knobs.setting_edits(ctx, "micro_batch", new_micro)
        edits_gas = knobs.setting_edits(ctx, "grad_accum", new_gas)
        if edits_micro and edits_gas:
            cost = _efficiency_cost(_tokens(plan), _tokens(plan) // factor)
            add(f"micro-batch {micro} -> {new_micro} with accumulation {gas} -> {new_gas} (same effective batch)",
                {"micro_batch": new_micro, "grad_accum": new_gas}, cost,
                f"about +{cost:.0%} time" if cost >= 0.005 else "about the same speed",
                edits=edits_micro + edits_gas)
        factor *= 2
    deepspeed_in_play = plan.zero_stage.origin.kind != "default" or ctx.linked or ctx.flavor == "deepspeed"
    current_stage = min(3, max(0, plan.zero_stage.value or 0))
    if deepspeed_in_play and plan.data_parallel > 1:
        for stage in range(current_stage + 1, 4):
            cost = {1: 0.01, 2: 0.03, 3: 0.15}[stage]
            add(f"ZeRO stage {current_stage} -> {stage}", {"zero_stage": stage}, cost,
                f"about +{cost:.0%} time" + (" for parameter all-gathers" if stage == 3 else ""),
                edits=knobs.setting_edits(ctx, "zero_stage", stage))
    if deepspeed_in_play and plan.offload_optimizer.value is None and current_stage >= 1:
        add("offload the optimizer to CPU (DeepSpeed)", {"offload_optimizer": "cpu"}, 0.5,
            "about +50% time (PCIe transfers, CPU Adam)", edits=knobs.zero_offload_edits(ctx))
    from trainlint.memory.model import optimizer_spec

    spec = optimizer_spec(plan.optimizer.value or "adamw")
    if spec is not None and spec.state_factor >= 2 and plan.peft.value is None and not plan.precision.value.master_weights:
        add("use 8-bit AdamW (bitsandbytes)", {"optimizer": "adamw_8bit"}, 0.01,
            "same compute; optimizer states quantized (changes numerics slightly)", safe=False,
            edits=knobs.setting_edits(ctx, "optimizer", "adamw_8bit"))
    if not plan.fused_loss.value and ctx.architecture is not None and ctx.architecture.vocab_size >= 64000:
        add("use Liger's fused linear cross-entropy (needs the liger-kernel package)", {"fused_loss": True}, 0.0,
            "same compute", safe=False, edits=knobs.setting_edits(ctx, "fused_loss", True))
    return out


def _apply(plan, changes: dict):
    return plan.with_(**{k: Setting(v, Origin("cli", note="planner")) for k, v in changes.items()})


def plan_fixes(ctx, limit: int = 4) -> tuple[list[Offer], str | None]:
    """Offers that bring the run under TARGET of the card, cheapest first; or, when none, what would."""
    from trainlint.memory.estimate import estimate_plan

    gpu, arch, plan = ctx.gpu, ctx.architecture, ctx.plan
    capacity = gpu.memory_bytes
    budget = capacity * TARGET
    cands = candidates(ctx)
    offers: list[Offer] = []
    for cand in cands:
        total = estimate_plan(_apply(plan, cand.changes), arch, gpu).total
        if total <= budget:
            offers.append(Offer(cand, total))
    if not offers:
        for a, b in itertools.combinations(cands, 2):
            if set(a.changes) & set(b.changes) or _overlap(a.edits, b.edits):
                continue
            merged = Candidate(f"{a.title}, and {b.title[0].lower()}{b.title[1:]}", {**a.changes, **b.changes},
                               a.cost + b.cost, _combine_cost(a, b), a.safe and b.safe, a.edits + b.edits)
            total = estimate_plan(_apply(plan, merged.changes), arch, gpu).total
            if total <= budget:
                offers.append(Offer(merged, total))
    offers.sort(key=lambda o: (not o.candidate.safe, o.candidate.cost, o.total))
    if offers:
        return offers[:limit], None
    return [], _what_would_fit(ctx)


def _overlap(a: tuple[Edit, ...], b: tuple[Edit, ...]) -> bool:
    return any(x.path == y.path and x.span.start.offset < y.span.end.offset + 1 and
               y.span.start.offset < x.span.end.offset + 1 for x in a for y in b)


def _combine_cost(a: Candidate, b: Candidate) -> str:
    total = a.cost + b.cost
    if total <= 0:
        return "about the same speed or faster"
    return f"about +{total:.0%} time"


def _what_would_fit(ctx) -> str:
    """Advice without an edit: the smallest setup that fits, trying more GPUs with ZeRO-3 (then with
    8-way tensor parallelism as well), and QLoRA."""
    from trainlint.memory.estimate import estimate_plan

    plan, arch, gpu = ctx.plan, ctx.architecture, ctx.gpu
    budget = gpu.memory_bytes * TARGET
    base: dict[str, Any] = {"zero_stage": 3, "grad_ckpt": "full", "micro_batch": 1}

    def fits(changes: dict) -> bool:
        return estimate_plan(_apply(plan, changes), arch, gpu).total <= budget

    counts = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
    for count in counts:
        if fits({**base, "num_gpus": count}):
            return (f"nothing inside this config makes it fit; it needs at least {count} x {gpu.name} with ZeRO-3, "
                    "activation checkpointing and micro-batch 1, or LoRA/QLoRA")
    for count in counts[3:]:
        if fits({**base, "num_gpus": count, "tensor_parallel": 8}):
            return (f"nothing inside this config makes it fit; it needs at least {count} x {gpu.name} with 8-way "
                    "tensor parallelism plus ZeRO-3 and activation checkpointing (e.g. Megatron, torchtitan), or QLoRA")
    qlora = Peft("lora", 16, "all-linear", 4)
    for count in counts:
        if fits({**base, "num_gpus": count, "peft": qlora}):
            return (f"as full fine-tuning it does not fit even on {counts[-1]} x {gpu.name}; QLoRA (4-bit base, "
                    f"LoRA adapters) with ZeRO-3/FSDP would from {count} GPUs")
    return f"it does not fit on {gpu.name} with ZeRO-3, 8-way tensor parallelism or QLoRA on up to {counts[-1]} GPUs"
