"""What every per-family builder of `hf_config` shares: typed access to a config (`Cfg`), the
transformers config-class defaults that saved files leave out, and the shapes of the usual linears.

No I/O, no family knowledge beyond the defaults table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trainlint.catalog.architecture import Architecture, LayerStack, Linear, UnsupportedArchitecture

__all__ = ["Cfg", "attn_shape", "check_plausible", "decoder", "dense_mlp", "qkvo"]

# Bounds on what a config may claim, so a hostile or broken file cannot make the builders loop for
# hours (layer counts are iterated) or overflow: the largest published models are far inside them.
MAX_LAYERS = 100_000
MAX_DIMENSION = 2**40


def check_plausible(key: str, value: int, model_type: str) -> None:
    """Raise `UnsupportedArchitecture` for a negative size, an implausible layer count or dimension."""
    if value < -1:  # -1 is a legitimate "unset" in some configs (max_relative_positions)
        raise UnsupportedArchitecture(f"{model_type} config field {key!r} must not be negative, got {value}")
    limit = MAX_LAYERS if ("layer" in key or key in ("depth", "n_layer")) else MAX_DIMENSION
    if value > limit:
        raise UnsupportedArchitecture(f"{model_type} config field {key!r} = {value:,} is implausibly large")

# The `transformers` config-class defaults that saved config.json files often leave out (Gemma 3's
# nested text_config omits head counts and vocab_size, T5 v1.0 omits feed_forward_proj, ...).
# A field missing from config.json takes the value transformers would give it.
_CLASS_DEFAULTS: dict[str, dict[str, Any]] = {
    "llama": dict(vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                  num_attention_heads=32, max_position_embeddings=2048),
    "mistral": dict(vocab_size=32000, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                    num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=131072),
    "mixtral": dict(vocab_size=32000, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                    num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=131072,
                    num_local_experts=8, num_experts_per_tok=2),
    "qwen2": dict(vocab_size=151936, hidden_size=4096, intermediate_size=22016, num_hidden_layers=32,
                  num_attention_heads=32, num_key_value_heads=32, max_position_embeddings=32768),
    "qwen2_moe": dict(vocab_size=151936, hidden_size=2048, intermediate_size=5632, num_hidden_layers=24,
                      num_attention_heads=16, num_key_value_heads=16, max_position_embeddings=32768,
                      num_experts=60, num_experts_per_tok=4, moe_intermediate_size=1408,
                      shared_expert_intermediate_size=5632, decoder_sparse_step=1),
    "qwen3": dict(vocab_size=151936, hidden_size=4096, intermediate_size=22016, num_hidden_layers=32,
                  num_attention_heads=32, num_key_value_heads=32, head_dim=128, max_position_embeddings=32768),
    "gemma": dict(vocab_size=256000, hidden_size=3072, intermediate_size=24576, num_hidden_layers=28,
                  num_attention_heads=16, num_key_value_heads=16, head_dim=256, max_position_embeddings=8192),
    "gemma2": dict(vocab_size=256000, hidden_size=2304, intermediate_size=9216, num_hidden_layers=26,
                   num_attention_heads=8, num_key_value_heads=4, head_dim=256, max_position_embeddings=8192),
    "gemma3_text": dict(vocab_size=262208, hidden_size=2304, intermediate_size=9216, num_hidden_layers=26,
                        num_attention_heads=8, num_key_value_heads=4, head_dim=256, max_position_embeddings=131072),
    "phi3": dict(vocab_size=32064, hidden_size=3072, intermediate_size=8192, num_hidden_layers=32,
                 num_attention_heads=32, max_position_embeddings=4096),
    "gpt_oss": dict(vocab_size=201088, hidden_size=2880, intermediate_size=2880, num_hidden_layers=36,
                    num_attention_heads=64, num_key_value_heads=8, head_dim=64, num_local_experts=128,
                    num_experts_per_tok=4, max_position_embeddings=131072),
    "gpt2": dict(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12),
    "bert": dict(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                 intermediate_size=3072, max_position_embeddings=512, type_vocab_size=2),
    "t5": dict(vocab_size=32128, d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_heads=8,
               relative_attention_num_buckets=32, feed_forward_proj="relu"),
    "gpt_neox": dict(vocab_size=50432, hidden_size=6144, num_hidden_layers=44, num_attention_heads=64,
                     intermediate_size=24576, max_position_embeddings=2048),
    "falcon": dict(vocab_size=65024, hidden_size=4544, num_hidden_layers=32, num_attention_heads=71,
                   multi_query=True, parallel_attn=True, new_decoder_architecture=False, bias=False),
}


class _Cfg:
    """Typed access to a config dict that names the missing field when it fails."""

    def __init__(self, config: Mapping[str, Any], model_type: str):
        self.raw = {**_CLASS_DEFAULTS.get(model_type, {}), **config}
        self.model_type = model_type

    def has(self, key: str) -> bool:
        return self.raw.get(key) is not None

    def get(self, key: str, default: Any = None) -> Any:
        value = self.raw.get(key)
        return default if value is None else value

    def int(self, *keys: str, default: int | None = None) -> int:
        for key in keys:
            value = self.raw.get(key)
            if value is not None:
                if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value \
                        or value in (float("inf"), float("-inf")) or int(value) != value:
                    raise UnsupportedArchitecture(
                        f"{self.model_type} config field {key!r} must be an integer, got {value!r}")
                check_plausible(key, int(value), self.model_type)
                return int(value)
        if default is not None:
            return default
        raise UnsupportedArchitecture(f"{self.model_type} config lacks {' / '.join(repr(k) for k in keys)}")

    def bool(self, key: str, default: bool) -> bool:
        value = self.raw.get(key)
        return default if value is None else bool(value)


def _dense_mlp(h: int, f: int, gated: bool, bias: bool, names=("gate_proj", "up_proj", "down_proj"),
               group_in: str = "mlp_in", group_out: str = "mlp_out", per_expert: bool = False) -> list[Linear]:
    gate, up, down = names
    lins = [Linear(gate, h, f, bias, group_in, per_expert)] if gated else []
    lins.append(Linear(up, h, f, bias, group_in, per_expert))
    lins.append(Linear(down, f, h, bias, group_out, per_expert))
    return lins


def _qkvo(h: int, heads: int, kv: int, hd: int, qkv_bias: bool, o_bias: bool,
          names=("q_proj", "k_proj", "v_proj", "o_proj"), group_in: str = "attn_in") -> list[Linear]:
    q, k, v, o = names
    return [
        Linear(q, h, heads * hd, qkv_bias, group_in),
        Linear(k, h, kv * hd, qkv_bias, group_in),
        Linear(v, h, kv * hd, qkv_bias, group_in),
        Linear(o, heads * hd, h, o_bias, "attn_out"),
    ]


def _attn_shape(c: _Cfg, default_head_dim: int | None = None) -> tuple[int, int, int, int]:
    h = c.int("hidden_size")
    heads = c.int("num_attention_heads")
    kv = c.int("num_key_value_heads", default=heads)
    if c.has("head_dim"):
        hd = c.int("head_dim")
    elif default_head_dim is not None:
        hd = default_head_dim
    else:
        if h % heads:
            raise UnsupportedArchitecture(f"hidden_size {h} is not divisible by num_attention_heads {heads}")
        hd = h // heads
    return h, heads, kv, hd


def _decoder(c: _Cfg, name: str, source: str, stacks: list[LayerStack], *, h: int, heads: int, kv: int, hd: int,
             f: int, act: str, gated: bool, tie: bool, vocab: int, final_norm: int, max_pos: int | None = None,
             lm_head_bias: bool = False) -> Architecture:
    embed = vocab * h
    head = 0 if tie else vocab * h + (vocab if lm_head_bias else 0)
    return Architecture(
        name=name, model_type=c.model_type, kind="decoder", hidden_size=h, vocab_size=vocab,
        intermediate_size=f, hidden_act=act, gated_mlp=gated, num_attention_heads=heads,
        num_key_value_heads=kv, head_dim=hd,
        max_position_embeddings=max_pos if max_pos is not None else c.int("max_position_embeddings", default=0),
        tie_word_embeddings=tie, stacks=tuple(s for s in stacks if s.num_layers), embedding_params=embed,
        head_params=head, final_norm_params=final_norm, source=source,
        largest_outer_module_params=max(embed, head),
    )


Cfg = _Cfg
attn_shape = _attn_shape
decoder = _decoder
dense_mlp = _dense_mlp
qkvo = _qkvo
