"""The memory fix planner: when a run does not fit, search the knobs its flavor and framework expose,
alone and in combinations of up to four, re-estimate each, and offer the cheapest few that fit.

**Knobs** (one option per group; `knobs.py` says where each flavor keeps it): activation checkpointing;
micro-batch down with gradient accumulation up by the same factor (the effective batch
micro x accumulation x data-parallel size is unchanged: tensor, pipeline and context parallel sizes do
not change, so neither does the data-parallel size); ZeRO stage up (where DeepSpeed is in play); DeepSpeed
optimizer offload (only with ZeRO >= 1 in the fixed run: at stage 0 DeepSpeed stops the run) and
parameter offload (only with ZeRO-3); CPU activation offload (axolotl, torchtune: only with checkpointing,
which they require); SDPA instead of eager attention; an 8-bit AdamW; Liger's fused linear cross-entropy.
Selective checkpointing has no config key in these flavors and is not offered; LoRA/QLoRA changes what is
trained, so it is only named as a last resort in the advice when nothing else fits.

**Search**: every combination of up to four groups is enumerated (a few hundred to a few thousand;
one estimate takes well under a millisecond), sorted by safety (safe fixes first: they train the same
model) and then by the cost model, and re-estimated in that order. A combination the frameworks would
refuse, or whose edits overlap, is skipped, as is one that contains, with options at least as strong, one
that already fits (it costs more and buys nothing). The first `limit` that fit are offered. A fix must bring the total under 90% of the
card (so no near-capacity warning follows); when nothing reaches that, combinations under 100% are
offered instead.

**Cost model** (fraction of step time, each term stated in the fix title):
- full activation checkpointing recomputes the forward: +33% (forward ~ 1/3 of forward + backward);
- smaller micro-batches use smaller kernels: below 8k tokens per micro-batch the slowdown grows
  linearly to +15% (tokens_after vs tokens_before);
- ZeRO-1/2 reduce-scatter the gradients: +1% / +3%; ZeRO-3 (and FSDP full shard) all-gather the parameters
  in forward and backward: 2 x 2 bytes x params per micro-step over the interconnect (200 GB/s within a
  node, 25 GB/s across nodes), half of it hidden behind compute, at least +5%;
- optimizer offload moves gradients down and parameters up once per optimizer step over PCIe (25 GB/s)
  and runs Adam on the CPU (~1e9 params/s per GPU process), amortized over the accumulation steps,
  at least +10%; parameter offload fetches the parameters over PCIe in forward and backward of every
  micro-step, at least +20%;
- activation offload copies each layer's input to host memory and back: +10%;
- SDPA instead of eager attention: -10%; 8-bit AdamW: +1% (unsafe: quantized states change the numerics);
  fused cross-entropy: 0% (unsafe: it needs the liger-kernel package);
- host RAM: each GiB of offloaded state per node adds 0.02% to the cost, so of two similar offloads the
  one that needs less host RAM comes first; the title says how much it needs.

The compute time of one micro-step is 6 x params x tokens / (the GPU's bf16 peak x 40% utilization).

A knob that changes a value the config's keys do not hold (`knobs.held_origin`) writes it where it is set when that
is a `# trainlint:` directive of the file (`knobs.directive_edits`); one a flag, [tool.trainlint] or the launch sets
has no edit and is left out of the offers, and `held_change` says, in the finding's detail, when the cheapest change
that fits needs such a value: which, where it is set and the value that fits.

When no change the config can make fits, `advice` says what would: the run's own GPU count with sharding
and offload it cannot express, then the smallest GPU count (never fewer than the run has) with ZeRO-3 /
FSDP full shard, then with tensor parallelism, then QLoRA.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from operator import attrgetter, itemgetter
from typing import Any, NamedTuple

from trainlint.diagnostics import Edit, Fix
from trainlint.fixes import knobs
from trainlint.memory.breakdown import GIB
from trainlint.memory.estimate import TotalsCache, estimate_total
from trainlint.memory.model import PartsMemo, optimizer_spec
from trainlint.plan import COUNT_LIMIT, Origin, Peft, Setting

TARGET = 0.90  # a fix must bring the total under 90% of the card, so no near-capacity warning follows
MAX_KNOBS = 4
MAX_EVALUATIONS = 5000

RECOMPUTE = 0.33
ZERO_COST = {1: 0.01, 2: 0.03}
PCIE = 25e9  # bytes/s host <-> device, one direction, per GPU (PCIe 4 x16 in practice)
INTRA_NODE = 200e9  # bytes/s per GPU all-gather bandwidth within a node (NVLink, effective)
INTER_NODE = 25e9  # bytes/s per GPU across nodes (200 Gb/s InfiniBand per GPU)
CPU_ADAM = 1e9  # params/s per GPU process (DeepSpeed CPUAdam on its share of the host's cores)
MFU = 0.40
HOST_PENALTY = 0.0002  # cost per GiB of host RAM per node


class Knob(NamedTuple):
    """One setting the out-of-memory planner may change, with its memory effect's group and its cost."""
    group: str  # at most one knob per group in a combination
    strength: int  # within a group: higher is stronger (a smaller micro-batch, a higher ZeRO stage)
    title: str
    changes: dict  # plan field -> value
    cost: float  # extra step time, fraction (0.33 = +33%)
    cost_text: str  # "+33% compute (recompute)"
    safe: bool = True
    edits: tuple[Edit, ...] | None = None  # None: the config cannot say it (flags-only estimates still can)
    flags: str = ""  # the `trainlint estimate` flags that ask for the same
    # the fields it changes whose values the config's keys do not hold (`knobs.held_origin`), with where they are set
    held: tuple[tuple[str, Origin], ...] = ()


class Candidate(NamedTuple):
    """A combination of knobs the planner tried: the changes, their cost and the edits that make them."""
    title: str
    changes: dict
    cost: float
    cost_text: str
    safe: bool = True
    edits: tuple[Edit, ...] = ()
    flags: str = ""
    knobs: tuple[Knob, ...] = ()


class Offer(NamedTuple):
    """A candidate that fits, with the memory it needs: what becomes the finding's fix."""
    candidate: Candidate
    total: int
    host_bytes: int = 0

    def fix(self, before: int, capacity: int) -> Fix:
        return Fix(self.title(before, capacity), self.candidate.edits, self.candidate.safe)

    def title(self, before: int, capacity: int) -> str:
        c = self.candidate
        host = f"; needs {self.host_bytes / GIB:.0f} GiB host RAM per node" if self.host_bytes else ""
        return (f"{c.title}: {before / GIB:.1f} -> {self.total / GIB:.1f} GiB of {capacity / GIB:.0f} GiB, "
                f"{c.cost_text}{host}")

    def to_json(self, before: int, capacity: int) -> dict:
        c = self.candidate
        return {"title": self.title(before, capacity), "changes": {k: _jsonable(v) for k, v in c.changes.items()},
                "total_bytes": self.total, "host_bytes": self.host_bytes, "cost": round(c.cost, 4),
                "applicability": "safe" if c.safe else "unsafe", "flags": c.flags}


def _jsonable(value):
    return value if isinstance(value, (str, int, float, bool, type(None))) else str(value)


# ---- the cost model ----------------------------------------------------------------------------

def _tokens(plan, micro: int | None = None) -> int:
    return (micro if micro is not None else plan.micro_batch.value) * (plan.seq_len.value or 2048)


def _efficiency_cost(tokens_before: int, tokens_after: int) -> float:
    """Small micro-batches use the GPU less well; below ~8k tokens the slowdown grows to 15%."""
    def slowdown(tokens: int) -> float:
        return max(0.0, (8192 - tokens) / 8192) * 0.15
    return max(0.0, slowdown(tokens_after) - slowdown(tokens_before))


def _micro_step_seconds(ctx) -> float:
    plan, arch, gpu = ctx.plan, ctx.architecture, ctx.gpu
    params = getattr(arch, "total_params", 0) or 1e9
    tflops = (getattr(gpu, "bf16_tflops", None) or 300.0) if gpu is not None else 300.0
    shards = max(1, plan.tensor_parallel.value * plan.pipeline_parallel.value)
    return 6 * params / shards * _tokens(plan) / (tflops * 1e12 * MFU)


def _params_per_gpu(ctx) -> float:
    plan = ctx.plan
    params = getattr(ctx.architecture, "total_params", 0) or 1e9
    return params / max(1, plan.tensor_parallel.value * plan.pipeline_parallel.value)


def _zero3_cost(ctx) -> float:
    plan = ctx.plan
    dp = plan.data_parallel
    if dp <= 1:
        return 0.05
    bandwidth = INTRA_NODE if plan.num_gpus.value <= 8 and plan.num_nodes.value <= 1 else INTER_NODE
    seconds = 2 * 2 * _params_per_gpu(ctx) * (dp - 1) / dp / bandwidth * 0.5
    return min(1.0, max(0.05, seconds / _micro_step_seconds(ctx)))


def _offload_optimizer_cost(ctx) -> float:
    plan = ctx.plan
    shard = _params_per_gpu(ctx) / max(1, plan.data_parallel)
    seconds = 4 * shard / PCIE + shard / CPU_ADAM
    return min(3.0, max(0.10, seconds / (_micro_step_seconds(ctx) * max(1, plan.grad_accum.value))))


def _offload_params_cost(ctx) -> float:
    shard = _params_per_gpu(ctx) / max(1, ctx.plan.data_parallel)
    seconds = 2 * 2 * shard / PCIE
    return min(3.0, max(0.20, seconds / _micro_step_seconds(ctx)))


def _pct(cost: float) -> str:
    return f"{cost:+.0%}"


# ---- the knobs -----------------------------------------------------------------------------------

def deepspeed_in_play(ctx) -> bool:
    plan = ctx.plan
    return plan.zero_stage.origin.kind != "default" or bool(ctx.linked) or ctx.flavor == "deepspeed" or \
        plan.precision.value.master_weights and ctx.flavor == "flags"


def knob_list(ctx, require_edits: bool = True, held: bool = False) -> list[Knob]:
    """Every knob this run can turn but LoRA/QLoRA (`last_resort_knobs`), each with its edits (None where the config
    cannot say it). With `held`, also the knobs without edits only because a value they change is set by a flag,
    [tool.trainlint] or the launch (`Knob.held` says where): what would fit, though no fix can say it."""
    plan = ctx.plan
    out: list[Knob] = []
    flags_only = ctx.document is None

    def edits_for(field, value):
        return None if flags_only else knobs.setting_edits(ctx, field, value)

    add = _adder(out, require_edits, flags_only, ctx, held)

    if (plan.attn_impl.value or "").lower() == "eager":
        add(Knob("attn", 1, "use SDPA attention instead of eager", {"attn_impl": "sdpa"}, -0.10,
                 "-10% time (SDPA)", edits=_tuple(edits_for("attn_impl", "sdpa")), flags="--attn sdpa"))
    if plan.grad_ckpt.value == "none":
        add(Knob("ckpt", 1, "enable gradient checkpointing", {"grad_ckpt": "full"}, RECOMPUTE,
                 "+33% compute (recompute)", edits=_tuple(edits_for("grad_ckpt", "full")), flags="--grad-ckpt full"))
    micro, gas = plan.micro_batch.value, plan.grad_accum.value
    # torchtune's optimizer_in_bwd steps in backward and refuses gradient accumulation (TL640): no same-batch split.
    if isinstance(micro, int) and isinstance(gas, int) and micro > 1 and gas >= 1 and not plan.optimizer_in_bwd.value:
        for new_micro in _smaller_micro_batches(micro):
            factor = micro // new_micro
            new_gas = gas * factor
            if new_gas > COUNT_LIMIT or new_gas > micro * gas:
                continue  # no run has that many accumulation steps (the plan's bound): never written
            edits = _batch_edits(ctx, new_micro, new_gas) if not flags_only else None
            cost = _efficiency_cost(_tokens(plan), _tokens(plan, new_micro))
            add(Knob("batch", micro - new_micro,
                     f"micro-batch {micro} -> {new_micro} with accumulation {gas} -> {new_gas} (same effective batch)",
                     {"micro_batch": new_micro, "grad_accum": new_gas}, cost,
                     f"{_pct(cost)} time (smaller kernels)" if cost >= 0.005 else "about the same speed",
                     edits=edits, flags=f"--micro-batch {new_micro} --grad-accum {new_gas}"))
    ds = deepspeed_in_play(ctx) or (flags_only and plan.fsdp.value is None)
    current_stage = min(3, max(0, plan.zero_stage.value or 0))
    if ds and plan.fsdp.value is None:
        for stage in range(current_stage + 1, 4):
            cost = ZERO_COST.get(stage) or _zero3_cost(ctx)
            add(Knob("zero", stage, f"ZeRO stage {current_stage} -> {stage}", {"zero_stage": stage}, cost,
                     f"{_pct(cost)} time ({'parameter all-gathers' if stage == 3 else 'gradient reduce-scatter'})",
                     edits=_tuple(edits_for("zero_stage", stage)), flags=f"--zero {stage}"))
        if plan.offload_optimizer.value is None:
            cost = _offload_optimizer_cost(ctx)
            add(Knob("offload_opt", 1, "offload the optimizer to CPU (DeepSpeed)", {"offload_optimizer": "cpu"}, cost,
                     f"{_pct(cost)} time (PCIe transfers, CPU Adam)",
                     edits=None if flags_only else _tuple(knobs.deepspeed_offload_edits(ctx, "optimizer")),
                     flags="--offload-optimizer cpu"))
        if plan.offload_params.value is None:
            cost = _offload_params_cost(ctx)
            add(Knob("offload_param", 1, "offload the parameters to CPU (DeepSpeed ZeRO-3)", {"offload_params": "cpu"},
                     cost, f"{_pct(cost)} time (parameter fetches over PCIe)",
                     edits=None if flags_only else _tuple(knobs.deepspeed_offload_edits(ctx, "param")),
                     flags="--offload-params cpu"))
    if not plan.activation_offload.value and (flags_only or ctx.flavor in knobs.ACTIVATION_OFFLOAD):
        add(Knob("act_offload", 1, "offload activations to CPU", {"activation_offload": True}, 0.10,
                 "+10% time (activation copies over PCIe)",
                 edits=_tuple(edits_for("activation_offload", True)), flags=""))
    spec = optimizer_spec(plan.optimizer.value or "adamw")
    if spec is not None and spec.state_factor >= 2 and plan.peft.value is None and \
            not plan.precision.value.master_weights and plan.offload_optimizer.value is None and \
            not any(m.get("optimizer") is not None for _, m in knobs.deepspeed_mappings(ctx)):
        # A DeepSpeed `optimizer` section replaces the framework's optimizer (the change would not take).
        add(Knob("optim", 1, "use 8-bit AdamW (bitsandbytes)", {"optimizer": "adamw_8bit"}, 0.01,
                 "+1% time; optimizer states quantized (changes numerics slightly)", safe=False,
                 edits=_tuple(edits_for("optimizer", "adamw_8bit")), flags="--optimizer adamw_8bit"))
    # The fused linear cross-entropy replaces the model's own loss over labels: supervised and pretraining runs only
    # (preference and RL trainers compute from the logits; LLaMA-Factory applies Liger without it outside pt/sft,
    # model_utils/liger_kernel.py apply_liger_kernel).
    if not plan.fused_loss.value and plan.loss_kernel.value is None and ctx.architecture is not None and \
            ctx.architecture.vocab_size >= 32000 and (plan.head.value or "lm") == "lm" and \
            (plan.task.value or "sft") in ("sft", "pretrain"):
        add(Knob("loss", 1, "use Liger's fused linear cross-entropy (needs the liger-kernel package)",
                 {"fused_loss": True}, 0.0, "same compute", safe=False,
                 edits=_tuple(edits_for("fused_loss", True)), flags="--fused-loss"))
    _phase_knobs(ctx, edits_for, add, held)
    return out


def _phase_knobs(ctx, edits_for, add: Callable[[Knob], None], held: bool = False) -> None:
    """The knobs of the phases around the step (memory/phases.py): a smaller evaluation batch, evaluation
    predictions moved to the host every step, checkpoints without the optimizer, sharded FSDP checkpoints. None of
    them changes the training step; `add` keeps those the config can write."""
    plan = ctx.plan
    found: list[Knob] = []
    collect = _adder(found, True, False, ctx, held)
    if plan.evaluation.value:
        batch = plan.eval_batch.value or (plan.micro_batch.value if ctx.flavor == "axolotl" else 8)
        for smaller in _smaller_micro_batches(batch)[:4] if isinstance(batch, int) and batch > 1 else ():
            collect(Knob("eval_batch", batch - smaller, f"evaluate {smaller} per device instead of {batch} "
                         "(per_device_eval_batch_size)", {"eval_batch": smaller}, 0.0,
                         "same training speed; evaluation takes more, smaller batches",
                         edits=_tuple(edits_for("eval_batch", smaller))))
        kept = plan.eval_predictions.value != "none" or plan.predict_with_generate.value
        if kept and not plan.eval_accumulation.value:
            collect(Knob("eval_accum", 1, "move evaluation predictions to the host every step (eval_accumulation_steps 1)",
                         {"eval_accumulation": 1}, 0.0, "same training speed; predictions kept in host RAM",
                         edits=_tuple(edits_for("eval_accumulation", 1))))
    sharded_fsdp = plan.fsdp.value not in (None, "no_shard") and plan.num_gpus.value > 1
    full = (plan.fsdp_state_dict.value or ("FULL_STATE_DICT" if plan.fsdp_version.value == 1 else "")).upper() \
        == "FULL_STATE_DICT"
    if sharded_fsdp and full:
        if not plan.save_only_model.value:
            collect(Knob("save_only", 1, "save only the model in checkpoints (save_only_model)",
                         {"save_only_model": True}, 0.0, "same speed; checkpoints cannot resume the optimizer",
                         safe=False, edits=_tuple(edits_for("save_only_model", True))))
        collect(Knob("state_dict", 1, "save FSDP checkpoints sharded (fsdp_state_dict_type SHARDED_STATE_DICT)",
                     {"fsdp_state_dict": "SHARDED_STATE_DICT"}, 0.0,
                     "same speed; a sharded checkpoint (merge it with `accelerate merge-weights`)", safe=False,
                     edits=_tuple(edits_for("fsdp_state_dict", "SHARDED_STATE_DICT"))))
    for knob in found:
        add(knob)


def _adder(out: list[Knob], require_edits: bool, flags_only: bool, ctx=None, held: bool = False) -> Callable[[Knob], None]:
    """`add(knob)`: keeps a knob the config can write (or, for flags-only estimates without `require_edits`, any).
    With `ctx` (of a config file), a knob that changes a value set outside the config's keys says where
    (`Knob.held`), and has no edits unless each such value is a directive of the file, changed where it is written;
    with `held`, such a knob is kept without edits when each of its other values can be written."""
    def add(knob: Knob):
        if ctx is not None and not flags_only:
            knob = _with_holds(ctx, knob)
        if knob.edits is not None or (not require_edits and flags_only):
            out.append(knob)
        elif held and knob.held and all(any(f == field for f, _ in knob.held) or
                                        knobs.setting_edits(ctx, field, value) for field, value in knob.changes.items()):
            out.append(knob)

    return add


def _with_holds(ctx, knob: Knob) -> Knob:
    holds = tuple((field, origin) for field in knob.changes if (origin := knobs.held_origin(ctx, field)) is not None)
    if not holds:
        return knob
    stuck = any(not knobs.directive_edits(ctx, field, knob.changes[field]) for field, _ in holds)
    return knob._replace(held=holds, edits=None if stuck else knob.edits)


def last_resort_knobs(ctx, require_edits: bool = True, held: bool = False) -> list[Knob]:
    """LoRA and QLoRA (they change what is trained), with their edits: made only when nothing else fits."""
    plan = ctx.plan
    out: list[Knob] = []
    flags_only = ctx.document is None
    add = _adder(out, require_edits, flags_only, ctx, held)
    if plan.peft.value is None and plan.task.value in ("sft", "dpo", "orpo", "kto", "pretrain") and \
            (flags_only or knobs.lora_kind(ctx) is not None):
        extra = knobs.LORA_PEFT.get(knobs.lora_kind(ctx) or "", {}) if not flags_only else {}
        for bits, title, cost, text, flags in (
                (None, "train LoRA adapters (rank 16, every linear layer) instead of the full model", -0.10,
                 "-10% time; trains adapters only, a different result from full fine-tuning", "--lora-r 16"),
                (4, "train QLoRA adapters (rank 16, every linear layer, 4-bit NF4 base) instead of the full model",
                 0.20, "+20% time (dequantizing the base); trains adapters only over a quantized base",
                 "--lora-r 16 --qlora")):
            add(Knob("peft", 1 if bits is None else 2, title, {"peft": Peft("lora", 16, "all-linear", bits, **extra)}, cost,
                     text, safe=False, edits=None if flags_only else _tuple(knobs.lora_edits(ctx, bits == 4)),
                     flags=flags))
    return out


LAST_RESORT = ("peft",)  # the groups of `last_resort_knobs`, searched only when nothing else fits


def _smaller_micro_batches(micro: int) -> list[int]:
    """Divisors of the micro-batch to try, largest first: for each halving, the largest divisor at or under
    it (so accumulation stays an integer), and 1; bounded for any value a file can hold."""
    small = set()
    d = 1
    while d * d <= micro and d <= 100_000:
        if micro % d == 0:
            small.add(d)
            small.add(micro // d)
        d += 1
    divisors = sorted(x for x in small if x < micro)
    if len(divisors) <= 8:
        return divisors[::-1]
    out: list[int] = []
    target = micro // 2
    while target >= 1 and len(out) < 12:
        best = max((x for x in divisors if x <= target), default=1)
        if best not in out:
            out.append(best)
        target //= 2
    if 1 not in out:
        out.append(1)
    return out


def _tuple(edits) -> tuple | None:
    return tuple(edits) if edits else None


def _batch_edits(ctx, new_micro: int, new_gas: int) -> tuple | None:
    plan = ctx.plan
    edits_micro = knobs.setting_edits(ctx, "micro_batch", new_micro)
    if not edits_micro:
        return None
    if ctx.flavor == "litgpt" and plan.grad_accum.origin.kind in ("inferred", "default"):
        # LitGPT derives accumulation from train.global_batch_size / (micro x devices).
        return tuple(edits_micro) if plan.global_batch.value else None
    edits_gas = knobs.setting_edits(ctx, "grad_accum", new_gas)
    if not edits_gas:
        return None
    mirrored = knobs.mirrored_batch_edits(ctx, new_micro, new_gas, list(edits_micro) + list(edits_gas))
    if mirrored is None:
        return None
    return tuple(edits_micro) + tuple(edits_gas) + tuple(mirrored)


# ---- the search ------------------------------------------------------------------------------------

# The plan fields whose final values `_valid` reads.
_VALIDITY_FIELDS = ("zero_stage", "fsdp", "offload_optimizer", "activation_offload", "grad_ckpt")


def _current(plan) -> dict:
    """The plan's own values of `_VALIDITY_FIELDS`."""
    return {field: getattr(plan, field).value for field in _VALIDITY_FIELDS}


def _changes(combo: tuple[Knob, ...]) -> dict:
    """The plan fields a combination sets."""
    changes: dict = {}
    for knob in combo:
        changes.update(knob.changes)
    return changes


def _valid(ctx, combo: tuple[Knob, ...], overlaps: Callable[[tuple[Knob, ...]], bool] | None = None,
           current: dict | None = None) -> bool:
    """Whether the frameworks accept the combination and its edits can go together (`overlaps`: `_pair_overlaps`,
    else the edits of the whole combination are combined and compared here; `current`: `_current(ctx.plan)`, which
    a search makes once)."""
    changes = _changes(combo)
    final = {**(current if current is not None else _current(ctx.plan)), **changes}
    stage = min(3, max(0, final["zero_stage"] or 0))
    fsdp = final["fsdp"]
    if "offload_optimizer" in changes and fsdp is None and stage < 1:
        return False  # DeepSpeed: offload_optimizer at ZeRO stage 0 stops the run
    if "offload_params" in changes and fsdp is None and stage < 3:
        return False  # DeepSpeed parameter offload is ZeRO-3 only
    if "peft" in changes and (changes["peft"].base_bits and (stage >= 3 or fsdp is not None) or "optimizer" in changes):
        return False  # QLoRA under ZeRO-3/FSDP needs a quant storage dtype the config does not set
    if "optimizer" in changes and final["offload_optimizer"]:
        return False  # DeepSpeed's offload replaces the optimizer with its CPU Adam
    if final["activation_offload"] and final["grad_ckpt"] == "none":
        return False  # axolotl / torchtune offload activations only with checkpointing on
    if overlaps is not None:
        return not overlaps(combo)
    return not _overlap(_combine_edits(e for knob in combo for e in (knob.edits or ())))


def _pair_overlaps() -> Callable[[tuple[Knob, ...]], bool]:
    """Whether the edits of a combination overlap, decided pair by pair (each knob with itself and with each later
    one), each pair's edits combined and compared once per search. Overlap is a relation between two edits
    (insertions at one point are merged, and two merged insertions never overlap), so a combination's edits overlap
    exactly when those of one of its knobs, or of two, do."""
    seen: dict[tuple[int, int], bool] = {}  # by id: the knobs live as long as the search that asks

    def overlaps(combo: tuple[Knob, ...]) -> bool:
        for i, a in enumerate(combo):
            for b in combo[i:]:
                key = (id(a), id(b))
                hit = seen.get(key)
                if hit is None:
                    edits = (a.edits or ()) if a is b else (a.edits or ()) + (b.edits or ())
                    hit = seen[key] = seen[(id(b), id(a))] = _overlap(_combine_edits(edits))
                if hit:
                    return True
        return False

    return overlaps


def _dominates(found: tuple[Knob, ...], combo: tuple[Knob, ...]) -> bool:
    mine = {k.group: k.strength for k in combo}
    return all(k.group in mine and mine[k.group] >= k.strength for k in found)


def _merge(combo: tuple[Knob, ...], extra: float = 0.0) -> Candidate:
    title = combo[0].title
    for knob in combo[1:]:
        first = knob.title.split()[0]
        lead = knob.title[0].lower() if first[1:].islower() or len(first) == 1 else knob.title[0]
        title += f", and {lead}{knob.title[1:]}"
    cost = sum(k.cost for k in combo) + extra
    if len(combo) == 1:
        cost_text = combo[0].cost_text
    else:
        parts = "; ".join(k.cost_text for k in combo)
        cost_text = f"about {_pct(cost)} time in all ({parts})" if cost > 0 else f"about the same speed or faster ({parts})"
    edits = _combine_edits(e for k in combo for e in (k.edits or ()))
    return Candidate(title, _changes(combo), cost, cost_text, all(k.safe for k in combo), edits,
                     " ".join(k.flags for k in combo if k.flags), combo)


PLANNED = Origin("cli", note="planner")


def _apply(plan, changes: dict):
    return plan.with_(**{k: Setting(v, PLANNED) for k, v in changes.items()})


def search(ctx, limit: int = 4, require_edits: bool = True, held: bool = False,
           found: list[Knob] | None = None) -> list[Offer]:
    """The cheapest `limit` combinations of up to MAX_KNOBS knobs that fit, safe ones first; LoRA/QLoRA
    only when nothing else does. With `held`, also the knobs no fix can turn, as a flag or a setting holds a value
    they change (`knob_list`); `found`: that knob list, when made already."""
    gpu, arch = ctx.gpu, ctx.architecture
    if gpu is None or arch is None:
        return []
    groups = _by_group(found if found is not None else knob_list(ctx, require_edits, held))
    offers = _search(ctx, groups, list(groups), limit)
    if not offers:
        last = _by_group(last_resort_knobs(ctx, require_edits, held))
        if last:
            groups.update(last)
            offers = _search(ctx, groups, list(groups), limit, must=LAST_RESORT)
    return offers


def _by_group(found: list[Knob]) -> dict[str, list[Knob]]:
    groups: dict[str, list[Knob]] = {}
    for knob in found:
        groups.setdefault(knob.group, []).append(knob)
    return groups


_SAFE, _COST, _RANK = attrgetter("safe"), attrgetter("cost"), itemgetter(0, 1, 2)


def _search(ctx, groups: dict, names: list[str], limit: int, must: tuple = ()) -> list[Offer]:
    gpu, arch, plan = ctx.gpu, ctx.architecture, ctx.plan
    combos: list[tuple[bool, float, int, tuple[Knob, ...]]] = []
    for size in range(1, min(MAX_KNOBS, len(names)) + 1):
        for chosen in itertools.combinations(names, size):
            if must and not set(must) & set(chosen):
                continue
            for combo in itertools.product(*(groups[g] for g in chosen)):
                combos.append((not all(map(_SAFE, combo)), sum(map(_COST, combo)), size, combo))
    combos.sort(key=_RANK)  # safe first, then by cost, then fewer knobs (stable: in the order made)
    capacity = gpu.memory_bytes
    before = ctx.estimate.total if ctx.estimate is not None else None
    budgets = (capacity * TARGET, capacity) if before is None or before > capacity else (capacity * TARGET,)
    # Validity is decided when the walk reaches a combination (most are never reached: the walk stops at `limit`
    # offers), and kept with the estimate for the second budget's walk.
    overlaps, current = _pair_overlaps(), _current(plan)
    valid: dict[int, bool] = {}  # combo index -> _valid
    estimates: dict[int, tuple[int, int]] = {}  # combo index -> (total, host bytes)
    memo, kept = PartsMemo(), _kept_totals()
    # Each knob's changes as the planner's Settings, made once: a candidate plan takes those of its knobs (a later
    # knob's winning, as in `_changes`).
    planned = {id(knob): {k: Setting(v, PLANNED) for k, v in knob.changes.items()}
               for name in names for knob in groups[name]}

    def estimated(index: int, combo):
        if index not in estimates:
            settings: dict = {}
            for knob in combo:
                settings.update(planned[id(knob)])
            estimates[index] = estimate_total(plan.with_(**settings), arch, memo, kept)
        return estimates[index]

    for budget in budgets:
        found: list[Offer] = []
        winners: list[tuple[Knob, ...]] = []
        evaluated = 0  # valid combinations walked
        for index, (*_, combo) in enumerate(combos):
            if evaluated >= MAX_EVALUATIONS or len(found) >= limit:
                break
            if index not in valid:
                valid[index] = _valid(ctx, combo, overlaps, current)
            if not valid[index]:
                continue
            evaluated += 1
            if any(_dominates(w, combo) for w in winners):
                continue
            total, host = estimated(index, combo)
            if total <= budget:
                cand = _merge(combo, HOST_PENALTY * host / GIB)
                found.append(Offer(cand, total, host))
                winners.append(combo)
        if found:
            found.sort(key=lambda o: (not o.candidate.safe, o.candidate.cost, o.total))
            return found
    return []


# The totals of the runs planned in this process, looked up from its second plan on: the first has nothing to
# reuse (and making its keys would cost a one-file check ~0.3 ms); the language server re-plans a file at every
# edit, and a check of many copies of a config plans the same candidates for each.
_plans = 0
_kept = None


def _kept_totals():
    global _kept
    if _plans < 2:
        return None
    if _kept is None:
        _kept = TotalsCache()
    return _kept


def plan_fixes(ctx, limit: int = 4, require_edits: bool = True) -> tuple[list[Offer], str | None]:
    """Offers that bring the run under TARGET of the card (or under the card when nothing reaches that),
    cheapest first; or, when none, advice on what would."""
    global _plans
    if ctx.gpu is None or ctx.architecture is None:
        return [], None
    _plans += 1
    offers = search(ctx, limit, require_edits)
    if offers and all(any(k.group in LAST_RESORT for k in o.candidate.knobs) for o in offers):
        # Only LoRA/QLoRA fits within the config: say first what would without changing what is trained.
        return offers, what_would_fit(ctx, same_training=True)
    if offers:
        return offers, None
    return [], what_would_fit(ctx)


def held_change(ctx, offers: list[Offer]) -> str | None:
    """What a finding's detail says when the cheapest change that fits turns a value the config's keys do not hold:
    which value, where it is set (`knobs.where_held`: a directive, a flag, [tool.trainlint], the launch) and the value
    that fits. A directive of the file is changed where it is written, by the fix (`offers`, as `plan_fixes` made
    them); a value set elsewhere has no edit, so a change that needs one is not offered: when it costs less than the
    fixes offered (or none is), the detail names it and says where to make it. None when neither is the case."""
    if ctx.document is None or ctx.gpu is None or ctx.estimate is None:
        return None  # flags alone: every knob is a flag already
    best = offers[0] if offers else None
    fixed = True
    kept = knob_list(ctx, True, held=True)
    if any(k.edits is None for k in kept):  # else the search would find what `offers` holds
        alt = search(ctx, 1, True, held=True, found=kept)
        if alt and any(k.edits is None for k in alt[0].candidate.knobs) and \
                (best is None or (not alt[0].candidate.safe, alt[0].candidate.cost) <
                 (not best.candidate.safe, best.candidate.cost)):
            best, fixed = alt[0], False
    if best is None:
        return None
    plan = ctx.plan
    parts = []
    for knob in best.candidate.knobs:
        for field, origin in knob.held:
            name = knobs.SETTING_NAMES.get(field, field.replace("_", " "))
            new = _jsonable(knob.changes[field])
            edited = fixed and knob.edits is not None
            parts.append(f"{name} {_jsonable(getattr(plan, field).value)} is set by {knobs.where_held(ctx, field, origin)}; "
                         f"{new} fits: " + ("the fix changes it there (the run it describes must then use "
                                            f"{new} too)" if edited else "change it there"))
    if not parts:
        return None
    if fixed:
        return "The first fix changes a value the config's keys do not hold: " + "; ".join(parts) + "."
    before, capacity = ctx.estimate.total, ctx.gpu.memory_bytes
    cheaper = "costs less than the fixes offered" if offers else "fits"
    return (f"A change that {cheaper} cannot be made in this file, as it changes a value set outside it: "
            f"{best.title(before, capacity)}; " + "; ".join(parts) + ".")


def _overlap(edits) -> bool:
    """As `apply_edits` sees it: two edits overlap when their ranges intersect (insertions at the same
    point are merged first, by `_combine_edits`)."""
    edits = list(edits)
    for i, x in enumerate(edits):
        for y in edits[i + 1:]:
            if x.path != y.path:
                continue
            xs, xe, ys, ye = x.span.start.offset, x.span.end.offset, y.span.start.offset, y.span.end.offset
            if xs < ye and ys < xe or (xs == xe == ys == ye):
                return True
            if (xs == xe and ys < xs < ye) or (ys == ye and xs < ys < xe):
                return True
    return False


def _combine_edits(edits) -> tuple[Edit, ...]:
    """Insertions at the same point become one edit (their texts in order), so that two knobs that both
    add a key at the end of the same mapping can go together."""
    out: list[Edit] = []
    for edit in edits:
        start, end = edit.span.start.offset, edit.span.end.offset
        prior = next((i for i, e in enumerate(out) if e.path == edit.path and start == end ==
                      e.span.start.offset == e.span.end.offset), None)
        if prior is None:
            out.append(edit)
        else:
            out[prior] = Edit(edit.path, out[prior].span, out[prior].new_text + edit.new_text)
    return tuple(out)


# The shardings a launch may add to a config that states none (accelerate's DeepSpeed / FSDP plugins), least first.
LAUNCH_SHARDINGS = ((1, "ZeRO-1"), (2, "ZeRO-2 (or FSDP shard_grad_op)"), (3, "ZeRO-3 (or FSDP full_shard)"))
MAX_LAUNCH_GPUS = 64


def launch_sharding_that_fits(ctx) -> tuple[str, int, float] | None:
    """When the launch (unknown) decides the sharding: the least sharding over the fewest of the target GPUs under
    which the config fits as written (its micro-batch, checkpointing and optimizer kept): (how, GPUs, GiB per GPU).
    The GPU count the run declares, when it does, else 2, 4, ... up to MAX_LAUNCH_GPUS. None when none fits."""
    plan, arch, gpu = ctx.plan, ctx.architecture, ctx.gpu
    if plan is None or arch is None or gpu is None:
        return None
    memo, kept = PartsMemo(), _kept_totals()
    declared = plan.num_gpus.origin.kind not in ("default", "inferred")
    counts = [max(1, plan.num_gpus.value or 1)] if declared else \
        [n for n in (2 ** k for k in range(1, 7)) if n <= MAX_LAUNCH_GPUS]
    for count in counts:
        if count < 2:
            continue
        for stage, how in LAUNCH_SHARDINGS:
            total = estimate_total(_apply(plan, {"zero_stage": stage, "fsdp": None, "num_gpus": count}), arch, memo,
                                   kept)[0]
            if total <= gpu.memory_bytes:
                return how, count, total / GIB
    return None


def what_would_fit(ctx, same_training: bool = False) -> str | None:
    """Advice without an edit: what fits on the GPUs the run has (sharding and offload the config cannot
    express), else the smallest GPU count, never fewer than the run has, with ZeRO-3 (then with 8-way tensor
    parallelism as well), and QLoRA."""
    plan, arch, gpu = ctx.plan, ctx.architecture, ctx.gpu
    budget = gpu.memory_bytes
    memo, kept = PartsMemo(), _kept_totals()
    have = max(1, plan.num_gpus.value or 1)
    base: dict[str, Any] = {"grad_ckpt": "full", "micro_batch": 1,
                            "grad_accum": max(1, plan.micro_batch.value * plan.grad_accum.value)}
    sharded = {**base, "zero_stage": 3, "fsdp": None}

    def fits(changes: dict) -> bool:
        return estimate_total(_apply(plan, changes), arch, memo, kept)[0] <= budget

    ladder = [
        (sharded, "ZeRO-3 (or FSDP full_shard)"),
        ({**sharded, "offload_optimizer": "cpu"}, "ZeRO-3 (or FSDP full_shard) with the optimizer offloaded to CPU"),
        ({**sharded, "offload_optimizer": "cpu", "offload_params": "cpu"},
         "ZeRO-3 (or FSDP full_shard) with the optimizer and the parameters offloaded to CPU"),
    ]
    if have == 1:
        ladder.insert(0, ({**base, "zero_stage": 1, "offload_optimizer": "cpu"},
                          "the optimizer offloaded to CPU (DeepSpeed ZeRO-Offload)"))
    gpus = f"{have} x {gpu.name}"
    nothing = f"no change this {'launch' if _howto_kind(ctx) == 'launch' else 'config'} can make fits" \
        if ctx.document is not None else \
        "no change of micro-batch, checkpointing, ZeRO stage, offload, optimizer or loss fits"
    lead = "to keep training the full model:" if same_training else f"{nothing};"
    for changes, how in ladder:
        if fits({**changes, "num_gpus": have}):
            return (f"{lead} on its {gpus} it would fit with {how}, "
                    "activation checkpointing and micro-batch 1 (accumulation up to keep the effective batch): "
                    f"{knobs.sharding_howto(_howto_kind(ctx)) if ctx.document is not None else 'pass --zero 3 and the offload flags'}")
    counts = sorted({have * 2 ** k for k in range(1, 11)})
    if same_training:
        for count in counts:
            if fits({**sharded, "num_gpus": count}):
                return (f"to keep training the full model it needs at least {count} x {gpu.name} (it has {have}) "
                        "with ZeRO-3 (or FSDP full_shard), activation checkpointing and micro-batch 1")
        for count in counts:
            if count >= 8 and fits({**sharded, "num_gpus": count, "tensor_parallel": 8}):
                return (f"to keep training the full model it needs at least {count} x {gpu.name} (it has {have}) "
                        "with 8-way tensor parallelism plus ZeRO-3 and activation checkpointing (e.g. Megatron, "
                        "torchtitan)")
        return None
    for count in counts:
        if fits({**sharded, "num_gpus": count}):
            return (f"{nothing} on its {gpus}; it needs at least {count} x {gpu.name} "
                    "with ZeRO-3 (or FSDP full_shard), activation checkpointing and micro-batch 1, or LoRA/QLoRA")
    for count in counts:
        if count >= 8 and fits({**sharded, "num_gpus": count, "tensor_parallel": 8}):
            return (f"{nothing} on its {gpus}; it needs at least {count} x {gpu.name} "
                    "with 8-way tensor parallelism plus ZeRO-3 and activation checkpointing (e.g. Megatron, "
                    "torchtitan), or QLoRA")
    qlora = Peft("lora", 16, "all-linear", 4)
    for count in [have] + counts:
        if fits({**sharded, "num_gpus": count, "peft": qlora}):
            return (f"as full fine-tuning it does not fit even on {counts[-1]} x {gpu.name}; QLoRA (4-bit base, "
                    f"LoRA adapters) with ZeRO-3/FSDP would from {count} GPUs")
    return (f"it does not fit on {gpu.name} with ZeRO-3, 8-way tensor parallelism or QLoRA on up to "
            f"{counts[-1]} GPUs")



def sharding_cost(ctx, changes: dict) -> tuple[float, str]:
    """The cost model's extra step time of a sharding and offload layout (`changes`: the plan's `zero_stage`, `fsdp`,
    `offload_optimizer`, `offload_params` as they would be) for `ctx.plan` (its GPU count as planned), and its text:
    what the planner's ZeRO, FSDP and offload knobs would cost. For `trainlint.planning`'s fit table."""
    fsdp = changes.get("fsdp")
    stage = 3 if fsdp in ("full_shard", "hybrid_shard") else 2 if fsdp in ("shard_grad_op", "hybrid_shard_zero2") \
        else min(3, max(0, changes.get("zero_stage") or 0))
    parts: list[tuple[float, str]] = []
    if stage in ZERO_COST:
        parts.append((ZERO_COST[stage], "gradient reduce-scatter"))
    elif stage == 3:
        parts.append((_zero3_cost(ctx), "parameter all-gathers"))
    if changes.get("offload_optimizer"):
        parts.append((_offload_optimizer_cost(ctx), "PCIe transfers, CPU Adam"))
    if changes.get("offload_params"):
        parts.append((_offload_params_cost(ctx), "parameter fetches over PCIe"))
    if not parts:
        return 0.0, "no extra time"
    cost = sum(c for c, _ in parts)
    return cost, "; ".join(f"{_pct(c)} time ({why})" for c, why in parts)


def _howto_kind(ctx) -> str:
    """The flavor whose way of turning sharding on the advice names: "launch" for a launch target's command line."""
    return "launch" if ctx.document is not None and ctx.document.kind == "launch" else ctx.flavor
