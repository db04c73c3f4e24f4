"""Hand-computed checks of the storage tracker (run: python -m pytest benchmarks/accuracy/test_tracker.py,
or python benchmarks/accuracy/test_tracker.py).  Needs torch (dev-only); skipped without it.

Model: one nn.Linear(1000, 1000) (fp32, bias) on an input x of shape (8, 1000), loss = out.sum(),
two steps of optimizer.step() / zero_grad(set_to_none=True), all under FakeTensorMode.

Sizes, each rounded up to 512 B:
  W  1000*1000*4 = 4,000,000 -> 4,000,256      b  4,000 -> 4,096
  x  8*1000*4    =    32,000 ->    32,256      out (8, 1000) -> 32,256     loss (0-dim) -> 512
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
except ImportError:  # pragma: no cover
    torch = None

W, B, X, OUT, SCALAR = 4_000_256, 4_096, 32_256, 32_256, 512
PARAMS = W + B
SETUP = PARAMS + X


def _run(opt_name: str):
    from tracker import StorageTracker

    with FakeTensorMode():
        lin = torch.nn.Linear(1000, 1000)
        x = torch.empty(8, 1000)
        if opt_name == "adamw_foreach":
            opt = torch.optim.AdamW(lin.parameters(), lr=1e-3, foreach=True)
        elif opt_name == "adamw_fused":
            opt = torch.optim.AdamW(lin.parameters(), lr=1e-3, fused=True)
        elif opt_name == "sgd":
            opt = torch.optim.SGD(lin.parameters(), lr=1e-3, foreach=True)
        else:
            raise ValueError(opt_name)
        tr = StorageTracker()
        for t in (lin.weight, lin.bias, x):
            tr.track(t)
        with tr:
            for _ in range(2):
                tr.set_phase("forward")
                out = lin(x)
                v = out.view(8, 10, 100)  # a view: must not be counted again
                loss = v.sum()
                tr.set_phase("backward")
                loss.backward()
                del out, v, loss
                tr.set_phase("optimizer_step")
                tr.host_scalar_rule = opt_name != "adamw_fused"  # Adam's `step` lives on the host unless fused
                opt.step()
                tr.host_scalar_rule = False
                tr.set_phase("zero_grad")
                opt.zero_grad(set_to_none=True)
            tr.set_phase("done")
        return tr


def _skip():
    if torch is None:
        try:
            import pytest

            pytest.skip("torch not installed (dev-only dependency of the benchmark)")
        except ImportError:
            return True
    return False


def test_setup_and_rounding():
    if _skip():
        return
    tr = _run("sgd")
    assert tr.phase_peaks["setup"] == SETUP


def test_adamw_foreach_by_hand():
    if _skip():
        return
    tr = _run("adamw_foreach")
    states = 2 * PARAMS  # exp_avg + exp_avg_sq (fp32); `step` is a host tensor
    grads = PARAMS
    # forward of step 1: out + loss on top of setup; step 2 also holds the optimizer states
    assert tr.phase_peaks["forward"] == SETUP + states + OUT + SCALAR
    # optimizer step: params + grads + states + one param-sized temporary (_foreach_sqrt of exp_avg_sq)
    assert tr.phase_peaks["optimizer_step"] == SETUP + grads + states + PARAMS
    assert tr.peak == SETUP + grads + states + PARAMS
    assert tr.peak_phase == "optimizer_step"
    # after zero_grad(set_to_none=True) only params, input and states remain
    assert tr.phase_peaks["done"] == SETUP + states


def test_adamw_fused_by_hand():
    if _skip():
        return
    tr = _run("adamw_fused")
    states = 2 * PARAMS + 2 * SCALAR  # + the two on-device `step` tensors of the fused kernel
    # the fused kernel needs no temporary: the step peak is params + grads + states
    assert tr.phase_peaks["optimizer_step"] == SETUP + PARAMS + states
    # so the overall peak moves to backward of step 2: states + out + loss + seed grad + grads
    assert tr.peak == SETUP + states + OUT + SCALAR + SCALAR + PARAMS
    assert tr.peak_phase == "backward"
    assert tr.phase_peaks["done"] == SETUP + states


def test_sgd_backward_by_hand():
    if _skip():
        return
    tr = _run("sgd")
    # backward: setup + out + loss + the seed grad (ones_like(loss)) + grad W + grad b, within one 512-B block
    expected = SETUP + OUT + SCALAR + W + B
    assert expected <= tr.phase_peaks["backward"] <= expected + SCALAR
    # plain SGD keeps no state: params + grads during the step, nothing after
    assert tr.phase_peaks["optimizer_step"] == SETUP + PARAMS
    assert tr.phase_peaks["done"] == SETUP


def test_allocator_sim_rules():
    """CUDA caching allocator rules (no torch needed)."""
    from allocator_sim import CachingAllocatorSim

    MiB = 1 << 20
    a = CachingAllocatorSim()
    s1 = a.malloc(100)                      # small pool: 512 B of a fresh 2 MiB segment
    assert (a.allocated, a.reserved) == (512, 2 * MiB)
    s2 = a.malloc(3000)                     # split from the same segment: 3072 B
    assert (a.allocated, a.reserved) == (512 + 3072, 2 * MiB)
    big = a.malloc(11 * MiB)                # 12 MiB segment, remainder 1 MiB is not > 1 MiB: whole block
    assert a.allocated == 512 + 3072 + 12 * MiB and a.reserved == 14 * MiB
    mid = a.malloc(int(1.5 * MiB))          # 20 MiB segment, split (remainder 18.5 MiB)
    assert a.allocated == 512 + 3072 + 12 * MiB + int(1.5 * MiB) and a.reserved == 34 * MiB
    a.free(big)
    again = a.malloc(10 * MiB + 4096)       # best fit: the cached 12 MiB block, remainder > 1 MiB -> split
    assert a.reserved == 34 * MiB and a.allocated == 512 + 3072 + int(1.5 * MiB) + 10 * MiB + 4096
    for b in (s1, s2, mid, again):
        a.free(b)
    assert a.allocated == 0 and a.reserved == 34 * MiB
    # freed neighbours merged back: the 20 MiB and 12 MiB segments are whole again
    assert sorted(x[0] for x in a.pools[False]) == [12 * MiB, 20 * MiB]
    assert [x[0] for x in a.pools[True]] == [2 * MiB]


if __name__ == "__main__":
    from selftest import run_tests

    run_tests(globals())
