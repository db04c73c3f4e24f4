"""Build an `Architecture` from a Hugging Face `config.json`, family by family.

`from_hf_config(config, name)` has an exact builder per family: here the Llama-like core (llama,
mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, olmoe, gemma, gemma2, gemma3_text, phi3, phi, olmo2,
gpt_oss, deepseek_v2, deepseek_v3, gpt2, gpt_neox, bert, roberta, xlm-roberta, t5, mt5, falcon and the
older RefinedWeb configs); `hf_decoders` (granite, cohere, glm, starcoder2, opt, bloom, Llama 4, mllama,
...), `hf_encoders` (DistilBERT, DeBERTa, ModernBERT, ViT, BART, Whisper, ...) and `hf_ssm` (Mamba,
Mamba-2, Jamba, Qwen3-Next) add theirs. A multimodal config is read through its text config, and
`hf_vision` counts its vision tower and projector (`Architecture.towers`). Any other `model_type` goes
to the generic tier (`hf_generic`): an approximate count from the standard keys, labelled so
(`Architecture.sizing`); only a config without even a width, a depth and a vocabulary raises
`UnsupportedArchitecture`, with the reason.

Counting conventions:

* Decoder-only models are counted as their `...ForCausalLM` class: embeddings, layers, final norm and
  the `lm_head` (zero when tied to the input embedding).
* Encoder-only models (BERT, RoBERTa) are counted as the bare `AutoModel` (`BertModel`), pooler
  included, as their model cards do; a task head adds little.
* T5 is counted as `T5ForConditionalGeneration`: one shared embedding, both stacks, and an `lm_head`
  only when `tie_word_embeddings` is false (T5 v1.1, Flan-T5).
* Buffers (rotary tables, causal masks) are not parameters and are not counted.

This module does no I/O; `trainlint.catalog.models` finds and reads the configs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import partial
from typing import Any

from trainlint.catalog import hf_decoders, hf_encoders, hf_generic, hf_ssm, hf_vision
from trainlint.catalog.architecture import (
    SIZING_APPROXIMATE,
    Architecture,
    LayerStack,
    Linear,
    Tower,
    UnsupportedArchitecture,
)
from trainlint.catalog.hf_common import _attn_shape, _Cfg, _decoder, _dense_mlp, _qkvo

__all__ = ["from_hf_config", "supported_model_types", "text_config"]


# Where transformers puts the layers of each family, and its linears inside a layer.
_LAYER_PREFIX = {"gpt2": "transformer.h", "falcon": "transformer.h", "RefinedWeb": "transformer.h",
                 "RefinedWebModel": "transformer.h", "gpt_neox": "gpt_neox.layers", "bert": "encoder.layer",
                 "roberta": "encoder.layer", "xlm-roberta": "encoder.layer",
                 "bloom": "transformer.h", "gptj": "transformer.h", "gpt_neo": "transformer.h",
                 "gpt_bigcode": "transformer.h", "mpt": "transformer.blocks", "opt": "model.decoder.layers",
                 "mamba": "backbone.layers", "falcon_mamba": "backbone.layers", "mamba2": "backbone.layers",
                 "distilbert": "transformer.layer", "electra": "encoder.layer", "deberta": "encoder.layer",
                 "deberta-v2": "encoder.layer", "vit": "encoder.layer", "modernbert": "layers",
                 "albert": "encoder.albert_layer_groups.0.albert_layers"}
_ENC_DEC_PREFIX = {"bart": "model.{role}.layers", "mbart": "model.{role}.layers", "whisper": "model.{role}.layers"}
_EXPERTS_PARENT = {"mixtral": "block_sparse_moe.experts"}
_SHARED_PARENT = {"qwen2_moe": "mlp.shared_expert", "deepseek_v2": "mlp.shared_experts",
                  "deepseek_v3": "mlp.shared_experts"}
_BERT_PARENTS = {"attn_in": "attention.self", "attn_out": "attention.output", "mlp_in": "intermediate",
                 "mlp_out": "output"}


def _parent(model_type: str, stack: LayerStack, lin: Linear) -> str:
    group = lin.input_group
    if model_type in ("t5", "mt5"):
        if group.startswith("cross"):
            return "layer.1.EncDecAttention"
        if group.startswith("attn"):
            return "layer.0.SelfAttention"
        return "layer.2.DenseReluDense" if stack.cross_attention else "layer.1.DenseReluDense"
    if model_type in ("bert", "roberta", "xlm-roberta", "electra", "vit", "deberta-v2"):
        return _BERT_PARENTS.get(group, "attention.self")
    if lin.per_expert:
        return _EXPERTS_PARENT.get(model_type, "mlp.experts")
    if group.startswith("shared"):
        return _SHARED_PARENT.get(model_type, "mlp.shared_expert")
    is_attention = group.startswith(("attn", "q_b", "kv_b")) and lin.name not in ("dense_h_to_4h", "fc1")
    if model_type == "gpt2":
        return "attn" if is_attention else "mlp"
    if model_type in ("falcon", "RefinedWeb", "RefinedWebModel"):
        return "self_attention" if is_attention else "mlp"
    if model_type == "gpt_neox":
        return "attention" if is_attention else "mlp"
    return "self_attn" if is_attention else "mlp"


def _with_module_paths(arch: Architecture) -> Architecture:
    stacks = []
    for stack in arch.stacks:
        prefix = _LAYER_PREFIX.get(arch.model_type, "model.layers")
        if arch.model_type in ("t5", "mt5"):
            prefix = f"{stack.role}.block"
        elif arch.model_type in _ENC_DEC_PREFIX:
            prefix = _ENC_DEC_PREFIX[arch.model_type].format(role=stack.role)
        linears = tuple(lin._replace(parent=_parent(arch.model_type, stack, lin)) for lin in stack.linears)
        stacks.append(replace(stack, linears=linears, module_prefix=prefix))
    return replace(arch, stacks=tuple(stacks))


# --------------------------------------------------------------------------------------------
# Reading config.json
# --------------------------------------------------------------------------------------------

_MULTIMODAL_TEXT_KEYS = ("text_config", "llm_config", "language_config", "text_model")


# The text model_type of multimodal configs whose text_config names none, or names a text-only
# variant that builds like a plain family; and the flat (transformers 4) Qwen-VL configs.
_TEXT_MODEL_TYPE = {"gemma3": "gemma3_text", "mllama": "mllama_text_model", "llama4": "llama4_text",
                    "qwen2_vl": "qwen2", "qwen2_5_vl": "qwen2", "qwen3_vl": "qwen3", "llava": "llama",
                    "llava_next": "llama", "idefics3": "llama", "smolvlm": "llama", "idefics2": "mistral",
                    "mistral3": "mistral", "paligemma": "gemma", "llava_onevision": "qwen2"}
_TEXT_ALIASES = {"qwen2_vl_text": "qwen2", "qwen2_5_vl_text": "qwen2", "qwen3_vl_text": "qwen3"}


def text_config(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """The language model's config: the nested `text_config` (`llm_config`, ...) of a multimodal
    config whose top level is not itself a supported text model, else `config` unchanged. A flat
    Qwen2-VL / Qwen2.5-VL config (its text fields at the top level) is its own text config."""
    outer_type = config.get("model_type")
    if not isinstance(outer_type, str):
        outer_type = None
    if _builder(outer_type) is not None:
        return config
    for key in _MULTIMODAL_TEXT_KEYS:
        nested = config.get(key)
        if isinstance(nested, Mapping) and nested:
            inner = dict(nested)
            if "model_type" not in inner and outer_type in _TEXT_MODEL_TYPE:
                inner["model_type"] = _TEXT_MODEL_TYPE[outer_type]
            if isinstance(inner.get("model_type"), str) and inner["model_type"] in _TEXT_ALIASES:
                inner["model_type"] = _TEXT_ALIASES[inner["model_type"]]
            return inner
    if outer_type in ("qwen2_vl", "qwen2_5_vl") and "hidden_size" in config:
        return {**config, "model_type": "qwen2"}
    return config


# Per family: which attention/MLP biases, extra norms and defaults `transformers` uses.
_LLAMA_LIKE: dict[str, dict[str, Any]] = {
    # model_type: (tie default, qkv bias rule, extra per-layer norms rule, default head_dim)
    "llama": dict(tie=False),
    "mistral": dict(tie=False, no_bias_flags=True),
    "qwen2": dict(tie=False, qkv_bias=True, no_bias_flags=True),
    "qwen3": dict(tie=False, qk_norm="head", default_head_dim=128),
    "olmo2": dict(tie=False, qk_norm="full", norms=2),
    "gemma": dict(tie=True, default_head_dim=256, act_key="hidden_activation"),
    "gemma2": dict(tie=True, default_head_dim=256, norms=4, act_key="hidden_activation"),
    "gemma3_text": dict(tie=True, default_head_dim=256, norms=4, qk_norm="head", act_key="hidden_activation"),
}


def _llama_like(c: _Cfg, name: str, source: str) -> Architecture:
    spec = _LLAMA_LIKE[c.model_type]
    h, heads, kv, hd = _attn_shape(c, spec.get("default_head_dim"))
    f = c.int("intermediate_size")
    layers = c.int("num_hidden_layers")
    vocab = c.int("vocab_size")
    if spec.get("no_bias_flags"):
        attn_bias = mlp_bias = False
    else:
        attn_bias = c.bool("attention_bias", False)
        mlp_bias = c.bool("mlp_bias", False)
    qkv_bias = attn_bias or spec.get("qkv_bias", False)
    linears = _qkvo(h, heads, kv, hd, qkv_bias, attn_bias) + _dense_mlp(h, f, True, mlp_bias)
    norms = spec.get("norms", 2) * h
    if spec.get("qk_norm") == "head":
        norms += 2 * hd
    elif spec.get("qk_norm") == "full":
        norms += heads * hd + kv * hd
    act_key = spec.get("act_key", "hidden_act")
    act = c.get(act_key) or c.get("hidden_act") or "silu"
    stack = LayerStack("decoder", layers, tuple(linears), norm_params=norms,
                       attention_heads=heads, kv_heads=kv, head_dim=hd)
    return _decoder(c, name, source, [stack], h=h, heads=heads, kv=kv, hd=hd, f=f, act=act, gated=True,
                    tie=c.bool("tie_word_embeddings", spec["tie"]), vocab=vocab, final_norm=h)


def _mixtral(c: _Cfg, name: str, source: str) -> Architecture:
    h, heads, kv, hd = _attn_shape(c)
    f = c.int("intermediate_size")
    experts = c.int("num_local_experts")
    linears = _qkvo(h, heads, kv, hd, False, False) + _dense_mlp(
        h, f, True, False, names=("w1", "w3", "w2"), group_in="expert_in", group_out="expert_out", per_expert=True)
    stack = LayerStack("decoder", c.int("num_hidden_layers"), tuple(linears), num_experts=experts,
                       experts_per_token=c.int("num_experts_per_tok"), router_params=h * experts,
                       norm_params=2 * h, attention_heads=heads, kv_heads=kv, head_dim=hd, fused_experts=True)
    return _decoder(c, name, source, [stack], h=h, heads=heads, kv=kv, hd=hd, f=f, act=c.get("hidden_act", "silu"),
                    gated=True, tie=c.bool("tie_word_embeddings", False), vocab=c.int("vocab_size"), final_norm=h)


def _qwen_moe(c: _Cfg, name: str, source: str) -> Architecture:
    """qwen2_moe (qkv bias, a shared expert with a sigmoid gate) and qwen3_moe (q/k norms, no shared expert)."""
    is_q3 = c.model_type == "qwen3_moe"
    is_olmoe = c.model_type == "olmoe"
    h, heads, kv, hd = _attn_shape(c, 128 if is_q3 else None)
    layers = c.int("num_hidden_layers")
    experts = c.int("num_experts")
    fe = c.int("moe_intermediate_size") if not is_olmoe else c.int("intermediate_size")
    dense_f = c.int("intermediate_size") if not is_olmoe else fe
    step = c.int("decoder_sparse_step", default=1)
    mlp_only = set(c.get("mlp_only_layers", []) or [])
    sparse = [i not in mlp_only and experts > 0 and (i + 1) % step == 0 for i in range(layers)]
    if is_olmoe:
        # OLMoE: q/k RMSNorm over the whole projections, no biases, no shared expert.
        attn = _qkvo(h, heads, kv, hd, c.bool("attention_bias", False), c.bool("attention_bias", False))
        norms = 2 * h + heads * hd + kv * hd
    elif is_q3:
        attn = _qkvo(h, heads, kv, hd, c.bool("attention_bias", False), c.bool("attention_bias", False))
        norms = 2 * h + 2 * hd
    else:
        attn = _qkvo(h, heads, kv, hd, True, False)
        norms = 2 * h
    routed = _dense_mlp(h, fe, True, False, group_in="expert_in", group_out="expert_out", per_expert=True)
    shared: list[Linear] = []
    router = h * experts
    if not is_q3 and c.int("shared_expert_intermediate_size", default=0):
        shared = _dense_mlp(h, c.int("shared_expert_intermediate_size"), True, False,
                            names=("gate_proj", "up_proj", "down_proj"), group_in="shared_in", group_out="shared_out")
        router += h  # shared_expert_gate: Linear(h, 1, bias=False)
    stack = partial(LayerStack, norm_params=norms, attention_heads=heads, kv_heads=kv, head_dim=hd)
    moe = stack("decoder", sum(sparse), tuple(attn + routed + shared), num_experts=experts,
                experts_per_token=c.int("num_experts_per_tok"), router_params=router, fused_experts=True)
    dense = stack("decoder", layers - sum(sparse), tuple(attn + _dense_mlp(h, dense_f, True, False)))
    width = dense_f if dense.num_layers else fe
    return _decoder(c, name, source, [dense, moe], h=h, heads=heads, kv=kv, hd=hd, f=width,
                    act=c.get("hidden_act", "silu"), gated=True, tie=c.bool("tie_word_embeddings", False),
                    vocab=c.int("vocab_size"), final_norm=h)


def _phi3(c: _Cfg, name: str, source: str) -> Architecture:
    h, heads, kv, hd = _attn_shape(c)
    f = c.int("intermediate_size")
    linears = (
        Linear("qkv_proj", h, (heads + 2 * kv) * hd, False, "attn_in"),
        Linear("o_proj", heads * hd, h, False, "attn_out"),
        Linear("gate_up_proj", h, 2 * f, False, "mlp_in"),
        Linear("down_proj", f, h, False, "mlp_out"),
    )
    stack = LayerStack("decoder", c.int("num_hidden_layers"), linears, norm_params=2 * h,
                       attention_heads=heads, kv_heads=kv, head_dim=hd)
    return _decoder(c, name, source, [stack], h=h, heads=heads, kv=kv, hd=hd, f=f, act=c.get("hidden_act", "silu"),
                    gated=True, tie=c.bool("tie_word_embeddings", False), vocab=c.int("vocab_size"), final_norm=h)


def _phi(c: _Cfg, name: str, source: str) -> Architecture:
    """Phi-1/1.5/2: parallel attention and MLP on one LayerNorm output, biases everywhere, lm_head bias."""
    h, heads, kv, hd = _attn_shape(c)
    f = c.int("intermediate_size")
    linears = _qkvo(h, heads, kv, hd, True, True, names=("q_proj", "k_proj", "v_proj", "dense")) + [
        Linear("fc1", h, f, True, "attn_in"),
        Linear("fc2", f, h, True, "mlp_out"),
    ]
    qk_norm = 2 * 2 * hd if c.bool("qk_layernorm", False) else 0
    stack = LayerStack("decoder", c.int("num_hidden_layers"), tuple(linears), norm_params=2 * h + qk_norm,
                       attention_heads=heads, kv_heads=kv, head_dim=hd)
    return _decoder(c, name, source, [stack], h=h, heads=heads, kv=kv, hd=hd, f=f, act=c.get("hidden_act", "gelu_new"),
                    gated=False, tie=c.bool("tie_word_embeddings", False), vocab=c.int("vocab_size"),
                    final_norm=2 * h, lm_head_bias=True)


def _gpt_oss(c: _Cfg, name: str, source: str) -> Architecture:
    h, heads, kv, hd = _attn_shape(c, 64)
    f = c.int("intermediate_size")
    experts = c.int("num_local_experts")
    bias = c.bool("attention_bias", True)
    linears = _qkvo(h, heads, kv, hd, bias, bias) + [
        # GptOssExperts holds 3-D gate_up_proj / down_proj parameters (with biases) for all experts.
        Linear("gate_up_proj", h, 2 * f, True, "expert_in", per_expert=True),
        Linear("down_proj", f, h, True, "expert_out", per_expert=True),
    ]
    stack = LayerStack("decoder", c.int("num_hidden_layers"), tuple(linears), num_experts=experts,
                       experts_per_token=c.int("num_experts_per_tok", "experts_per_token"),
                       router_params=h * experts + experts, norm_params=2 * h, extra_params=heads,
                       attention_heads=heads, kv_heads=kv, head_dim=hd, fused_experts=True)
    return _decoder(c, name, source, [stack], h=h, heads=heads, kv=kv, hd=hd, f=f, act="swiglu", gated=True,
                    tie=c.bool("tie_word_embeddings", False), vocab=c.int("vocab_size"), final_norm=h)


def _deepseek(c: _Cfg, name: str, source: str) -> Architecture:
    """DeepSeek-V2/V3: multi-head latent attention, `first_k_dense_replace` dense layers, then MoE
    layers with `n_shared_experts` always-on experts (V3 adds a per-expert score-correction bias)."""
    h = c.int("hidden_size")
    heads = c.int("num_attention_heads")
    layers = c.int("num_hidden_layers")
    nope, rope, vdim = c.int("qk_nope_head_dim"), c.int("qk_rope_head_dim"), c.int("v_head_dim")
    qdim = nope + rope
    kv_rank = c.int("kv_lora_rank")
    q_rank = c.get("q_lora_rank")
    bias = c.bool("attention_bias", False)
    if q_rank:
        q_lins = [Linear("q_a_proj", h, q_rank, bias, "attn_in"),
                  Linear("q_b_proj", q_rank, heads * qdim, False, "q_b_in")]
        norms = 2 * h + q_rank + kv_rank
    else:
        q_lins = [Linear("q_proj", h, heads * qdim, False, "attn_in")]
        norms = 2 * h + kv_rank
    attn = q_lins + [
        Linear("kv_a_proj_with_mqa", h, kv_rank + rope, bias, "attn_in"),
        Linear("kv_b_proj", kv_rank, heads * (nope + vdim), False, "kv_b_in"),
        Linear("o_proj", heads * vdim, h, bias, "attn_out"),
    ]
    experts = c.int("n_routed_experts", default=0)
    fe = c.int("moe_intermediate_size", default=0)
    first_dense = c.int("first_k_dense_replace", default=0)
    freq = c.int("moe_layer_freq", default=1)
    sparse = sum(1 for i in range(layers) if experts and i >= first_dense and i % freq == 0)
    dense_f = c.int("intermediate_size")
    stack = partial(LayerStack, norm_params=norms, attention_heads=heads, kv_heads=heads, head_dim=qdim)
    dense = stack("decoder", layers - sparse, tuple(attn + _dense_mlp(h, dense_f, True, False)))
    shared = c.int("n_shared_experts", default=0)
    router = h * experts  # V3's e_score_correction_bias is a buffer in transformers, not a parameter
    moe_lins = attn + _dense_mlp(h, fe, True, False, group_in="expert_in", group_out="expert_out", per_expert=True)
    if shared:
        moe_lins += _dense_mlp(h, fe * shared, True, False, group_in="shared_in", group_out="shared_out")
    moe = stack("decoder", sparse, tuple(moe_lins), num_experts=experts,
                experts_per_token=c.int("num_experts_per_tok", default=0), router_params=router,
                fused_experts=True)
    return _decoder(c, name, source, [dense, moe], h=h, heads=heads, kv=heads, hd=qdim, f=dense_f,
                    act=c.get("hidden_act", "silu"), gated=True, tie=c.bool("tie_word_embeddings", False),
                    vocab=c.int("vocab_size"), final_norm=h)


def _gpt2(c: _Cfg, name: str, source: str) -> Architecture:
    h = c.int("n_embd", "hidden_size")
    heads = c.int("n_head", "num_attention_heads")
    layers = c.int("n_layer", "num_hidden_layers")
    f = c.int("n_inner", default=4 * h)
    vocab = c.int("vocab_size")
    positions = c.int("n_positions", "max_position_embeddings")
    linears = (
        Linear("c_attn", h, 3 * h, True, "attn_in"),
        Linear("c_proj", h, h, True, "attn_out"),
        Linear("c_fc", h, f, True, "mlp_in"),
        Linear("c_proj", f, h, True, "mlp_out"),
    )
    stack = LayerStack("decoder", layers, linears, norm_params=4 * h, attention_heads=heads, kv_heads=heads,
                       head_dim=h // heads)
    embed = vocab * h + positions * h
    return Architecture(
        name=name, model_type=c.model_type, kind="decoder", hidden_size=h, vocab_size=vocab, intermediate_size=f,
        hidden_act=c.get("activation_function", "gelu_new"), gated_mlp=False, num_attention_heads=heads,
        num_key_value_heads=heads, head_dim=h // heads, max_position_embeddings=positions,
        tie_word_embeddings=True,  # GPT2LMHeadModel always ties lm_head to wte
        stacks=(stack,), embedding_params=embed, head_params=0, final_norm_params=2 * h, source=source,
        largest_outer_module_params=vocab * h,
    )


def _bert(c: _Cfg, name: str, source: str) -> Architecture:
    h, heads, _, hd = _attn_shape(c)
    f = c.int("intermediate_size")
    vocab = c.int("vocab_size")
    positions = c.int("max_position_embeddings")
    types = c.int("type_vocab_size", default=2)
    linears = _qkvo(h, heads, heads, hd, True, True, names=("query", "key", "value", "dense")) + [
        Linear("dense", h, f, True, "mlp_in"),
        Linear("dense", f, h, True, "mlp_out"),
    ]
    stack = LayerStack("encoder", c.int("num_hidden_layers"), tuple(linears), norm_params=4 * h,
                       attention_heads=heads, kv_heads=heads, head_dim=hd)
    pooler = h * h + h if c.bool("add_pooling_layer", True) else 0
    return Architecture(
        name=name, model_type=c.model_type, kind="encoder", hidden_size=h, vocab_size=vocab, intermediate_size=f,
        hidden_act=c.get("hidden_act", "gelu"), gated_mlp=False, num_attention_heads=heads, num_key_value_heads=heads,
        head_dim=hd, max_position_embeddings=positions, tie_word_embeddings=c.bool("tie_word_embeddings", True),
        stacks=(stack,), embedding_params=(vocab + positions + types) * h, head_params=pooler,
        final_norm_params=2 * h,  # the embeddings' LayerNorm
        source=source, largest_outer_module_params=vocab * h,
    )


def _t5(c: _Cfg, name: str, source: str) -> Architecture:
    d = c.int("d_model")
    dkv = c.int("d_kv")
    heads = c.int("num_heads")
    f = c.int("d_ff")
    vocab = c.int("vocab_size")
    enc_layers = c.int("num_layers")
    dec_layers = c.int("num_decoder_layers", default=enc_layers)
    proj = str(c.get("feed_forward_proj", "relu"))
    gated = proj.startswith("gated-")
    act = proj.split("-", 1)[1] if gated else proj
    if act == "gelu":
        act = "gelu_new"  # transformers maps T5's "gated-gelu" to gelu_new
    inner = heads * dkv
    ff = ([Linear("wi_0", d, f, False, "mlp_in"), Linear("wi_1", d, f, False, "mlp_in")] if gated
          else [Linear("wi", d, f, False, "mlp_in")]) + [Linear("wo", f, d, False, "mlp_out")]
    self_attn = _qkvo(d, heads, heads, dkv, False, False, names=("q", "k", "v", "o"))
    cross = [
        Linear("q", d, inner, False, "cross_q"),
        Linear("k", d, inner, False, "cross_kv"),
        Linear("v", d, inner, False, "cross_kv"),
        Linear("o", inner, d, False, "cross_out"),
    ]
    stack = partial(LayerStack, attention_heads=heads, kv_heads=heads, head_dim=dkv)
    encoder = stack("encoder", enc_layers, tuple(self_attn + ff), norm_params=2 * d)
    decoder = stack("decoder", dec_layers, tuple(self_attn + cross + ff), norm_params=3 * d,
                    cross_attention=True)
    tie = c.bool("tie_word_embeddings", True)
    buckets = c.int("relative_attention_num_buckets", default=32)
    embed = vocab * d + 2 * buckets * heads  # shared embedding + one relative-position table per stack
    head = 0 if tie else vocab * d
    return Architecture(
        name=name, model_type=c.model_type, kind="encoder-decoder", hidden_size=d, vocab_size=vocab,
        intermediate_size=f, hidden_act=act, gated_mlp=gated, num_attention_heads=heads, num_key_value_heads=heads,
        head_dim=dkv, max_position_embeddings=c.int("n_positions", default=512), tie_word_embeddings=tie,
        stacks=(encoder, decoder), embedding_params=embed, head_params=head, final_norm_params=2 * d,
        source=source, largest_outer_module_params=max(vocab * d, head),
    )


def _gpt_neox(c: _Cfg, name: str, source: str) -> Architecture:
    """GPT-NeoX / Pythia: fused `query_key_value`, biases and LayerNorms everywhere, untied `embed_out`.
    With `use_parallel_residual` attention and MLP read two different LayerNorm outputs."""
    h, heads, _, hd = _attn_shape(c)
    f = c.int("intermediate_size")
    bias = c.bool("attention_bias", True)
    linears = (
        Linear("query_key_value", h, 3 * h, bias, "attn_in"),
        Linear("dense", h, h, bias, "attn_out"),
        Linear("dense_h_to_4h", h, f, True, "mlp_in"),
        Linear("dense_4h_to_h", f, h, True, "mlp_out"),
    )
    stack = LayerStack("decoder", c.int("num_hidden_layers"), linears, norm_params=2 * 2 * h,
                       attention_heads=heads, kv_heads=heads, head_dim=hd)
    return _decoder(c, name, source, [stack], h=h, heads=heads, kv=heads, hd=hd, f=f,
                    act=c.get("hidden_act", "gelu"), gated=False, tie=c.bool("tie_word_embeddings", False),
                    vocab=c.int("vocab_size"), final_norm=2 * h)


def _falcon(c: _Cfg, name: str, source: str) -> Architecture:
    """Falcon: `new_decoder_architecture` (40B/180B: GQA, two parallel LayerNorms) or the 7B layout
    (`multi_query`: one shared K/V head, `parallel_attn`: one LayerNorm feeds attention and MLP)."""
    h = c.int("hidden_size", "n_embed")
    heads = c.int("num_attention_heads", "n_head")
    layers = c.int("num_hidden_layers", "n_layer")
    vocab = c.int("vocab_size")
    hd = h // heads
    new_arch = c.bool("new_decoder_architecture", c.model_type == "RefinedWeb")
    multi_query = c.bool("multi_query", c.model_type == "RefinedWebModel")
    parallel = c.bool("parallel_attn", True)
    bias = c.bool("bias", False)
    f = c.int("ffn_hidden_size", default=4 * h)
    if new_arch:
        kv = c.int("num_kv_heads", "n_head_kv", default=heads)
    else:
        kv = 1 if multi_query else heads
    qkv_out = (heads + 2 * kv) * hd
    n_ln = c.int("num_ln_in_parallel_attn", default=2) if new_arch else (1 if parallel else 2)
    shared_input = parallel and n_ln == 1
    linears = (
        Linear("query_key_value", h, qkv_out, bias, "attn_in"),
        Linear("dense", h, h, bias, "attn_out"),
        Linear("dense_h_to_4h", h, f, bias, "attn_in" if shared_input else "mlp_in"),
        Linear("dense_4h_to_h", f, h, bias, "mlp_out"),
    )
    stack = LayerStack("decoder", layers, linears, norm_params=n_ln * 2 * h, attention_heads=heads, kv_heads=kv,
                       head_dim=hd)
    tie = c.bool("tie_word_embeddings", True)
    return _decoder(c, name, source, [stack], h=h, heads=heads, kv=kv, hd=hd, f=f, act=c.get("activation", "gelu"),
                    gated=False, tie=tie, vocab=vocab, final_norm=2 * h,
                    max_pos=c.int("max_position_embeddings", default=2048))


# The families built here; `hf_decoders`, `hf_encoders` and `hf_ssm` hold the others. No model type is in both.
_OWN_BUILDERS: dict[str, Callable[[_Cfg, str, str], Architecture]] = {
    **{t: _llama_like for t in _LLAMA_LIKE},
    "mixtral": _mixtral,
    "qwen2_moe": _qwen_moe,
    "qwen3_moe": _qwen_moe,
    "olmoe": _qwen_moe,
    "phi3": _phi3,
    "phi": _phi,
    "gpt_oss": _gpt_oss,
    "deepseek_v2": _deepseek,
    "deepseek_v3": _deepseek,
    "gpt2": _gpt2,
    "bert": _bert,
    "roberta": _bert,
    "xlm-roberta": _bert,
    "t5": _t5,
    "mt5": _t5,
    "falcon": _falcon,
    "gpt_neox": _gpt_neox,
    "RefinedWeb": _falcon,
    "RefinedWebModel": _falcon,
}
_FAMILY_BUILDERS: dict[str, Callable[[_Cfg, str, str], Architecture]] = {
    **hf_decoders.BUILDERS, **hf_encoders.BUILDERS, **hf_ssm.BUILDERS}


def family_builders() -> dict[str, Callable[[_Cfg, str, str], Architecture]]:
    """The builders of the family modules, by model type."""
    return _FAMILY_BUILDERS


def _builder(model_type: str | None) -> Callable[[_Cfg, str, str], Architecture] | None:
    if model_type is None:
        return None
    return _OWN_BUILDERS.get(model_type) or _FAMILY_BUILDERS.get(model_type)


def supported_model_types() -> list[str]:
    """The config.json `model_type` values `from_hf_config` counts exactly: the text families and the
    multimodal ones (their vision towers and projectors included). Others get the generic tier."""
    return sorted(set(_OWN_BUILDERS) | set(family_builders()) | set(_TEXT_MODEL_TYPE))


def from_hf_config(config: Mapping[str, Any], name: str, source: str = "catalog") -> Architecture:
    """Build the `Architecture` that `transformers` would build from this `config.json` content.

    A multimodal config (Gemma 3, LLaVA-style) is read through its text config. The checkpoint's
    `torch_dtype` and `quantization_config` method are kept (`checkpoint_dtype`, `quantization`). Raises
    `UnsupportedArchitecture` (a `ValueError`) naming the reason: no `model_type`, a model type
    trainlint does not know, or a missing or malformed field.
    """
    if not isinstance(config, Mapping):
        raise UnsupportedArchitecture(f"a config must be a JSON object, got {type(config).__name__}")
    outer, config = config, text_config(config)
    model_type = config.get("model_type")
    if not model_type:
        raise UnsupportedArchitecture("the config has no 'model_type', so its architecture is unknown")
    if not isinstance(model_type, str):
        raise UnsupportedArchitecture(f"'model_type' must be a string, got {model_type!r}")
    try:
        return _build(outer, config, str(model_type), name, source)
    except UnsupportedArchitecture:
        raise
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, ArithmeticError) as exc:
        # A field of an unexpected type deep in a config (a string where a list of layers belongs, ...).
        raise UnsupportedArchitecture(f"malformed {model_type} config: {type(exc).__name__}: {exc}") from exc


def _build(outer: Mapping[str, Any], config: Mapping[str, Any], model_type: str, name: str,
           source: str) -> Architecture:
    builder = _builder(model_type)
    if builder is None:
        # The generic tier: approximate, from the standard keys; it raises naming what it lacks.
        arch = _with_module_paths(hf_generic.generic_architecture(config, name, source))
    else:
        arch = _with_module_paths(builder(_Cfg(config, model_type), name, source))
    towers: tuple[Tower, ...] = ()
    exact = True
    if outer is not config:
        towers, exact = hf_vision.towers(outer, arch.hidden_size, arch.intermediate_size)
    extra: dict[str, Any] = {}
    if towers:
        extra["towers"] = towers
    if outer is not config and outer.get("model_type") and outer.get("model_type") != arch.model_type:
        extra["config_model_type"] = str(outer.get("model_type"))
    if not exact and not arch.approximate:
        extra["sizing"] = SIZING_APPROXIMATE
        approx = [t.role for t in towers if t.role not in ("vision", "projector")]
        extra["sizing_note"] = (f"the {' and '.join(approx) + ' encoder' if approx else 'vision tower or projector'}"
                                f" of model_type {outer.get('model_type')!r} is counted by the generic "
                                "transformer-encoder formula")
    dropout = _dropout(config)
    if dropout:
        extra["dropout"] = dropout
    return replace(arch, checkpoint_dtype=_checkpoint_dtype(outer, config), quantization=_quant_method(outer, config),
                   **extra)


_DROPOUT_KEYS = (("resid", ("resid_pdrop", "hidden_dropout", "hidden_dropout_prob")),
                 ("attn", ("attention_dropout", "attn_pdrop", "attention_probs_dropout_prob")),
                 ("embedding", ("embd_pdrop", "embed_dropout")))


def _dropout(config: Mapping[str, Any]) -> tuple[tuple[str, float], ...]:
    """The dropout probabilities the language model's config names (the first key of each kind found)."""
    found = []
    for kind, keys in _DROPOUT_KEYS:
        for key in keys:
            value = config.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1:
                found.append((kind, float(value)))
                break
    return tuple(found)


def _checkpoint_dtype(*configs: Mapping[str, Any]) -> str | None:
    for config in configs:
        dtype = config.get("torch_dtype") or config.get("dtype")
        if isinstance(dtype, str):
            return dtype
    return None


def _quant_method(*configs: Mapping[str, Any]) -> str | None:
    for config in configs:
        quant = config.get("quantization_config")
        if isinstance(quant, Mapping):
            method = quant.get("quant_method") or ("bitsandbytes" if quant.get("load_in_4bit") else None)
            return str(method) if method else "unknown"
    return None
