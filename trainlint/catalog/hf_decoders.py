"""Decoder-only families beyond the Llama-like core of `hf_config`: each builder reads one
`model_type`'s config.json the way its `transformers` modeling file builds the model, and returns
the exact `Architecture` (layer stacks with every linear, norms, embeddings, head).

Families: granite, granitemoe, cohere, cohere2, smollm3, olmo, glm, glm4, glm4_moe, stablelm,
starcoder2, gptj, gpt_neo, gpt_bigcode, opt, bloom, mpt, phimoe, llama4_text, mllama_text_model.
No I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial

from trainlint.catalog.architecture import Architecture, LayerStack, Linear
from trainlint.catalog.hf_common import Cfg, attn_shape, decoder, dense_mlp, qkvo

__all__ = ["BUILDERS"]


def _ln(h: int, bias: bool = True) -> int:
    """Parameters of one LayerNorm over `h` (weight, and bias unless the family drops it)."""
    return 2 * h if bias else h


def _llama_variant(c: Cfg, name: str, source: str, *, tie: bool, norms: int, norm_size: int, final_norm: int,
                   qkv_bias: bool, o_bias: bool, mlp_bias: bool = False, qk_norm: int = 0, fused_gate_up: bool = False,
                   gated: bool = True, mlp_names=("gate_proj", "up_proj", "down_proj"), act_default: str = "silu",
                   head_dim_default: int | None = None) -> Architecture:
    """The Llama layout with the knobs these families turn: norm count and kind, biases, q/k norms,
    a fused gate_up projection (GLM), a plain two-linear MLP (StarCoder2)."""
    h, heads, kv, hd = attn_shape(c, head_dim_default)
    f = c.int("intermediate_size")
    linears = qkvo(h, heads, kv, hd, qkv_bias, o_bias)
    if fused_gate_up:
        linears += [Linear("gate_up_proj", h, 2 * f, mlp_bias, "mlp_in"), Linear("down_proj", f, h, mlp_bias, "mlp_out")]
    elif gated:
        linears += dense_mlp(h, f, True, mlp_bias, names=mlp_names)
    else:
        linears += [Linear(mlp_names[1], h, f, mlp_bias, "mlp_in"), Linear(mlp_names[2], f, h, mlp_bias, "mlp_out")]
    stack = LayerStack("decoder", c.int("num_hidden_layers"), tuple(linears), norm_params=norms * norm_size + qk_norm,
                       attention_heads=heads, kv_heads=kv, head_dim=hd)
    return decoder(c, name, source, [stack], h=h, heads=heads, kv=kv, hd=hd, f=f,
                   act=c.get("hidden_act") or c.get("hidden_activation") or act_default, gated=gated or fused_gate_up,
                   tie=c.bool("tie_word_embeddings", tie), vocab=c.int("vocab_size"), final_norm=final_norm)


def _granite(c: Cfg, name: str, source: str) -> Architecture:
    h = c.int("hidden_size")
    bias = c.bool("attention_bias", False)
    return _llama_variant(c, name, source, tie=False, norms=2, norm_size=h, final_norm=h, qkv_bias=bias, o_bias=bias,
                          mlp_bias=c.bool("mlp_bias", False))


def _smollm3(c: Cfg, name: str, source: str) -> Architecture:
    h = c.int("hidden_size")
    bias = c.bool("attention_bias", False)
    return _llama_variant(c, name, source, tie=True, norms=2, norm_size=h, final_norm=h, qkv_bias=bias, o_bias=bias,
                          mlp_bias=c.bool("mlp_bias", False))


def _olmo(c: Cfg, name: str, source: str) -> Architecture:
    """OLMo (1): LayerNorms without any parameters (OlmoLayerNorm), Llama layers otherwise."""
    bias = c.bool("attention_bias", False)
    return _llama_variant(c, name, source, tie=False, norms=2, norm_size=0, final_norm=0, qkv_bias=bias, o_bias=bias)


def _cohere(c: Cfg, name: str, source: str) -> Architecture:
    """Command-R: one LayerNorm (weight only) feeds attention and MLP in parallel; optional q/k
    LayerNorms over (heads, head_dim); embeddings tied by default."""
    h, heads, kv, hd = attn_shape(c)
    bias = c.bool("attention_bias", False)
    qk = (heads + kv) * hd if c.bool("use_qk_norm", False) else 0
    return _llama_variant(c, name, source, tie=True, norms=1, norm_size=h, final_norm=h, qkv_bias=bias, o_bias=bias,
                          qk_norm=qk)


def _glm(c: Cfg, name: str, source: str, norms: int = 2) -> Architecture:
    """GLM-4 (`glm`): q/k/v biases by `attention_bias`, no o_proj bias, fused gate_up_proj;
    `glm4` adds post-attention and post-MLP RMSNorms (four per layer)."""
    h = c.int("hidden_size")
    return _llama_variant(c, name, source, tie=False, norms=norms, norm_size=h, final_norm=h,
                          qkv_bias=c.bool("attention_bias", True), o_bias=False, fused_gate_up=True)


def _stablelm(c: Cfg, name: str, source: str) -> Architecture:
    """StableLM: LayerNorms with bias (one with `use_parallel_residual`), q/k/v bias by `use_qkv_bias`,
    optional per-head q/k LayerNorms without bias."""
    h, heads, kv, hd = attn_shape(c)
    norms = 1 if c.bool("use_parallel_residual", False) else 2
    qk = (heads + kv) * hd if c.bool("qk_layernorm", False) else 0
    return _llama_variant(c, name, source, tie=False, norms=norms, norm_size=2 * h, final_norm=2 * h,
                          qkv_bias=c.bool("use_qkv_bias", False), o_bias=False, qk_norm=qk)


def _starcoder2(c: Cfg, name: str, source: str) -> Architecture:
    """StarCoder2: LayerNorms with bias, every linear with bias (`use_bias`), a plain c_fc / c_proj MLP."""
    h = c.int("hidden_size")
    bias = c.bool("use_bias", True)
    return _llama_variant(c, name, source, tie=True, norms=2, norm_size=2 * h, final_norm=2 * h, qkv_bias=bias,
                          o_bias=bias, mlp_bias=bias, gated=False, mlp_names=("", "c_fc", "c_proj"),
                          act_default="gelu_pytorch_tanh")


def _gptj(c: Cfg, name: str, source: str) -> Architecture:
    """GPT-J: one LayerNorm feeds attention (no biases) and the MLP (biases) in parallel; untied
    lm_head with a bias."""
    h = c.int("n_embd", "hidden_size")
    heads = c.int("n_head", "num_attention_heads")
    f = c.int("n_inner", default=4 * h)
    linears = (qkvo(h, heads, heads, h // heads, False, False, names=("q_proj", "k_proj", "v_proj", "out_proj"))
               + [Linear("fc_in", h, f, True, "attn_in"), Linear("fc_out", f, h, True, "mlp_out")])
    stack = LayerStack("decoder", c.int("n_layer", "num_hidden_layers"), tuple(linears), norm_params=2 * h,
                       attention_heads=heads, kv_heads=heads, head_dim=h // heads)
    return decoder(c, name, source, [stack], h=h, heads=heads, kv=heads, hd=h // heads, f=f,
                   act=c.get("activation_function", "gelu_new"), gated=False, tie=c.bool("tie_word_embeddings", False),
                   vocab=c.int("vocab_size"), final_norm=2 * h, max_pos=c.int("n_positions", default=2048),
                   lm_head_bias=True)


def _learned_positions(arch: Architecture, positions: int) -> Architecture:
    return replace(arch, embedding_params=arch.embedding_params + positions * arch.hidden_size)


def _gpt_neo(c: Cfg, name: str, source: str) -> Architecture:
    """GPT-Neo: learned positions, q/k/v without bias, out_proj and MLP with bias, tied lm_head."""
    h = c.int("hidden_size")
    heads = c.int("num_heads")
    f = c.int("intermediate_size", default=4 * h)
    linears = (qkvo(h, heads, heads, h // heads, False, True, names=("q_proj", "k_proj", "v_proj", "out_proj"))
               + [Linear("c_fc", h, f, True, "mlp_in"), Linear("c_proj", f, h, True, "mlp_out")])
    stack = LayerStack("decoder", c.int("num_layers"), tuple(linears), norm_params=4 * h, attention_heads=heads,
                       kv_heads=heads, head_dim=h // heads)
    positions = c.int("max_position_embeddings", default=2048)
    arch = decoder(c, name, source, [stack], h=h, heads=heads, kv=heads, hd=h // heads, f=f,
                   act=c.get("activation_function", "gelu_new"), gated=False, tie=True, vocab=c.int("vocab_size"),
                   final_norm=2 * h, max_pos=positions)
    return _learned_positions(arch, positions)


def _gpt_bigcode(c: Cfg, name: str, source: str) -> Architecture:
    """StarCoder(Base) / SantaCoder: GPT-2 layout with multi-query attention (one K/V head)."""
    h = c.int("n_embd")
    heads = c.int("n_head")
    hd = h // heads
    kv = 1 if c.bool("multi_query", True) else heads
    f = c.int("n_inner", default=4 * h)
    linears = (Linear("c_attn", h, h + 2 * kv * hd, True, "attn_in"), Linear("c_proj", h, h, True, "attn_out"),
               Linear("c_fc", h, f, True, "mlp_in"), Linear("c_proj", f, h, True, "mlp_out"))
    stack = LayerStack("decoder", c.int("n_layer"), linears, norm_params=4 * h, attention_heads=heads, kv_heads=kv,
                       head_dim=hd)
    positions = c.int("n_positions", default=1024)
    arch = decoder(c, name, source, [stack], h=h, heads=heads, kv=kv, hd=hd, f=f,
                   act=c.get("activation_function", "gelu_pytorch_tanh"), gated=False, tie=True,
                   vocab=c.int("vocab_size"), final_norm=2 * h, max_pos=positions)
    return _learned_positions(arch, positions)


def _opt(c: Cfg, name: str, source: str) -> Architecture:
    """OPT: learned positions with an offset of 2, biases everywhere, embeddings of width
    `word_embed_proj_dim` projected in and out when it differs from `hidden_size` (OPT-350m), no
    final LayerNorm when `do_layer_norm_before` is false."""
    h = c.int("hidden_size")
    heads = c.int("num_attention_heads")
    f = c.int("ffn_dim")
    vocab = c.int("vocab_size")
    proj = c.int("word_embed_proj_dim", default=h)
    bias = c.bool("enable_bias", True)
    linears = (qkvo(h, heads, heads, h // heads, bias, bias, names=("q_proj", "k_proj", "v_proj", "out_proj"))
               + [Linear("fc1", h, f, bias, "mlp_in"), Linear("fc2", f, h, bias, "mlp_out")])
    ln = _ln(h, c.bool("layer_norm_elementwise_affine", True))
    stack = LayerStack("decoder", c.int("num_hidden_layers"), tuple(linears), norm_params=2 * ln,
                       attention_heads=heads, kv_heads=heads, head_dim=h // heads)
    final = ln if c.bool("do_layer_norm_before", True) and not c.bool("_remove_final_layer_norm", False) else 0
    positions = c.int("max_position_embeddings", default=2048)
    arch = decoder(c, name, source, [stack], h=h, heads=heads, kv=heads, hd=h // heads, f=f,
                   act=c.get("activation_function", "relu"), gated=False, tie=c.bool("tie_word_embeddings", True),
                   vocab=vocab, final_norm=final, max_pos=positions)
    projections = 2 * proj * h if proj != h else 0
    return replace(arch, embedding_params=vocab * proj + (positions + 2) * h, other_params=projections,
                   largest_outer_module_params=vocab * proj)


def _bloom(c: Cfg, name: str, source: str) -> Architecture:
    """BLOOM: ALiBi (no position table), a LayerNorm right after the word embedding, fused
    query_key_value, biases everywhere, tied lm_head."""
    h = c.int("hidden_size", "n_embed")
    heads = c.int("n_head", "num_attention_heads")
    f = 4 * h
    linears = (Linear("query_key_value", h, 3 * h, True, "attn_in"), Linear("dense", h, h, True, "attn_out"),
               Linear("dense_h_to_4h", h, f, True, "mlp_in"), Linear("dense_4h_to_h", f, h, True, "mlp_out"))
    stack = LayerStack("decoder", c.int("n_layer", "num_hidden_layers"), linears, norm_params=4 * h,
                       attention_heads=heads, kv_heads=heads, head_dim=h // heads)
    arch = decoder(c, name, source, [stack], h=h, heads=heads, kv=heads, hd=h // heads, f=f, act="gelu", gated=False,
                   tie=True, vocab=c.int("vocab_size"), final_norm=2 * h, max_pos=c.int("seq_length", default=2048))
    return replace(arch, final_norm_params=arch.final_norm_params + 2 * h)  # word_embeddings_layernorm


def _mpt(c: Cfg, name: str, source: str) -> Architecture:
    """MPT: fused Wqkv, `no_bias` drops every bias (LayerNorms keep theirs in transformers' MptBlock:
    weight only), ALiBi, tied lm_head."""
    d = c.int("d_model")
    heads = c.int("n_heads")
    f = c.int("expansion_ratio", default=4) * d
    bias = not c.bool("no_bias", True)
    linears = (Linear("Wqkv", d, 3 * d, bias, "attn_in"), Linear("out_proj", d, d, bias, "attn_out"),
               Linear("up_proj", d, f, bias, "mlp_in"), Linear("down_proj", f, d, bias, "mlp_out"))
    ln = _ln(d, bias)
    stack = LayerStack("decoder", c.int("n_layers"), linears, norm_params=2 * ln, attention_heads=heads,
                       kv_heads=heads, head_dim=d // heads)
    return decoder(c, name, source, [stack], h=d, heads=heads, kv=heads, hd=d // heads, f=f, act="gelu", gated=False,
                   tie=True, vocab=c.int("vocab_size"), final_norm=ln, max_pos=c.int("max_seq_len", default=2048))


def _phimoe(c: Cfg, name: str, source: str) -> Architecture:
    """Phi-3.5-MoE: Mixtral's routed experts, attention biases, LayerNorms with bias, lm_head bias."""
    h, heads, kv, hd = attn_shape(c)
    f = c.int("intermediate_size")
    experts = c.int("num_local_experts")
    bias = c.bool("attention_bias", False)
    linears = qkvo(h, heads, kv, hd, bias, bias) + dense_mlp(
        h, f, True, False, names=("w1", "w3", "w2"), group_in="expert_in", group_out="expert_out", per_expert=True)
    stack = LayerStack("decoder", c.int("num_hidden_layers"), tuple(linears), num_experts=experts,
                       experts_per_token=c.int("num_experts_per_tok"), router_params=h * experts,
                       norm_params=2 * 2 * h, attention_heads=heads, kv_heads=kv, head_dim=hd, fused_experts=True)
    return decoder(c, name, source, [stack], h=h, heads=heads, kv=kv, hd=hd, f=f, act=c.get("hidden_act", "silu"),
                   gated=True, tie=c.bool("tie_word_embeddings", False), vocab=c.int("vocab_size"), final_norm=2 * h,
                   lm_head_bias=c.bool("lm_head_bias", False))


def _granitemoe(c: Cfg, name: str, source: str) -> Architecture:
    """Granite MoE: experts fused as `input_linear` (gate and up, 2 x intermediate) and `output_linear`,
    a bias-free router, RMSNorms, tied embeddings."""
    h, heads, kv, hd = attn_shape(c)
    f = c.int("intermediate_size")
    experts = c.int("num_local_experts")
    bias = c.bool("attention_bias", False)
    linears = qkvo(h, heads, kv, hd, bias, bias) + [
        Linear("input_linear", h, 2 * f, False, "expert_in", per_expert=True),
        Linear("output_linear", f, h, False, "expert_out", per_expert=True)]
    stack = LayerStack("decoder", c.int("num_hidden_layers"), tuple(linears), num_experts=experts,
                       experts_per_token=c.int("num_experts_per_tok"), router_params=h * experts, norm_params=2 * h,
                       attention_heads=heads, kv_heads=kv, head_dim=hd, fused_experts=True)
    return decoder(c, name, source, [stack], h=h, heads=heads, kv=kv, hd=hd, f=f, act=c.get("hidden_act", "silu"),
                   gated=True, tie=c.bool("tie_word_embeddings", True), vocab=c.int("vocab_size"), final_norm=h)


def _glm4_moe(c: Cfg, name: str, source: str) -> Architecture:
    """GLM-4.5: GQA attention with q/k/v biases (optional q/k norms), `first_k_dense_replace` dense
    layers, then routed experts plus `n_shared_experts`; the router's score-correction bias is a buffer."""
    h, heads, kv, hd = attn_shape(c)
    layers = c.int("num_hidden_layers")
    bias = c.bool("attention_bias", False)
    attn = qkvo(h, heads, kv, hd, bias, False)
    norms = 2 * h + (2 * hd if c.bool("use_qk_norm", False) else 0)
    experts = c.int("n_routed_experts")
    fe = c.int("moe_intermediate_size")
    first_dense = c.int("first_k_dense_replace", default=1)
    sparse = max(0, layers - first_dense)
    dense_f = c.int("intermediate_size")
    stack = partial(LayerStack, norm_params=norms, attention_heads=heads, kv_heads=kv, head_dim=hd)
    dense = stack("decoder", layers - sparse, tuple(attn + dense_mlp(h, dense_f, True, False)))
    moe_lins = attn + dense_mlp(h, fe, True, False, group_in="expert_in", group_out="expert_out", per_expert=True)
    shared = c.int("n_shared_experts", default=0)
    if shared:
        moe_lins += dense_mlp(h, fe * shared, True, False, group_in="shared_in", group_out="shared_out")
    moe = stack("decoder", sparse, tuple(moe_lins), num_experts=experts,
                experts_per_token=c.int("num_experts_per_tok"), router_params=h * experts, fused_experts=True)
    return decoder(c, name, source, [dense, moe], h=h, heads=heads, kv=kv, hd=hd, f=dense_f,
                   act=c.get("hidden_act", "silu"), gated=True, tie=c.bool("tie_word_embeddings", False),
                   vocab=c.int("vocab_size"), final_norm=h)


def _llama4_text(c: Cfg, name: str, source: str) -> Architecture:
    """Llama 4 text: every `interleave_moe_layer_step`-th layer routes to fused experts plus a shared
    expert (width `intermediate_size`), the others are dense (`intermediate_size_mlp`); q/k L2 norms
    have no weights."""
    h, heads, kv, hd = attn_shape(c, 128)
    layers = c.int("num_hidden_layers")
    experts = c.int("num_local_experts")
    fe = c.int("intermediate_size")
    f_dense = c.int("intermediate_size_mlp", default=fe)
    step = c.int("interleave_moe_layer_step", default=1)
    moe_layers = c.get("moe_layers")
    if isinstance(moe_layers, list):
        sparse = sum(1 for i in set(moe_layers) if isinstance(i, int) and 0 <= i < layers)
    else:
        sparse = len(range(step - 1, layers, step)) if step > 0 else 0
    bias = c.bool("attention_bias", False)
    attn = qkvo(h, heads, kv, hd, bias, bias)
    stack = partial(LayerStack, norm_params=2 * h, attention_heads=heads, kv_heads=kv, head_dim=hd)
    moe_lins = attn + [Linear("gate_up_proj", h, 2 * fe, False, "expert_in", per_expert=True),
                       Linear("down_proj", fe, h, False, "expert_out", per_expert=True)]
    moe_lins += dense_mlp(h, fe, True, False, group_in="shared_in", group_out="shared_out")
    moe = stack("decoder", sparse, tuple(moe_lins), num_experts=experts,
                experts_per_token=c.int("num_experts_per_tok", default=1), router_params=h * experts,
                fused_experts=True)
    dense = stack("decoder", layers - sparse, tuple(attn + dense_mlp(h, f_dense, True, False)))
    return decoder(c, name, source, [dense, moe], h=h, heads=heads, kv=kv, hd=hd, f=f_dense,
                   act=c.get("hidden_act", "silu"), gated=True, tie=c.bool("tie_word_embeddings", False),
                   vocab=c.int("vocab_size"), final_norm=h)


def _mllama_text(c: Cfg, name: str, source: str) -> Architecture:
    """Llama 3.2 Vision's language model: Llama layers, of which `cross_attention_layers` attend to the
    image instead (q/k RMSNorms per head, two tanh gates); the embedding has 8 extra rows."""
    h, heads, kv, hd = attn_shape(c)
    layers = c.int("num_hidden_layers")
    f = c.int("intermediate_size")
    cross_idx = c.get("cross_attention_layers") or []
    cross = sum(1 for i in set(cross_idx) if isinstance(i, int) and 0 <= i < layers)
    mlp = dense_mlp(h, f, True, False)
    self_stack = LayerStack("decoder", layers - cross, tuple(qkvo(h, heads, kv, hd, False, False) + mlp),
                            norm_params=2 * h, attention_heads=heads, kv_heads=kv, head_dim=hd)
    cross_attn = [Linear("q_proj", h, heads * hd, False, "attn_in"), Linear("k_proj", h, kv * hd, False, "cross_kv"),
                  Linear("v_proj", h, kv * hd, False, "cross_kv"), Linear("o_proj", heads * hd, h, False, "attn_out")]
    cross_stack = LayerStack("decoder", cross, tuple(cross_attn + mlp), norm_params=2 * h + 2 * hd, extra_params=2,
                             attention_heads=heads, kv_heads=kv, head_dim=hd, cross_attention=True)
    vocab = c.int("vocab_size")
    arch = decoder(c, name, source, [self_stack, cross_stack], h=h, heads=heads, kv=kv, hd=hd, f=f,
                   act=c.get("hidden_act", "silu"), gated=True, tie=c.bool("tie_word_embeddings", False), vocab=vocab,
                   final_norm=h)
    return replace(arch, embedding_params=(vocab + 8) * h)


BUILDERS: dict[str, Callable[[Cfg, str, str], Architecture]] = {
    "granite": _granite,
    "granitemoe": _granitemoe,
    "cohere": _cohere,
    "cohere2": _cohere,
    "smollm3": _smollm3,
    "olmo": _olmo,
    "glm": _glm,
    "glm4": lambda c, n, s: _glm(c, n, s, norms=4),
    "glm4_moe": _glm4_moe,
    "stablelm": _stablelm,
    "starcoder2": _starcoder2,
    "gptj": _gptj,
    "gpt_neo": _gpt_neo,
    "gpt_bigcode": _gpt_bigcode,
    "opt": _opt,
    "bloom": _bloom,
    "mpt": _mpt,
    "phimoe": _phimoe,
    "llama4_text": _llama4_text,
    "mllama_text_model": _mllama_text,
}
