"""The planning answers: which GPUs, and how many of each, a run needs (`fit_table`), and the largest micro-batch and
sequence length that fit on its target (`largest`). Every answer is an estimate of the run with that change, made
by the same memory model as `trainlint estimate` (`memory.estimate.estimate_total`), and checked at its edge: the
answer fits, the next value (one GPU count fewer, one more sample or token) does not.

**The fit table.** For each GPU asked for, the run as read (model, micro-batch, sequence length, precision,
checkpointing, LoRA, tensor/pipeline/context parallel sizes) is estimated on world sizes 1, 2, 4, 8 and then whole
nodes of 8 (16, 24, 32, ... up to `max_gpus`; only multiples of the model-parallel size tp x pp x cp), each with the
sharding and offload layouts the run's framework offers (`layouts`), and the fewest GPUs on which one fits is kept,
with the cheapest layout that fits there by the fix planner's cost model (`fixes.planner.sharding_cost`). Sharded
state shrinks as the data-parallel size grows, so once one node is passed the count is found by doubling and then
bisecting the number of nodes; the counts up to 8 are each tried. What the count changes besides memory (the
effective batch grows with the data-parallel size unless accumulation is lowered) is left to the reader.

**Cheapest first.** trainlint has no prices, so the rows are ordered by what the price of a run follows: the fewest
GPUs, then the card with the least memory (within a vendor's line-up and across its generations the card with less
memory is the cheaper one to buy or rent), then the lower bf16 peak, then the name. Rows that do not fit (on no
count up to `max_gpus`, or on a card that cannot run the run's precision) come last.

**The largest value.** The micro-batch from 1 to `MAX_MICRO_BATCH`, the sequence length from 1 to the model's
`max_position_embeddings` (the positions it was built for; learned position embeddings stop there) or `MAX_SEQ_LEN`
when the model has none: doubled from 1 until one does not fit, then bisected, so the answer is exact for a total
that grows with the value (activations, logits and attention do).

A core stage after `estimating` (it reads the flags-only precision from there); it imports no shell.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Callable, NamedTuple

from trainlint import estimating
from trainlint.catalog import gpus as gpu_catalog
from trainlint.catalog.gpus import GPU
from trainlint.context.launch.applying import held_by_deepspeed
from trainlint.fixes.planner import sharding_cost
from trainlint.memory.breakdown import GIB
from trainlint.memory.estimate import estimate_plan, estimate_total, resolve_architecture, with_versions
from trainlint.memory.model import PartsMemo
from trainlint.plan import Origin, Setting, TrainingPlan

MAX_GPUS = 1024  # the largest world size the fit table tries (128 nodes of 8)
GPUS_PER_NODE = 8  # the memory model's node size (`memory.model.Run.gpus_per_node`)
MAX_MICRO_BATCH = 2**20
MAX_SEQ_LEN = 2**22  # for a model that names no position limit
PLANNED = Origin("cli", note="planning")
KNOBS = {"micro-batch": "micro_batch", "seq-len": "seq_len"}  # `--max` words -> plan fields
# Frameworks that shard whenever more than one GPU trains (torchtune's distributed recipes: FSDP2 `fully_shard`;
# LitGPT's finetune/pretrain scripts: `FSDPStrategy`), so no unsharded layout exists there.
SHARD_ALWAYS = ("torchtune", "litgpt")


class PlanningError(Exception):
    """A planning question that cannot be answered as asked (no target GPU, an unknown knob or GPU name)."""


class Layout(NamedTuple):
    """One sharding / offload layout: the plan values it sets and how the fit table names it."""

    key: str  # "none" | "zero1" | "zero2" | "zero3" | "zero2+offload_optimizer" | ... | "fsdp_full_shard+offload"
    label: str
    zero_stage: int | None = None  # None: DeepSpeed not asked for (DDP or FSDP)
    fsdp: str | None = None
    offload_optimizer: str | None = None
    offload_params: str | None = None
    shards: bool = False  # partitions state across data-parallel ranks: nothing to gain at data-parallel size 1

    def values(self) -> dict[str, Any]:
        return {"zero_stage": self.zero_stage or 0, "fsdp": self.fsdp, "offload_optimizer": self.offload_optimizer,
                "offload_params": self.offload_params}


DEEPSPEED_LAYOUTS = (
    Layout("zero1", "DeepSpeed ZeRO-1", zero_stage=1, shards=True),
    Layout("zero2", "DeepSpeed ZeRO-2", zero_stage=2, shards=True),
    Layout("zero3", "DeepSpeed ZeRO-3", zero_stage=3, shards=True),
    Layout("zero2+offload_optimizer", "DeepSpeed ZeRO-2, optimizer offloaded to CPU (ZeRO-Offload)", zero_stage=2,
           offload_optimizer="cpu"),
    Layout("zero3+offload_optimizer", "DeepSpeed ZeRO-3, optimizer offloaded to CPU", zero_stage=3,
           offload_optimizer="cpu"),
    Layout("zero3+offload_optimizer+offload_params", "DeepSpeed ZeRO-3, optimizer and parameters offloaded to CPU",
           zero_stage=3, offload_optimizer="cpu", offload_params="cpu"),
)
FSDP_SHARD_GRAD_OP = Layout("fsdp_shard_grad_op", "FSDP SHARD_GRAD_OP", fsdp="shard_grad_op", shards=True)
FSDP_FULL_SHARD = Layout("fsdp_full_shard", "FSDP FULL_SHARD", fsdp="full_shard", shards=True)
# FSDP's CPU offload keeps the parameters and gradients on the host and steps the optimizer there (torchtune's
# `fsdp_cpu_offload`, HF's `fsdp: full_shard offload`).
FSDP_OFFLOAD = Layout("fsdp_full_shard+offload", "FSDP FULL_SHARD, parameters and optimizer offloaded to CPU",
                      fsdp="full_shard", offload_optimizer="cpu", offload_params="cpu")


def layouts(plan: TrainingPlan, world: int) -> list[Layout]:
    """The layouts the run's framework offers on `world` GPUs, in the fix planner's order of strength: FSDP ones
    where the run already uses FSDP or its framework shards only with FSDP (torchtune, LitGPT), DeepSpeed ZeRO
    ones otherwise; no unsharded layout where the framework always shards on more than one GPU; no layout that
    only shards state at a data-parallel size of 1. LitGPT's scripts build `FSDPStrategy(cpu_offload=False)`, so
    no offload there."""
    dp = world // max(1, _model_parallel(plan))
    fsdp_family = plan.fsdp.value not in (None, "no_shard") or plan.flavor in SHARD_ALWAYS
    if fsdp_family:
        found = [] if plan.flavor in SHARD_ALWAYS and world > 1 else [Layout("none", _none_label(plan, world, False))]
        if plan.flavor not in SHARD_ALWAYS:
            found.append(FSDP_SHARD_GRAD_OP)
        found.append(FSDP_FULL_SHARD)
        if plan.flavor != "litgpt":
            found.append(FSDP_OFFLOAD)
    else:
        deepspeed = plan.zero_stage.origin.kind != "default"
        found = [Layout("none", _none_label(plan, world, deepspeed), zero_stage=0 if deepspeed else None),
                 *DEEPSPEED_LAYOUTS]
    return [layout for layout in found if not (layout.shards and dp <= 1)]


def _none_label(plan: TrainingPlan, world: int, deepspeed: bool) -> str:
    if deepspeed:
        return "no sharding (DeepSpeed ZeRO-0)"
    return "none (DDP)" if world // max(1, _model_parallel(plan)) > 1 else "none"


def _model_parallel(plan: TrainingPlan) -> int:
    return max(1, plan.tensor_parallel.value * plan.pipeline_parallel.value * plan.context_parallel.value)


def on_gpu(plan: TrainingPlan, gpu: GPU, world: int | None = None) -> TrainingPlan:
    """The plan on `world` x `gpu` (its own count when None). Flags alone assume the precision runs use on that card
    (`estimating.flags_precision`: fp16 mixed where it has no bf16); LitGPT turns activation checkpointing on
    whenever more than one device trains (its reader infers it from the devices), so a count changes that too."""
    changes: dict[str, Any] = {"gpu": Setting(gpu.name, PLANNED)}
    if world is not None:
        changes["num_gpus"] = Setting(world, PLANNED)
        changes["num_nodes"] = Setting(max(1, -(-world // GPUS_PER_NODE)), PLANNED)
        if plan.flavor == "litgpt" and plan.grad_ckpt.origin.kind in ("default", "inferred"):
            changes["grad_ckpt"] = Setting("full" if world > 1 else "none", PLANNED)
    moved = plan.with_(**changes)
    if plan.flavor == "flags" and plan.precision.is_default:
        moved = moved.with_(precision=estimating.flags_precision(moved))
    return moved


def with_layout(plan: TrainingPlan, layout: Layout) -> TrainingPlan:
    """The plan with `layout`'s sharding and offload; DeepSpeed's stage stays the plan's default (no DeepSpeed)
    when the layout does not ask for DeepSpeed and the plan did not have it."""
    values = layout.values()
    changes: dict[str, Setting] = {}
    if layout.zero_stage is None and plan.zero_stage.origin.kind == "default":
        del values["zero_stage"]
    elif layout.zero_stage is not None and plan.zero_stage.origin.kind == "default":
        # Handed to DeepSpeed, a 16-bit run keeps 16-bit weights with an fp32 master copy (as a launch that adds
        # DeepSpeed makes it: `context.launch.applying`).
        held = held_by_deepspeed(plan.precision)
        if held is not None:
            changes["precision"] = held
    changes.update({name: Setting(value, PLANNED) for name, value in values.items()})
    return plan.with_(**changes)


def layout_flags(plan: TrainingPlan, layout: Layout) -> str:
    """The `trainlint estimate` flags that ask for `layout` on top of `plan`."""
    flags = []
    if layout.fsdp is not None or plan.fsdp.value not in (None, "no_shard"):
        if layout.fsdp != plan.fsdp.value:
            flags.append(f"--fsdp {layout.fsdp or 'no_shard'}")
    if layout.zero_stage is not None and layout.zero_stage != (plan.zero_stage.value or 0) or \
            layout.zero_stage is not None and plan.zero_stage.origin.kind == "default":
        flags.append(f"--zero {layout.zero_stage}")
    for flag, mine, theirs in (("--offload-optimizer", layout.offload_optimizer, plan.offload_optimizer.value),
                               ("--offload-params", layout.offload_params, plan.offload_params.value)):
        if mine != theirs:
            flags.append(f"{flag} {mine or 'none'}")
    return " ".join(flags)


def unsupported(plan: TrainingPlan, gpu: GPU) -> str | None:
    """Why `gpu` cannot run the plan's precision at all (bf16 or fp8 on a card without it), or None."""
    if not gpu.capabilities_known:
        return None
    precision = plan.precision.value
    if "bf16" in (precision.param_dtype, precision.compute_dtype) and not gpu.bf16:
        return f"{gpu.name} has no bf16 (the run computes in bf16)"
    if precision.fp8 and not gpu.fp8:
        return f"{gpu.name} has no fp8 (the run uses fp8 matmuls)"
    return None


class FitRow(NamedTuple):
    """One GPU of the fit table: the fewest of it on which the run fits, with the cheapest layout there; or, when
    none fits, the largest count tried with the layout that comes closest."""

    gpu: GPU
    num_gpus: int
    layout: Layout
    total: int  # per-GPU bytes the card must hold (the estimate's total)
    host_bytes: int  # host RAM per node for offloaded state
    cost: float  # extra step time of the layout, by the fix planner's cost model
    cost_text: str
    flags: str  # the `trainlint estimate` flags that ask for this row (with --gpu and --num-gpus)
    fits: bool  # it fits in memory and the card can run the run's precision
    note: str | None = None  # why it does not fit (memory: what was tried and what remains; the precision)
    memory_fits: bool = True  # the memory fits on `num_gpus` (False: on no count up to the largest tried)

    @property
    def headroom(self) -> int:
        return self.gpu.memory_bytes - self.total

    @property
    def changes(self) -> dict[str, Any]:
        """The plan fields this row sets: the GPU, the count, and the layout's sharding and offload."""
        return {"gpu": self.gpu.name, "num_gpus": self.num_gpus, **self.layout.values()}

    def to_json(self) -> dict[str, Any]:
        return {"gpu": self.gpu.name, "memory_gib": round(self.gpu.memory_bytes / GIB, 2), "num_gpus": self.num_gpus,
                "sharding": self.layout.key, "sharding_label": self.layout.label, "fits": self.fits,
                "peak_gib": round(self.total / GIB, 2), "headroom_gib": round(self.headroom / GIB, 2),
                "utilization": round(self.total / self.gpu.memory_bytes, 4), "peak_bytes": self.total,
                "host_gib_per_node": round(self.host_bytes / GIB, 1), "cost": round(self.cost, 4),
                "cost_text": self.cost_text, "flags": self.flags, "memory_fits": self.memory_fits, "note": self.note}


def fit_table(plan: TrainingPlan, arch: Any, gpus: list[GPU], max_gpus: int = MAX_GPUS) -> list[FitRow]:
    """For each of `gpus`: the fewest of it (up to `max_gpus`) on which the run fits, with the cheapest layout
    there; cheapest first (see the module docstring)."""
    memo = PartsMemo()
    rows = [fewest(plan, arch, gpu, max_gpus, memo) for gpu in gpus]
    return sorted(rows, key=lambda r: (not r.fits, r.num_gpus if r.fits else 0, r.gpu.memory_bytes,
                                       r.gpu.bf16_tflops or 0.0, r.gpu.name))


def counts(plan: TrainingPlan, max_gpus: int = MAX_GPUS) -> list[int]:
    """The world sizes tried: 1, 2, 4, 8, then whole nodes of 8, each a multiple of the model-parallel size (which
    is tried itself too)."""
    mp = _model_parallel(plan)
    found = {n for n in (1, 2, 4, 8) if n <= max_gpus} | set(range(16, max_gpus + 1, GPUS_PER_NODE))
    if mp <= max_gpus:
        found.add(mp)
    return sorted(n for n in found if n % mp == 0)


def fewest(plan: TrainingPlan, arch: Any, gpu: GPU, max_gpus: int = MAX_GPUS, memo: PartsMemo | None = None) -> FitRow:
    """The fit table's row of `gpu`."""
    memo = memo if memo is not None else PartsMemo()
    capacity = gpu.memory_bytes
    tried: dict[int, FitRow | None] = {}

    def at(world: int) -> FitRow | None:
        if world not in tried:
            tried[world] = _cheapest_at(plan, arch, gpu, world, memo, capacity)
        return tried[world]

    sizes = counts(plan, max_gpus)
    index = _first(lambda i: at(sizes[i]) is not None, len(sizes),
                   sum(1 for n in sizes if n <= GPUS_PER_NODE)) if sizes else None
    reason = unsupported(on_gpu(plan, gpu), gpu)
    if index is not None:
        row = at(sizes[index])
        assert row is not None
        return row if reason is None else _replace_fit(row, False, reason)
    world = sizes[-1] if sizes else max_gpus
    moved = on_gpu(plan, gpu, world)
    tried_layouts = layouts(moved, world) or [Layout("none", _none_label(moved, world, False))]
    best = min(((estimate_total(with_layout(moved, layout), arch, memo), layout) for layout in tried_layouts),
               key=lambda item: item[0][0])
    (total, host), layout = best
    cost, text = sharding_cost(_cost_ctx(moved, arch, gpu), layout.values())
    note = f"does not fit on up to {world} x {gpu.name} with any sharding or offload" + \
        _what_stays(with_layout(moved, layout), arch, gpu)
    return FitRow(gpu, world, layout, total, host, cost, text, _row_flags(moved, gpu, world, layout), False,
                  f"{reason}; {note}" if reason else note, memory_fits=False)


def _what_stays(plan: TrainingPlan, arch: Any, gpu: GPU) -> str:
    """What of the closest layout's per-GPU memory is largest (what more GPUs did not shrink), as a clause."""
    est = estimate_plan(plan, arch, gpu)
    parts = sorted((c for c in est.components if c.bytes >= GIB), key=lambda c: -c.bytes)[:2]
    if not parts:
        return ""
    return ": " + " and ".join(f"{c.label} {c.bytes / GIB:.1f} GiB" for c in parts) + " per GPU remain"


def _replace_fit(row: FitRow, fits: bool, note: str) -> FitRow:
    return FitRow(row.gpu, row.num_gpus, row.layout, row.total, row.host_bytes, row.cost, row.cost_text, row.flags,
                  fits, note)


def _cheapest_at(plan: TrainingPlan, arch: Any, gpu: GPU, world: int, memo: PartsMemo, capacity: int) -> FitRow | None:
    """The cheapest layout that fits on `world` x `gpu`, as a row; None when none does."""
    moved = on_gpu(plan, gpu, world)
    ctx = _cost_ctx(moved, arch, gpu)
    ranked = sorted(((*sharding_cost(ctx, layout.values()), i, layout) for i, layout in enumerate(layouts(moved, world))),
                    key=lambda item: (item[0], item[2]))
    for cost, text, _i, layout in ranked:
        total, host = estimate_total(with_layout(moved, layout), arch, memo)
        if total <= capacity:
            return FitRow(gpu, world, layout, total, host, cost, text, _row_flags(moved, gpu, world, layout), True,
                          _layout_note(moved, layout))
    return None


def _layout_note(plan: TrainingPlan, layout: Layout) -> str | None:
    """What else the layout needs of the run: a 4/8-bit base sharded by ZeRO-3 or FSDP needs its quantized weights
    stored in a dtype the sharding can flatten (bitsandbytes `bnb_4bit_quant_storage`, transformers' FSDP-QLoRA
    and DeepSpeed ZeRO-3 QLoRA recipes set it to the compute dtype). torchtune quantizes with torchao's NF4Tensor,
    which its FSDP2 recipes shard as it is."""
    peft = plan.peft.value
    if peft is not None and peft.base_bits and plan.flavor != "torchtune" and \
            (layout.zero_stage == 3 or layout.fsdp == "full_shard"):
        return "a quantized base sharded this way needs bnb_4bit_quant_storage set to the compute dtype"
    return None


def _row_flags(plan: TrainingPlan, gpu: GPU, world: int, layout: Layout) -> str:
    flags = [f"--gpu {gpu.name} --num-gpus {world}", layout_flags(plan, layout)]
    precision = with_layout(plan, layout).precision.value
    if precision != plan.precision.value:
        flags.append("--precision " + next(w for w, p in estimating.PRECISION_FLAGS.items() if p == precision))
    return " ".join(x for x in flags if x)


def _cost_ctx(plan: TrainingPlan, arch: Any, gpu: GPU) -> Any:
    """What the fix planner's cost model reads of a lint context."""
    return SimpleNamespace(plan=plan, architecture=arch, gpu=gpu)


def _first(ok: Callable[[int], bool], size: int, linear: int) -> int | None:
    """The smallest index in range(size) where `ok` holds, for an `ok` that holds from some index on past the first
    `linear` ones (those are each tried): doubling the step past them, then bisecting; None when it never holds."""
    for i in range(min(linear, size)):
        if ok(i):
            return i
    bad, step = linear - 1, 1
    probe = linear
    while probe < size and not ok(probe):
        bad, probe, step = probe, probe + step, step * 2
    if probe >= size:
        if bad == size - 1 or not ok(size - 1):
            return None
        probe = size - 1
    good = probe
    while good - bad > 1:
        mid = (good + bad) // 2
        if ok(mid):
            good = mid
        else:
            bad = mid
    return good


# ---- the largest value that fits -------------------------------------------------------------------

class Largest(NamedTuple):
    """The largest value of one knob that fits on the run's target, and the estimates at its edge."""

    knob: str  # the plan field: "micro_batch" | "seq_len"
    value: int | None  # None: not even 1 fits
    current: int | None  # the run's own value (None: not set)
    total: int | None  # per-GPU bytes at `value`
    next_total: int | None  # at value + 1 (at 1 when nothing fits); None when `value` is the bound
    bound: int
    bound_note: str  # where the bound comes from
    gpu: GPU
    num_gpus: int

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "current": self.current, "peak_gib": _gib(self.total),
                "next_peak_gib": _gib(self.next_total), "bound": self.bound, "bound_note": self.bound_note,
                "gpu": self.gpu.name, "num_gpus": self.num_gpus, "capacity_gib": round(self.gpu.memory_bytes / GIB, 2)}


def _gib(value: int | None) -> float | None:
    return None if value is None else round(value / GIB, 2)


def bounds(plan: TrainingPlan, arch: Any, knob: str) -> tuple[int, str]:
    """The largest value the search tries, and why."""
    if knob == "seq_len":
        limit = getattr(arch, "max_position_embeddings", None)
        if isinstance(limit, int) and limit > 0:
            return limit, f"the model's max_position_embeddings ({limit:,})"
        return MAX_SEQ_LEN, "the search's limit (the model names no position limit)"
    return MAX_MICRO_BATCH, "the search's limit"


def largest(plan: TrainingPlan, arch: Any, gpu: GPU, knob: str, memo: PartsMemo | None = None) -> Largest:
    """The largest value of `knob` (a plan field of `KNOBS`) with which the run fits on its own count of `gpu`."""
    if knob not in KNOBS.values():
        raise PlanningError(f"unknown knob {knob!r}: one of {', '.join(KNOBS)}")
    memo = memo if memo is not None else PartsMemo()
    capacity = gpu.memory_bytes
    limit, note = bounds(plan, arch, knob)
    totals: dict[int, int] = {}

    def total(value: int) -> int:
        if value not in totals:
            totals[value] = estimate_total(plan.with_(**{knob: Setting(value, PLANNED)}), arch, memo)[0]
        return totals[value]

    current = getattr(plan, knob).value
    world = max(1, plan.num_gpus.value)
    if total(1) > capacity:
        return Largest(knob, None, current, None, total(1), limit, note, gpu, world)
    good, bad = 1, None
    probe = 2
    while bad is None:
        probe = min(probe, limit)
        if probe <= good:
            break
        if total(probe) <= capacity:
            good, probe = probe, probe * 2
        else:
            bad = probe
    while bad is not None and bad - good > 1:
        mid = (good + bad) // 2
        if total(mid) <= capacity:
            good = mid
        else:
            bad = mid
    return Largest(knob, good, current, total(good), total(good + 1) if good < limit else None, limit, note, gpu,
                   world)


# ---- what `trainlint estimate` and the language server ask -----------------------------------------

def catalog_gpus(spec: str) -> list[GPU]:
    """`--gpus`: "all" (the whole catalog) or comma-separated names, aliases or capacities, each once."""
    words = [w.strip() for w in spec.split(",") if w.strip()]
    if not words:
        raise PlanningError("--gpus: give `all` or GPU names separated by commas (see `trainlint gpus`)")
    if any(w.lower() == "all" for w in words):
        return gpu_catalog.catalog()
    found: list[GPU] = []
    for word in words:
        try:
            gpu = gpu_catalog.resolve_gpu(word)
        except gpu_catalog.UnknownGPUError as exc:
            raise PlanningError(f"--gpus: {exc}") from None
        if gpu.name not in {g.name for g in found}:
            found.append(gpu)
    return found


class Answers(NamedTuple):
    """What `trainlint estimate --gpus / --max` adds to the estimate."""

    fit_table: list[FitRow] | None
    largest: dict[str, Largest]  # by `--max` word

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.fit_table is not None:
            out["fit_table"] = [row.to_json() for row in self.fit_table]
        if self.largest:
            out["max"] = {KNOBS[word]: answer.value for word, answer in self.largest.items()}
            out["max_detail"] = {KNOBS[word]: answer.to_json() for word, answer in self.largest.items()}
        return out


def answer(report: estimating.EstimateReport, gpus: list[GPU] | None = None, knobs: tuple[str, ...] = (),
           max_gpus: int = MAX_GPUS) -> Answers:
    """The fit table over `gpus` (None: not asked) and the largest value of each of `knobs` (`--max` words) on the
    run's target; PlanningError when a knob is asked for without a target GPU."""
    plan, arch = report.plan, report.architecture
    table = fit_table(plan, arch, gpus, max_gpus) if gpus is not None else None
    found: dict[str, Largest] = {}
    if knobs:
        gpu = report.estimate.gpu
        if gpu is None:
            raise PlanningError("--max needs the run's target GPU: pass --gpu (or name it in the config)")
        memo = PartsMemo()
        for word in dict.fromkeys(knobs):
            if word not in KNOBS:
                raise PlanningError(f"--max: unknown knob {word!r}: one of {', '.join(KNOBS)}")
            found[word] = largest(plan, arch, gpu, KNOBS[word], memo)
    return Answers(table, found)


def largest_for(result: Any, words: tuple[str, ...] = tuple(KNOBS)) -> dict[str, Largest]:
    """The largest micro-batch and sequence length (`words`, `--max` words) that fit on a checked file's target (for
    the language server's hover); empty when it has no estimate or no target GPU."""
    plan, est = getattr(result, "plan", None), getattr(result, "estimate", None)
    if plan is None or est is None or est.gpu is None:
        return {}
    arch, _ = resolve_architecture(plan)
    if arch is None:
        return {}
    plan = with_versions(plan, getattr(result, "versions", None))
    memo = PartsMemo()
    return {word: largest(plan, arch, est.gpu, KNOBS[word], memo) for word in words}
