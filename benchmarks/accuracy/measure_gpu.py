"""Run the benchmark cases for real on a CUDA GPU and record the allocator's peaks.

    python benchmarks/accuracy/measure_gpu.py                     # all cases -> measured_gpu.json
    python benchmarks/accuracy/measure_gpu.py --case ID --case ID2
    python benchmarks/accuracy/measure_gpu.py --max-seconds 600   # stop starting new cases after 10 min
    python benchmarks/accuracy/measure_gpu.py --dry-run           # CPU only: build every model on meta, exit

Each case: random weights (``from_config`` on the GPU), random token ids, the same
Trainer-like loop as the tracer (harness.py: 2 steps of forward with labels,
backward, clip_grad_norm_, optimizer.step, zero_grad(set_to_none=True)).
``torch.cuda.reset_peak_memory_stats()`` is called after the model, optimizer and
batch are built and again at every phase boundary, so each phase's
``max_memory_allocated()`` is recorded; the overall peak is the largest of them.
``peak_allocated_bytes`` = overall peak minus what was allocated before the case
started (cuBLAS workspaces and other warm-up allocations); the raw numbers are kept.
A case that runs out of memory is recorded as "oom" and the next one runs.

Unless ``--no-trainer``, each case that succeeded is then run a second time through the real
``transformers.Trainer`` (max_steps=2, same batch/precision/optimizer/checkpointing flags, the
model built the same way), recorded under "hf_trainer": that checks harness.py's emulation of
the Trainer itself.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import time
import traceback
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402

import cases as cases_mod  # noqa: E402
import harness  # noqa: E402


class CudaPhases:
    """``set_phase`` hook for harness.training_steps: per-phase max_memory_allocated/reserved."""

    def __init__(self):
        self.phase = None
        self.step = 0
        self.phase_peaks: dict[str, int] = {}
        self.phase_reserved: dict[str, int] = {}
        self.peak = 0
        self.peak_phase = None
        self.peak_step = 0

    def _close(self):
        if self.phase is None:
            return
        a = torch.cuda.max_memory_allocated()
        r = torch.cuda.max_memory_reserved()
        self.phase_peaks[self.phase] = max(self.phase_peaks.get(self.phase, 0), a)
        self.phase_reserved[self.phase] = max(self.phase_reserved.get(self.phase, 0), r)
        if a > self.peak:
            self.peak, self.peak_phase, self.peak_step = a, self.phase, self.step

    def set_phase(self, name: str):
        self._close()
        if name == "forward":
            self.step += 1
        self.phase = name
        torch.cuda.reset_peak_memory_stats()


def _versions() -> dict:
    import accelerate
    import peft
    import transformers

    v = {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "peft": peft.__version__,
        "accelerate": accelerate.__version__,
        "python": platform.python_version(),
    }
    if torch.cuda.is_available():
        v["cuda"] = torch.version.cuda
        v["cudnn"] = torch.backends.cudnn.version()
        v["gpu"] = torch.cuda.get_device_name(0)
        p = torch.cuda.get_device_properties(0)
        v["gpu_total_memory_bytes"] = p.total_memory
        v["gpu_capability"] = f"{p.major}.{p.minor}"
    return v


def _cleanup():
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


def _warmup():
    """Create cuBLAS/cuBLASLt workspaces etc. once, so they are part of every case's baseline."""
    for dt in (torch.float32, torch.bfloat16, torch.float16):
        a = torch.randn(256, 256, device="cuda", dtype=dt, requires_grad=True)
        (a @ a).sum().backward()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            (a.float() @ a.float()).sum()
    del a
    _cleanup()


class SdpaSpy:
    """Counts which SDPA backend torch picks on this GPU (torch._fused_sdp_choice on the inputs the
    kernel will see, i.e. after autocast's cast); the call itself is passed through unchanged."""

    def __init__(self):
        self.counts: dict[str, int] = {}
        self.orig = None

    def __enter__(self):
        self.orig = torch.nn.functional.scaled_dot_product_attention
        orig, counts = self.orig, self.counts

        def spy(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
            try:
                q, k, v = query, key, value
                if torch.is_autocast_enabled("cuda"):
                    dt = torch.get_autocast_dtype("cuda")
                    q, k, v = (t.to(dt) for t in (q, k, v))
                choice = torch._fused_sdp_choice(q, k, v, attn_mask, dropout_p, is_causal, scale=scale,
                                                 enable_gqa=enable_gqa)
                from torch.nn.attention import SDPBackend

                name = SDPBackend(choice).name.lower()
            except Exception as e:  # never break the measurement
                name = f"unknown ({type(e).__name__})"
            counts[name] = counts.get(name, 0) + 1
            return orig(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal,
                        scale=scale, enable_gqa=enable_gqa)

        torch.nn.functional.scaled_dot_product_attention = spy
        return self

    def __exit__(self, *exc):
        torch.nn.functional.scaled_dot_product_attention = self.orig
        return False


def measure_case(case: dict, steps: int = 2) -> dict:
    t0 = time.time()
    _cleanup()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    base_reserved = torch.cuda.memory_reserved()
    model = opt = ids = labels = ref_model = dpo = None
    try:
        torch.manual_seed(0)
        model = harness.build_model(case, device="cuda")
        ref_model = harness.build_model(case, device="cuda", reference=True) if harness.needs_reference_model(case) \
            else None
        opt = harness.build_optimizer(case, model, on_cuda=True)
        vocab = case["model_config"]["vocab_size"]
        dpo = None
        if case.get("dpo") is not None:  # TRL DPOTrainer._compute_loss on the concatenated batch
            ids, labels = harness.make_dpo_batch(case, vocab, real=True, device="cuda"), None
            dpo = harness.dpo_trainer(case, model, ref_model, torch.device("cuda"))
        else:
            ids, labels = harness.make_batch(case, "cuda", vocab, real=True)
        eval_inputs = (harness.make_batch({**case, "micro_batch": case["eval_batch"]}, "cuda", vocab, real=True)
                       if case.get("eval_batch") else None)
        torch.cuda.synchronize()
        setup = torch.cuda.memory_allocated()
        build_peak = torch.cuda.max_memory_allocated()
        ph = CudaPhases()
        with SdpaSpy() as spy:
            harness.training_steps(case, model, opt, ids, labels, tracker=ph, steps=steps,
                                   autocast_device="cuda", real_scaler=True, eval_inputs=eval_inputs,
                                   dpo_trainer=dpo)
        torch.cuda.synchronize()
        ph.set_phase("done")
        ph._close()
        summary = harness.model_summary(model)
        peaks = {k: v for k, v in ph.phase_peaks.items() if k != "done"}
        return {
            "id": case["id"],
            "status": "ok",
            "peak_allocated_bytes": int(ph.peak - base),
            "peak_allocated_mib": round((ph.peak - base) / 2**20, 2),
            "peak_phase": ph.peak_phase,
            "peak_step": ph.peak_step,
            "peak_reserved_bytes": int(max(ph.phase_reserved.values()) - base_reserved),
            "max_memory_allocated_raw": int(ph.peak),
            "max_memory_reserved_raw": int(max(ph.phase_reserved.values())),
            "memory_allocated_before": int(base),
            "memory_reserved_before": int(base_reserved),
            "setup_bytes": int(setup - base),
            "build_peak_bytes": int(build_peak - base),
            "phase_peaks": {k: int(v - base) for k, v in peaks.items()},
            "phase_reserved_raw": {k: int(v) for k, v in ph.phase_reserved.items() if k != "done"},
            "params": summary["params"],
            "trainable_params": summary["trainable_params"],
            "sdpa_backends": spy.counts,
            "seconds": round(time.time() - t0, 1),
        }
    except torch.cuda.OutOfMemoryError as e:
        return {"id": case["id"], "status": "oom", "error": str(e).splitlines()[0][:400],
                "max_memory_allocated_raw": int(torch.cuda.max_memory_allocated()),
                "memory_allocated_before": int(base), "seconds": round(time.time() - t0, 1)}
    except Exception as e:
        return {"id": case["id"], "status": "error", "error": f"{type(e).__name__}: {e}"[:600],
                "traceback": traceback.format_exc(limit=8), "seconds": round(time.time() - t0, 1)}
    finally:
        del model, opt, ids, labels, ref_model, dpo
        _cleanup()


def measure_case_trainer(case: dict, steps: int = 2) -> dict:
    """The same case through the real ``transformers.Trainer`` (max_steps=2), as a check of harness.py.

    Peak = max_memory_allocated over ``trainer.train()`` minus the memory allocated before the
    model was built (the model, batch and optimizer are all created inside the measured window,
    but the peak is reset after the model build, as in measure_case)."""
    import tempfile

    from transformers import Trainer, TrainingArguments, default_data_collator

    t0 = time.time()
    _cleanup()
    base = torch.cuda.memory_allocated()
    model = trainer = None
    try:
        torch.manual_seed(0)
        gc_flag = case["grad_ckpt"]
        c = dict(case, grad_ckpt=False)  # let the Trainer enable gradient checkpointing itself
        model = harness.build_model(c, device="cuda")
        b, s = case["micro_batch"], case["seq_len"]
        vocab = case["model_config"]["vocab_size"]
        data = [{"input_ids": x, "labels": x.clone()}
                for x in torch.randint(0, vocab, (steps * b, s))]
        optim = {"adamw": "adamw_torch", "adamw_foreach": "adamw_torch", "adamw_fused": "adamw_torch_fused",
                 "sgd": "sgd", "sgd_momentum": "sgd", "adafactor": "adafactor"}[case["optimizer"]]
        with tempfile.TemporaryDirectory() as tmp:
            targs = TrainingArguments(
                output_dir=tmp, per_device_train_batch_size=b, max_steps=steps, learning_rate=harness.LR,
                weight_decay=0.0, max_grad_norm=1.0, optim=optim,
                optim_args="momentum=0.9" if case["optimizer"] == "sgd_momentum" else None,
                bf16=case["precision"] == "amp_bf16", fp16=case["precision"] == "amp_fp16",
                gradient_checkpointing=gc_flag,
                gradient_checkpointing_kwargs={"use_reentrant": False} if gc_flag else None,
                logging_steps=10_000, save_strategy="no", report_to=[], dataloader_pin_memory=False,
                dataloader_num_workers=0, disable_tqdm=True, seed=0,
            )
            trainer = Trainer(model=model, args=targs, train_dataset=data, data_collator=default_data_collator)
            torch.cuda.synchronize()
            setup = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            trainer.train()
            torch.cuda.synchronize()
            peak = torch.cuda.max_memory_allocated()
            reserved = torch.cuda.max_memory_reserved()
        return {"status": "ok", "peak_allocated_bytes": int(peak - base),
                "peak_allocated_mib": round((peak - base) / 2**20, 2),
                "max_memory_allocated_raw": int(peak), "max_memory_reserved_raw": int(reserved),
                "setup_bytes": int(setup - base), "seconds": round(time.time() - t0, 1)}
    except torch.cuda.OutOfMemoryError as e:
        return {"status": "oom", "error": str(e).splitlines()[0][:400], "seconds": round(time.time() - t0, 1)}
    except Exception as e:
        return {"status": "error", "error": f"{type(e).__name__}: {e}"[:600],
                "traceback": traceback.format_exc(limit=8), "seconds": round(time.time() - t0, 1)}
    finally:
        del model, trainer
        _cleanup()


def dry_run(ids: list[str]) -> int:
    """Build every selected model on the meta device (no GPU needed) and print its size."""
    table = cases_mod.by_id()
    bad = 0
    for cid in ids:
        case = table[cid]
        try:
            m = harness.build_model(case, device="meta")
            opt = harness.build_optimizer(case, m, on_cuda=False) if case["optimizer"] != "adamw_fused" else None
            s = harness.model_summary(m)
            print(f"{cid:62s} params {s['params'] / 1e6:9.1f} M  trainable {s['trainable_params'] / 1e6:9.2f} M"
                  + ("" if opt is None else f"  groups {len(opt.param_groups)}"))
            del m, opt
        except Exception as e:
            bad += 1
            print(f"{cid:62s} ERROR {type(e).__name__}: {e}")
    print(f"dry run: {len(ids) - bad}/{len(ids)} models built on meta")
    return 1 if bad else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", action="append", help="case id (repeatable); default: all")
    ap.add_argument("--max-seconds", type=float, default=None,
                    help="do not start a new case after this many seconds (the rest are recorded as 'skipped')")
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(HERE, "measured_gpu.json"))
    ap.add_argument("--dry-run", action="store_true", help="build each model on meta and exit (no GPU needed)")
    ap.add_argument("--no-trainer", action="store_true",
                    help="skip the second measurement of each case through the real transformers.Trainer")
    args = ap.parse_args(argv)

    warnings.filterwarnings("ignore")
    import transformers

    transformers.logging.set_verbosity_error()
    table = cases_mod.by_id()
    ids = args.case or [c["id"] for c in cases_mod.CASES]
    unknown = [i for i in ids if i not in table]
    if unknown:
        print("unknown case ids: " + ", ".join(unknown), file=sys.stderr)
        return 2
    if args.dry_run:
        return dry_run(ids)
    if not torch.cuda.is_available():
        print("no CUDA device: use --dry-run on a CPU machine", file=sys.stderr)
        return 2

    _warmup()
    t_all = time.time()
    results = []
    for cid in ids:
        if args.max_seconds is not None and time.time() - t_all > args.max_seconds:
            results.append({"id": cid, "status": "skipped", "error": "--max-seconds reached"})
            continue
        r = measure_case(table[cid], steps=args.steps)
        # (the DPO cases run DPOTrainer's own loss in the harness; the Trainer check is of the SFT-style loop)
        if not args.no_trainer and r["status"] == "ok" and table[cid].get("dpo") is None:
            r["hf_trainer"] = measure_case_trainer(table[cid], steps=args.steps)
        results.append(r)
        if r["status"] == "ok":
            t = r.get("hf_trainer", {})
            tt = f"  Trainer {t['peak_allocated_mib']:>10.1f} MiB" if t.get("status") == "ok" else (f"  Trainer {t.get('status')}" if t else "")
            print(f"{cid:62s} {r['peak_allocated_mib']:>10.1f} MiB  {r['peak_phase']:14s} {r['seconds']:6.1f}s{tt}", flush=True)
        else:
            print(f"{cid:62s} {r['status'].upper()} {r.get('error', '')[:160]}", flush=True)
        # write after every case so a killed run keeps what it measured
        doc = {"tool": "torch.cuda.max_memory_allocated", **_versions(),
               "total_seconds": round(time.time() - t_all, 1), "cases": results}
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    n_ok = sum(1 for r in results if r["status"] == "ok")
    print(f"{n_ok}/{len(results)} measured in {time.time() - t_all:.0f}s -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
