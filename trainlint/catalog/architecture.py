"""Transformer architectures as plain, frozen data: what a model holds, the way `transformers` builds it.

An `Architecture` lists every parameter of a model: the layer stacks (each a run of identical layers),
every `nn.Linear` inside a layer with its shape, bias and the tensor it reads, the norms, the routers of
mixture-of-experts layers, the embeddings and the head. From that, exact parameter counts follow
(`total_params` equals the count `transformers` reports for the catalog models), and so do the numbers
the memory estimator needs: LoRA adapter sizes, active parameters per token, the largest single module
(for ZeRO-3 / FSDP buffers).

`trainlint.catalog.hf_config` builds these from `config.json` fields; this module does no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

__all__ = [
    "PEFT_DEFAULT_LORA_TARGETS",
    "Architecture",
    "LayerStack",
    "Linear",
    "SIZING_APPROXIMATE",
    "SIZING_CHECKPOINT",
    "SIZING_EXACT",
    "Tower",
    "UnsupportedArchitecture",
]


class UnsupportedArchitecture(ValueError):
    """A config that names a model type trainlint cannot count, or lacks a field it needs."""


class Linear(NamedTuple):
    """One `nn.Linear` (or GPT-2's `Conv1D`, or a fused expert weight) inside a layer.

    `name` is the module's leaf name, the one PEFT `target_modules` match (`q_proj`, `c_attn`,
    `query_key_value`, `wi_0`, `gate_up_proj`, ...). Linears that read the same input tensor share
    an `input_group` (`attn_in` for q/k/v, `mlp_in` for gate/up, ...); in parallel-attention blocks
    (Falcon-7B, Phi-2) the attention and MLP inputs are one tensor, so they share one group.
    `per_expert` marks the linears of one routed expert; the layer holds `num_experts` copies.
    `parent` is the module path inside the layer (`self_attn`, `mlp`, `attention.output`,
    `layer.1.EncDecAttention`, ...), so dotted PEFT targets such as `mlp.c_proj` can be told apart.
    """

    name: str
    in_features: int
    out_features: int
    bias: bool
    input_group: str
    per_expert: bool = False
    parent: str = ""

    @property
    def path(self) -> str:
        """`parent.name`, the module's path inside its layer (`self_attn.q_proj`)."""
        return f"{self.parent}.{self.name}" if self.parent else self.name

    @property
    def params(self) -> int:
        """Weight plus bias of one copy."""
        return self.in_features * self.out_features + (self.out_features if self.bias else 0)


class SsmShape(NamedTuple):
    """The selective-scan mixer of an "ssm" stack, for the activation model.

    kind: "mamba" (Mamba 1: transformers MambaMixer, fused as mamba_ssm's mamba_inner_fn), "mamba_split"
    (Jamba's mixer: the same scan, but its dt/B/C RMSNorms keep it off mamba_inner_fn, so causal_conv1d_fn and
    selective_scan_fn run separately), "mamba2" (Mamba2Mixer, fused as mamba_split_conv1d_scan_combined).
    d_inner is the mixer width (expand x hidden), d_state the state size N, dt_rank the time-step rank
    (Mamba 1), heads / n_groups / chunk_size the Mamba-2 SSD shape."""

    kind: str
    d_inner: int
    d_state: int
    dt_rank: int = 0
    heads: int = 0
    n_groups: int = 1
    chunk_size: int = 256
    conv_kernel: int = 4


@dataclass(frozen=True)
class LayerStack:
    """`num_layers` identical layers: an encoder stack, a decoder stack, or a dense/MoE run of one.

    `linears` holds attention, the dense MLP (or one routed expert's linears, `per_expert=True`),
    shared-expert linears and cross-attention. Per-layer counts that are not linears: the router
    (`router_params`, including a shared-expert gate), all norms (`norm_params`) and anything else
    (`extra_params`: attention sinks, ...). `fused_experts` says the routed experts live in one
    module with 3-D weights, as transformers 5 builds Mixtral, Qwen MoE, DeepSeek and gpt-oss
    (`experts.gate_up_proj`, `experts.down_proj`); then that module, all experts together, is what
    ZeRO-3 / FSDP gathers at once (`Architecture.largest_module_params`). The per-expert `linears`
    keep the per-expert names LoRA configs use.
    """

    role: str
    num_layers: int
    linears: tuple[Linear, ...]
    num_experts: int = 0
    experts_per_token: int = 0
    router_params: int = 0
    norm_params: int = 0
    extra_params: int = 0
    attention_heads: int = 0
    kv_heads: int = 0
    head_dim: int = 0
    cross_attention: bool = False
    fused_experts: bool = False
    module_prefix: str = ""  # the layers' ModuleList path: "model.layers", "transformer.h", "encoder.block", ...
    # What mixes tokens in these layers: "attention" (softmax attention over the sequence), "ssm" (a
    # Mamba-style selective scan: no attention, its state grows with nothing), "linear_attention"
    # (Qwen3-Next's gated DeltaNet). attention_heads / head_dim describe only "attention" stacks.
    mixer: str = "attention"
    ssm: SsmShape | None = None  # the scan's shape where mixer == "ssm"

    # The counts below are cached on the instance (it is frozen): the memory estimate reads them on every
    # re-estimate the fix planner makes.
    @cached_property
    def expert_params(self) -> int:
        """Parameters of ONE routed expert (0 for a dense stack)."""
        return sum(lin.params for lin in self.linears if lin.per_expert)

    @cached_property
    def params_per_layer(self) -> int:
        """All parameters of one layer, every routed expert included."""
        shared = sum(lin.params for lin in self.linears if not lin.per_expert)
        experts = self.expert_params * max(self.num_experts, 1 if self.expert_params else 0)
        return shared + experts + self.router_params + self.norm_params + self.extra_params

    @property
    def active_params_per_layer(self) -> int:
        """Parameters one token passes through: only `experts_per_token` routed experts."""
        if not self.num_experts:
            return self.params_per_layer
        inactive = self.num_experts - self.experts_per_token
        return self.params_per_layer - inactive * self.expert_params

    @property
    def params(self) -> int:
        """All parameters of the stack."""
        return self.num_layers * self.params_per_layer


class Tower(NamedTuple):
    """A part of a multimodal model outside the language model's layer stacks, counted exactly but
    not layer by layer: a vision tower (`role="vision"`), the projector or connector that maps its
    output into the language model (`role="projector"`), an audio encoder (`role="audio"`).

    `params` are all of its parameters; `num_layers`, `hidden_size` and `linears_params` (the part in
    `nn.Linear` weights and biases, which PEFT's `all-linear` also adapts) describe it for people and
    for the estimate.
    """

    name: str
    role: str
    params: int
    num_layers: int = 0
    hidden_size: int = 0
    linears_params: int = 0
    # Sum of in_features + out_features over its nn.Linear modules: a rank-r LoRA on all of them adds
    # r x this (PEFT's "all-linear" reaches into vision towers and projectors too).
    lora_features: int = 0
    # The vision encoder's shape for its activations (0 where the config does not say): the MLP width, the
    # attention heads, the square input resolution and the patch size (image_size // patch_size squared tokens).
    intermediate_size: int = 0
    heads: int = 0
    image_size: int = 0
    patch_size: int = 0


# How an Architecture's parameter count was obtained (Architecture.sizing).
SIZING_EXACT = "exact"  # a per-family builder: the count transformers builds from the config
SIZING_CHECKPOINT = "checkpoint"  # read from the checkpoint's safetensors headers: exact for what it stores
SIZING_APPROXIMATE = "approximate"  # the generic tier: standard config keys of a model type without a builder


@dataclass(frozen=True)
class Architecture:
    """A whole model: layer stacks plus embeddings, final norm(s) and head.

    `embedding_params` counts token, learned-position and token-type embeddings (and T5's
    relative-attention-bias tables, which are position embeddings held by the first layer of each
    stack). `head_params` is an untied `lm_head` (0 when tied) plus any pooler. `final_norm_params`
    counts the norms outside the stacks (final norms, BERT's embedding LayerNorm).
    """

    name: str
    model_type: str
    kind: str
    hidden_size: int
    vocab_size: int
    intermediate_size: int
    hidden_act: str
    gated_mlp: bool
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    max_position_embeddings: int
    tie_word_embeddings: bool
    stacks: tuple[LayerStack, ...]
    embedding_params: int
    head_params: int
    final_norm_params: int
    source: str = "catalog"
    checkpoint_dtype: str | None = None  # config.json `torch_dtype` / `dtype`: how the weights are stored
    quantization: str | None = None  # `quantization_config.quant_method`: gptq, awq, bitsandbytes, fp8, ...
    # The single largest module outside the layers (embedding table or lm_head), see largest_module_params.
    largest_outer_module_params: int = field(default=0, compare=False)
    # Vision towers, projectors, audio encoders of a multimodal model: counted in total_params.
    towers: tuple[Tower, ...] = ()
    # Parameters in the layers that no LayerStack describes one by one (Mamba's conv, A_log, D, ...) are in
    # the stacks' extra_params; `other_params` holds what sits outside every layer and is not an embedding,
    # head or norm (mllama's cross-attention gates live in their layers, Llama 4's router in its stack).
    other_params: int = 0
    sizing: str = SIZING_EXACT  # SIZING_EXACT / SIZING_CHECKPOINT / SIZING_APPROXIMATE
    sizing_note: str = ""  # why the count is approximate, or which files it was read from
    # The checkpoint's own count (safetensors headers) when read; total_params then reports it.
    checkpoint_params: int | None = None
    # config.json's top-level model_type when it differs from the language model's (gemma3 for gemma3_text).
    config_model_type: str = ""
    # Dropout probabilities config.json names for this model, as (kind, p) pairs: "resid" (resid_pdrop,
    # hidden_dropout, hidden_dropout_prob), "attn" (attention_dropout, attn_pdrop, attention_probs_dropout_prob),
    # "embedding" (embd_pdrop, embed_dropout). They override the family defaults of families.json (microsoft/phi-2
    # trains with resid_pdrop 0.1, PhiConfig's default is 0.0). Empty: the family defaults.
    dropout: tuple[tuple[str, float], ...] = ()

    # The counts below are cached on the instance (it is frozen): the memory estimate reads them on every
    # re-estimate the fix planner makes.
    @cached_property
    def counted_params(self) -> int:
        """The parameters the stacks, embeddings, head, norms and towers add up to."""
        return sum(stack.params for stack in self.stacks) + self.outside_stacks_params

    @property
    def outside_stacks_params(self) -> int:
        """Embeddings, head, final norm, other parameters and the towers: what every token uses besides the layers."""
        return (self.embedding_params + self.head_params + self.final_norm_params + self.other_params
                + sum(t.params for t in self.towers))

    @cached_property
    def total_params(self) -> int:
        """Every parameter, tied weights counted once (what `model.num_parameters()` reports), towers
        included; the checkpoint's own count when it was read from safetensors headers."""
        if self.checkpoint_params is not None:
            return self.checkpoint_params
        return self.counted_params

    @property
    def tower_params(self) -> int:
        """Parameters of the vision towers, projectors and other encoders outside the language model."""
        return sum(t.params for t in self.towers)

    @property
    def approximate(self) -> bool:
        """True when the count comes from the generic tier (standard keys only), not a family builder."""
        return self.sizing == SIZING_APPROXIMATE

    @cached_property
    def num_layers(self) -> int:
        """Layers in all stacks (encoder plus decoder for T5)."""
        return sum(stack.num_layers for stack in self.stacks)

    @property
    def is_moe(self) -> bool:
        """True when any stack routes tokens to experts."""
        return any(stack.num_experts for stack in self.stacks)

    @property
    def active_params_per_token(self) -> int:
        """Parameters one token uses: all of them, except routed experts it is not sent to."""
        return (sum(stack.num_layers * stack.active_params_per_layer for stack in self.stacks)
                + self.outside_stacks_params)

    @cached_property
    def largest_module_params(self) -> int:
        """Parameters of the largest module that holds parameters directly (not through children).

        This is DeepSpeed's `largest_layer_params` in its ZeRO-3 memory estimator: usually the
        token embedding or the untied `lm_head`; for gpt-oss the fused expert block of a layer.
        """
        best = self.largest_outer_module_params
        for stack in self.stacks:
            for lin in stack.linears:
                best = max(best, lin.params)
            if stack.fused_experts:
                best = max(best, stack.expert_params * stack.num_experts)
        return best

    @staticmethod
    def _matching(target: str | Iterable[str] | None) -> Callable[[LayerStack, Linear], bool]:
        if target is None or target == "all-linear":
            return lambda stack, lin: True
        if isinstance(target, str):
            pattern = re.compile(target)
            return lambda stack, lin: (pattern.fullmatch(lin.name) is not None
                                       or pattern.fullmatch(_full_name(stack, lin)) is not None)
        # PEFT: a list entry matches a module whose dotted name is the entry or ends in "." + entry.
        targets = list(target)

        def match(stack: LayerStack, lin: Linear) -> bool:
            full = _full_name(stack, lin)
            return any(t == lin.name or full == t or full.endswith("." + t) for t in targets)
        return match

    def linear_params(self, names: set[str] | str | None = None) -> int:
        """Parameters (weights and biases) of the layer linears selected by `names`, every layer and expert.

        `names` follows `lora_params`' `target`: None or "all-linear" selects every linear in the
        layers (never the embedding or `lm_head`); a set or list selects by name (leaf or dotted
        suffix); a plain string is a regular expression (see `lora_params`).
        """
        match = self._matching(names)
        total = 0
        for stack in self.stacks:
            copies = max(stack.num_experts, 1)
            for lin in stack.linears:
                if match(stack, lin):
                    total += stack.num_layers * lin.params * (copies if lin.per_expert else 1)
        if names is None or names == "all-linear":
            total += sum(t.linears_params for t in self.towers)  # vision towers and projectors: nn.Linear too
        return total

    @property
    def default_lora_targets(self) -> tuple[str, ...] | None:
        """PEFT's `target_modules` when a LoRA config names none, or None where PEFT has no default
        for this `model_type` (PEFT then refuses to build the adapter)."""
        # PEFT looks up the model's config.model_type: the outer one of a multimodal model (gemma3,
        # llava, ...), which its table mostly lacks.
        targets = PEFT_DEFAULT_LORA_TARGETS.get(self.config_model_type or self.model_type)
        return tuple(targets) if targets is not None else None

    def lora_params(self, rank: int, target: str | Iterable[str] | None = "all-linear", *,
                    include_experts: bool = True) -> int:
        """Trainable LoRA parameters: `rank * (in + out)` for every targeted linear, in every layer.

        PEFT semantics, simplified to leaf names:

        * None: PEFT's default for the model type (`default_lora_targets`, e.g. `q_proj`, `v_proj`
          for Llama); a `ValueError` where PEFT has none.

        * `"all-linear"`: every linear inside the layers, not the output head (as PEFT does), and those
          of vision towers and projectors (`Tower.lora_features`).
          Routers (MoE gates) are not counted as linears here, so they are not targeted.
        * a list of names (`["q_proj", "v_proj"]`): linears whose dotted module name equals an
          entry or ends in `.` + entry, as in PEFT: `q_proj`, `self_attn.q_proj` and
          `model.layers.0.self_attn.q_proj` all select q_proj (in every layer). GPT-2's `c_proj`
          hits both attention and MLP, `mlp.c_proj` only the MLP, as in PEFT.
        * any other string: a regular expression, `re.fullmatch`-ed (as PEFT does) against the full
          module name of the layer's copy, `model.layers.0.self_attn.q_proj`, or against the leaf
          name alone (`q_proj|v_proj`), which PEFT would not accept but people write.

        Routed experts count once per expert, as PEFT adapts every expert when they are separate
        `nn.Linear` modules (transformers 4.x names: Mixtral `w1`/`w2`/`w3`, Qwen and DeepSeek
        `gate_proj`/`up_proj`/`down_proj`). Where the experts are fused 3-D parameters
        (`LayerStack.fused_experts`: transformers 5, and gpt-oss always) `target_modules` cannot reach
        them and only PEFT's `target_parameters` adapts them; `include_experts=False` counts that case.
        """
        if target is None:
            target = self.default_lora_targets
            if target is None:
                raise ValueError(f"PEFT has no default LoRA target_modules for model_type {self.model_type!r}; "
                                 "the config must name target_modules")
        match = self._matching(target)
        total = 0
        for stack in self.stacks:
            copies = max(stack.num_experts, 1)
            for lin in stack.linears:
                if lin.per_expert and not include_experts:
                    continue
                if match(stack, lin):
                    one = rank * (lin.in_features + lin.out_features)
                    total += stack.num_layers * one * (copies if lin.per_expert else 1)
        if target == "all-linear":
            total += rank * sum(t.lora_features for t in self.towers)
        return total

    def summary(self) -> str:
        """One line for people, e.g.
        `Llama-3.1-8B: decoder, 32 layers, hidden 4,096, 32 heads (8 KV), vocab 128,256, 8.03B params`."""
        heads = f"{self.num_attention_heads} heads"
        if self.num_key_value_heads != self.num_attention_heads:
            heads += f" ({self.num_key_value_heads} KV)"
        parts = [self.kind, f"{self.num_layers} layers", f"hidden {self.hidden_size:,}",
                 heads if self.num_attention_heads else "no attention (state-space layers)",
                 *([f"vocab {self.vocab_size:,}"] if self.vocab_size else []), f"{_billions(self.total_params)} params"]
        if self.is_moe:
            stack = next(s for s in self.stacks if s.num_experts)
            parts.append(f"{stack.num_experts} experts, top-{stack.experts_per_token}, "
                         f"{_billions(self.active_params_per_token)} active")
        for tower in self.towers:
            parts.append(f"{tower.role} {_billions(tower.params)}")
        if self.sizing == SIZING_APPROXIMATE:
            parts.append("approximate (generic sizing)")
        elif self.sizing == SIZING_CHECKPOINT:
            parts.append("count from the checkpoint")
        return f"{self.name}: " + ", ".join(parts)

    def linear_names(self) -> list[str]:
        """Leaf names of the layer linears, in layer order, each once (what `target_modules` can name)."""
        seen: dict[str, None] = {}
        for stack in self.stacks:
            for lin in stack.linears:
                seen.setdefault(lin.name)
        return list(seen)


# PEFT's TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING (peft/utils/constants.py), for the model
# types trainlint builds: what LoraConfig(target_modules=None) adapts.
PEFT_DEFAULT_LORA_TARGETS: dict[str, tuple[str, ...]] = {
    "t5": ("q", "v"), "mt5": ("q", "v"),
    "gpt2": ("c_attn",),
    "bert": ("query", "value"), "roberta": ("query", "value"), "xlm-roberta": ("query", "value"),
    "llama": ("q_proj", "v_proj"), "mistral": ("q_proj", "v_proj"), "mixtral": ("q_proj", "v_proj"),
    "falcon": ("query_key_value",), "RefinedWeb": ("query_key_value",), "RefinedWebModel": ("query_key_value",),
    "phi": ("q_proj", "v_proj", "fc1", "fc2"),
    "gemma": ("q_proj", "v_proj"), "gemma2": ("q_proj", "v_proj"), "gemma3_text": ("q_proj", "v_proj"),
    "qwen2": ("q_proj", "v_proj"), "qwen3": ("q_proj", "v_proj"),
    "gpt_neox": ("query_key_value",),
    "bart": ("q_proj", "v_proj"), "bloom": ("query_key_value",), "opt": ("q_proj", "v_proj"),
    "gptj": ("q_proj", "v_proj"), "gpt_neo": ("q_proj", "v_proj"), "electra": ("query", "value"),
    "deberta-v2": ("query_proj", "value_proj"), "deberta": ("in_proj",), "llama4": ("q_proj", "v_proj"),
    "gpt_bigcode": ("c_attn",), "mpt": ("Wqkv",), "stablelm": ("q_proj", "v_proj"), "codegen": ("qkv_proj",),
}


def _billions(n: int) -> str:
    return f"{n / 1e9:.2f}B" if n >= 1e9 else f"{n / 1e6:.0f}M"


def _full_name(stack: LayerStack, lin: Linear) -> str:
    """The module name PEFT sees for this linear in the stack's first layer (expert index omitted)."""
    prefix = f"{stack.module_prefix}.0." if stack.module_prefix else ""
    return prefix + lin.path
