"""Cross-check tracker.py against torch's own MemTracker (torch.distributed._tools.mem_tracker).

Both run the same fake-tensor training steps (harness.py, CUDA emulation on) for a case.
MemTracker rounds to 512 B only for CUDA tensors, and these fake tensors are on CPU, so our
tracker runs with block=1 (raw bytes) for the comparison.  The two peaks should be identical.

    python benchmarks/accuracy/crosscheck_memtracker.py [--case ID ...]
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

import cases as cases_mod  # noqa: E402
import emulation  # noqa: E402
import harness  # noqa: E402
from tracker import StorageTracker  # noqa: E402

DEFAULT = [
    "gpt2-fp32-adamw-eager-b4-s512",
    "smollm2-135m-bf16-adamw-eager-b8-s256",
    "gpt2-ampbf16-adamw-sdpa-gc-b8-s1024",
]


def _setup(case):
    model = harness.build_model(case, device="meta")
    fm = FakeTensorMode(allow_non_fake_inputs=True)
    harness.meta_to_fake(model, fm)
    with fm:
        opt = harness.build_optimizer(case, model, on_cuda=False)
        ids, labels = harness.make_batch(case, None, case["model_config"]["vocab_size"], real=False)
    return fm, model, opt, ids, labels


def ours(case) -> int:
    fm, model, opt, ids, labels = _setup(case)
    with fm:
        tr = StorageTracker(block=1)
        for t in list(model.parameters()) + list(model.buffers()) + [ids, labels]:
            tr.track(t)
        with tr:
            for _ in range(2):
                harness.training_steps(case, model, opt, ids, labels, tracker=tr, steps=1,
                                       autocast_device="cpu", real_scaler=False)
    return tr.peak


def memtracker(case) -> int:
    from torch.distributed._tools.mem_tracker import MemTracker

    fm, model, opt, ids, labels = _setup(case)
    with fm:
        mt = MemTracker()
        mt.track_external(model, opt, ids, labels)
        with mt:
            for _ in range(2):  # MemTracker wants reset_mod_stats() between iterations
                harness.training_steps(case, model, opt, ids, labels, tracker=None, steps=1,
                                       autocast_device="cpu", real_scaler=False)
                mt.reset_mod_stats()
        snap = mt.get_tracker_snapshot("peak")
    return sum(v["Total"] for v in snap.values())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", action="append")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    import transformers

    transformers.logging.set_verbosity_error()
    emulation.install()
    table = cases_mod.by_id()
    bad = 0
    for cid in args.case or DEFAULT:
        a, b = ours(table[cid]), memtracker(table[cid])
        same = a == b
        bad += not same
        print(f"{cid:55s} ours {a:>14,d}  MemTracker {b:>14,d}  diff {a - b:>+12,d}  {'OK' if same else 'DIFF'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
