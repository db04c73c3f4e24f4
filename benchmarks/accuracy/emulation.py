"""Make a CPU fake-tensor run behave like a CUDA run, as far as memory is concerned.

A CPU-only torch build cannot run autograd on fake tensors whose device is
"cuda" (the autograd engine asks for a CUDA device guard and stream), so the
tracer runs on fake *CPU* tensors and patches the few places where PyTorch
takes a different code path on CPU than on CUDA:

1. Autocast.  CPU autocast has its own (shorter) op lists.  We register Python
   kernels on the ``AutocastCPU`` dispatch key for every op that CUDA autocast
   runs in fp32 (``fp32`` / ``fp32_set_opt_dtype`` policies) or in the low
   precision dtype and that CPU autocast leaves alone, and we neutralise the
   CPU-only entries that CUDA does not have.  The lists are the CUDA ones of
   ``aten/src/ATen/autocast_mode.h`` (AT_FORALL_LOWER_PRECISION_FP,
   AT_FORALL_FP32, AT_FORALL_FP32_SET_OPT_DTYPE) in torch 2.13.
2. Dropout.  ``aten::dropout`` uses the fused ``native_dropout`` kernel only
   for CUDA/XPU tensors; on CPU it multiplies by a float noise tensor, which
   saves a full-size float mask instead of CUDA's 1-byte bool mask.  We route
   ``torch.nn.functional.dropout`` to ``native_dropout`` in training mode.
3. Scaled dot-product attention.  On CUDA, SDPA picks flash / memory-efficient
   / math kernels (flash and mem-efficient save only a logsumexp, not the
   s x s matrix).  On CPU the choice differs.  We re-implement the CUDA
   backend choice of ``sdp_utils.cpp`` (sm80+: flash for fp16/bf16 without a
   mask and head_dim <= 256; mem-efficient for fp32 or with a mask when
   head_dim is 4/8-aligned; else math) and call the chosen aten op directly.
   The cuDNN backend that torch prefers on sm90/sm100 with cuDNN > 9.15 saves
   the same (output + fp32 logsumexp) as flash, so it is modelled as flash.
4. Optimizers.  On CUDA, torch.optim defaults to the foreach implementation;
   on CPU it defaults to the per-tensor loop.  ``harness.py`` passes
   ``foreach=True`` explicitly.  Non-fused Adam keeps ``step`` on the host;
   the tracker does not count 0-dim tensors born in a non-fused optimizer step.
"""

from __future__ import annotations

import math

import torch
from torch.utils._pytree import tree_map

_LOW = (torch.float16, torch.bfloat16)

# CUDA autocast policies (torch 2.13, aten/src/ATen/autocast_mode.h).
CUDA_FP32 = [
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p",
    "reciprocal", "rsqrt", "sinh", "tan", "pow.Tensor_Scalar", "pow.Tensor_Tensor",
    "pow.Scalar", "softplus", "layer_norm", "native_layer_norm", "group_norm",
    "frobenius_norm.dim", "nuclear_norm", "nuclear_norm.dim", "cosine_similarity",
    "poisson_nll_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d",
    "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss",
    "mse_loss", "margin_ranking_loss", "multilabel_margin_loss", "soft_margin_loss",
    "triplet_margin_loss", "multi_margin_loss", "binary_cross_entropy_with_logits",
    "dist", "pdist", "cdist", "renorm", "logsumexp",
]
CUDA_FP32_SET_OPT_DTYPE = [
    "prod", "prod.dim_int", "softmax.int", "log_softmax.int", "cumprod", "cumsum",
    "linalg_vector_norm", "linalg_matrix_norm", "sum", "sum.dim_IntList",
]
# Low-precision ops CUDA has and CPU autocast lacks (the common GEMMs are in both).
CUDA_LOWER_EXTRA = ["addmv", "addr", "mv", "einsum", "chain_matmul", "linalg_multi_dot"]
# Ops that CPU autocast handles but CUDA does not (made pass-through).
CPU_ONLY = [
    "cross_entropy_loss", "prod", "prod.dim_int", "binary_cross_entropy", "polar",
    "quantile", "quantile.scalar", "nanquantile", "nanquantile.scalar", "trace",
    "view_as_complex", "stack", "cat", "index_copy",
]

_libs: list = []
_installed = False


def _exclude_autocast_cpu():
    return torch._C._ExcludeDispatchKeyGuard(
        torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastCPU)
    )


def _op(name: str):
    base, _, overload = name.partition(".")
    packet = getattr(torch.ops.aten, base)
    return getattr(packet, overload or "default")


def _cast(dtype):
    def f(x):
        if isinstance(x, torch.Tensor) and x.is_floating_point() and x.dtype != dtype and x.dtype != torch.float64:
            return x.to(dtype)
        return x
    return f


def _make_fp32(op):
    def kernel(*args, **kwargs):
        with _exclude_autocast_cpu():
            args = tree_map(_cast(torch.float32), args)
            kwargs = tree_map(_cast(torch.float32), kwargs)
            return op(*args, **kwargs)
    return kernel


def _make_fp32_set_opt_dtype(op):
    names = [a.name for a in op._schema.arguments]
    dtype_pos = names.index("dtype") if "dtype" in names else None

    def kernel(*args, **kwargs):
        with _exclude_autocast_cpu():
            first = args[0] if args else None
            has_dtype = ("dtype" in kwargs and kwargs["dtype"] is not None) or (
                dtype_pos is not None and len(args) > dtype_pos and args[dtype_pos] is not None
            )
            if (
                dtype_pos is not None
                and not has_dtype
                and isinstance(first, torch.Tensor)
                and first.is_floating_point()
            ):
                if len(args) > dtype_pos:
                    args = list(args)
                    args[dtype_pos] = torch.float32
                else:
                    kwargs = dict(kwargs)
                    kwargs["dtype"] = torch.float32
            return op(*args, **kwargs)
    return kernel


def _make_lower(op):
    def kernel(*args, **kwargs):
        dtype = torch.get_autocast_dtype("cpu")
        with _exclude_autocast_cpu():
            args = tree_map(_cast(dtype), args)
            kwargs = tree_map(_cast(dtype), kwargs)
            return op(*args, **kwargs)
    return kernel


def _make_passthrough(op):
    def kernel(*args, **kwargs):
        with _exclude_autocast_cpu():
            return op(*args, **kwargs)
    return kernel


def install_cuda_autocast_lists() -> None:
    lib = torch.library.Library("aten", "IMPL")
    _libs.append(lib)
    done = set()
    for name in CPU_ONLY:
        try:
            lib.impl(name, _make_passthrough(_op(name)), "AutocastCPU", allow_override=True)
            done.add(name)
        except Exception:  # overload not present in this torch
            pass
    for name in CUDA_FP32:
        try:
            lib.impl(name, _make_fp32(_op(name)), "AutocastCPU", allow_override=True)
        except Exception:
            pass
    for name in CUDA_FP32_SET_OPT_DTYPE:
        try:
            lib.impl(name, _make_fp32_set_opt_dtype(_op(name)), "AutocastCPU", allow_override=True)
        except Exception:
            pass
    for name in CUDA_LOWER_EXTRA:
        try:
            lib.impl(name, _make_lower(_op(name)), "AutocastCPU", allow_override=True)
        except Exception:
            pass


# --------------------------------------------------------------------------- dropout
_orig_dropout = torch.nn.functional.dropout


def _cuda_like_dropout(input, p=0.5, training=True, inplace=False):
    if not training or p == 0.0:
        return input
    if p >= 1.0 or input.numel() == 0:
        return _orig_dropout(input, p, training, inplace)
    out = torch.ops.aten.native_dropout(input, p, True)[0]
    if inplace:
        input.copy_(out)
        return input
    return out


# --------------------------------------------------------------------------- SDPA
_orig_sdpa = torch.nn.functional.scaled_dot_product_attention
SDPA_CHOICES: dict[str, int] = {}


class _EffAttnGQA(torch.autograd.Function):
    """Memory-efficient attention with fewer K/V heads than Q heads.

    The CUDA kernel supports GQA; the meta (fake) backward does not return a
    grad of K/V's shape, so the backward is wrapped: grads come back at Q's head
    count and are reduced over the group, as the real kernel's caller would.
    Saved tensors are the ones the aten autograd node saves.
    """

    @staticmethod
    def forward(ctx, q, k, v, attn_mask, dropout_p, is_causal, scale):
        out, lse, seed, offset = torch.ops.aten._scaled_dot_product_efficient_attention(
            q, k, v, attn_mask, True, dropout_p, is_causal, scale=scale
        )
        ctx.save_for_backward(q, k, v, attn_mask if attn_mask is not None else None, out, lse, seed, offset)
        ctx.args = (dropout_p, is_causal, scale, attn_mask is not None)
        return out

    @staticmethod
    def backward(ctx, gout):
        q, k, v, mask, out, lse, seed, offset = ctx.saved_tensors
        dropout_p, is_causal, scale, has_mask = ctx.args
        rep = q.shape[1] // k.shape[1]
        ke = k.repeat_interleave(rep, dim=1)
        ve = v.repeat_interleave(rep, dim=1)
        gq, gk, gv, gb = torch.ops.aten._scaled_dot_product_efficient_attention_backward(
            gout, q, ke, ve, mask, out, lse, seed, offset, dropout_p,
            [True, True, True, False], is_causal, scale=scale,
        )
        b, h, s, d = gk.shape
        gk = gk.view(b, k.shape[1], rep, s, d).sum(2)
        gv = gv.view(b, v.shape[1], rep, s, gv.shape[-1]).sum(2)
        return gq, gk, gv, None, None, None, None


# --------------------------------------------------------------------------- grouped_mm
_orig_grouped_mm = getattr(torch.nn.functional, "grouped_mm", None)


class _GroupedMMFallback(torch.autograd.Function):
    """CUDA ``_grouped_mm`` for non-bf16 inputs (``_grouped_mm_fallback`` in GroupedBlas.cpp): one
    output tensor filled by per-group mm_out, autograd saves mat_a and mat_b.  The meta kernel of
    torch 2.13 only accepts bf16, so fp32 (AMP: HF casts the input to the fp32 expert weights) is
    emulated with the same allocations."""

    @staticmethod
    def forward(ctx, a, b, offs):
        ctx.save_for_backward(a, b)
        if a.dim() == 2 and b.dim() == 3:
            return a.new_empty((a.shape[0], b.shape[-1]))
        if a.dim() == 2 and b.dim() == 2:
            return a.new_empty((offs.shape[0], a.shape[0], b.shape[-1]))
        if a.dim() == 3 and b.dim() == 2:
            return a.new_empty((a.shape[1], b.shape[-1]))
        return a.new_empty((a.shape[0], a.shape[1], b.shape[-1]))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return torch.empty_like(a), torch.empty_like(b), None


def _grouped_mm_any_dtype(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    if mat_a.dtype == torch.bfloat16 and mat_b.dtype == torch.bfloat16 or bias is not None:
        return _orig_grouped_mm(mat_a, mat_b, offs=offs, bias=bias, out_dtype=out_dtype)
    return _GroupedMMFallback.apply(mat_a, mat_b, offs)


def cuda_sdpa_backend(q, k, v, attn_mask, dropout_p) -> str:
    """Which backend torch would pick on an sm80+ CUDA GPU (sdp_utils.cpp)."""
    dq, dk, dv = q.shape[-1], k.shape[-1], v.shape[-1]
    low = q.dtype in _LOW
    if low and attn_mask is None and dq == dk == dv and dq <= 256:
        return "flash"
    align = 8 if low else 4
    if dq == dk and dq % align == 0 and dv % align == 0 and q.dtype in (torch.float16, torch.bfloat16, torch.float32):
        return "efficient"
    return "math"


def _cuda_like_sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    if torch.is_autocast_enabled("cpu"):
        dt = torch.get_autocast_dtype("cpu")
        query, key, value = (t.to(dt) if t.is_floating_point() else t for t in (query, key, value))
        if attn_mask is not None and attn_mask.is_floating_point():
            attn_mask = attn_mask.to(dt)
    with _exclude_autocast_cpu():
        if attn_mask is not None and attn_mask.dtype == torch.bool:
            # convert_boolean_attn_mask in attention.cpp
            attn_mask = torch.zeros_like(attn_mask, dtype=query.dtype).masked_fill_(~attn_mask, -math.inf)
        grad = torch.is_grad_enabled() and any(t.requires_grad for t in (query, key, value))
        backend = cuda_sdpa_backend(query, key, value, attn_mask, dropout_p)
        SDPA_CHOICES[backend] = SDPA_CHOICES.get(backend, 0) + 1
        if backend == "flash":
            return torch.ops.aten._scaled_dot_product_flash_attention(
                query, key, value, dropout_p, is_causal, False, scale=scale
            )[0]
        if backend == "efficient":
            if attn_mask is not None:
                # preprocess_mask: expand to (b, h, q, k) as a view (no copy) -- memory neutral
                attn_mask = attn_mask.expand(query.shape[0], query.shape[1], query.shape[2], key.shape[2])
            if key.shape[1] != query.shape[1] and grad:
                return _EffAttnGQA.apply(query, key, value, attn_mask, dropout_p, is_causal, scale)
            return torch.ops.aten._scaled_dot_product_efficient_attention(
                query, key, value, attn_mask, grad, dropout_p, is_causal, scale=scale
            )[0]
        return torch.ops.aten._scaled_dot_product_attention_math(
            query, key, value, attn_mask, dropout_p, is_causal, None, scale=scale, enable_gqa=enable_gqa
        )[0]


def _patch_trl_fused_head() -> None:
    """TRL's fused LM head (trl/kernels/chunked_logprob.py) folds each [4096, 32768] logits tile with a Triton
    kernel in place and accumulates the gradient GEMMs with `addmm(out_dtype=float32, out=acc)` on CUDA. The CPU
    fallback instead runs torch ops (`_forward_tile`, `_backward_tile`) and upcasts both GEMM operands to fp32,
    allocating tile-sized temporaries the GPU never makes. Replace them with the CUDA path's allocations: none."""
    try:
        import trl.kernels.chunked_logprob as cl
    except Exception:  # trl not installed: no TRL cases can run
        return

    def _in_place(*args, **kwargs):
        return None

    cl._forward_tile = _in_place
    cl._backward_tile = _in_place
    cl._addmm_fp32 = lambda acc, a, b: None


def install() -> None:
    """Install all CUDA-emulation patches (idempotent)."""
    global _installed
    if _installed:
        return
    install_cuda_autocast_lists()
    torch.nn.functional.dropout = _cuda_like_dropout
    torch.nn.functional.scaled_dot_product_attention = _cuda_like_sdpa
    torch.nn.functional.grouped_mm = _grouped_mm_any_dtype
    _patch_transformers()
    _patch_trl_fused_head()
    _installed = True


def _patch_transformers() -> None:
    """transformers treats fake tensors as 'tracing' and then keeps a packed-sequence mask it
    cannot inspect; with real, unpacked inputs (position_ids = arange) it returns None."""
    import transformers.masking_utils as mu

    mu.find_packed_sequence_indices = lambda position_ids: None


class AllValidMaskIndex(torch.utils._python_dispatch.TorchDispatchMode):
    """Boolean-mask indexing (``x[mask]``) has a data-dependent output shape, which fake tensors refuse
    (DynamicOutputShapeException on aten.nonzero). For a batch whose masks are all true -- the DPO cases'
    completion masks (harness.make_dpo_batch), read by DPOTrainer._compute_loss's metrics -- the result is every
    element: a new tensor of ``mask.numel()`` rows, allocated here as ``aten.index`` would. Only for such batches."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.ops.aten.index.Tensor:
            x, indices = args[0], args[1]
            if len(indices) == 1 and indices[0] is not None and indices[0].dtype == torch.bool:
                mask = indices[0]
                return torch.empty((mask.numel(), *x.shape[mask.dim():]), dtype=x.dtype, device=x.device)
        return func(*args, **kwargs)

