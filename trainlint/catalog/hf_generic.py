"""The generic tier: an approximate `Architecture` for any Hugging Face `config.json` whose
`model_type` has no exact builder, from the keys nearly every config writes.

It reads the usual spellings of width, depth, heads, KV heads, FFN width and vocabulary
(`hidden_size` / `d_model` / `n_embd`, `num_hidden_layers` / `n_layer` / `num_layers`, ...), tells a
decoder, an encoder and an encoder-decoder apart (`is_encoder_decoder`, the `architectures` class
names), reads mixture-of-experts keys (`num_local_experts` / `num_experts` / `n_routed_experts`,
`moe_intermediate_size`, `num_experts_per_tok`, shared experts, leading dense layers), and assumes a
gated MLP for SiLU-family activations. Biases, norm kinds and exotic parts are guessed, so the count
is labelled approximate (`Architecture.sizing`): within a few percent for standard transformer
layouts, and the estimate says so and keeps its findings at warning severity.

No I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import partial
from typing import Any

from trainlint.catalog.architecture import (
    SIZING_APPROXIMATE,
    Architecture,
    LayerStack,
    Linear,
    UnsupportedArchitecture,
)
from trainlint.catalog.hf_common import check_plausible

__all__ = ["generic_architecture"]

_HIDDEN = ("hidden_size", "d_model", "n_embd", "n_embed", "dim", "model_dim", "embed_dim", "hidden_dim")
_LAYERS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers", "num_blocks")
_HEADS = ("num_attention_heads", "n_head", "num_heads", "n_heads", "attention_heads", "encoder_attention_heads")
_KV = ("num_key_value_heads", "num_kv_heads", "n_head_kv", "n_kv_heads", "multi_query_group_num")
_FFN = ("intermediate_size", "ffn_dim", "d_ff", "n_inner", "ffn_hidden_size", "encoder_ffn_dim", "mlp_dim",
        "inner_hidden_size")
_VOCAB = ("vocab_size", "padded_vocab_size", "n_vocab")
_EXPERTS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts", "num_routed_experts")
_TOPK = ("num_experts_per_tok", "moe_top_k", "top_k", "num_selected_experts", "experts_per_token")
_GATED_ACTS = ("silu", "swish", "swiglu", "geglu", "reglu", "glu")
_ENCODER_CLASSES = ("ForMaskedLM", "ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering",
                    "ForPreTraining", "ForMultipleChoice")


def _int(config: Mapping[str, Any], keys: tuple[str, ...]) -> int | None:
    for key in keys:
        value = config.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
                and int(value) == value and value > 0:
            check_plausible(key, int(value), str(config.get("model_type") or "unknown"))
            return int(value)
    return None


def _kind(config: Mapping[str, Any]) -> str:
    if config.get("is_encoder_decoder") or _int(config, ("decoder_layers", "num_decoder_layers")):
        return "encoder-decoder"
    classes = " ".join(str(a) for a in config.get("architectures") or [])
    if classes and not any(w in classes for w in ("ForCausalLM", "LMHeadModel", "ForConditionalGeneration")) \
            and any(w in classes for w in _ENCODER_CLASSES):
        return "encoder"
    if config.get("is_decoder") is False and "ForCausalLM" not in classes:
        return "encoder"
    if not classes and ("type_vocab_size" in config or "image_size" in config):
        return "encoder"  # BERT-family token types, or a vision transformer
    return "decoder"


def _has_rope(config: Mapping[str, Any]) -> bool:
    return any(k in config for k in ("rope_theta", "rope_scaling", "rope_parameters", "rotary_dim", "rotary_pct",
                                     "rotary_emb_base", "partial_rotary_factor", "global_rope_theta")) or \
        str(config.get("position_embedding_type", "")).lower() in ("rope", "rotary", "alibi") or \
        bool(config.get("alibi")) or bool(config.get("use_alibi"))


def generic_architecture(config: Mapping[str, Any], name: str, source: str) -> Architecture:
    """The approximate architecture of `config` (a text config), or `UnsupportedArchitecture` naming
    the keys it lacks."""
    model_type = str(config.get("model_type") or "unknown")
    h, layers, vocab = _int(config, _HIDDEN), _int(config, _LAYERS), _int(config, _VOCAB)
    patch = _int(config, ("patch_size",))
    if vocab is None and patch and _int(config, ("image_size",)):
        vocab = 0  # a vision transformer: patches, not tokens
    missing = [what for what, value in (("a width (hidden_size / d_model / n_embd)", h),
                                        ("a depth (num_hidden_layers / n_layer / num_layers)", layers),
                                        ("vocab_size", vocab)) if value is None]
    if missing:
        raise UnsupportedArchitecture(
            f"model_type {model_type!r} is not supported, and its config lacks {', '.join(missing)} for a "
            "generic estimate")
    assert h is not None and layers is not None and vocab is not None
    kind = _kind(config)
    heads = _int(config, _HEADS) or max(1, h // 128)
    head_dim = _int(config, ("head_dim", "kv_channels", "d_kv")) or max(1, h // heads)
    kv = 1 if config.get("multi_query") is True else (_int(config, _KV) or heads)
    act = str(config.get("hidden_act") or config.get("activation_function") or config.get("hidden_activation")
              or config.get("activation") or config.get("feed_forward_proj") or "gelu").lower()
    # A gated MLP: SiLU-family activations, GLU names, T5's "gated-*"; and the Llama-style decoders
    # (RMSNorm and rotary positions) whatever their activation (Gemma's GeGLU).
    gated = any(a in act for a in _GATED_ACTS) or "glu" in str(config.get("mlp_type", "")).lower() \
        or act.startswith("gated") or (kind == "decoder" and "rms_norm_eps" in config and _has_rope(config))
    f = _int(config, _FFN) or (int(8 * h / 3) if gated else 4 * h)
    layer_norm = "layer" in str(config.get("norm_type", "")).lower() or kind != "decoder"
    norm = 2 * h if layer_norm else h

    attn = [Linear("q_proj", h, heads * head_dim, False, "attn_in"),
            Linear("k_proj", h, kv * head_dim, False, "attn_in"),
            Linear("v_proj", h, kv * head_dim, False, "attn_in"),
            Linear("o_proj", heads * head_dim, h, False, "attn_out")]

    def mlp(width: int, group: str = "mlp", per_expert: bool = False) -> list[Linear]:
        lins = [Linear("gate_proj", h, width, False, f"{group}_in", per_expert)] if gated else []
        return lins + [Linear("up_proj", h, width, False, f"{group}_in", per_expert),
                       Linear("down_proj", width, h, False, f"{group}_out", per_expert)]

    stack = partial(LayerStack, attention_heads=heads, kv_heads=kv, head_dim=head_dim, norm_params=2 * norm)
    stacks: list[LayerStack] = []
    experts = _int(config, _EXPERTS) or 0
    groups = _int(config, ("num_hidden_groups",))
    if groups:  # ALBERT-style: groups x inner layers shared by every pass
        layers = min(layers, groups * (_int(config, ("inner_group_num",)) or 1))
    ssm_state = _int(config, ("state_size", "d_state", "mamba_d_state", "ssm_state_size"))
    mamba_named = any("mamba" in str(a).lower() for a in config.get("architectures") or [])
    if ssm_state and (mamba_named or "n_groups" in config or not _int(config, _HEADS + ("attn_layer_period",))) \
            and "attn_layer_period" not in config:
        # a pure state-space model (Mamba-like): in_proj (2 x inner), out_proj, a small x/dt projection
        inner = _int(config, ("intermediate_size", "d_inner")) or (_int(config, ("expand",)) or 2) * h
        lins = (Linear("in_proj", h, 2 * inner, False, "attn_in"), Linear("out_proj", inner, h, False, "attn_out"))
        extra = inner * (2 * ssm_state + 8) + 2 * inner * (h // 16 + 1)
        stacks.append(LayerStack("decoder", layers, lins, norm_params=h, extra_params=extra, mixer="ssm"))
        f = inner
    elif kind == "encoder-decoder":
        enc_layers = _int(config, ("encoder_layers", "num_layers", "num_hidden_layers")) or layers
        dec_layers = _int(config, ("decoder_layers", "num_decoder_layers")) or enc_layers
        stacks.append(stack("encoder", enc_layers, tuple(attn + mlp(f))))
        cross = [Linear(lin.name, lin.in_features, lin.out_features, False,
                        "cross_q" if lin.name == "q_proj" else "cross_kv" if lin.name != "o_proj" else "cross_out")
                 for lin in attn]
        stacks.append(stack("decoder", dec_layers, tuple(attn + cross + mlp(f)), cross_attention=True,
                            norm_params=3 * norm))
    elif experts:
        fe = _int(config, ("moe_intermediate_size", "expert_intermediate_size", "moe_ffn_hidden_size")) or f
        dense_layers = min(layers, _int(config, ("first_k_dense_replace", "num_dense_layers")) or 0)
        shared_f = _int(config, ("shared_expert_intermediate_size",)) or \
            (_int(config, ("n_shared_experts", "num_shared_experts")) or 0) * fe
        moe_lins = attn + mlp(fe, "expert", per_expert=True) + (mlp(shared_f, "shared") if shared_f else [])
        if dense_layers:
            stacks.append(stack("decoder", dense_layers, tuple(attn + mlp(f))))
        stacks.append(stack("decoder", layers - dense_layers, tuple(moe_lins), num_experts=experts,
                            experts_per_token=_int(config, _TOPK) or 2, router_params=h * experts,
                            fused_experts=True))
    else:
        stacks.append(stack("encoder" if kind == "encoder" else "decoder", layers, tuple(attn + mlp(f))))
    if kind == "encoder" and (_int(config, ("type_vocab_size",)) or 0):
        e_types = _int(config, ("embedding_size",)) or h
        stacks_extra = (_int(config, ("type_vocab_size",)) or 0) * e_types
    else:
        stacks_extra = 0

    positions = _int(config, ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length")) or 0
    learned = positions if not _has_rope(config) and ("n_positions" in config or kind != "decoder"
                                                      or config.get("position_embedding_type") == "absolute") else 0
    if str(config.get("position_embedding_type", "")).lower() == "relative_key":
        learned = 0
    # transformers' PretrainedConfig ties the input and output embeddings unless the config says not to.
    tie = bool(config.get("tie_word_embeddings", True))
    e = _int(config, ("embedding_size", "word_embed_proj_dim")) or h
    embed = vocab * e + learned * h + (e * h if e != h else 0)
    if vocab == 0 and patch:
        embed = _int(config, ("num_channels",)) or 3
        embed = embed * patch * patch * h + ((_int(config, ("image_size",)) or 224) // patch) ** 2 * h
    head = 0 if tie or kind == "encoder" else vocab * h
    return Architecture(
        name=name, model_type=model_type, kind=kind, hidden_size=h, vocab_size=vocab, intermediate_size=f,
        hidden_act=act, gated_mlp=gated, num_attention_heads=heads, num_key_value_heads=kv, head_dim=head_dim,
        max_position_embeddings=positions, tie_word_embeddings=tie, stacks=tuple(s for s in stacks if s.num_layers),
        embedding_params=embed + stacks_extra, head_params=head, final_norm_params=norm, source=source,
        largest_outer_module_params=max(embed, head), sizing=SIZING_APPROXIMATE,
        sizing_note=(f"model_type {model_type!r} has no exact builder: sized from its config's standard keys "
                     f"({kind}, {layers} layers, hidden {h:,}, {'gated' if gated else 'plain'} MLP {f:,}"
                     + (f", {experts} experts" if experts else "") + "); biases, norms and any unusual parts "
                     "are guessed, typically within a few percent"))
