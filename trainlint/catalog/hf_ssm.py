"""State-space and hybrid families: Mamba, Falcon-Mamba, Mamba-2, Jamba (Mamba + attention + MoE),
Qwen3-Next (gated DeltaNet linear attention + full attention + MoE), counted the way `transformers`
builds their `...ForCausalLM`.

A mixer layer's linears (`in_proj`, `x_proj`, `dt_proj`, `out_proj`, ...) are listed like attention
linears; the convolution, `A_log`, `D`, `dt_bias` and the mixer's own norms are its `extra_params`.
These stacks have no attention heads (`attention_heads=0`, `head_dim=0`). No I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

from trainlint.catalog.architecture import Architecture, LayerStack, Linear, SsmShape
from trainlint.catalog.hf_common import Cfg, attn_shape, decoder, dense_mlp, qkvo

__all__ = ["BUILDERS"]


def _mamba_mixer(c: Cfg, h: int, *, inter: int, state: int, dt_rank: int, conv: int, proj_bias: bool,
                 conv_bias: bool, inner_norms: bool = False) -> tuple[list[Linear], int]:
    """Mamba (1) mixer: its linears and the rest (conv, A_log, D, and Jamba's dt/B/C RMSNorms)."""
    linears = [Linear("in_proj", h, 2 * inter, proj_bias, "attn_in"),
               Linear("x_proj", inter, dt_rank + 2 * state, False, "ssm_x"),
               Linear("dt_proj", dt_rank, inter, True, "ssm_dt"),
               Linear("out_proj", inter, h, proj_bias, "attn_out")]
    extra = inter * conv + (inter if conv_bias else 0) + inter * state + inter
    if inner_norms:
        extra += dt_rank + 2 * state
    return linears, extra


def _dt_rank(c: Cfg, key: str, h: int) -> int:
    value = c.get(key, "auto")
    return math.ceil(h / 16) if value == "auto" else c.int(key)


def _mamba(c: Cfg, name: str, source: str) -> Architecture:
    h = c.int("hidden_size")
    inter = c.int("intermediate_size", default=c.int("expand", default=2) * h)
    linears, extra = _mamba_mixer(c, h, inter=inter, state=c.int("state_size", default=16),
                                  dt_rank=_dt_rank(c, "time_step_rank", h), conv=c.int("conv_kernel", default=4),
                                  proj_bias=c.bool("use_bias", False), conv_bias=c.bool("use_conv_bias", True))
    shape = SsmShape("mamba", inter, c.int("state_size", default=16), dt_rank=_dt_rank(c, "time_step_rank", h),
                     conv_kernel=c.int("conv_kernel", default=4))
    stack = LayerStack("decoder", c.int("num_hidden_layers", "n_layer"), tuple(linears), norm_params=h,
                       extra_params=extra, mixer="ssm", ssm=shape)
    return decoder(c, name, source, [stack], h=h, heads=0, kv=0, hd=0, f=inter, act=c.get("hidden_act", "silu"),
                   gated=False, tie=c.bool("tie_word_embeddings", True), vocab=c.int("vocab_size"), final_norm=h,
                   max_pos=0)


def _mamba2(c: Cfg, name: str, source: str) -> Architecture:
    h = c.int("hidden_size")
    heads, hd = c.int("num_heads"), c.int("head_dim", default=64)
    inter = c.int("expand", default=2) * h
    groups, state = c.int("n_groups", default=1), c.int("state_size", default=128)
    conv_dim = inter + 2 * groups * state
    bias = c.bool("use_bias", False)
    linears = (Linear("in_proj", h, 2 * inter + 2 * groups * state + heads, bias, "attn_in"),
               Linear("out_proj", inter, h, bias, "attn_out"))
    extra = conv_dim * c.int("conv_kernel", default=4) + (conv_dim if c.bool("use_conv_bias", True) else 0) \
        + 3 * heads + inter  # dt_bias, A_log, D, the gated RMSNorm
    shape = SsmShape("mamba2", inter, state, heads=heads, n_groups=groups, chunk_size=c.int("chunk_size", default=256),
                     conv_kernel=c.int("conv_kernel", default=4))
    stack = LayerStack("decoder", c.int("num_hidden_layers"), linears, norm_params=h, extra_params=extra,
                       mixer="ssm", ssm=shape)
    del hd
    return decoder(c, name, source, [stack], h=h, heads=0, kv=0, hd=0, f=inter, act=c.get("hidden_act", "silu"),
                   gated=False, tie=c.bool("tie_word_embeddings", True), vocab=c.int("vocab_size"), final_norm=h,
                   max_pos=0)


def _jamba(c: Cfg, name: str, source: str) -> Architecture:
    """Jamba: attention every `attn_layer_period` layers (at `attn_layer_offset`), Mamba elsewhere;
    routed experts every `expert_layer_period` layers (at `expert_layer_offset`), a dense MLP elsewhere."""
    h, heads, kv, hd = attn_shape(c)
    layers = c.int("num_hidden_layers")
    f = c.int("intermediate_size")
    experts = c.int("num_experts", default=16)
    ap, ao = c.int("attn_layer_period", default=8), c.int("attn_layer_offset", default=4)
    ep, eo = c.int("expert_layer_period", default=2), c.int("expert_layer_offset", default=1)
    inter = c.int("mamba_expand", default=2) * h
    mixer, mixer_extra = _mamba_mixer(c, h, inter=inter, state=c.int("mamba_d_state", default=16),
                                      dt_rank=_dt_rank(c, "mamba_dt_rank", h), conv=c.int("mamba_d_conv", default=4),
                                      proj_bias=c.bool("mamba_proj_bias", False),
                                      conv_bias=c.bool("mamba_conv_bias", True), inner_norms=True)
    shape = SsmShape("mamba_split", inter, c.int("mamba_d_state", default=16), dt_rank=_dt_rank(c, "mamba_dt_rank", h),
                     conv_kernel=c.int("mamba_d_conv", default=4))
    attn = qkvo(h, heads, kv, hd, False, False)
    moe = dense_mlp(h, f, True, False, group_in="expert_in", group_out="expert_out", per_expert=True)
    dense = dense_mlp(h, f, True, False)
    counts: dict[tuple[bool, bool], int] = {}
    for i in range(layers):
        key = (ap > 0 and i % ap == ao, ep > 0 and i % ep == eo)
        counts[key] = counts.get(key, 0) + 1
    stacks = []
    for (is_attn, is_moe), n in sorted(counts.items()):
        linears = (attn if is_attn else mixer) + (moe if is_moe else dense)
        stacks.append(LayerStack(
            "decoder", n, tuple(linears), num_experts=experts if is_moe else 0,
            experts_per_token=c.int("num_experts_per_tok", default=2) if is_moe else 0,
            router_params=h * experts if is_moe else 0, norm_params=2 * h,
            extra_params=0 if is_attn else mixer_extra, attention_heads=heads if is_attn else 0,
            kv_heads=kv if is_attn else 0, head_dim=hd if is_attn else 0, fused_experts=is_moe,
            mixer="attention" if is_attn else "ssm", ssm=None if is_attn else shape))
    return decoder(c, name, source, stacks, h=h, heads=heads, kv=kv, hd=hd, f=f, act=c.get("hidden_act", "silu"),
                   gated=True, tie=c.bool("tie_word_embeddings", False), vocab=c.int("vocab_size"), final_norm=h)


def _qwen3_next(c: Cfg, name: str, source: str) -> Architecture:
    """Qwen3-Next: every `full_attention_interval`-th layer is gated full attention (q_proj twice as
    wide, q/k norms), the others gated DeltaNet linear attention; MoE with a gated shared expert."""
    h, heads, kv, hd = attn_shape(c, 256)
    layers = c.int("num_hidden_layers")
    interval = c.int("full_attention_interval", default=4)
    full = sum(1 for i in range(layers) if interval > 0 and (i + 1) % interval == 0)
    kh, kd = c.int("linear_num_key_heads", default=16), c.int("linear_key_head_dim", default=128)
    vh, vd = c.int("linear_num_value_heads", default=32), c.int("linear_value_head_dim", default=128)
    key_dim, value_dim = kh * kd, vh * vd
    linear_attn = [Linear("in_proj_qkvz", h, 2 * key_dim + 2 * value_dim, False, "attn_in"),
                   Linear("in_proj_ba", h, 2 * vh, False, "attn_in"),
                   Linear("out_proj", value_dim, h, False, "attn_out")]
    la_extra = (2 * key_dim + value_dim) * c.int("linear_conv_kernel_dim", default=4) + 2 * vh + vd
    bias = c.bool("attention_bias", False)
    full_attn = [Linear("q_proj", h, 2 * heads * hd, bias, "attn_in"), Linear("k_proj", h, kv * hd, bias, "attn_in"),
                 Linear("v_proj", h, kv * hd, bias, "attn_in"), Linear("o_proj", heads * hd, h, bias, "attn_out")]
    experts, fe = c.int("num_experts"), c.int("moe_intermediate_size")
    moe = dense_mlp(h, fe, True, False, group_in="expert_in", group_out="expert_out", per_expert=True)
    shared_f = c.int("shared_expert_intermediate_size", default=0)
    if shared_f:
        moe += dense_mlp(h, shared_f, True, False, group_in="shared_in", group_out="shared_out")
    router = h * experts + (h if shared_f else 0)
    stack = partial(LayerStack, num_experts=experts, experts_per_token=c.int("num_experts_per_tok"),
                    router_params=router, fused_experts=True)
    stacks = [stack("decoder", layers - full, tuple(linear_attn + moe), norm_params=2 * h, extra_params=la_extra,
                    mixer="linear_attention"),
              stack("decoder", full, tuple(full_attn + moe), norm_params=2 * h + 2 * hd, attention_heads=heads,
                    kv_heads=kv, head_dim=hd)]
    return decoder(c, name, source, stacks, h=h, heads=heads, kv=kv, hd=hd, f=fe, act=c.get("hidden_act", "silu"),
                   gated=True, tie=c.bool("tie_word_embeddings", False), vocab=c.int("vocab_size"), final_norm=h)


BUILDERS: dict[str, Callable[[Cfg, str, str], Architecture]] = {
    "mamba": _mamba,
    "falcon_mamba": _mamba,
    "mamba2": _mamba2,
    "jamba": _jamba,
    "qwen3_next": _qwen3_next,
}
