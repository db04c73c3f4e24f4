"""`trainlint estimate` as the core makes it: the plan of a config file (as `trainlint check` reads it) or of flags
alone, its per-GPU memory breakdown, the fix planner's changes that fit when the run is over or near the card, and,
on request, transformers' own parameter count. The command line turns its flags into what this takes
(`what_if_values`, `Overrides`) and renders the `EstimateReport` it gives (`EstimateReport.to_json`, the table
of `memory.render`).

A stage after `engine` (it reads a file as the engine checks it); it may import the core, never a shell.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainlint import engine
from trainlint import plan as plans
from trainlint.catalog.meta_count import ExactCountUnavailable, exact_count, model_config
from trainlint.context.settings import Overrides, Settings
from trainlint.document.tree import Document
from trainlint.fixes.planner import TARGET, Offer, plan_fixes
from trainlint.memory.breakdown import Breakdown
from trainlint.memory.estimate import attach, resolve_gpu, with_versions
from trainlint.plan import AMP_BF16, AMP_FP16, Origin, Peft, Precision, Setting, TrainingPlan
from trainlint.rules.base import LintContext


class EstimateError(Exception):
    """No estimate can be made (the file is not a training config, the model is unknown, ...): the message says
    why and what to pass."""


# `--precision` words: weights / compute / master copy
PRECISION_FLAGS: dict[str, Precision] = {
    "fp32": plans.FP32, "bf16-mixed": plans.AMP_BF16, "fp16-mixed": plans.AMP_FP16, "bf16": plans.PURE_BF16,
    "fp16": plans.PURE_FP16, "bf16-master": plans.MASTER_BF16, "fp16-master": plans.MASTER_FP16,
}


def what_if_values(precision: str | None = None, optimizer: str | None = None, zero: int | None = None,
                   fsdp: str | None = None, offload_optimizer: str | None = None, offload_params: str | None = None,
                   grad_ckpt: str | None = None, attn: str | None = None, lora_r: int | None = None,
                   lora_targets: str | None = None, qlora: bool | None = False, fused_loss: bool | None = False,
                   task: str | None = None, head: str | None = None,
                   keep_zeroed_grads: bool | None = False) -> dict[str, Any]:
    """Plan field -> value for the what-if changes, given as the flags name them: a `PRECISION_FLAGS` word,
    `fsdp="no_shard"` and an offload of "none" for none, `lora_r` / `qlora` for LoRA adapters (rank 16 and every
    linear layer unless said; `lora_targets` comma-separated). What is not given is left out."""
    values: dict[str, Any] = {}
    if precision:
        values["precision"] = PRECISION_FLAGS[precision]
    if optimizer:
        values["optimizer"] = optimizer
    if zero is not None:
        values["zero_stage"] = zero
    if fsdp:
        values["fsdp"] = None if fsdp == "no_shard" else fsdp
    for name, value in (("offload_optimizer", offload_optimizer), ("offload_params", offload_params)):
        if value:
            values[name] = None if value == "none" else value
    if grad_ckpt:
        values["grad_ckpt"] = grad_ckpt
    if attn:
        values["attn_impl"] = attn
    if lora_r or qlora:
        targets = [t for t in (lora_targets or "").split(",") if t] or "all-linear"
        values["peft"] = Peft("lora", lora_r or 16, targets, 4 if qlora else None)
    if fused_loss:
        values["fused_loss"] = True
    if task:
        values["task"] = task
    if head:
        values["head"] = head
    if keep_zeroed_grads:
        values["grads_kept"] = True
    return values


@dataclass(frozen=True)
class EstimateReport:
    """What `trainlint estimate` shows."""

    plan: TrainingPlan  # the run estimated (the settings' values laid over the file's, or the flags alone)
    document: Document | None  # the config file read; None for flags alone
    estimate: Breakdown
    architecture: Any  # trainlint.catalog.architecture.Architecture of the model
    offers: list[Offer] = field(default_factory=list)  # the planner's changes that fit, best first
    advice: str | None = None  # what would make it fit, when no change the planner knows does
    exact_model: dict | None = None  # transformers' own count next to trainlint's (`exact_check`), when asked

    @property
    def fits(self) -> bool | None:
        return self.estimate.fits

    def to_json(self) -> dict[str, Any]:
        """The breakdown's JSON with the suggestions, the advice and the exact count (`--output-format json`)."""
        est, capacity = self.estimate, self.estimate.capacity
        out = est.to_json()
        # the planner offers changes only for a known card
        out["suggestions"] = [o.to_json(est.total, capacity) for o in self.offers] if capacity is not None else []
        out["advice"] = self.advice
        if self.exact_model is not None:
            out["exact_model"] = self.exact_model
        return out


def file_plan(path: str, overrides: Overrides,
              use_project_config: bool = True) -> tuple[TrainingPlan, Document, list[Document]]:
    """The plan of the config file at `path` as `trainlint check` reads it (its launch, settings and directives,
    with `overrides` winning), its document and the documents it links; EstimateError when it has none."""
    result = engine.check_path(path, Settings(cli=overrides, use_project_config=use_project_config))
    if result.plan is None:
        reason = result.document.syntax_error.message if result.document.syntax_error else \
            "trainlint does not recognise this file as a training config"
        raise EstimateError(f"{path}: {reason}")
    # The framework versions in play (pins, `# trainlint:` directives) decide the semantics, as in `check`.
    return with_versions(result.plan, getattr(result, "versions", None)), result.document, result.linked


def flags_plan(overrides: Overrides) -> TrainingPlan:
    """The plan of flags alone: `overrides` over the defaults, with the precision runs use on the GPU when the
    flags say none (`flags_precision`)."""
    plan = overrides.apply(TrainingPlan(flavor="flags", path=str(Path.cwd() / "flags")))
    if plan.precision.is_default:
        plan = plan.with_(precision=flags_precision(plan))
    return plan


def flags_precision(plan: TrainingPlan) -> Setting:
    """What people run when the flags say nothing: bf16 mixed precision where the GPU has bf16, fp16 mixed
    precision where it does not; said in the assumptions."""
    gpu = resolve_gpu(plan)
    if gpu is not None and not gpu.bf16:
        return Setting(AMP_FP16, Origin("default", note=f"fp16 mixed precision (autocast over fp32 weights) assumed, as "
                                                        f"runs use on {gpu.name}, which has no bf16; pass --precision"))
    where = f"as runs use on {gpu.name}" if gpu is not None else "as most runs use"
    return Setting(AMP_BF16, Origin("default", note=f"bf16 mixed precision (autocast over fp32 weights) assumed, {where}; "
                                                    "pass --precision"))


def estimate(plan: TrainingPlan, document: Document | None = None, linked: list[Document] | None = None,
             exact_model: bool = False) -> EstimateReport:
    """The report of `plan` (read from `document` and the files it links, or of flags alone when None);
    EstimateError when no estimate can be made (the model or the GPU cannot be resolved)."""
    # Flags alone have no document: the estimate and the planner read ctx.document only where it is not None.
    ctx = LintContext(document=document, flavor=plan.flavor, plan=plan,  # type: ignore[arg-type]
                      linked=list(linked or ()))
    attach(ctx)
    if ctx.estimate is None:
        raise EstimateError(ctx.unestimable.reason if ctx.unestimable else "no estimate could be made")
    offers, advice = suggestions(ctx)
    return EstimateReport(plan, document, ctx.estimate, ctx.architecture, offers, advice,
                          exact_check(ctx.architecture) if exact_model else None)


def suggestions(ctx: LintContext) -> tuple[list[Offer], str | None]:
    """The planner's changes that fit, when the run does not fit or is within 10% of the card; flags-only
    estimates get every knob (as flags), config files the ones their flavor can write."""
    est = ctx.estimate
    if ctx.gpu is None or est.utilization is None or est.utilization <= TARGET:
        return [], None
    return plan_fixes(ctx, require_edits=ctx.document is not None)


def exact_check(arch: Any) -> dict[str, Any]:
    """transformers' own parameter count (meta device) next to trainlint's, for `estimate --exact-model`."""
    config = model_config(arch)
    if config is None:
        return {"available": False, "summary": f"no config.json is known for {arch.name}"}
    try:
        exact = exact_count(config)
    except ExactCountUnavailable as exc:
        return {"available": False, "summary": str(exc)}
    ours = arch.total_params
    diff = (ours - exact.params) / exact.params if exact.params else 0.0
    verdict = "the same" if ours == exact.params else f"trainlint's differs by {diff:+.2%}"
    return {"available": True, "transformers": exact.transformers_version, "auto_class": exact.auto_class,
            "params": exact.params, "trainlint_params": ours, "relative_difference": round(diff, 6),
            "summary": (f"transformers {exact.transformers_version} builds {exact.auto_class} with {exact.params:,} "
                        f"parameters on the meta device; trainlint counts {ours:,} ({verdict})")}
