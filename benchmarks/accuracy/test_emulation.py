"""Checks that emulation.py makes CPU fake tensors take CUDA's memory-relevant paths.

    python benchmarks/accuracy/test_emulation.py      (or pytest; skipped without torch)
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


def _skip():
    if torch is None:
        try:
            import pytest

            pytest.skip("torch not installed (dev-only dependency of the benchmark)")
        except ImportError:
            return True
    import emulation

    emulation.install()
    return False


def test_autocast_fp32_policies_follow_cuda():
    if _skip():
        return
    with FakeTensorMode(), torch.autocast("cpu", dtype=torch.bfloat16):
        x = torch.empty(4, 8, dtype=torch.bfloat16)
        assert torch.pow(x, 3.0).dtype == torch.float32          # CUDA fp32 list (CPU autocast: bf16)
        assert torch.softmax(x, -1).dtype == torch.float32        # fp32_set_opt_dtype
        assert torch.nn.functional.layer_norm(x, (8,)).dtype == torch.float32
        assert torch.exp(x).dtype == torch.float32
        w = torch.empty(8, 8)
        assert torch.nn.functional.linear(torch.empty(4, 8), w).dtype == torch.bfloat16  # GEMMs low precision
        assert (x * 2).dtype == torch.bfloat16                    # untouched ops


def test_dropout_saves_bool_mask():
    if _skip():
        return
    with FakeTensorMode():
        x = torch.empty(16, 16, requires_grad=True)
        y = torch.nn.functional.dropout(x, 0.1, True)
        assert type(y.grad_fn).__name__ == "NativeDropoutBackward0"
        z = torch.nn.functional.dropout(x, 0.0, True)
        assert z is x


def test_sdpa_backend_choice_and_saved_tensors():
    if _skip():
        return
    import emulation

    with FakeTensorMode():
        q = torch.empty(2, 8, 256, 64, dtype=torch.bfloat16, requires_grad=True)
        k = torch.empty(2, 2, 256, 64, dtype=torch.bfloat16, requires_grad=True)
        emulation.SDPA_CHOICES.clear()
        o = torch.nn.functional.scaled_dot_product_attention(q, k, k, is_causal=True, enable_gqa=True)
        assert emulation.SDPA_CHOICES == {"flash": 1}
        assert type(o.grad_fn).__name__ == "ScaledDotProductFlashAttentionBackward0"
        # saved: q, k, v, out, logsumexp (b, h, s) fp32 -- no s x s matrix
        lse = o.grad_fn._saved_logsumexp
        assert tuple(lse.shape) == (2, 8, 256) and lse.dtype == torch.float32
        o.sum().backward()
        assert k.grad.shape == k.shape
        # fp32 -> memory-efficient (GQA wrapped), mask -> memory-efficient, odd head dim -> math
        q32, k32 = q.detach().float().requires_grad_(), k.detach().float().requires_grad_()
        emulation.SDPA_CHOICES.clear()
        o = torch.nn.functional.scaled_dot_product_attention(q32, k32, k32, is_causal=True, enable_gqa=True)
        o.sum().backward()
        assert k32.grad.shape == k32.shape
        m = torch.empty(2, 1, 256, 256, dtype=torch.bfloat16)
        kk = torch.empty(2, 8, 256, 64, dtype=torch.bfloat16)
        torch.nn.functional.scaled_dot_product_attention(q, kk, kk, attn_mask=m)
        q3 = torch.empty(2, 8, 256, 62, dtype=torch.float32)
        torch.nn.functional.scaled_dot_product_attention(q3, q3, q3)
        assert emulation.SDPA_CHOICES == {"efficient": 2, "math": 1}


def test_sdpa_autocast_casts_inputs():
    if _skip():
        return
    with FakeTensorMode(), torch.autocast("cpu", dtype=torch.bfloat16):
        q = torch.empty(1, 4, 128, 64)  # fp32 (e.g. after RoPE with fp32 cos/sin)
        o = torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
        assert o.dtype == torch.bfloat16


if __name__ == "__main__":
    from selftest import run_tests

    run_tests(globals())
