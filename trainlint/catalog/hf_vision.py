"""The vision side of multimodal configs: vision towers and the projectors that feed the language
model, counted exactly the way `transformers` builds them (`...ForConditionalGeneration`).

`towers(config, text_hidden, text_intermediate)` returns the `Tower`s of a multimodal config (empty for
a text-only one) and whether the count is exact. Known vision towers: CLIP, SigLIP (and the
Idefics2/Idefics3/SmolVLM variants), Pixtral, Qwen2-VL, Qwen2.5-VL, Qwen3-VL, Mllama (Llama 3.2
Vision), Llama 4. Known projectors: LLaVA / LLaVA-NeXT / LLaVA-OneVision, Gemma 3, PaliGemma,
Idefics2 (MLP + perceiver resampler), Idefics3 / SmolVLM (pixel-shuffle connector), Mistral 3, Mllama,
Llama 4. A `vision_config` of any other kind is counted by the generic ViT formula and reported as
approximate: a vision tower is never dropped without a word.

No I/O.
"""

from __future__ import annotations


import math
from collections.abc import Mapping
from typing import Any

from trainlint.catalog.architecture import Tower, UnsupportedArchitecture
from trainlint.catalog.hf_common import check_plausible

__all__ = ["towers"]

# transformers' vision config-class defaults, for the keys saved configs leave out.
_VISION_DEFAULTS: dict[str, dict[str, Any]] = {
    "clip_vision_model": dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, image_size=224,
                              patch_size=32, num_channels=3),
    "siglip_vision_model": dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, image_size=224,
                                patch_size=16, num_channels=3, vision_use_head=True),
    "idefics2": dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, image_size=224, patch_size=32,
                     num_channels=3),
    "idefics3": dict(hidden_size=1152, intermediate_size=3072, num_hidden_layers=12, image_size=224, patch_size=32,
                     num_channels=3),
    "smolvlm_vision": dict(hidden_size=1152, intermediate_size=3072, num_hidden_layers=12, image_size=224,
                           patch_size=32, num_channels=3),
    "pixtral": dict(hidden_size=1024, intermediate_size=4096, num_hidden_layers=24, image_size=1024, patch_size=16,
                    num_channels=3),
    "qwen2_vl": dict(depth=32, embed_dim=1280, hidden_size=3584, mlp_ratio=4, in_channels=3, patch_size=14,
                     temporal_patch_size=2, spatial_merge_size=2),
    "qwen2_5_vl": dict(depth=32, hidden_size=3584, intermediate_size=3420, out_hidden_size=3584, in_channels=3,
                       patch_size=14, temporal_patch_size=2, spatial_merge_size=2),
    "qwen3_vl": dict(depth=27, hidden_size=1152, intermediate_size=4304, out_hidden_size=3584, in_channels=3,
                     patch_size=16, temporal_patch_size=2, spatial_merge_size=2, num_position_embeddings=2304,
                     deepstack_visual_indexes=[8, 16, 24]),
    "mllama_vision_model": dict(hidden_size=1280, intermediate_size=5120, num_hidden_layers=32, num_global_layers=8,
                                image_size=448, patch_size=14, num_channels=3, max_num_tiles=4,
                                intermediate_layers_indices=[3, 7, 15, 23, 30],
                                supported_aspect_ratios=[[1, 1], [1, 2], [1, 3], [1, 4], [2, 1], [2, 2], [3, 1], [4, 1]]),
    "llama4_vision_model": dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=34, image_size=448,
                                patch_size=14, num_channels=3, pixel_shuffle_ratio=0.5, projector_input_dim=4096,
                                projector_output_dim=4096, vision_output_dim=7680, multi_modal_projector_bias=False),
}
# The vision config kind each multimodal model_type uses when its vision_config names none.
_DEFAULT_VISION_KIND = {"llava": "clip_vision_model", "llava_next": "clip_vision_model",
                        "llava_onevision": "siglip_vision_model", "gemma3": "siglip_vision_model",
                        "paligemma": "siglip_vision_model", "idefics2": "idefics2", "idefics3": "idefics3",
                        "smolvlm": "smolvlm_vision", "mistral3": "pixtral", "qwen2_vl": "qwen2_vl",
                        "qwen2_5_vl": "qwen2_5_vl", "qwen3_vl": "qwen3_vl", "mllama": "mllama_vision_model",
                        "llama4": "llama4_vision_model"}


class _V:
    """A vision config with its class defaults filled in."""

    def __init__(self, config: Mapping[str, Any], kind: str):
        self.kind = kind
        self.raw = {**_VISION_DEFAULTS.get(kind, {}), **config}

    def int(self, *keys: str, default: int | None = None) -> int:
        for key in keys:
            value = self.raw.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
                    and int(value) == value:
                check_plausible(key, int(value), f"vision_config ({self.kind})")
                return int(value)
        if default is not None:
            return default
        raise UnsupportedArchitecture(f"vision_config ({self.kind}) lacks {' / '.join(repr(k) for k in keys)}")

    def get(self, key: str, default: Any = None) -> Any:
        value = self.raw.get(key)
        return default if value is None else value


def _vit_layer(h: int, f: int, *, qkv_bias: bool = True, o_bias: bool = True, mlp_bias: bool = True,
               ln_bias: bool = True, gated: bool = False) -> tuple[int, int]:
    """(all params, linear params) of one pre-norm ViT layer: q, k, v, o, a 2- or 3-linear MLP, two norms."""
    attn = 3 * (h * h + (h if qkv_bias else 0)) + h * h + (h if o_bias else 0)
    mlp = (3 if gated else 2) * h * f + ((2 if gated else 1) * f + h if mlp_bias else 0)
    norms = 2 * (2 * h if ln_bias else h)
    return attn + mlp + norms, attn + mlp


def _encoder(name: str, layers: int, h: int, f: int, extra: int, *, fused_qkv: bool = False,
             extra_features: int = 0, **kw) -> Tower:
    """`layers` ViT layers plus `extra` parameters; `extra_features`: the in + out features of linears
    among the extras (a patch merger, an adapter)."""
    one, lin = _vit_layer(h, f, **kw)
    attn = (4 * h + 2 * h) if fused_qkv else 8 * h  # q, k, v, o (or one fused qkv and the output projection)
    features = attn + (3 if kw.get("gated") else 2) * (h + f)
    return Tower(name, "vision", layers * one + extra, num_layers=layers, hidden_size=h, linears_params=layers * lin,
                 lora_features=layers * features + extra_features)


def _clip(v: _V) -> Tower:
    h, f, p = v.int("hidden_size"), v.int("intermediate_size"), v.int("patch_size")
    patches = (v.int("image_size") // p) ** 2
    embed = h + v.int("num_channels") * p * p * h + (patches + 1) * h  # class token, conv (no bias), positions
    return _encoder("vision_tower", v.int("num_hidden_layers"), h, f, embed + 2 * 2 * h)  # pre and post LayerNorm


def _siglip(v: _V) -> Tower:
    """SigLIP's vision transformer (also Idefics2/Idefics3/SmolVLM's): conv with bias, positions,
    post-LayerNorm, and the attention-pooling head when `vision_use_head`."""
    h, f, p = v.int("hidden_size"), v.int("intermediate_size"), v.int("patch_size")
    patches = (v.int("image_size") // p) ** 2
    embed = v.int("num_channels") * p * p * h + h + patches * h
    head = 0
    if v.kind == "siglip_vision_model" and v.get("vision_use_head", True):
        head = h + (3 * h * h + 3 * h) + (h * h + h) + 2 * h + (2 * h * f + f + h)
    return _encoder("vision_model", v.int("num_hidden_layers"), h, f, embed + 2 * h + head)


def _pixtral(v: _V) -> Tower:
    h, f, p = v.int("hidden_size"), v.int("intermediate_size"), v.int("patch_size")
    embed = v.int("num_channels") * p * p * h + h  # conv without bias, ln_pre (RMSNorm)
    return _encoder("vision_tower", v.int("num_hidden_layers"), h, f, embed, qkv_bias=False, o_bias=False,
                    mlp_bias=False, ln_bias=False, gated=True)


def _qwen2_vl(v: _V) -> Tower:
    """Qwen2-VL: 3-D patch conv, LayerNorm blocks with a fused qkv, the 2x2 patch merger to the LM width."""
    e = v.int("embed_dim")
    f = e * v.int("mlp_ratio")
    p, t = v.int("patch_size", "spatial_patch_size"), v.int("temporal_patch_size")
    m = e * v.int("spatial_merge_size") ** 2
    out = v.int("hidden_size")
    embed = v.int("in_channels", "in_chans") * t * p * p * e
    merger = 2 * e + (m * m + m) + (m * out + out)
    return _encoder("visual", v.int("depth"), e, f, embed + merger, fused_qkv=True, extra_features=3 * m + out)


def _qwen2_5_vl(v: _V) -> Tower:
    """Qwen2.5-VL: RMSNorm blocks with a gated MLP (biases), window attention (no extra weights), merger."""
    e, f = v.int("hidden_size"), v.int("intermediate_size")
    p, t = v.int("patch_size", "spatial_patch_size"), v.int("temporal_patch_size")
    m = e * v.int("spatial_merge_size") ** 2
    out = v.int("out_hidden_size")
    embed = v.int("in_channels", "in_chans") * t * p * p * e
    merger = e + (m * m + m) + (m * out + out)
    return _encoder("visual", v.int("depth"), e, f, embed + merger, ln_bias=False, gated=True, fused_qkv=True,
                    extra_features=3 * m + out)


def _qwen3_vl(v: _V) -> Tower:
    """Qwen3-VL: conv with bias, learned positions, LayerNorm blocks, a merger plus one DeepStack
    merger (normed after the shuffle) per `deepstack_visual_indexes` entry."""
    e, f = v.int("hidden_size"), v.int("intermediate_size")
    p, t = v.int("patch_size"), v.int("temporal_patch_size")
    m = e * v.int("spatial_merge_size") ** 2
    out = v.int("out_hidden_size")
    embed = v.int("in_channels") * t * p * p * e + e + v.int("num_position_embeddings") * e
    mlp = (m * m + m) + (m * out + out)
    deepstack = len(v.get("deepstack_visual_indexes", []) or [])
    return _encoder("visual", v.int("depth"), e, f, embed + (2 * e + mlp) + deepstack * (2 * m + mlp), fused_qkv=True,
                    extra_features=(1 + deepstack) * (3 * m + out))


def _mllama(v: _V) -> Tower:
    """Llama 3.2 Vision: tiled patches with gated position and tile embeddings, a local encoder and a
    gated global encoder (no attention biases)."""
    h, f, p = v.int("hidden_size"), v.int("intermediate_size"), v.int("patch_size")
    patches = (v.int("image_size") // p) ** 2 + 1
    tiles = v.int("max_num_tiles")
    ratios = len(v.get("supported_aspect_ratios", [])) + 1
    embed = (v.int("num_channels") * p * p * h + h  # conv without bias, class token
             + 1 + patches * h + ratios * tiles * patches * h  # gated position embedding and its tile table
             + 2 * (1 + ratios * tiles * h)  # pre- and post-tile position embeddings
             + 2 * 2 * h)  # layernorm_pre, layernorm_post
    one, lin = _vit_layer(h, f, qkv_bias=False, o_bias=False)
    local, glob = v.int("num_hidden_layers"), v.int("num_global_layers")
    params = embed + local * one + glob * (one + 2)
    return Tower("vision_model", "vision", params, num_layers=local + glob, hidden_size=h,
                 linears_params=(local + glob) * lin, lora_features=(local + glob) * (8 * h + 2 * (h + f)))


def _llama4(v: _V) -> Tower:
    """Llama 4's vision encoder: a linear patch embedding, biases everywhere, and the pixel-shuffle
    MLP adapter."""
    h, f, p = v.int("hidden_size"), v.int("intermediate_size"), v.int("patch_size")
    patches = (v.int("image_size") // p) ** 2 + 1
    embed = h + patches * h + v.int("num_channels") * p * p * h + 2 * 2 * h
    ratio = float(v.get("pixel_shuffle_ratio", 0.5))
    # the pixel-shuffle MLP: fc1 (hidden / ratio^2 -> projector_input_dim), fc2 (-> projector_output_dim)
    shuffled = int(h / (ratio * ratio)) if ratio else h
    pin, pout = v.int("projector_input_dim"), v.int("projector_output_dim")
    adapter = shuffled * pin + pin * pout
    return _encoder("vision_model", v.int("num_hidden_layers"), h, f, embed + adapter,
                    extra_features=shuffled + 2 * pin + pout + v.int("num_channels") * p * p + h)  # + patch linear


def _generic_vit(v: _V) -> Tower:
    """Any other vision_config: a pre-norm ViT from its standard keys (approximate)."""
    h = v.int("hidden_size", "embed_dim", "width", "d_model")
    layers = v.int("num_hidden_layers", "depth", "num_layers", "layers")
    f = v.int("intermediate_size", default=4 * h)
    p = v.int("patch_size", default=14)
    patches = (v.int("image_size", default=224) // max(1, p)) ** 2
    embed = v.int("num_channels", "in_channels", default=3) * p * p * h + patches * h
    return _encoder("vision_model", layers, h, f, embed + 2 * h)


_TOWERS = {"clip_vision_model": _clip, "siglip_vision_model": _siglip, "siglip2_vision_model": _siglip,
           "idefics2": _siglip, "idefics3": _siglip, "idefics3_vision": _siglip, "smolvlm_vision": _siglip,
           "pixtral": _pixtral, "qwen2_vl": _qwen2_vl, "qwen2_5_vl": _qwen2_5_vl, "qwen3_vl": _qwen3_vl,
           "mllama_vision_model": _mllama, "llama4_vision_model": _llama4}


def _projector(model_type: str, config: Mapping[str, Any], v: _V, text_h: int, text_f: int) -> tuple[int, int] | None:
    """(parameters, in + out features of its linears) of the multimodal projector / connector, or
    None for a model_type not known here."""
    vh = v.int("hidden_size", "embed_dim", default=0)
    layers = config.get("vision_feature_layer")
    n_feat = len(layers) if isinstance(layers, list) and layers else 1
    if model_type in ("llava", "llava_next", "llava_onevision"):
        bias = bool(config.get("multimodal_projector_bias", True))
        proj = vh * n_feat * text_h + text_h * text_h + (2 * text_h if bias else 0)
        newline = text_h if model_type != "llava" else 0  # image_newline
        return proj + newline, vh * n_feat + 3 * text_h
    if model_type == "gemma3":
        return vh * text_h + vh, 0  # mm_input_projection_weight (a Parameter, not an nn.Linear), mm_soft_emb_norm
    if model_type == "paligemma":
        out = int(v.get("projection_dim", config.get("projection_dim", 2048)))
        return vh * out + out, vh + out
    if model_type in ("idefics3", "smolvlm"):
        scale = int(config.get("scale_factor", 2 if model_type == "idefics3" else 4))
        return vh * scale * scale * text_h, vh * scale * scale + text_h
    if model_type == "idefics2":
        perceiver = config.get("perceiver_config") or {}
        latents = int(perceiver.get("resampler_n_latents", 64))
        depth = int(perceiver.get("resampler_depth", 3))
        heads = int(perceiver.get("resampler_n_heads", 16))
        hd = int(perceiver.get("resampler_head_dim", 96))
        kv = int(perceiver.get("num_key_value_heads", 4))
        layer = (2 * text_h + text_h * heads * hd * 2 + 2 * text_h * kv * hd + text_h
                 + 3 * text_h * 4 * text_h)
        layer_features = (2 * text_h + heads * hd + 2 * (text_h + kv * hd) + heads * hd
                          + 2 * (text_h + 4 * text_h) + 5 * text_h)
        return (2 * vh * text_f + text_f * text_h + latents * text_h + depth * layer + text_h,
                2 * (vh + text_f) + text_f + text_h + depth * layer_features)
    if model_type == "mistral3":
        bias = bool(config.get("multimodal_projector_bias", False))
        merge = int(config.get("spatial_merge_size", 2))
        return (vh + vh * merge * merge * vh + vh * n_feat * text_h + text_h * text_h
                + (2 * text_h if bias else 0), vh * merge * merge + vh + vh * n_feat + 3 * text_h)
    if model_type == "mllama":
        out = v.int("vision_output_dim", default=vh * (len(v.get("intermediate_layers_indices", [])) + 1))
        return out * text_h + text_h, out + text_h
    if model_type == "llama4":
        bias = bool(v.get("multi_modal_projector_bias", False))
        return v.int("vision_output_dim") * text_h + (text_h if bias else 0), v.int("vision_output_dim") + text_h
    if model_type in ("qwen2_vl", "qwen2_5_vl", "qwen3_vl"):
        return 0, 0  # the patch merger is part of the visual tower
    return None


def _int_or_zero(config: Mapping[str, Any], *keys: str) -> int:
    for key in keys:
        value = config.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
        if isinstance(value, (list, tuple)) and value and isinstance(value[0], int) and value[0] > 0:
            return int(value[0])
    return 0


def towers(config: Mapping[str, Any], text_h: int, text_f: int) -> tuple[tuple[Tower, ...], bool]:
    """The vision tower and projector of a multimodal `config` (the outer config.json), and whether
    they are counted exactly. `((), True)` for a config without a `vision_config`."""
    vision = config.get("vision_config")
    others, others_exact = _other_encoders(config)
    if not isinstance(vision, Mapping):
        return others, others_exact
    model_type = str(config.get("model_type", ""))
    kind = str(vision.get("model_type") or _DEFAULT_VISION_KIND.get(model_type, ""))
    if model_type in ("qwen2_vl", "qwen2_5_vl", "qwen3_vl"):
        kind = model_type  # their vision configs name the outer type (or nothing)
    if model_type in ("idefics2", "idefics3", "smolvlm") and kind not in _TOWERS:
        kind = _DEFAULT_VISION_KIND[model_type]
    v = _V(vision, kind)
    build = _TOWERS.get(kind)
    exact = build is not None
    tower = build(v) if build else _generic_vit(v)
    tower = tower._replace(intermediate_size=_int_or_zero(vision, "intermediate_size"),
                    heads=_int_or_zero(vision, "num_attention_heads", "num_heads"),
                    image_size=_int_or_zero(vision, "image_size"), patch_size=_int_or_zero(vision, "patch_size"))
    found = _projector(model_type, config, v, text_h, text_f)
    if found is None:
        exact = False
        vh = tower.hidden_size
        found = (vh * text_h + text_h * text_h + 2 * text_h, vh + 3 * text_h)  # a two-layer MLP, LLaVA-style
    projector, features = found
    parts = [tower]
    if projector:
        parts.append(Tower("multi_modal_projector", "projector", projector,
                           linears_params=projector if features else 0, lora_features=features))
    return tuple(parts) + others, exact and others_exact


# Sub-configs of a multimodal config.json that hold no separate encoder (or one counted above).
_NOT_ENCODERS = {"text_config", "llm_config", "language_config", "text_model", "vision_config", "perceiver_config",
                 "quantization_config", "rope_scaling", "rope_parameters", "generation_config"}


def _other_encoders(config: Mapping[str, Any]) -> tuple[tuple[Tower, ...], bool]:
    """Audio encoders and any other `*_config` sub-model (`audio_config`, `speech_config`, ...): counted
    by the generic encoder formula and reported as approximate, so that no encoder goes uncounted."""
    found = []
    for key, sub in config.items():
        if not (isinstance(key, str) and key.endswith("_config") and key not in _NOT_ENCODERS
                and isinstance(sub, Mapping)):
            continue
        v = _V(sub, str(sub.get("model_type", key)))
        try:
            h = v.int("hidden_size", "d_model", "embed_dim", "width")
            layers = v.int("num_hidden_layers", "encoder_layers", "num_layers", "depth")
        except UnsupportedArchitecture:
            continue  # no sizes: not a sub-model
        f = v.int("intermediate_size", "encoder_ffn_dim", "ffn_dim", default=4 * h)
        role = "audio" if any(w in key for w in ("audio", "speech", "sound")) else key.removesuffix("_config")
        found.append(_encoder(key.removesuffix("_config") + "_encoder", layers, h, f, 2 * h))
        found[-1] = Tower(found[-1].name, role, found[-1].params, num_layers=layers, hidden_size=h,
                          linears_params=found[-1].linears_params, lora_features=found[-1].lora_features)
    return tuple(found), not found
