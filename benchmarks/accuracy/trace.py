"""Trace 2 HF-Trainer-style training steps per case on fake tensors and record
the peak of what ``torch.cuda.max_memory_allocated()`` would report.

    python benchmarks/accuracy/trace.py                 # all cases -> traced.json
    python benchmarks/accuracy/trace.py --case ID [--case ID2 ...] [--out FILE]

Each case runs twice (deterministically): run 1 finds the peak and the op at
which it happens, run 2 stops at that op and categorises what is live.
See README.md for what is and is not counted.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import sys
import time
import traceback
import warnings
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

import cases as cases_mod  # noqa: E402
import emulation  # noqa: E402
import harness  # noqa: E402
from allocator_sim import CachingAllocatorSim  # noqa: E402
from tracker import StorageTracker  # noqa: E402

MiB = 1 << 20


class _StopAtPeak(Exception):
    """Raised by the snapshot run once the peak op has been categorised (the rest is not needed)."""


def _versions() -> dict:
    import peft
    import transformers
    import accelerate

    return {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "peft": peft.__version__,
        "accelerate": accelerate.__version__,
        **_optional_version("trl"),
    }


def _optional_version(name: str) -> dict:
    try:
        module = __import__(name)
    except Exception:
        return {}
    return {name: getattr(module, "__version__", "?")}


def _run_once(case: dict, snapshot_at: int | None):
    """Build everything under a fresh FakeTensorMode and run the steps with a tracker."""
    fused = case["optimizer"] == "adamw_fused"
    host_scalar_opt = case["optimizer"] in ("adamw", "adamw_foreach")
    state = {}

    model = harness.build_model(case, device="meta")
    fake_mode = FakeTensorMode(allow_non_fake_inputs=True)
    harness.meta_to_fake(model, fake_mode)
    ref_model = None
    if harness.needs_reference_model(case):
        ref_model = harness.meta_to_fake(harness.build_model(case, device="meta", reference=True), fake_mode)
    with fake_mode:
        opt = harness.build_optimizer(case, model, on_cuda=False)
        vocab = model.config.vocab_size if hasattr(model, "config") else case["model_config"]["vocab_size"]
        dpo = None
        if case.get("dpo") is not None:
            batch = harness.make_dpo_batch(case, vocab, real=False)
            dpo = harness.dpo_trainer(case, model, ref_model, torch.device("cpu"))
            ids, labels = batch, None
            input_tensors = tuple(dict.items(batch))
            input_tensors = tuple(v for _, v in input_tensors)
        else:
            ids, labels = harness.make_batch(case, None, vocab, real=False)
            input_tensors = (ids, labels)

        def snapshot():
            tracker.snapshot = _categorise(tracker, model, opt, input_tensors, case, ref_model)
            tracker.snapshot_total = tracker.total
            raise _StopAtPeak()

        sim = CachingAllocatorSim() if snapshot_at is None else None
        tracker = StorageTracker(snapshot_at=snapshot_at, snapshot_fn=snapshot, sim=sim)
        named = list(model.named_parameters())
        fp32_history = {}
        if sim is not None and case["precision"] == "bf16":
            # history of the real run: built in fp32, then model.to(bfloat16) converts param by param
            # (LoRA adapters are created afterwards)
            fp32_history = {i: sim.malloc(p.numel() * 4) for i, (n, p) in enumerate(named) if "lora_" not in n}
        for i, (_, p) in enumerate(named):
            tracker.track(p)
            tracker.param_keys.add(tracker.storage_key(p))
            if i in fp32_history:
                sim.free(fp32_history.pop(i))
        for b in model.buffers():
            tracker.track(b)
        if ref_model is not None:
            for p in ref_model.parameters():
                tracker.track(p)
                tracker.param_keys.add(tracker.storage_key(p))
            for b in ref_model.buffers():
                tracker.track(b)
        for t in input_tensors:
            tracker.track(t)
        eval_inputs = None
        if case.get("eval_batch"):
            eval_inputs = harness.make_batch({**case, "micro_batch": case["eval_batch"]}, None, vocab, real=False)
            for t in eval_inputs:
                tracker.track(t)
        tracker.set_phase("setup")
        state["setup_bytes"] = tracker.total

        orig_set_phase = tracker.set_phase

        def set_phase(name):
            # Non-fused torch Adam keeps its `step` counters on the host (0-dim CPU tensors).
            tracker.host_scalar_rule = host_scalar_opt and not fused and name == "optimizer_step"
            orig_set_phase(name)

        tracker.set_phase = set_phase
        try:
            masks = emulation.AllValidMaskIndex() if dpo is not None else contextlib.nullcontext()
            with tracker, masks:
                harness.training_steps(case, model, opt, ids, labels, tracker=tracker, steps=2,
                                       autocast_device="cpu", real_scaler=False, eval_inputs=eval_inputs,
                                       dpo_trainer=dpo)
        except Exception:  # _StopAtPeak, possibly re-wrapped by the autograd engine
            if tracker.snapshot is None:
                raise
        state["summary"] = harness.model_summary(model)
        if sim is not None:
            state["sim"] = {"peak_allocated_bytes": int(tracker.sim_peak), "peak_phase": tracker.sim_peak_phase,
                            "peak_reserved_bytes": int(tracker.sim_peak_reserved)}
        state["opt_state_bytes"] = _opt_state_bytes(opt, tracker)
        if ref_model is not None:
            state["summary"]["reference_params"] = sum(p.numel() for p in ref_model.parameters())
        del model, opt, ref_model, dpo
    return tracker, state


def _opt_state_bytes(opt, tracker) -> int:
    seen, total = set(), 0
    for st in opt.state.values():
        for v in st.values():
            if isinstance(v, torch.Tensor):
                k = tracker.storage_key(v)
                e = tracker.live.get(k)
                if e is not None and not e.host and k not in seen:
                    seen.add(k)
                    total += e.size
    return total


def _categorise(tracker, model, opt, inputs, case, ref_model=None) -> dict:
    live = tracker.live_device_entries()
    key = tracker.storage_key
    train_p, frozen_p, grads = set(), set(), set()
    for p in model.parameters():
        (train_p if p.requires_grad else frozen_p).add(key(p))
        if p.grad is not None:
            grads.add(key(p.grad))
    if ref_model is not None:  # DPO's frozen reference model
        frozen_p.update(key(p) for p in ref_model.parameters())
    bufs = {key(b) for b in model.buffers()} | ({key(b) for b in ref_model.buffers()} if ref_model is not None else set())
    opt_keys = set()
    for st in opt.state.values():
        for v in st.values():
            if isinstance(v, torch.Tensor):
                opt_keys.add(key(v))
    inp = {key(t) for t in inputs}
    cats = defaultdict(int)
    for k, e in live.items():
        if k in train_p:
            c = "params_trainable"
        elif k in frozen_p:
            c = "params_frozen"
        elif k in bufs:
            c = "buffers"
        elif k in grads:
            c = "grads"
        elif k in opt_keys:
            c = "optimizer_state"
        elif k in inp:
            c = "inputs"
        elif e.weight_cast:
            c = "weight_casts"
        elif e.phase == "forward":
            c = "activations_forward"
        elif e.phase == "loss":
            c = "logits_and_loss"
        elif e.phase == "backward":
            c = "backward_temporaries"
        elif e.phase in ("clip_grad", "optimizer_step"):
            c = "optimizer_temporaries"
        else:
            c = "other"
        cats[c] += e.size
    return dict(sorted(cats.items()))


def trace_case(case: dict) -> dict:
    t0 = time.time()
    emulation.SDPA_CHOICES.clear()
    tracker, state = _run_once(case, None)
    peak, peak_op, peak_phase, peak_step = tracker.peak, tracker.peak_op, tracker.peak_phase, tracker.peak_step
    phase_peaks = {k: v for k, v in tracker.phase_peaks.items() if k not in ("setup", "done")}
    sdpa = dict(emulation.SDPA_CHOICES)
    n_ops = tracker.op_index
    del tracker
    gc.collect()
    tracker2, _ = _run_once(case, peak_op)
    if getattr(tracker2, "snapshot_total", None) != peak:
        raise RuntimeError(f"non-deterministic trace: {peak} vs {getattr(tracker2, 'snapshot_total', None)}")
    breakdown = tracker2.snapshot or {}
    del tracker2
    gc.collect()
    if sum(breakdown.values()) != peak:
        breakdown["_unattributed"] = peak - sum(breakdown.values())
    notes = []
    if case.get("notes"):
        notes.append(case["notes"])
    if sdpa:
        notes.append("sdpa backend (CUDA sm80+ rules): " + ", ".join(f"{k} x{v}" for k, v in sorted(sdpa.items())))
    return {
        "id": case["id"],
        "status": "ok",
        "peak_allocated_bytes": int(peak),
        "peak_allocated_mib": round(peak / MiB, 2),
        "peak_phase": peak_phase,
        "peak_step": peak_step,
        "breakdown_at_peak": breakdown,
        "phase_peaks": phase_peaks,
        "setup_bytes": state["setup_bytes"],
        "allocator_sim": state.get("sim"),
        "optimizer_state_bytes": state["opt_state_bytes"],
        "params": state["summary"]["params"],
        "trainable_params": state["summary"]["trainable_params"],
        **({"reference_params": state["summary"]["reference_params"]} if "reference_params" in state["summary"] else {}),
        "aten_ops_traced": n_ops,
        "trace_seconds": round(time.time() - t0, 1),
        "notes": "; ".join(notes),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", action="append", help="case id (repeatable); default: all")
    ap.add_argument("--out", default=os.path.join(HERE, "traced.json"))
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)

    warnings.filterwarnings("ignore")
    import transformers

    transformers.logging.set_verbosity_error()
    emulation.install()
    torch.manual_seed(0)

    table = cases_mod.by_id()
    ids = args.case or [c["id"] for c in cases_mod.CASES]
    unknown = [i for i in ids if i not in table]
    if unknown:
        print("unknown case ids: " + ", ".join(unknown), file=sys.stderr)
        return 2

    results = []
    t_all = time.time()
    for cid in ids:
        try:
            r = trace_case(table[cid])
        except Exception as e:  # record and continue
            r = {"id": cid, "status": "error", "error": f"{type(e).__name__}: {e}",
                 "traceback": traceback.format_exc(limit=6)}
        results.append(r)
        if not args.quiet:
            if r["status"] == "ok":
                print(f"{cid:62s} {r['peak_allocated_mib']:>10.1f} MiB  {r['peak_phase']:14s} {r['trace_seconds']:6.1f}s", flush=True)
            else:
                print(f"{cid:62s} ERROR {r['error'][:200]}", flush=True)

    doc = {
        "tool": "fake-tensor trace",
        **_versions(),
        "device_emulated": "cuda",
        "emulation": "fake CPU tensors + CUDA emulation (emulation.py): CUDA autocast op lists, CUDA SDPA backend "
                     "choice (sm80+: flash / mem-efficient / math), fused native_dropout, foreach optimizers, "
                     "host-side step counters of non-fused Adam",
        "counting": "live tensor storages, each rounded up to 512 B, max over every aten op of 2 training steps",
        "total_seconds": round(time.time() - t_all, 1),
        "cases": results,
    }
    # merge into an existing file when running a subset
    if args.case and os.path.exists(args.out):
        try:
            with open(args.out) as f:
                old = json.load(f)
            keep = {c["id"]: c for c in old.get("cases", [])}
            for r in results:
                keep[r["id"]] = r
            order = [c["id"] for c in cases_mod.CASES]
            doc["cases"] = sorted(keep.values(), key=lambda c: order.index(c["id"]) if c["id"] in order else 1e9)
            doc["total_seconds"] = old.get("total_seconds", doc["total_seconds"])
        except Exception:
            pass
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    n_ok = sum(1 for r in results if r["status"] == "ok")
    print(f"{n_ok}/{len(results)} traced in {time.time() - t_all:.0f}s -> {args.out}")
    return 0 if n_ok == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
