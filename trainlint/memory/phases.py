"""The phases of a run around its training step: loading, evaluation and saving, each as the frameworks run it
(docs/memory-model.md §9, catalog/data/phases.json for what stays resident in each and the code that decides it).

`estimate_phases` is the training step of `model.estimate_run` with the other phases next to it; the peak of the
run is the largest phase's. Pure functions of a resolved `Run`.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import NamedTuple

from trainlint.catalog.files import read_data
from trainlint.memory.model import (BYTES, Activations, Estimate, PartsMemo, Run, States, Term, _head_cast,
                                    activations, estimate_run, model_states, peak_of, reference_model)

TRAINING = "training step"
PREFERENCE = ("dpo", "orpo", "kto")
CONCAT_COPIES = 2  # torch.cat in EvalLoopContainer.add (nested_concat): the kept predictions and their new copy


class Phase(NamedTuple):
    """One phase of the run (loading, training step, evaluation, saving) and its peak memory."""
    name: str  # loading | training step | evaluation | saving
    allocated: int  # what max_memory_allocated() would report at the phase's peak
    host_bytes: int = 0  # host RAM per node the phase needs for itself (saving: rank 0's node)
    terms: tuple[Term, ...] = ()  # resident at the phase's peak
    knobs: tuple[str, ...] = ()  # the config keys that drive the phase's own terms
    note: str = ""  # what decides the phase's peak, in a few words

    def to_json(self) -> dict:
        return {"phase": self.name, "peak_allocated": self.allocated, "host_bytes": self.host_bytes,
                "knobs": list(self.knobs), "note": self.note,
                "components": [{"key": t.key, "label": t.label, "bytes": int(t.bytes), "assumption": t.assumption}
                               for t in self.terms]}


@lru_cache(maxsize=1)
def phase_table() -> dict:
    """phases.json's phases: label, resident parts, knobs, sources."""
    return json.loads(read_data("phases.json"))["phases"]


@lru_cache(maxsize=None)
def _spec(name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Phase `name`'s resident parts and knobs (phases.json), as tuples."""
    entry = phase_table()[name]
    return tuple(entry["resident"]), tuple(entry["knobs"])


def _resident(name: str, st: States, ref_model: float) -> list[Term]:
    """The model-state terms resident throughout phase `name` (phases.json `resident`)."""
    out = []
    for part in _spec(name)[0]:
        if part == "weights":
            out.append(Term("weights", "weights", st.weights, st.weights_note))
        elif part == "reference_model" and ref_model > 0:
            out.append(Term("weights", "reference model", ref_model, "frozen reference model (DPO/KTO)"))
        elif part == "master" and st.master > 0:
            out.append(Term("optimizer_states", "fp32 master weights", st.master,
                            "DeepSpeed / mixed-precision master copy"))
        elif part == "optimizer_states" and st.optimizer > 0:
            out.append(Term("optimizer_states", "optimizer states", st.optimizer, st.optimizer_note))
        elif part == "buffers" and st.buffers > 0:
            out.append(Term("buffers", "communication / gather buffers", st.buffers, st.buffers_note))
    return out


def _round(n: float) -> int:
    return ((int(n) + 511) // 512) * 512 if n > 0 else 0


def _no_grad_forward(act: Activations) -> float:
    """The peak of a forward under torch.no_grad: nothing is saved for backward, so one layer's intermediates exist
    at a time (bounded by what the layer would save), then the head's logits and loss."""
    return max(act.per_layer, act.logits_forward)


def _forward_acts(run: Run, rows: int, memo: PartsMemo | None) -> Activations:
    fwd = run._replace(micro_batch=rows, grad_ckpt="none", activation_offload=False)
    return memo.activations(fwd) if memo is not None else activations(fwd)


def _autocast_copies(run: Run, st: States) -> float:
    """16-bit weight copies alive at the head of a no-grad forward under autocast: autocast caches the casts of
    weights that require grad (ATen cached_cast) until it exits; frozen weights are cast per call (the head's is
    the largest)."""
    if not st.amp_weight_cache:
        return 0.0
    return _head_cast(run) if st.amp_frozen else st.amp_weight_cache


def _loading(run: Run, st: States, ref_model: float, memo: PartsMemo | None, said: list[str]) -> Phase:
    arch = run.arch
    terms = _resident("loading", st, ref_model)
    resident = len(terms)
    note = "the weights placed on the GPU"
    if run.peft is not None and run.peft.base_bits:
        # create_quantized_param: each checkpoint tensor goes to the GPU in 16-bit and is quantized there.
        largest = max((lin.in_features * lin.out_features for stack in arch.stacks for lin in stack.linears),
                      default=0) / run.tp
        terms.append(Term("temporaries", "16-bit tensor being quantized", largest * (2 + 0.5),
                          "bitsandbytes quantizes one checkpoint tensor at a time on the GPU (no full 16-bit copy)"))
    if run.precompute_batch:
        rows = run.precompute_batch * 2  # chosen and rejected, concatenated
        act = _forward_acts(run, rows, memo)
        forward = _no_grad_forward(act) + _autocast_copies(run, st)
        quant = sum(t.bytes for t in terms[resident:])
        if forward > quant:
            terms = [t for t in terms if t.key != "temporaries"]
            terms.append(Term("logits", "reference log-prob forward (no grad)", forward,
                              f"precompute_ref_log_probs: a no-grad forward of {rows} rows (chosen + rejected)"))
            note = f"the reference log-probs precomputed at {run.precompute_batch} pairs per batch"
    host = 0.0
    if not (run.peft is not None and run.peft.base_bits) and run.zero_stage < 3:
        # (ZeRO-3's zero.Init partitions the model as it is built and loads the checkpoint shard by shard: not
        # counted.)
        # Without a device map every process builds its model on the host first; without low_cpu_mem_usage it is
        # randomly initialised, then the checkpoint's state dict is copied in (twice the model at its peak).
        copies = 2 if run.low_cpu_mem_usage is False else 1
        host = copies * arch.total_params * BYTES[run.precision.param_dtype] / (run.tp * run.pp) \
            * min(run.world, run.gpus_per_node)
        if run.low_cpu_mem_usage is False:
            said.append("low_cpu_mem_usage false: each process holds a randomly initialised model and the checkpoint "
                        "on the host while loading")
    return Phase("loading", _round(sum(t.bytes for t in terms)), int(host), tuple(terms),
                 _spec("loading")[1], note)


def _evaluation(run: Run, st: States, ref_model: float, memo: PartsMemo | None, said: list[str]) -> Phase | None:
    if run.eval_batch <= 0:
        return None
    arch = run.arch
    rows = run.eval_batch * (2 if run.task in PREFERENCE else 1)
    act = _forward_acts(run, rows, memo)
    terms = _resident("evaluation", st, ref_model)
    if run.grads_kept and not run.optimizer_in_bwd and st.grads > 0:
        terms.append(Term("gradients", "gradients", st.grads, st.grads_note + " (zeroed, not freed, by zero_grad)"))
    copies = _autocast_copies(run, st)
    if copies:
        terms.append(Term("buffers", "autocast weight copies", copies,
                          "the training autocast wraps the evaluation forward (compute_loss_context_manager)"))
    forward = _no_grad_forward(act)
    note = f"the no-grad forward at eval batch {run.eval_batch}"
    generate = 0.0
    if run.gen_length:
        # model.generate: a KV cache of every generated row (beams included) to the full length, and the fp32
        # scores of the last position.
        gen_rows = run.eval_batch * max(1, run.gen_beams)
        kv = sum(stack.num_layers * 2 * (stack.kv_heads or arch.num_key_value_heads)
                 * (stack.head_dim or arch.head_dim) for stack in arch.stacks if stack.mixer == "attention")
        generate = gen_rows * run.gen_length * kv * BYTES[run.precision.compute_dtype] / run.tp \
            + gen_rows * arch.vocab_size * 4 * 2
    if generate > forward:
        terms.append(Term("buffers", "generation KV cache", generate,
                          f"predict_with_generate: {run.eval_batch} x {max(1, run.gen_beams)} beams to "
                          f"{run.gen_length} tokens"))
        note = f"generation at eval batch {run.eval_batch} to {run.gen_length} tokens"
    else:
        terms.append(Term("logits", "evaluation forward (no grad)", forward,
                          "one layer's intermediates, then the logits and the loss of the eval batch"))
    # A classification head's logits are [rows, labels] (sequence) or [rows, s, labels] (token): 2 labels, fp32.
    logits_row = (run.seq_len * arch.vocab_size * BYTES[run.precision.compute_dtype] / run.tp if run.head == "lm"
                  else run.seq_len * 2 * 4 if run.head == "token_cls" else 2 * 4)
    per_row = {"logits": logits_row,
               "token_ids": run.seq_len * 8, "generated": max(run.gen_length, run.seq_len) * 8}.get(
        run.eval_predictions, 0.0)
    if per_row and run.eval_kept_rows:
        # After the first batch each add concatenates: the kept tensor and its concatenated copy coexist.
        copies = CONCAT_COPIES if run.eval_kept_rows > run.eval_batch * run.dp else 1
        kept = run.eval_kept_rows * per_row * copies
        terms.append(Term("buffers", "evaluation predictions kept", kept,
                          f"{run.eval_kept_rows} rows of {run.eval_predictions} gathered and concatenated on the GPU "
                          "(Trainer.evaluation_loop)"))
        if kept > max(forward, generate):
            note = f"the {run.eval_predictions} of {run.eval_kept_rows} evaluation rows kept on the GPU"
    return Phase("evaluation", _round(sum(t.bytes for t in terms)), 0, tuple(terms),
                 _spec("evaluation")[1], note)


def _saving(run: Run, st: States, ref_model: float) -> Phase:
    arch = run.arch
    terms = _resident("saving", st, ref_model)
    split = run.tp * run.pp
    pb = BYTES[run.precision.param_dtype]
    local = min(run.world, run.gpus_per_node)
    trainable = st.trainable or arch.total_params
    host = 0.0
    note = "the model states only (tensors are copied to the host one at a time)"
    if run.save_mode == "fsdp_full":
        unit = max((s.params_per_layer for s in arch.stacks), default=0)  # a decoder layer's unit
        root = max(0, arch.total_params - sum(s.params_per_layer * s.num_layers for s in arch.stacks))
        # The root unit stays unsharded (full precision) while each layer's unit is unsharded in turn.
        model_gather = (root + unit) * pb / split
        share = trainable / max(1, arch.total_params)
        optim_gather = (max(root, unit) * share * run.optimizer.state_factor * pb / split
                        if run.save_optimizer else 0.0)
        gathered = max(model_gather, optim_gather)
        terms.append(Term("temporaries", "units unsharded for FULL_STATE_DICT", gathered,
                          "FSDP FULL_STATE_DICT: the root unit and one layer's unit (or their optimizer state) "
                          "gathered in full precision on every rank"))
        host = arch.total_params * pb / split + (trainable * run.optimizer.state_factor * pb / split
                                                 if run.save_optimizer else 0.0)
        note = "FSDP FULL_STATE_DICT gathers the units; rank 0 holds the whole state dict on the host"
    elif run.save_mode == "fsdp_sharded":
        host = (st.weights + (st.optimizer + st.master if run.save_optimizer else 0.0)) * local
        note = "SHARDED_STATE_DICT: each rank copies its shard to the host"
    elif run.save_mode == "zero3_16bit":
        largest = arch.largest_module_params / split
        terms.append(Term("temporaries", "module gathered for the 16-bit save", largest * 2,
                          "stage3_gather_16bit_weights_on_model_save: one module's parameters gathered at a time"))
        host = arch.total_params * 2 / split
        note = "ZeRO-3 consolidates a 16-bit state dict on rank 0's host"
    return Phase("saving", _round(sum(t.bytes for t in terms)), int(host), tuple(terms),
                 _spec("saving")[1], note)


def around_step(run: Run, memo: PartsMemo | None = None, peaks_only: bool = False) -> tuple[list[Phase], list[str]]:
    """Loading, evaluation (when the run evaluates) and saving, with what they assumed. `peaks_only`: only those that
    can exceed the training step, whose resident state holds theirs: loading with a quantized load or TRL's
    reference precompute, evaluation, saving that gathers (the fix planner's fast path)."""
    said: list[str] = []
    st = memo.states(run) if memo is not None else model_states(run)
    ref_model = reference_model(run)
    found: list[Phase | None] = []
    if not peaks_only or run.precompute_batch or (run.peft is not None and run.peft.base_bits):
        found.append(_loading(run, st, ref_model, memo, said))
    found.append(_evaluation(run, st, ref_model, memo, said))
    if not peaks_only or run.save_mode in ("fsdp_full", "zero3_16bit"):
        found.append(_saving(run, st, ref_model))
    return [p for p in found if p is not None], said


class RunEstimate(NamedTuple):
    """The training step's estimate, every phase's peak, and which decides."""

    step: Estimate
    phases: list[Phase]  # in the order the run meets them, the training step among them
    assumptions: list[str]

    @property
    def deciding(self) -> Phase:
        return max(self.phases, key=lambda p: p.allocated)


def estimate_phases(run: Run, memo: PartsMemo | None = None) -> RunEstimate:
    memo = memo if memo is not None else PartsMemo()
    step = estimate_run(run, memo)
    others, said = around_step(run, memo)
    training = Phase(TRAINING, step.peak_allocated, 0, tuple(step.terms), (), f"peak in {step.peak_phase}")
    ordered = [p for p in others if p.name == "loading"] + [training] + [p for p in others if p.name != "loading"]
    return RunEstimate(step, ordered, said)


def run_peak_of(run: Run, memo: PartsMemo | None = None) -> tuple[int, int, int]:
    """`peak_of(run)` with the largest phase's allocation in place of the step's: what the fix planner compares."""
    memo = memo if memo is not None else PartsMemo()
    allocated, host, paged = peak_of(run, memo)
    others, _ = around_step(run, memo, peaks_only=True)
    return max([allocated] + [p.allocated for p in others]), host, paged
