"""Encoder-only, encoder-decoder and speech families beyond BERT and T5, counted the way
`transformers` builds them: the bare `AutoModel` for encoders (as `hf_config` counts BERT), the
`...ForConditionalGeneration` class for encoder-decoders (lm_head tied to the shared embedding).

Families: distilbert, electra, albert, deberta, deberta-v2, modernbert, vit, bart, mbart, whisper.
No I/O.
"""

from __future__ import annotations

from collections.abc import Callable

from trainlint.catalog.architecture import Architecture, LayerStack, Linear
from trainlint.catalog.hf_common import Cfg

__all__ = ["BUILDERS"]


def _attn(h: int, names=("query", "key", "value", "dense"), bias: bool = True, k_bias: bool = True,
          group: str = "attn_in", out_group: str = "attn_out") -> list[Linear]:
    q, k, v, o = names
    return [Linear(q, h, h, bias, group), Linear(k, h, h, bias and k_bias, group), Linear(v, h, h, bias, group),
            Linear(o, h, h, bias, out_group)]


def _ffn(h: int, f: int, names=("dense", "dense"), bias: bool = True) -> list[Linear]:
    return [Linear(names[0], h, f, bias, "mlp_in"), Linear(names[1], f, h, bias, "mlp_out")]


def _arch(c: Cfg, name: str, source: str, kind: str, stacks: list[LayerStack], *, h: int, f: int, heads: int,
          vocab: int, embed: int, head: int = 0, final_norm: int = 0, other: int = 0, act: str = "gelu",
          positions: int = 512, largest: int = 0) -> Architecture:
    return Architecture(
        name=name, model_type=c.model_type, kind=kind, hidden_size=h, vocab_size=vocab, intermediate_size=f,
        hidden_act=act, gated_mlp=False, num_attention_heads=heads, num_key_value_heads=heads,
        head_dim=h // max(1, heads), max_position_embeddings=positions, tie_word_embeddings=True,
        stacks=tuple(s for s in stacks if s.num_layers), embedding_params=embed, head_params=head,
        final_norm_params=final_norm, other_params=other, source=source,
        largest_outer_module_params=largest or vocab * h)


def _distilbert(c: Cfg, name: str, source: str) -> Architecture:
    d, f, heads = c.int("dim"), c.int("hidden_dim"), c.int("n_heads")
    vocab, positions = c.int("vocab_size"), c.int("max_position_embeddings", default=512)
    linears = _attn(d, names=("q_lin", "k_lin", "v_lin", "out_lin")) + _ffn(d, f, names=("lin1", "lin2"))
    stack = LayerStack("encoder", c.int("n_layers"), tuple(linears), norm_params=4 * d, attention_heads=heads,
                       kv_heads=heads, head_dim=d // heads)
    # The position table is an nn.Embedding even when `sinusoidal_pos_embds` fills it.
    return _arch(c, name, source, "encoder", [stack], h=d, f=f, heads=heads, vocab=vocab,
                 embed=(vocab + positions) * d, final_norm=2 * d, act=c.get("activation", "gelu"), positions=positions)


def _bert_layer(h: int, f: int, layers: int, heads: int) -> LayerStack:
    return LayerStack("encoder", layers, tuple(_attn(h) + _ffn(h, f)), norm_params=4 * h, attention_heads=heads,
                      kv_heads=heads, head_dim=h // heads)


def _electra(c: Cfg, name: str, source: str) -> Architecture:
    """ELECTRA: BERT layers over embeddings of width `embedding_size`, projected when it differs; no pooler."""
    h, f, heads = c.int("hidden_size"), c.int("intermediate_size"), c.int("num_attention_heads")
    e = c.int("embedding_size", default=h)
    vocab, positions, types = c.int("vocab_size"), c.int("max_position_embeddings", default=512), \
        c.int("type_vocab_size", default=2)
    project = e * h + h if e != h else 0
    return _arch(c, name, source, "encoder", [_bert_layer(h, f, c.int("num_hidden_layers"), heads)], h=h, f=f,
                 heads=heads, vocab=vocab, embed=(vocab + positions + types) * e, final_norm=2 * e, other=project,
                 positions=positions, largest=vocab * e)


def _albert(c: Cfg, name: str, source: str) -> Architecture:
    """ALBERT: factorized embeddings, and `num_hidden_groups` x `inner_group_num` distinct layers shared
    by all `num_hidden_layers` passes. The stack lists every pass (what the activations see); the
    parameters of the repeats are taken back out in `other_params`, so the total is exact."""
    h, f, heads = c.int("hidden_size"), c.int("intermediate_size"), c.int("num_attention_heads")
    e = c.int("embedding_size", default=128)
    vocab, positions, types = c.int("vocab_size"), c.int("max_position_embeddings", default=512), \
        c.int("type_vocab_size", default=2)
    passes = c.int("num_hidden_layers")
    distinct = c.int("num_hidden_groups", default=1) * c.int("inner_group_num", default=1)
    linears = _attn(h) + _ffn(h, f, names=("ffn", "ffn_output"))
    stack = LayerStack("encoder", passes, tuple(linears), norm_params=4 * h, attention_heads=heads, kv_heads=heads,
                       head_dim=h // heads)
    shared_back = -(passes - distinct) * stack.params_per_layer if passes > distinct else 0
    pooler = h * h + h
    return _arch(c, name, source, "encoder", [stack], h=h, f=f, heads=heads, vocab=vocab,
                 embed=(vocab + positions + types) * e, head=pooler, final_norm=2 * e,
                 other=e * h + h + shared_back, act=c.get("hidden_act", "gelu_new"), positions=positions,
                 largest=vocab * e)


def _pos_att_types(c: Cfg) -> set[str]:
    value = c.get("pos_att_type") or []
    if isinstance(value, str):
        value = value.replace(",", "|").split("|")
    return {str(v).strip().lower() for v in value}


def _deberta(c: Cfg, name: str, source: str) -> Architecture:
    """DeBERTa (v1): fused in_proj (no bias) with separate q/v biases, relative position projections
    (`pos_proj` for c2p, `pos_q_proj` for p2c), one relative embedding table; no pooler."""
    h, f, heads = c.int("hidden_size"), c.int("intermediate_size"), c.int("num_attention_heads")
    vocab, positions = c.int("vocab_size"), c.int("max_position_embeddings", default=512)
    types = c.int("type_vocab_size", default=0)
    rel = c.bool("relative_attention", False)
    att = _pos_att_types(c) if rel else set()
    linears = [Linear("in_proj", h, 3 * h, False, "attn_in")]
    if "c2p" in att:
        linears.append(Linear("pos_proj", h, h, False, "rel_pos"))
    if "p2c" in att:
        linears.append(Linear("pos_q_proj", h, h, True, "rel_pos"))
    linears += [Linear("dense", h, h, True, "attn_out")] + _ffn(h, f)
    stack = LayerStack("encoder", c.int("num_hidden_layers"), tuple(linears), norm_params=4 * h, extra_params=2 * h,
                       attention_heads=heads, kv_heads=heads, head_dim=h // heads)
    max_rel = c.int("max_relative_positions", default=-1)
    rel_table = (max_rel if max_rel >= 1 else positions) * 2 * h if rel else 0
    embed = vocab * h + (positions * h if c.bool("position_biased_input", True) else 0) + types * h
    return _arch(c, name, source, "encoder", [stack], h=h, f=f, heads=heads, vocab=vocab, embed=embed + rel_table,
                 final_norm=2 * h, positions=positions)


def _deberta_v2(c: Cfg, name: str, source: str) -> Architecture:
    """DeBERTa-v2/v3: separate q/k/v projections with biases, relative embeddings over `position_buckets`
    (shared keys with `share_att_key`), a LayerNorm on them (`norm_rel_ebd`), an optional conv layer."""
    h, f, heads = c.int("hidden_size"), c.int("intermediate_size"), c.int("num_attention_heads")
    vocab, positions = c.int("vocab_size"), c.int("max_position_embeddings", default=512)
    types = c.int("type_vocab_size", default=0)
    rel = c.bool("relative_attention", False)
    att = _pos_att_types(c) if rel else set()
    linears = _attn(h, names=("query_proj", "key_proj", "value_proj", "dense"))
    if rel and not c.bool("share_att_key", False):
        if "c2p" in att:
            linears.append(Linear("pos_key_proj", h, h, True, "rel_pos"))
        if "p2c" in att:
            linears.append(Linear("pos_query_proj", h, h, True, "rel_pos"))
    linears += _ffn(h, f)
    stack = LayerStack("encoder", c.int("num_hidden_layers"), tuple(linears), norm_params=4 * h,
                       attention_heads=heads, kv_heads=heads, head_dim=h // heads)
    outside = 0
    if rel:
        buckets = c.int("position_buckets", default=-1)
        max_rel = c.int("max_relative_positions", default=-1)
        size = buckets if buckets > 0 else (max_rel if max_rel >= 1 else positions)
        outside += size * 2 * h
        if "layer_norm" in str(c.get("norm_rel_ebd", "none")).lower():
            outside += 2 * h
    k = c.int("conv_kernel_size", default=0)
    if k > 0:
        outside += h * h * k + h + 2 * h
    embed = vocab * h + (positions * h if c.bool("position_biased_input", True) else 0) + types * h
    return _arch(c, name, source, "encoder", [stack], h=h, f=f, heads=heads, vocab=vocab, embed=embed + outside,
                 final_norm=2 * h, positions=positions)


def _modernbert(c: Cfg, name: str, source: str) -> Architecture:
    """ModernBERT: fused Wqkv, a GLU MLP (Wi is 2 x intermediate wide), LayerNorms without bias by
    default; the first layer has no attention norm."""
    h, f, heads = c.int("hidden_size"), c.int("intermediate_size"), c.int("num_attention_heads")
    vocab = c.int("vocab_size")
    ab, mb = c.bool("attention_bias", False), c.bool("mlp_bias", False)
    norm = h * (2 if c.bool("norm_bias", False) else 1)
    linears = (Linear("Wqkv", h, 3 * h, ab, "attn_in"), Linear("Wo", h, h, ab, "attn_out"),
               Linear("Wi", h, 2 * f, mb, "mlp_in"), Linear("Wo", f, h, mb, "mlp_out"))
    stack = LayerStack("encoder", c.int("num_hidden_layers"), linears, norm_params=2 * norm, attention_heads=heads,
                       kv_heads=heads, head_dim=h // heads)
    # embeddings.norm + final_norm, less the missing attn_norm of layer 0
    return _arch(c, name, source, "encoder", [stack], h=h, f=f, heads=heads, vocab=vocab, embed=vocab * h,
                 final_norm=norm, act=c.get("hidden_activation", "gelu"),
                 positions=c.int("max_position_embeddings", default=8192))


def _vit(c: Cfg, name: str, source: str) -> Architecture:
    h, f, heads = c.int("hidden_size"), c.int("intermediate_size"), c.int("num_attention_heads")
    p, channels = c.int("patch_size", default=16), c.int("num_channels", default=3)
    patches = (c.int("image_size", default=224) // p) ** 2
    bias = c.bool("qkv_bias", True)
    linears = [Linear("query", h, h, bias, "attn_in"), Linear("key", h, h, bias, "attn_in"),
               Linear("value", h, h, bias, "attn_in"), Linear("dense", h, h, True, "attn_out")] + _ffn(h, f)
    stack = LayerStack("encoder", c.int("num_hidden_layers"), tuple(linears), norm_params=4 * h,
                       attention_heads=heads, kv_heads=heads, head_dim=h // heads)
    embed = h + (patches + 1) * h + channels * p * p * h + h  # cls token, positions, patch conv
    return _arch(c, name, source, "encoder", [stack], h=h, f=f, heads=heads, vocab=0, embed=embed,
                 head=h * h + h, final_norm=2 * h, positions=patches + 1, largest=channels * p * p * h)


def _bart(c: Cfg, name: str, source: str) -> Architecture:
    """BART / mBART: shared embedding (lm_head tied), learned positions with an offset of 2 per stack,
    an embedding LayerNorm per stack, biases everywhere; mBART adds a final LayerNorm per stack."""
    d, vocab = c.int("d_model"), c.int("vocab_size")
    positions = c.int("max_position_embeddings", default=1024)
    enc_h, dec_h = c.int("encoder_attention_heads"), c.int("decoder_attention_heads")
    fe, fd = c.int("encoder_ffn_dim"), c.int("decoder_ffn_dim")
    names = ("q_proj", "k_proj", "v_proj", "out_proj")
    enc = LayerStack("encoder", c.int("encoder_layers"), tuple(_attn(d, names=names) + _ffn(d, fe, ("fc1", "fc2"))),
                     norm_params=4 * d, attention_heads=enc_h, kv_heads=enc_h, head_dim=d // enc_h)
    cross = _attn(d, names=names, group="cross_q", out_group="cross_out")
    dec = LayerStack("decoder", c.int("decoder_layers"),
                     tuple(_attn(d, names=names) + cross + _ffn(d, fd, ("fc1", "fc2"))), norm_params=6 * d,
                     attention_heads=dec_h, kv_heads=dec_h, head_dim=d // dec_h, cross_attention=True)
    final = 2 * 2 * d + (2 * 2 * d if c.model_type == "mbart" else 0)
    return _arch(c, name, source, "encoder-decoder", [enc, dec], h=d, f=fe, heads=enc_h, vocab=vocab,
                 embed=vocab * d + 2 * (positions + 2) * d, final_norm=final,
                 act=c.get("activation_function", "gelu"), positions=positions)


def _whisper(c: Cfg, name: str, source: str) -> Architecture:
    """Whisper: a two-conv audio front end, sinusoidal-initialised position tables (parameters), k_proj
    without bias, pre-LayerNorm layers and a final LayerNorm per stack; proj_out tied to the embedding."""
    d, vocab = c.int("d_model"), c.int("vocab_size")
    enc_h, dec_h = c.int("encoder_attention_heads"), c.int("decoder_attention_heads")
    fe, fd = c.int("encoder_ffn_dim"), c.int("decoder_ffn_dim")
    mels = c.int("num_mel_bins", default=80)
    src, tgt = c.int("max_source_positions", default=1500), c.int("max_target_positions", default=448)
    names = ("q_proj", "k_proj", "v_proj", "out_proj")
    enc = LayerStack("encoder", c.int("encoder_layers"),
                     tuple(_attn(d, names=names, k_bias=False) + _ffn(d, fe, ("fc1", "fc2"))), norm_params=4 * d,
                     attention_heads=enc_h, kv_heads=enc_h, head_dim=d // enc_h)
    cross = _attn(d, names=names, k_bias=False, group="cross_q", out_group="cross_out")
    dec = LayerStack("decoder", c.int("decoder_layers"),
                     tuple(_attn(d, names=names, k_bias=False) + cross + _ffn(d, fd, ("fc1", "fc2"))),
                     norm_params=6 * d, attention_heads=dec_h, kv_heads=dec_h, head_dim=d // dec_h,
                     cross_attention=True)
    convs = mels * d * 3 + d + d * d * 3 + d
    return _arch(c, name, source, "encoder-decoder", [enc, dec], h=d, f=fe, heads=enc_h, vocab=vocab,
                 embed=vocab * d + (src + tgt) * d, final_norm=2 * 2 * d, other=convs,
                 act=c.get("activation_function", "gelu"), positions=tgt)


BUILDERS: dict[str, Callable[[Cfg, str, str], Architecture]] = {
    "distilbert": _distilbert,
    "electra": _electra,
    "albert": _albert,
    "deberta": _deberta,
    "deberta-v2": _deberta_v2,
    "modernbert": _modernbert,
    "vit": _vit,
    "bart": _bart,
    "mbart": _bart,
    "whisper": _whisper,
}
