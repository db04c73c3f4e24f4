"""The per-GPU memory of one training step, as pure functions of a resolved run.

Every term is documented in docs/memory-model.md with its source. Byte counts are what the PyTorch
caching allocator would count (`torch.cuda.max_memory_allocated`): live tensor storages.

The step is modelled phase by phase, as the HF Trainer (and Lightning, Accelerate) runs it:
forward (activations saved for backward pile up; under autocast the bf16 weight copies are cached),
loss (logits, HF's fp32 upcast, log-softmax), backward (the loss gradient over the vocabulary at its
start; parameter gradients pile up as activations are freed), optimizer step (gradients, states and
the optimizer's temporaries). The peak is the largest phase.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from operator import attrgetter
from typing import Any, NamedTuple

from trainlint.catalog.architecture import Architecture
from trainlint.catalog.files import read_data
from trainlint.plan import Peft, Precision

GIB = 2**30
BYTES = {"fp32": 4, "bf16": 2, "fp16": 2}
ROUND = 512  # the caching allocator's granularity


# ---------------------------------------------------------------------------------------------
# Data tables
# ---------------------------------------------------------------------------------------------

class OptimizerSpec(NamedTuple):
    """An optimizer's memory: its state per parameter and the temporaries of its step."""
    name: str
    label: str
    state_factor: float = 0.0  # parameter-sized state tensors (in the state dtype)
    state_bytes: float | None = None  # fixed bytes per parameter (quantized states)
    step_temp_factor: float = 0.0  # parameter-sized temporaries during step()
    paged: bool = False
    factored: bool = False
    paged_from: int = 0  # a paged optimizer's tensors with fewer elements get ordinary device buffers (bitsandbytes)


@lru_cache(maxsize=1)
def _optimizer_entries() -> tuple[list[dict], dict[str, int]]:
    """optimizers.json's entries, and each one's position by its name and aliases (as `_opt_key` writes them)."""
    entries = json.loads(read_data("optimizers.json"))["optimizers"]
    return entries, {_opt_key(alias): i for i, entry in enumerate(entries)
                     for alias in (entry["name"], *entry.get("aliases", ()))}


@lru_cache(maxsize=None)
def _optimizer(position: int) -> OptimizerSpec:
    """The spec of the entry at `position`, made on first use (a check asks for one or two of the table's)."""
    entry = _optimizer_entries()[0][position]
    return OptimizerSpec(entry["name"], entry["label"], entry.get("state_factor", 0.0), entry.get("state_bytes"),
                         entry.get("step_temp_factor", 0.0), entry.get("paged", False), entry.get("factored", False),
                         entry.get("paged_from", 0))


def _opt_key(name: str) -> str:
    return name.strip().lower().replace("-", "_")


def optimizer_spec(name: str) -> OptimizerSpec | None:
    """The optimizer behind a framework's name (HF `optim`, DeepSpeed `optimizer.type`, a class path)."""
    positions = _optimizer_entries()[1]
    key = _opt_key(name)
    position = positions[key] if key in positions else positions.get(key.rsplit(".", 1)[-1])
    return _optimizer(position) if position is not None else None


class Family(NamedTuple):
    """How an architecture family's layers keep activations: norms, rotary, activation and dropout."""
    norm: str = "rms"
    norms: int = 2
    qk_norm: str | None = None
    rope: bool = True
    act_saved: int = 1
    dropout_attn: float = 0.0
    dropout_resid: float = 0.0
    dropout_embedding: float = 0.0
    parallel: bool = False
    resid_dropouts: int | None = None  # residual dropouts per layer (None: one per branch, one if parallel)


def model_family(arch: Architecture) -> Family:
    """The family traits with the dropout probabilities the model's own config.json names (Architecture.dropout)
    in place of the family defaults."""
    fam = family(arch.model_type)
    named = dict(getattr(arch, "dropout", ()) or ())
    if not named:
        return fam
    return fam._replace(dropout_resid=named.get("resid", fam.dropout_resid),
                   dropout_attn=named.get("attn", fam.dropout_attn),
                   dropout_embedding=named.get("embedding", fam.dropout_embedding))


@lru_cache(maxsize=None)
def family(model_type: str) -> Family:
    data = json.loads(read_data("families.json"))
    merged = dict(data["default"])
    merged.update(data["families"].get(model_type, {}))
    dropout = merged.pop("dropout", {}) or {}
    return Family(norm=merged["norm"], norms=merged["norms"], qk_norm=merged["qk_norm"], rope=merged["rope"],
                  act_saved=merged["act_saved"], parallel=merged["parallel"],
                  resid_dropouts=merged.get("resid_dropouts"),
                  dropout_attn=dropout.get("attn", 0.0), dropout_resid=dropout.get("resid", 0.0),
                  dropout_embedding=dropout.get("embedding", 0.0))


# ---------------------------------------------------------------------------------------------
# The run, resolved
# ---------------------------------------------------------------------------------------------

class Run(NamedTuple):
    """Everything the memory model needs about one training run: model, batch, precision, sharding, ..."""
    arch: Architecture
    micro_batch: int
    seq_len: int
    precision: Precision
    optimizer: OptimizerSpec
    zero_stage: int = 0
    fsdp: str | None = None
    offload_optimizer: str | None = None
    offload_params: str | None = None
    world: int = 1
    tp: int = 1
    pp: int = 1
    cp: int = 1
    gpus_per_node: int = 8
    grad_ckpt: str = "none"
    attn: str = "sdpa"
    peft: Peft | None = None
    fused_loss: bool = False
    task: str = "sft"
    deepspeed: bool = False  # the DeepSpeed engine owns precision and optimizer (master weights, flat buffers)
    reduce_bucket: int | None = None  # DeepSpeed reduce_bucket_size (elements)
    overlap_comm: bool | None = None
    activation_offload: bool = False
    grad_accum: int = 1
    kbit_fp32_upcast: bool = False  # PEFT's prepare_model_for_kbit_training: the non-quantized rest upcast to fp32
    head: str = "lm"  # lm | seq_cls | token_cls (a classification head has no vocabulary logits)
    loss_kernel: str | None = None  # liger | cce | trl | torchtune_chunked(_compiled); None: HF's loss (or Liger if fused_loss)
    liger_accum_fp32: bool = False  # Liger accum_dtype=float32 for the head-weight gradient
    optimizer_in_bwd: bool = False  # the step runs per parameter in backward (torchtune, layer-wise GaLore/APOLLO)
    grads_kept: bool = False  # zero_grad(set_to_none=False): the zeroed gradients stay allocated between steps
    momentum: float | None = None  # optim_args momentum for SGD / RMSprop (None: the table's state count)
    lowrank: tuple[str, int, Any] | None = None  # ("galore" | "apollo", rank, target modules) for GaLore / APOLLO
    ref_logps_precomputed: bool = False  # DPO reference log-probs computed before training: no reference model
    ref_model_offload: bool = False  # the reference model lives on the host between its forwards
    ref_model_kept: bool = False  # with PEFT: a reference model of its own beside the adapter (TRL >= 0.28 keeps it)
    image_tokens: int = 0  # vision-tower tokens per micro-batch row (images x patches); 0: not modelled
    ssm_path: str = "fused"  # Mamba layers: "fused" (mamba_ssm + causal_conv1d CUDA kernels) or "torch" (slow path)
    kv_expanded: bool = False  # k and v repeated to every query head before attention (LitGPT)
    logits_out_bytes: int = 0  # bytes per logit the model hands the loss (Fabric's true precisions: fp32); 0: compute
    keeps_logits: bool = False  # the training loop keeps the last step's logits referenced (LitGPT fit())
    fused_activation: bool = False  # the MLP's activation is one op saving its input (LitGPT's F.gelu(approximate=))
    bnb_saves_input: bool = False  # bitsandbytes < 0.43.2: every 4-bit linear keeps its input for backward
    quantized_head: bool = False  # the output head is a 4-bit linear too (Fabric's BitsandbytesPrecision replaces all)
    dequant_copies: int = 1  # 16-bit copies of a 4-bit weight MatMul4Bit makes for its matmul (2: fp16 state -> bf16)
    loss_chunks: int = 8  # chunks of torchtune's chunked losses (num_output_chunks)
    # The phases around the step (memory/phases.py): what evaluation, loading and saving do.
    eval_batch: int = 0  # rows of one evaluation batch per GPU (0: no evaluation)
    eval_predictions: str = "none"  # what evaluation keeps per sample: none | logits | token_ids | generated
    eval_kept_rows: int = 0  # prediction rows on the GPU when evaluation keeps the most (gathered over ranks)
    gen_length: int = 0  # predict_with_generate: the generated sequence length (0: no generation)
    gen_beams: int = 1
    precompute_batch: int = 0  # TRL precompute_ref_log_probs: rows of its no-grad forward (0: none)
    save_mode: str = "local"  # local | fsdp_full | fsdp_sharded | zero3_16bit | zero3_shards
    save_optimizer: bool = True  # checkpoints hold the optimizer state (not save_only_model)
    low_cpu_mem_usage: bool | None = None  # from_pretrained low_cpu_mem_usage (None: transformers' default)

    @property
    def dp(self) -> int:
        return max(1, self.world // max(1, self.tp * self.pp * self.cp))

    @property
    def tokens(self) -> int:
        return self.micro_batch * max(1, self.seq_len // max(1, self.cp))


class Term(NamedTuple):
    """One allocation the memory model counts, in bytes, with what it assumes."""
    key: str
    label: str
    bytes: float
    assumption: str


class Estimate(NamedTuple):
    """The memory model's result: the terms resident at the peak, and each phase's peak."""
    terms: list[Term]  # resident at the peak, allocator-counted
    peak_allocated: int
    peak_phase: str
    phases: dict[str, int]
    host_bytes: int
    paged_bytes: int
    assumptions: list[str]


def _round(n: float) -> int:
    n = int(n)
    return n if n <= 0 else ((n + ROUND - 1) // ROUND) * ROUND


# ---------------------------------------------------------------------------------------------
# Parameters, gradients, optimizer states
# ---------------------------------------------------------------------------------------------

@dataclass
class States:
    """The per-GPU bytes of weights, gradients, master weights and optimizer states, with notes."""
    weights: float = 0.0
    weights_note: str = ""
    grads: float = 0.0
    grads_note: str = ""
    master: float = 0.0
    optimizer: float = 0.0
    optimizer_note: str = ""
    buffers: float = 0.0  # DDP buckets, ZeRO buckets, gathered ZeRO-3/FSDP units
    buffers_note: str = ""
    step_temp: float = 0.0
    host: float = 0.0
    paged: float = 0.0
    trainable: int = 0
    amp_weight_cache: float = 0.0  # bf16 copies of trainable fp32 linear weights kept for backward
    amp_frozen: bool = False  # the copies are per-call casts of frozen weights (not autocast-cached)


ADAPTER_METHODS = ("adapter", "adapter_v2")


def _adapter_tensors(run: Run) -> list[tuple[int, int, bool]]:
    """(elements, count, new) of each trainable tensor of LitGPT's adapter methods (data/framework_semantics.json
    "litgpt" adapter, carried by Peft): v1 adds adapter_wte [prompt_length, hidden] and gating_factor [n_head] to the attention of
    every layer from adapter_start_layer; v2 also an adapter_bias and adapter_scale [out] on every linear (the
    layers', the MoE gate, the head) and trains the norms (norm_1, norm_2, ln_f: weight, and bias for LayerNorm).
    `new`: not a parameter of the base model. Empty for other methods."""
    peft = run.peft
    if peft is None or peft.method not in ADAPTER_METHODS:
        return []
    arch = run.arch
    prompt, start = max(0, peft.adapter_prompt), max(0, peft.adapter_start)
    h = arch.hidden_size
    layers = sum(stack.num_layers for stack in arch.stacks)
    adapted = max(0, layers - start)
    out: list[tuple[int, int, bool]] = [(prompt * h, adapted, True), (arch.num_attention_heads, adapted, True)]
    if peft.method == "adapter_v2":
        for stack in arch.stacks:
            copies = max(stack.num_experts, 1)
            for lin in stack.linears:
                out.append((2 * lin.out_features, stack.num_layers * (copies if lin.per_expert else 1), True))
            if stack.num_experts:
                out.append((2 * stack.num_experts, stack.num_layers, True))  # the router (gate)
        out.append((2 * arch.vocab_size, 1, True))  # lm_head
        per_norm = h * (2 if model_family(arch).norm == "layer" else 1)
        out.append((per_norm, 2 * layers + 1, False))
    return out


def _adapter_saved(run: Run, stack, T: float) -> tuple[float, float]:
    """(bytes every adapted layer of `stack` saves beyond the base's, layers adapted) for LitGPT's adapter methods.
    v1 (layers from adapter_start_layer): `y + gating_factor * sdpa(q, ak, av)` keeps the prefix attention's output
    (its SDPA and the gating product save it) and its log-sum-exp. v2 (every layer): each AdapterV2Linear keeps
    `linear(x) + adapter_bias` for adapter_scale's gradient, fp32 under autocast (a 16-bit output plus an fp32
    bias)."""
    peft = run.peft
    if peft is None or peft.method not in ADAPTER_METHODS:
        return 0.0, 0.0
    arch = run.arch
    start = max(0, peft.adapter_start)
    c = BYTES[run.precision.compute_dtype]
    amp = run.precision.autocast is not None and run.precision.param_dtype != run.precision.compute_dtype
    heads = stack.attention_heads or arch.num_attention_heads
    head_dim = stack.head_dim or arch.head_dim
    v1 = T * heads * head_dim * c + T * heads * 4
    adapted = max(0.0, stack.num_layers - max(0, start - _layers_before(arch, stack)))
    if peft.method == "adapter":
        return v1, adapted
    o = 4 if amp else c
    v2 = 0.0
    for lin in stack.linears:
        rows = T * (stack.experts_per_token or 1) if lin.per_expert and stack.num_experts else T
        v2 += rows * lin.out_features * o
    if stack.num_experts:
        v2 += T * stack.num_experts * o
    # every layer gets v2's share, the adapted ones v1's too: spread as one average per layer
    total = v2 * stack.num_layers + v1 * adapted
    return total / max(1, stack.num_layers), float(stack.num_layers)


def _head_adapter_saved(run: Run, T: float) -> float:
    """LitGPT adapter v2's head (AdapterV2Linear, applied per 128-token chunk): every chunk keeps
    `lm_head(x) + adapter_bias` for adapter_scale's gradient, [T, vocab] in all (fp32 under autocast)."""
    if run.peft is None or run.peft.method != "adapter_v2":
        return 0.0
    amp = run.precision.autocast is not None and run.precision.param_dtype != run.precision.compute_dtype
    return T * run.arch.vocab_size / run.tp * (4 if amp else BYTES[run.precision.compute_dtype])


def _layers_before(arch: Any, stack: Any) -> int:
    before = 0
    for st in arch.stacks:
        if st is stack:
            return before
        before += st.num_layers
    return before


def _head_lora_saved(run: Run, T: float) -> float:
    """What a LoRA on the output head saves for backward (LitGPT LoRALinear.forward: `lora_dropout(x) @ A.T @ B.T`
    beside the frozen head): with dropout its 1-byte mask and the dropped input the first matmul saves; without,
    the input's 16-bit cast under autocast (shared with the head otherwise); and the [T, r] product B's matmul
    saves."""
    peft = run.peft
    if peft is None or not peft.head_rank:
        return 0.0
    h = run.arch.hidden_size
    c = BYTES[run.precision.compute_dtype]
    amp = run.precision.autocast is not None and run.precision.param_dtype != run.precision.compute_dtype
    if peft.dropout > 0:
        own = T * h * (c + 1)
    else:
        own = T * h * c if amp else 0.0
    return own + T * peft.head_rank * c


def _lora_targets(peft: Peft) -> Any:
    targets = peft.target_modules
    if isinstance(targets, (list, tuple)) and any(t in ("all", "all-linear") for t in targets):
        targets = "all-linear"
    return targets


def _quantized_bytes_per_param(bits: int, double_quant: bool) -> float:
    """bitsandbytes storage: NF4 = 0.5 B + one fp32 absmax per 64 weights (0.0625 B), or with double
    quantization an 8-bit absmax plus one fp32 per 256 blocks (~0.0159 B); LLM.int8 = 1 B + an fp32
    scale per output row (negligible)."""
    if bits == 4:
        return 0.5 + (1 / 64 + 4 / (64 * 256) if double_quant else 4 / 64)
    return 1.0


def model_states(run: Run) -> States:
    arch = run.arch
    prec = run.precision
    wb = BYTES[prec.param_dtype]
    total = arch.total_params
    if run.head != "lm" and arch.kind == "decoder":
        # A classification head replaces the untied lm_head with a num_labels-wide score.
        total -= arch.head_params - 2 * arch.hidden_size
    s = States()
    model_split = run.tp * run.pp

    if run.peft is not None:
        targets = _lora_targets(run.peft)
        adapter = _adapter_tensors(run)
        if run.peft.method in ADAPTER_METHODS:
            lora = sum(size * n for size, n, _ in adapter)
        else:
            try:
                lora = arch.lora_params(run.peft.rank, targets)
            except ValueError:
                lora = arch.lora_params(run.peft.rank, "all-linear")
        if run.peft.method == "dora":
            lora += arch.linear_params(targets if targets is not None else "all-linear") // max(1, arch.hidden_size)
        # LoRA on the output head (LitGPT lora_head, litgpt/lora.py GPT.__init__: create_lora_linear(n_embd,
        # padded_vocab_size, use_r=lora_head)): A [r, hidden] and B [vocab, r].
        lora += run.peft.head_rank * (arch.hidden_size + arch.vocab_size) // max(1, run.tp)
        saved = 0
        for name in run.peft.modules_to_save:
            if name in ("embed_tokens", "wte", "word_embeddings", "lm_head", "embed_out"):
                saved += arch.vocab_size * arch.hidden_size
        trainable = lora + saved
        # PEFT's autocast_adapter_dtype keeps adapters in fp32 over a 16-bit base; TRL 1.x casts the adapters of
        # a quantized base to bf16 (sft_trainer.py / dpo_trainer.py).
        ab = 2 if run.peft.adapter_dtype in ("bf16", "fp16") else 4
        if run.peft.base_bits:
            linear = arch.linear_params(None)
            if run.quantized_head and not arch.tie_word_embeddings:
                linear += arch.vocab_size * arch.hidden_size  # the head is a 4-bit linear as well
            qb = _quantized_bytes_per_param(run.peft.base_bits, run.peft.double_quant)
            # Embeddings, norms and the head are not quantized: PEFT's prepare_model_for_kbit_training
            # (called by TRL, Axolotl and HF examples) upcasts them to fp32; elsewhere they stay 16-bit.
            other_bytes = 4 if run.kbit_fp32_upcast else (2 if prec.param_dtype == "fp32" and prec.autocast else wb)
            base = linear * qb + (total - linear) * other_bytes
            s.weights_note = (f"{run.peft.base_bits}-bit base ({qb:.3f} B/param, bitsandbytes) + "
                              f"{other_bytes} B/param for embeddings and norms"
                              + (" (prepare_model_for_kbit_training upcast)" if run.kbit_fp32_upcast else
                                 " (the load dtype)") + f" + {'bf16' if ab == 2 else 'fp32'} adapters")
        else:
            base = total * wb
            s.weights_note = f"frozen base in {prec.param_dtype} + {'bf16' if ab == 2 else 'fp32'} adapters"
        # LitGPT adapter v2 trains the base's norms: held once, in the adapters' dtype.
        in_base = sum(size * n for size, n, new in adapter if not new)
        s.weights = (base - in_base * (other_bytes if run.peft.base_bits else wb)) / model_split + trainable * ab
        s.trainable = trainable
        s.grads = trainable * ab
        s.grads_note = f"{'bf16' if ab == 2 else 'fp32'} adapter gradients only (the base is frozen)"
        state_dtype: float = ab
        if prec.param_dtype == "fp32" and prec.autocast and not run.peft.base_bits:
            # Frozen fp32 weights are not cached by autocast (ATen cached_cast caches only leaves that require
            # grad): each linear casts per call and saves the cast for its input gradient.
            s.amp_weight_cache = arch.linear_params(None) / model_split * 2 + _head_cast(run)
            s.amp_frozen = True
    else:
        trainable = total
        s.trainable = trainable
        if run.deepspeed and prec.master_weights:
            s.weights = total * wb / model_split
            s.weights_note = f"{prec.param_dtype} weights held by DeepSpeed"
            s.master = total * 4 / model_split
            # 16-bit gradients plus DeepSpeed's fp32 gradient partition for the optimizer.
            s.grads = total * (wb + 4) / model_split
            s.grads_note = f"{prec.param_dtype} gradients + DeepSpeed's fp32 gradient copy"
            state_dtype = 4
        elif prec.linears and prec.linears != prec.param_dtype:
            # The layers' linears in one dtype, the rest (embeddings, head, norms, MoE gates) in param_dtype
            # (axolotl: loaded in bf16, the rest upcast to fp32; catalog/semantics.py). Gradients and the
            # optimizer's states follow each parameter's dtype; no master copy.
            lb = BYTES[prec.linears]
            linear = arch.linear_params(None)
            held = linear * lb + (total - linear) * wb
            s.weights = s.grads = held / model_split
            s.weights_note = f"{prec.linears} layer linears + {prec.param_dtype} embeddings, head and norms"
            s.grads_note = "gradients in each parameter's dtype"
            state_dtype = held / max(1, total)
        else:
            s.weights = total * wb / model_split
            s.weights_note = f"{prec.param_dtype} weights"
            s.grads = total * wb / model_split
            s.grads_note = f"{prec.param_dtype} gradients (same dtype as the weights)"
            state_dtype = wb if not prec.master_weights else 4
            if prec.master_weights:
                s.master = total * 4 / model_split
        if prec.param_dtype == "fp32" and prec.autocast:
            # torch.autocast caches a 16-bit copy of every fp32 weight that requires grad, and
            # the linears save it for backward: 2 B/param from forward until backward frees it. Linears held in
            # 16 bits already need no copy; the fp32 head still does.
            linears_cast = 0.0 if prec.linears and prec.linears != "fp32" else arch.linear_params(None) / model_split * 2
            s.amp_weight_cache = linears_cast + _head_cast(run)
    if run.fsdp is not None and prec.autocast:
        # FSDP mixed precision gathers the parameters already in the 16-bit param_dtype (accelerate sets it from
        # mixed_precision): autocast has nothing to cast or cache; the gathered units are the buffers below.
        s.amp_weight_cache = 0.0
        s.amp_frozen = False

    opt = run.optimizer
    if opt.state_bytes is not None:
        s.optimizer = trainable * opt.state_bytes / model_split
        s.optimizer_note = f"{opt.label}: {opt.state_bytes:g} B/param"
    elif opt.factored:
        # Adafactor: fp32 row and column statistics per matrix, full-size fp32 statistics per vector.
        s.optimizer = _adafactor_states(arch, run) / model_split
        s.optimizer_note = f"{opt.label}: row/column statistics only"
    else:
        factor = opt.state_factor
        if run.momentum is not None and opt.name in ("sgd", "sgd_momentum", "rmsprop"):
            # torch SGD keeps momentum_buffer only with momentum != 0; RMSprop keeps square_avg, plus
            # momentum_buffer with momentum > 0 (optim_args momentum=..., nesterov=...).
            base_states = 0 if opt.name.startswith("sgd") else 1
            factor = base_states + (1 if run.momentum > 0 else 0)
        s.optimizer = trainable * factor * state_dtype / model_split
        s.optimizer_note = f"{opt.label}: {factor:g} state(s) x {state_dtype:.3g} B/param"
        if run.lowrank is not None and run.peft is None:
            s.optimizer, s.optimizer_note = _lowrank_states(run, run.lowrank, opt, factor, state_dtype)
    if opt.paged:
        # bitsandbytes pages the state of tensors of at least `paged_from` elements; smaller ones (LoRA's A and B at
        # the usual ranks) get ordinary device buffers (Optimizer8bit.get_state_buffer).
        small = _params_in_small_tensors(run, opt.paged_from) if run.peft is not None else 0
        device = s.optimizer * small / max(1, trainable)
        s.paged, s.optimizer = s.optimizer - device, device
        s.optimizer_note += (" (paged: in CUDA unified memory, outside the PyTorch allocator"
                             + (f"; tensors under {opt.paged_from:,} elements on the device)" if device else ")"))
    if not (run.deepspeed and prec.master_weights):
        s.step_temp = trainable * opt.step_temp_factor * state_dtype / model_split
        if opt.factored:
            s.step_temp = _adafactor_temporaries(arch, run, prec) / model_split
    if run.lowrank is not None and run.peft is None:
        s.step_temp = 0.0  # the update runs on the projected (low-rank) gradient
    if run.optimizer_in_bwd:
        # The step runs in a post-accumulate-grad hook per parameter and frees that gradient (torchtune
        # optimizer_in_bwd; the Trainer's layer-wise GaLore/APOLLO): at most the largest gradient exists at once.
        largest = arch.largest_module_params if run.peft is None else max(1, trainable // max(1, arch.num_layers))
        s.grads = min(s.grads, largest * (s.grads / max(1, trainable)))
        s.grads_note += "; freed parameter by parameter by the optimizer step in backward"
        if not opt.factored:
            # One optimizer per parameter (torchtune `config.instantiate(cfg_optimizer, [p])`): a foreach step's
            # tensor-list temporary (torch._foreach_sqrt) is that one parameter's, the largest at most.
            s.step_temp = min(s.step_temp, largest * opt.step_temp_factor * state_dtype / model_split)
    _shard(run, s, trainable)
    return s


def _params_in_small_tensors(run: Run, limit: int) -> int:
    """Trainable parameters of a PEFT run held in tensors of fewer than `limit` elements: each adapted linear's A
    (r x in) and B (out x r), in every layer (and expert); modules_to_save (embeddings, head) are larger. LitGPT's
    LoRAQKVLinear (litgpt/lora.py) holds one A of (r x enabled projections) x in and one B of the enabled
    projections' summed width x r for its fused q/k/v linear."""
    if not limit or run.peft is None:
        return 0
    if run.peft.method in ADAPTER_METHODS:
        return sum(size * n for size, n, _ in _adapter_tensors(run) if size < limit)
    arch = run.arch
    targets = _lora_targets(run.peft)
    try:
        match = arch._matching(targets if targets is not None else (arch.default_lora_targets or "all-linear"))
    except (ValueError, re.error):
        return 0
    r = run.peft.rank
    small = 0
    for stack in arch.stacks:
        copies = stack.num_layers * (max(stack.num_experts, 1))
        tensors: list[tuple[int, int]] = []  # (numel, layers) of each adapter tensor
        qkv = [lin for lin in stack.linears if match(stack, lin) and lin.name in _QKV] if run.peft.switches else []
        if qkv:
            tensors += [(r * len(qkv) * qkv[0].in_features, stack.num_layers),
                        (r * sum(lin.out_features for lin in qkv), stack.num_layers)]
        for lin in stack.linears:
            if match(stack, lin) and lin not in qkv:
                n = copies if lin.per_expert else stack.num_layers
                tensors += [(r * lin.in_features, n), (r * lin.out_features, n)]
        small += sum(numel * n for numel, n in tensors if numel < limit)
    return small


_QKV = ("q_proj", "k_proj", "v_proj")  # the projections LitGPT fuses into one qkv linear (LoRAQKVLinear)


GATE_UP = ("gate_proj", "up_proj", "w1", "w3")  # the expert projections transformers fuses into gate_up_proj


def _adafactor_states(arch: Architecture, run: Run) -> float:
    """transformers Adafactor (optimization.py, Adafactor.step): each matrix keeps exp_avg_sq_row [rows] and
    exp_avg_sq_col [cols], each vector a full exp_avg_sq, all in fp32 (`.to(grad)` of the fp32 gradient); under
    PEFT only the adapters' (rank-r matrices)."""
    if run.peft is not None and run.peft.method in ADAPTER_METHODS:
        tensors = _adapter_tensors(run)  # adapter_wte [prompt, hidden] is the one matrix; the rest are vectors
        wte = tensors[0][1] * (run.peft.adapter_prompt + arch.hidden_size)
        return (wte + sum(size * n for size, n, _ in tensors[1:])) * 4
    if run.peft is not None:
        rank = run.peft.rank
        return sum(stack.num_layers * 2 * (rank + lin.in_features + rank + lin.out_features)
                   for stack in arch.stacks for lin in stack.linears) * 4
    factored = matrices = 0
    for stack in arch.stacks:
        copies = max(stack.num_experts, 1)
        for lin in stack.linears:
            n = stack.num_layers * (copies if lin.per_expert else 1)
            factored += n * (lin.in_features + lin.out_features)
            matrices += n * lin.in_features * lin.out_features
    tables = [arch.vocab_size * arch.hidden_size] * ((1 if arch.embedding_params else 0) + (1 if arch.head_params else 0))
    factored += len(tables) * (arch.vocab_size + arch.hidden_size)
    vectors = max(0, arch.total_params - matrices - sum(tables))
    return (factored + vectors) * 4


def _adafactor_temporaries(arch: Architecture, run: Run, prec: Precision) -> float:
    """Adafactor.step's fp32 temporaries, one parameter at a time: a 16-bit parameter's gradient and data are
    upcast (`grad.float()`, `p.float()`), then `update = grad**2 + eps` and `_approx_sq_grad` (or `-update` in
    `p_data_fp32.add_(-update)`) hold two more parameter-sized tensors, 4 in all (2 for fp32 parameters), while the
    previous parameter's `update` is still referenced until it is reassigned. The largest parameter is the
    embedding (first in the Trainer's weight-decay group: nothing before it), an untied head (last: after the
    last layer's last linear) or a fused expert tensor. Under PEFT, an adapter matrix."""
    copies = 2 if prec.param_dtype == "fp32" else 4
    if run.peft is not None and run.peft.method in ADAPTER_METHODS:
        return max((size for size, n, _ in _adapter_tensors(run) if n), default=0) * copies * 4
    if run.peft is not None:
        largest = max((run.peft.rank * max(lin.in_features, lin.out_features) for stack in arch.stacks
                       for lin in stack.linears), default=0)
        return largest * copies * 4
    largest = arch.largest_outer_module_params
    for stack in arch.stacks:
        fused = [lin for lin in stack.linears if lin.per_expert] if stack.fused_experts else []
        largest = max([largest] + [lin.params for lin in stack.linears if lin not in fused])
        if fused:
            # transformers' fused experts: gate and up in one gate_up_proj [E, 2f, h], down in down_proj [E, h, f].
            gate_up = sum(lin.in_features * lin.out_features for lin in fused if lin.name in GATE_UP)
            largest = max([largest, gate_up * stack.num_experts]
                          + [lin.in_features * lin.out_features * stack.num_experts for lin in fused])
    before = 0
    head = arch.head_params if not arch.tie_word_embeddings else 0
    if head and head >= largest and arch.stacks and arch.stacks[-1].linears:
        before = arch.stacks[-1].linears[-1].params
    return (largest * copies + before) * 4


def _head_cast(run: Run) -> float:
    """Bytes of the 16-bit cast of the output head under autocast (none for encoders and classification heads)."""
    arch = run.arch
    if arch.kind == "encoder" or run.head != "lm":
        return 0.0
    return arch.vocab_size * arch.hidden_size * 2 / run.tp


def _lowrank_states(run: Run, lowrank: tuple[str, int, Any], opt: OptimizerSpec, factor: float,
                    state_dtype: float) -> tuple[float, str]:
    """GaLore / APOLLO (transformers Trainer `galore_*` / `apollo_*`, `optim_target_modules`, `optim_args` rank,
    default 128): each targeted m x n weight keeps its Adam moments in the projected r x max(m, n) shape plus an
    r x min(m, n) projector; every other parameter keeps full states."""
    kind, rank, targets = lowrank
    arch = run.arch
    match = arch._matching(targets if targets not in (None, "all", "all-linear") else "all-linear")
    projected = full = 0
    for stack in arch.stacks:
        copies = max(stack.num_experts, 1)
        for lin in stack.linears:
            n = stack.num_layers * (copies if lin.per_expert else 1)
            if match(stack, lin):
                big, small = max(lin.in_features, lin.out_features), min(lin.in_features, lin.out_features)
                r = min(rank, small)
                projected += n * (2 * r * big + r * small)
                full += n * (lin.out_features if lin.bias else 0)
    targeted = arch.linear_params(targets if targets not in (None, "all") else "all-linear")
    rest = arch.total_params - targeted + full
    per_state = 1.0 if opt.state_bytes is not None else state_dtype  # 8-bit: ~1 B per state element
    states = (projected * per_state + rest * factor * per_state) / (run.tp * run.pp)
    return states, f"{kind} (rank {rank}): low-rank moments for the targeted linears, full states elsewhere"


def _shard(run: Run, s: States, trainable: int) -> None:
    """ZeRO / FSDP partitioning, offload and data-parallel buffers."""
    dp = run.dp
    arch = run.arch
    wb = BYTES[run.precision.param_dtype]
    stage = run.zero_stage
    fsdp = run.fsdp
    if fsdp in ("hybrid_shard", "hybrid_shard_zero2"):
        group = min(dp, run.gpus_per_node)
    else:
        group = dp
    if fsdp == "full_shard" or fsdp == "hybrid_shard":
        stage = 3
    elif fsdp in ("shard_grad_op", "hybrid_shard_zero2"):
        stage = 2
    if stage >= 1 and group > 1:
        s.master /= group
        s.optimizer /= group
        s.paged /= group
        s.step_temp /= group
    if stage >= 2 and group > 1:
        s.grads /= group
    unit = _largest_unit(arch) / (run.tp * run.pp)
    if stage == 3:
        if group > 1:
            s.weights /= group
        # Gathered parameters: the module being computed plus the prefetched next one, as stored
        # for compute (a 4-bit base stays 4-bit when gathered).
        compute_bytes: float = 2 if run.precision.compute_dtype != "fp32" else 4
        if run.peft is not None and run.peft.base_bits:
            compute_bytes = _quantized_bytes_per_param(run.peft.base_bits, run.peft.double_quant)
        s.buffers += 2 * unit * compute_bytes
        s.buffers_note = "two gathered layers (current + prefetch) in the compute dtype"
        if fsdp in ("full_shard", "hybrid_shard") and run.peft is None:
            s.buffers += unit * 4  # the unsharded gradient of one unit before reduce-scatter
    elif fsdp in ("shard_grad_op", "hybrid_shard_zero2") and group > 1:
        # SHARD_GRAD_OP keeps the unsharded compute-dtype parameters from forward to backward.
        s.buffers += trainable * 2 / (run.tp * run.pp)
        s.buffers_note = "unsharded parameters kept between forward and backward (SHARD_GRAD_OP)"
    if run.deepspeed and stage in (1, 2) and group > 1:
        bucket = run.reduce_bucket if run.reduce_bucket else int(5e8)
        bucket = min(bucket, trainable)
        s.buffers += bucket * wb * (2 if run.overlap_comm else 1)
        s.buffers_note = "ZeRO reduce bucket(s)"
    if run.world > 1 and stage == 0 and fsdp is None and not run.deepspeed and run.dp > 1:
        # DDP copies gradients into its communication buckets (gradient_as_bucket_view=False).
        s.buffers += s.grads
        s.buffers_note = "DDP gradient buckets (a second copy of the gradients)"
    per_gpu_host = 0.0
    if run.offload_optimizer in ("cpu", "nvme"):
        moved = s.master + s.optimizer + (trainable * 4 / max(group, 1) if run.deepspeed else 0)
        if run.deepspeed and run.precision.master_weights:
            s.grads -= trainable * 4 / (group if stage >= 2 else 1)
            s.grads = max(s.grads, 0.0)
        per_gpu_host += moved * 1.5 if run.offload_optimizer == "cpu" else 0
        s.master = s.optimizer = s.step_temp = 0.0
    if run.offload_params in ("cpu", "nvme") and stage == 3:
        if run.offload_params == "cpu":
            per_gpu_host += s.weights * 1.5
        s.weights = 0.0
        if fsdp:
            per_gpu_host += s.grads * 1.5
            s.grads = 0.0
    s.host = per_gpu_host * min(run.world, run.gpus_per_node)


def _largest_unit(arch) -> int:
    """Parameters of the largest module ZeRO-3 / FSDP gathers at once: a whole layer (FSDP wraps
    decoder layers) or the embedding / lm_head."""
    layer = max((stack.params_per_layer for stack in arch.stacks), default=0)
    return max(layer, arch.largest_module_params)


# ---------------------------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------------------------

@dataclass
class Activations:
    """The bytes of activations a step keeps: per layer, with checkpointing, and outside the layers."""
    per_layer: float = 0.0  # saved tensors of one layer, all of them (no checkpointing)
    layer_input: float = 0.0  # what checkpointing keeps per layer
    stack_total: float = 0.0  # all layers as they are kept (checkpointed or not)
    recompute: float = 0.0  # one layer recomputed during backward (checkpointing)
    outside: float = 0.0  # embeddings, final norm, masks
    logits_forward: float = 0.0  # logits + loss in forward, at their peak
    logits_backward: float = 0.0  # the loss gradient over the vocabulary at the start of backward
    kv_cache: float = 0.0  # the DynamicCache a forward with use_cache builds
    layer_grads: float = 0.0  # activation gradients in flight inside one layer's backward (checkpointing)
    note: str = ""
    kept_logits: float = 0.0  # logits a training loop keeps referenced across steps (LitGPT fit(): every phase)
    kept_4bit_inputs: float = 0.0  # the previous step's 4-bit linear inputs its kept graph holds (forward only)


def _layer_saved(run: Run, stack, tokens: int) -> float:
    """Bytes one layer of `stack` saves for backward (no checkpointing)."""
    arch = run.arch
    fam = model_family(arch)
    if run.fused_activation and fam.act_saved > 1:
        fam = fam._replace(act_saved=1)  # one activation op: only its input is saved
    prec = run.precision
    amp = prec.param_dtype == "fp32" and prec.autocast is not None
    c = BYTES[prec.compute_dtype]  # activations of linears and attention
    r = BYTES[prec.param_dtype]  # the residual stream and norms (fp32 under autocast)
    h = arch.hidden_size
    t = run.tp
    T = tokens
    total = 0.0

    # Residual stream: the sums after attention and after the MLP (parallel blocks: one sum), saved
    # by the next norm. An RMSNorm over a 16-bit residual saves its fp32 upcast instead (below).
    ssm = stack.ssm if getattr(stack, "mixer", "attention") == "ssm" else None
    # A Mamba / Mamba-2 block is norm -> mixer -> residual sum (no MLP): one sum and one norm per layer.
    no_mlp = ssm is not None and not any(lin.input_group.startswith(("mlp", "expert", "shared"))
                                                for lin in stack.linears)
    if not (fam.norm in ("rms", "t5") and r == 2):
        total += (1 if fam.parallel or no_mlp else 2) * T * h * r
    # Norms on the hidden state: RMSNorm computes in fp32 and saves the normalized fp32 tensor;
    # from a 16-bit residual it also saves the fp32 upcast. LayerNorm saves only small statistics.
    norms = 1 if fam.parallel or no_mlp else fam.norms
    if fam.norm in ("rms", "t5"):
        # fp32 normalized output; from a 16-bit residual also the fp32 upcast and the 16-bit result.
        total += norms * _rms_norm_saved(run, T * h)
    # Linear inputs, per input group. Under autocast each linear casts its own copy of its (fp32)
    # input. The attention output projection reads the attention output itself (counted below).
    groups: dict[str, list] = {}
    for lin in stack.linears:
        groups.setdefault(lin.input_group, []).append(lin)
    experts = stack.num_experts
    k = stack.experts_per_token or 0
    targeted = _targeted(run, stack)
    for group, linears in groups.items():
        if ssm is not None and group in ("ssm_x", "ssm_dt", "attn_out"):
            continue  # the scan's inner linears: counted with the mixer (_ssm_saved)
        if group == "attn_out":
            # The output projection reads the attention output (counted with attention; a 4-bit projection's
            # MatMul4Bit keeps that same tensor); LoRA adapters on it cast their own copy.
            if targeted is not None:
                total += _adapter_input_copies(run, linears, targeted, amp, True, BYTES[prec.compute_dtype]) \
                    * T * linears[0].in_features / t
            continue
        routed = [lin for lin in linears if lin.per_expert]
        dense = [lin for lin in linears if not lin.per_expert]
        reads_16bit = group.endswith("_out")  # the MLP product / expert output is already 16-bit
        if dense:
            width = dense[0].in_features / (t if reads_16bit else 1)
            total += _input_copies(run, dense, targeted, amp, reads_16bit) * T * width
        if routed and experts:
            width = routed[0].in_features
            total += _input_copies(run, routed, targeted, amp, reads_16bit) * T * k * width
    if ssm is not None:
        total += _ssm_saved(run, ssm, T) / t
    # Attention core. Rotary embeddings save only cos/sin; the rotated q and k are what attention saves.
    heads = (stack.attention_heads or arch.num_attention_heads) / t
    kv = (stack.kv_heads or arch.num_key_value_heads) / t
    d = stack.head_dim or arch.head_dim
    b = run.micro_batch
    s = max(1, run.seq_len // max(1, run.cp))
    q_bytes = T * heads * d * c
    # LitGPT expands k and v to every query head before SDPA (litgpt/model.py CausalSelfAttention.forward).
    kv_bytes = T * (heads if run.kv_expanded else kv) * d * c
    if fam.qk_norm == "head":
        # q/k RMSNorm per head: the fp32 normalized q and k (plus the fp32 upcast from 16-bit).
        total += (T * heads * d + T * kv * d) * (4 if c == 4 else 6)
    elif fam.qk_norm == "full":
        total += (T * heads * d + T * kv * d) * (4 if c == 4 else 6)
    if ssm is not None:
        pass  # a selective scan, no softmax attention in this layer
    elif run.attn == "eager":
        probs = b * heads * s * s
        # Eager attention repeats k and v to every head; q·kᵀ saves q and k; softmax (computed in
        # fp32) saves its output; its 16-bit cast is saved by probs·v, which also saves v.
        total += q_bytes + 2 * q_bytes
        total += probs * 4
        if _softcapped(arch):
            # Gemma-2 eager attention: scores / cap, tanh (saves its output), * cap, before the fp32 softmax.
            total += probs * c
        if fam.dropout_attn > 0:
            total += probs * (1 + c)  # dropout saves its mask; probs·v saves the dropped probabilities
        elif c != 4:
            total += probs * c  # probs·v saves the 16-bit cast of the softmax
        total += q_bytes  # the output, transposed to a contiguous copy for the output projection
    else:
        # Flash / memory-efficient SDPA (GQA without repeating k, v) saves q, k, v, the output and a
        # per-row logsumexp; the output projection reads the output itself.
        total += q_bytes + 2 * kv_bytes + q_bytes + b * heads * s * 4
    # MLP internals: gated = gate out, act out, up out (the product is the down-projection input);
    # plain = the activation's saved tensors.
    f = arch.intermediate_size / t
    # The dense MLP exists where a non-expert down projection does: in parallel blocks with one shared norm
    # (Phi-1/1.5/2, Falcon-7B, GPT-J) its up projection reads the attention input (input group attn_in).
    dense_mlp = any(lin.input_group == "mlp_out" and not lin.per_expert for lin in stack.linears)
    if dense_mlp:
        total += _mlp_internal(arch, fam, T, f, c, amp)
    if experts and k:
        fe = next((lin.out_features for lin in stack.linears if lin.per_expert and lin.input_group != "mlp_out"),
                  arch.intermediate_size)
        if arch.gated_mlp:
            fe = fe // 2 if any(lin.name == "gate_up_proj" for lin in stack.linears) else fe
        total += _mlp_internal(arch, fam, T * k, fe / t, c, amp)
        total += T * experts * 4 * 2  # router logits and softmax in fp32
        total += T * k * h * c  # expert outputs before they are summed
    shared = [lin for lin in stack.linears if lin.input_group.startswith("shared") and lin.input_group.endswith("in")]
    if shared:
        total += _mlp_internal(arch, fam, T, shared[0].out_features / t, c, amp)
    # Dropout masks (1 byte per element) after attention and the MLP.
    if fam.dropout_resid > 0:
        count = fam.resid_dropouts if fam.resid_dropouts is not None else (1 if fam.parallel or no_mlp else 2)
        total += count * T * h
    return total


def _ssm_saved(run: Run, ssm, T: int) -> float:
    """Bytes a Mamba / Mamba-2 mixer saves for backward beyond its in_proj input (counted as a linear input).

    D = d_inner, N = d_state, R = dt_rank, G = n_groups, H = SSD heads, c = the compute dtype's size.

    Fused path (`run.ssm_path == "fused"`: transformers' `cuda_kernels_forward`, taken in training when mamba_ssm
    and causal_conv1d are installed and the weights are on CUDA):
    - Mamba 1, `mamba_inner_fn` (mamba_ssm/ops/selective_scan_interface.py, MambaInnerFn, checkpoint_lvl=1, which
      recomputes the conv output and delta in backward): saves xz (the in_proj output, T·2D), x_dbl (T·(R + 2N)),
      contiguous B and C (T·N each), the scan output `out` (T·D) in c, and the scan's chunk states
      `scan_intermediates` (b·D·ceil(s/2048)·2N, fp32; selective_scan.cpp chunks by 2048).
    - Jamba (`mamba_split`): its dt/B/C RMSNorms keep it off mamba_inner_fn; causal_conv1d_fn saves its input
      (a view holding the whole in_proj output, T·2D), x_proj and selective_scan_fn save the conv output (T·D),
      x_dbl and the normalized dt/B/C (with their fp32 norm upcasts), SelectiveScanFn saves contiguous delta and z
      copies (T·D each), B and C (T·N each), `out` (T·D) and the chunk states; out_proj saves `out_z` (T·D).
    - Mamba 2, `mamba_split_conv1d_scan_combined` (mamba_ssm/ops/triton/ssd_combined.py,
      MambaSplitConv1dScanCombinedFn): saves zxbcdt (the in_proj output, T·(2D + 2GN + H)), out_x (T·D) and the
      gated RMSNorm's rstd (T·G, fp32); chunk states are recomputed in backward.

    Torch path (`"torch"`: the slow path without those kernels):
    - Mamba 1 `slow_forward`: the sequential scan keeps [b, D, s, N] fp32 tensors: exp(A·dt) (saved output),
      dt·B (saved by the product with u), and one fp32 state per step (saved by the next step's multiply) plus its
      cast for the matmul with C: T·D·N·(12 + c, or 12 in fp32); about nine [T, D] tensors in c and one in fp32.
    - Mamba 2 `torch_forward` (chunked SSD): per chunk [cs, cs] matrices per head in fp32, G, L = exp(segsum) and
      M (3·T·H·cs·4), B and C repeated to the heads in fp32 and B·decay (3·T·H·N·4), the discretized x and the
      y terms in fp32 (about eight T·D·4), the in_proj output and the conv output in c.
    """
    prec = run.precision
    c = BYTES[prec.compute_dtype]
    b = run.micro_batch
    s = max(1, run.seq_len // max(1, run.cp))
    D, N, R = ssm.d_inner, ssm.d_state, ssm.dt_rank
    chunk_states = b * D * math.ceil(s / 2048) * 2 * N * 4
    if ssm.kind == "mamba2":
        G, H = max(1, ssm.n_groups), max(1, ssm.heads)
        zxbcdt = T * (2 * D + 2 * G * N + H) * c
        if run.ssm_path == "torch":
            cs = max(1, min(ssm.chunk_size, s))
            conv_out = T * (D + 2 * G * N) * c
            return zxbcdt + conv_out + 3 * T * H * cs * 4 + 3 * T * H * N * 4 + 8 * T * D * 4 + 2 * T * D * c
        return zxbcdt + T * D * c + T * G * 4
    if run.ssm_path == "torch":
        scan = T * D * N * (12 + (c if c != 4 else 0))
        return scan + 9 * T * D * c + T * D * 4 + T * (R + 2 * N) * c + T * R * c
    if ssm.kind == "mamba_split":
        norms = T * (R + 2 * N) * (4 + c)  # the dt/B/C RMSNorms: fp32 upcast and the normalized output
        return (2 * T * D * c + T * D * c + T * (R + 2 * N) * c + norms + 2 * T * D * c + 2 * T * N * c
                + T * D * c + chunk_states + T * D * c)
    return 2 * T * D * c + T * (R + 2 * N) * c + 2 * T * N * c + T * D * c + chunk_states


def _rms_norm_saved(run: Run, elements: float) -> float:
    """Bytes an RMSNorm saves: the fp32 normalized tensor for its weight's gradient (not when the
    weight is frozen, as under PEFT) and, from a 16-bit input, the fp32 upcast that `pow` saves."""
    upcast = 4 * elements if BYTES[run.precision.param_dtype] == 2 else 0
    normalized = 0 if run.peft is not None else (4 * elements if upcast == 0 else 2 * elements)
    return upcast + normalized


def _targeted(run: Run, stack) -> set[int] | None:
    """ids of the linears LoRA adapts in this stack (None: full fine-tuning, every linear trains)."""
    if run.peft is None:
        return None
    if run.peft.method in ADAPTER_METHODS:
        return set()  # LitGPT's adapters: every linear frozen (their own tensors are counted by _adapter_saved)
    targets = _lora_targets(run.peft)
    if targets is None:
        targets = run.arch.default_lora_targets or "all-linear"
    match = run.arch._matching(targets)
    return {id(lin) for lin in stack.linears if match(stack, lin)}


def _input_copies(run: Run, linears: list, targeted: set[int] | None, amp: bool, reads_16bit: bool) -> float:
    """Bytes per element of the copies of one input tensor that the linears of a group save.

    A linear saves its input only to compute its weight's gradient: frozen base linears (PEFT) save
    none. Under autocast each trainable linear (or LoRA A matrix) casts, and saves, its own 16-bit
    copy. Without autocast trainable linears share the input itself, except that PEFT casts the
    input of fp32 adapters over a 16-bit base to fp32, once per adapted linear.
    """
    c = BYTES[run.precision.compute_dtype]
    if targeted is None:
        return (len(linears) if amp and not reads_16bit else 1) * c
    own = _adapter_input_copies(run, linears, targeted, amp, reads_16bit, c)
    if run.bnb_saves_input and run.peft is not None and run.peft.base_bits == 4:
        # bitsandbytes' MatMul4Bit (before 0.43.2) keeps each 4-bit base linear's input: the group's 16-bit input
        # (Linear4bit.forward's x.to(compute_dtype) is x itself), one cast per linear from an fp32 input under
        # autocast. Already counted where the adapters share the input itself (no dropout, no cast).
        shared = not amp and (run.peft.dropout <= 0) and own > 0 and \
            (run.precision.param_dtype == "fp32" or run.peft.adapter_dtype in ("bf16", "fp16"))
        if not shared:
            own += (len(linears) if amp and not reads_16bit else 1) * c
    return own


def _adapter_input_copies(run: Run, linears: list, targeted: set[int], amp: bool, reads_16bit: bool,
                          c: int) -> float:
    """Bytes per element of the copies of one input tensor that the LoRA adapters of a group save."""
    adapted = [lin for lin in linears if id(lin) in targeted]
    if not adapted:
        return 0.0
    # PEFT (tuners/lora/layer.py, Linear.forward): lora_B(lora_A(dropout(x))) after casting x to the adapter
    # dtype. With lora_dropout > 0 each adapted linear has its own nn.Dropout: a 1-byte mask and its own dropped
    # copy (saved by lora_A); without, nn.Identity and one shared input.
    dropout = run.peft is not None and run.peft.dropout > 0
    masks = len(adapted) if dropout else 0
    n = len(adapted)
    if amp:
        # lora_A casts its (fp32) input to 16 bits under autocast and saves the cast, one per adapted linear.
        return (n * 2 if not reads_16bit or dropout else 2) + masks
    adapter_bytes = 2 if run.peft is not None and run.peft.adapter_dtype in ("bf16", "fp16") else 4
    if run.precision.param_dtype != "fp32" and adapter_bytes == 4:
        return n * 4 + masks  # each adapted linear casts the 16-bit input to its fp32 adapters
    return (n if dropout else 1) * c + masks


def _mlp_internal(arch, fam: Family, T: float, f: float, c: int, amp: bool = False) -> float:
    """Saved tensors inside the MLP besides the down-projection input."""
    if arch.gated_mlp:
        return 3 * T * f * c  # gate output, activation output, up output
    if fam.act_saved > 1:
        # GPT-2's gelu_new in Python: pow is an fp32 op under autocast, so its input copy, tanh and
        # 1 + tanh are fp32; 0.5 * x stays 16-bit.
        wide = 4 if amp else c
        return (fam.act_saved - 1) * T * f * wide + T * f * c
    return T * f * c


def activations(run: Run) -> Activations:
    arch = run.arch
    fam = model_family(arch)
    prec = run.precision
    r = BYTES[prec.param_dtype]
    c = BYTES[prec.compute_dtype]
    T = run.tokens
    h = arch.hidden_size
    a = Activations()
    layers_here = []  # (stack, layers on this GPU)
    for stack in arch.stacks:
        layers_here.append((stack, stack.num_layers / run.pp if run.pp > 1 else stack.num_layers))
    # Pipeline 1F1B: the first stage holds up to p micro-batches in flight.
    inflight = run.pp if run.pp > 1 else 1
    per_layer = {id(stack): _layer_saved(run, stack, T) + _adapter_saved(run, stack, T)[0] for stack, _ in layers_here}
    a.per_layer = max(per_layer.values(), default=0.0)
    a.layer_input = T * h * r
    # In a layer's backward the MLP's activation gradients (the down projection's input gradient and the gated
    # product's factor gradient, [T, f] each) and the layer output's gradient are in flight on top of its saved
    # tensors.
    f = arch.intermediate_size / run.tp
    a.layer_grads = (2 if arch.gated_mlp else 1) * T * f * c + T * h * r
    if run.grad_ckpt == "full":
        a.stack_total = sum(n * a.layer_input for _, n in layers_here) * inflight
        a.recompute = a.per_layer
        a.note = "activation checkpointing: each layer keeps its input; one layer is recomputed in backward"
    elif run.grad_ckpt == "selective":
        attn_scores = 0.0
        a.stack_total = sum(n * (per_layer[id(st)] - attn_scores) for st, n in layers_here) * inflight
        a.note = "selective checkpointing"
    else:
        a.stack_total = sum(n * per_layer[id(st)] for st, n in layers_here) * inflight
        a.note = "no activation checkpointing: every layer keeps what its backward needs"
    if run.activation_offload:
        a.stack_total = a.layer_input * 2
        a.note += "; activations offloaded to CPU"
    # Outside the layers: embedding output (the first residual) and its dropout mask, final norm.
    # The embedding output is the first residual (saved by the first norm, as above).
    first_residual = 0 if fam.norm in ("rms", "t5") and r == 2 else T * h * r
    a.outside = first_residual + (T * h if fam.dropout_embedding > 0 else 0)
    # The final norm: its saved tensors, and its output, which the model output holds until the loss.
    if fam.norm in ("rms", "t5"):
        a.outside += _rms_norm_saved(run, T * h)
    a.outside += T * h * r
    if run.attn == "eager":
        a.outside += run.micro_batch * run.seq_len * run.seq_len * c  # the 4-D causal mask
    a.outside += _tower_saved(run)
    if run.head != "lm":
        # *ForSequenceClassification / *ForTokenClassification: a num_labels-wide score, no vocabulary logits.
        a.logits_forward = a.logits_backward = T * 2 * 4 * 2
        if run.head == "token_cls" and arch.kind == "decoder":
            # transformers GenericForTokenClassification (modeling_layers.py): nn.Dropout(classifier_dropout,
            # default 0.1) on the final hidden states: a 1-byte mask and the dropped copy the score saves.
            a.outside += T * h * (1 + r)
    elif arch.kind != "encoder":
        a.logits_forward, a.logits_backward = _logits(run)
        a.outside += _head_lora_saved(run, T) + _head_adapter_saved(run, T)
        if run.keeps_logits:
            a.kept_logits = T * arch.vocab_size / run.tp * (run.logits_out_bytes or c)
        # HF's DynamicCache (use_cache in a training forward) references the k and v that attention
        # saves anyway: no extra memory with SDPA. Eager attention saves repeated copies instead, so the
        # cache keeps the originals alive through the forward.
        if run.grad_ckpt == "none" and arch.kind == "decoder" and fam.rope and run.attn == "eager":
            a.kv_cache = sum(n * T * (st.kv_heads or arch.num_key_value_heads) * (st.head_dim or arch.head_dim)
                             * c * 2 for st, n in layers_here) / run.tp
    else:
        a.logits_forward = T * arch.vocab_size * c * 2 / run.tp  # an MLM head over every token
        a.logits_backward = T * arch.vocab_size * 4 * 2 / run.tp
    a.kept_4bit_inputs = _kept_4bit_inputs(run, layers_here)
    return a


def _kept_4bit_inputs(run: Run, layers_here) -> float:
    """The previous step's 4-bit linear inputs, alive through the next forward.

    bitsandbytes before 0.43.2 keeps MatMul4Bit's input as a plain attribute of the autograd context
    (`ctx.tensors = (A, B)`, bitsandbytes/autograd/_functions.py), not with `save_for_backward`, so backward does not
    release it: it lives as long as the graph's nodes do. A training loop that keeps the step's output referenced
    (LitGPT's fit() binds `logits = model(...)`, whose grad_fn reaches every node) keeps that graph, and with it one
    input per distinct input tensor of the 4-bit linears, until the next forward returns: per layer each input group's
    tensor in the compute dtype (the attention output included, which the step's SDPA no longer holds; routed experts:
    their gathered T·k rows), and the head's input when the head is a 4-bit linear too (its 128-token chunks are views
    of the final norm's output). MatMul4Bit keeps nothing where no input requires grad (`any(ctx.needs_input_grad[:2])`):
    the first layer's first input, the norm of a frozen embedding's output."""
    if not (run.bnb_saves_input and run.keeps_logits and run.peft is not None and run.peft.base_bits == 4):
        return 0.0
    c = BYTES[run.precision.compute_dtype]
    T = run.tokens
    total = 0.0
    frozen_embedding = not any(m in ("embed_tokens", "wte", "word_embeddings") for m in run.peft.modules_to_save)
    for stack, n in layers_here:
        widths: dict[str, float] = {}
        for lin in stack.linears:
            rows = T * (stack.experts_per_token or 1) if lin.per_expert and stack.num_experts else T
            widths.setdefault(lin.input_group, rows * lin.in_features)
        total += n * sum(widths.values())
        if frozen_embedding and n and widths:
            total -= next(iter(widths.values()))  # the first layer's first input: no grad, nothing kept
            frozen_embedding = False
    if run.quantized_head and run.head == "lm":
        total += T * run.arch.hidden_size
    return total * c / run.tp


def _tower_saved(run: Run) -> float:
    """A vision tower's saved activations over `run.image_tokens` tokens per row, as a ViT encoder stack (CLIP /
    SigLIP / Qwen-VL blocks in transformers: pre-LayerNorm, separate q/k/v linears, SDPA, output projection, fc1,
    activation, fc2): per layer the two residuals (saved by the LayerNorms) in the residual dtype, the normalized
    inputs of q/k/v (one copy, three under autocast) and of fc1, SDPA's q, k, v, output and logsumexp, fc1's
    output and the activation's output. With checkpointing each layer keeps its input. They live from the
    tower's forward (first) to its backward (last)."""
    towers = [t for t in getattr(run.arch, "towers", ()) if t.role == "vision" and t.num_layers and t.hidden_size]
    if not run.image_tokens or not towers:
        return 0.0
    tower = towers[0]
    prec = run.precision
    amp = prec.param_dtype == "fp32" and prec.autocast is not None
    c, r = BYTES[prec.compute_dtype], BYTES[prec.param_dtype]
    Ti = run.micro_batch * run.image_tokens
    h, f = tower.hidden_size, tower.intermediate_size or 4 * tower.hidden_size
    heads = tower.heads or max(1, h // 64)
    if run.grad_ckpt == "full":
        return tower.num_layers * Ti * h * r
    lse = run.micro_batch * heads * run.image_tokens * 4  # SDPA's fp32 logsumexp
    per_layer = Ti * (2 * h * r + (3 if amp else 1) * h * c + h * c + 4 * h * c + 2 * f * c) + lse
    return tower.num_layers * per_layer / run.tp


def _softcapped(arch) -> bool:
    """Gemma-2 caps attention scores (attn_logit_softcapping 50) and final logits (final_logit_softcapping 30)
    with tanh (transformers models/gemma2/modeling_gemma2.py; Gemma2Config defaults). Gemma 3 does not."""
    return arch.model_type == "gemma2"


def _logits(run: Run) -> tuple[float, float]:
    """Bytes of the logits and the loss in forward and at the start of backward.

    HF causal-LM loss (`ForCausalLMLoss`) upcasts the logits to fp32, then cross_entropy saves
    the fp32 log-softmax. Forward peak: 16-bit logits + fp32 copy + log-softmax. Backward start:
    log-softmax + its gradient + the gradient of the logits in fp32, then cast to 16-bit.
    """
    arch = run.arch
    T = run.tokens
    V = arch.vocab_size / run.tp
    c = BYTES[run.precision.compute_dtype]
    kernel = run.loss_kernel or ("liger" if run.fused_loss else None)
    h = arch.hidden_size
    r_in = BYTES[run.precision.param_dtype]  # the final norm's output dtype (fp32 under autocast)
    wb = BYTES[run.precision.param_dtype]
    head_trainable = run.peft is None or any(m in ("lm_head", "embed_out", "embed_tokens", "wte")
                                             for m in run.peft.modules_to_save)
    if kernel == "liger":
        # Liger's fused linear cross-entropy (liger_kernel/ops/fused_linear_cross_entropy.py,
        # fused_linear_cross_entropy_forward): rows in chunks of next_pow2(T / ceil(V / h)), one chunk's logits
        # in the input dtype (the kernel writes their gradient in place), grad_input like the input, and
        # grad_weight = zeros_like(weight) -- only when the head requires grad, in the weight dtype unless
        # accum_dtype is set -- all computed in forward and held to backward.
        chunk = 1 << max(0, math.ceil(math.log2(max(1, math.ceil(T / max(1, math.ceil(V / h)))))))
        head_grad = V * h * (4 if run.liger_accum_fp32 else wb) if head_trainable else 0.0
        fused = min(chunk, T) * V * c + T * h * r_in + head_grad + T * 4
        return fused, fused
    if kernel == "trl":
        # TRL's fused LM head (trl/trainer/utils.py add_fused_lm_head -> trl/kernels/chunked_logprob.py
        # ChunkedLogProbFunction): the valid hidden rows are gathered (a copy, saved), projected in
        # [4096, 32768] tiles of the compute dtype; backward holds fp32 grad_hidden and, for a trainable head,
        # fp32 grad_weight, then casts them to the parameters' dtypes.
        tile = min(T, 4096) * min(V, 32768) * c
        forward = T * h * r_in + tile + T * 4 * 8
        head_grad = V * h * 4 + V * h * wb if head_trainable else 0.0
        backward = T * h * r_in + T * h * 4 + T * h * r_in + head_grad + tile
        return forward, backward
    if kernel == "trl_chunked":
        # TRL 1.7-1.14 SFT loss_type chunked_nll (sft_trainer.py, _chunked_cross_entropy_loss): the shifted hidden
        # rows are reordered (two [T, h] copies, one saved), each 256-token chunk runs under non-reentrant
        # checkpointing with `h.float() @ w.float().t()`: an fp32 copy of a 16-bit head, fp32 logits and
        # log-softmax of the chunk; backward recomputes one chunk and adds the fp32 gradient of the head copy.
        chunk_bytes = min(T, 256) * V * 4
        w32 = V * h * 4 if wb != 4 else 0.0
        forward = 2 * T * h * c + w32 + 2 * chunk_bytes
        backward = T * h * c + T * h * c + w32 + (V * h * 4 if head_trainable else 0.0) + 3 * chunk_bytes
        return forward, backward
    if kernel == "cce":
        # Cut Cross-Entropy (apple/ml-cross-entropy, axolotl CutCrossEntropyPlugin): blockwise logits in SRAM,
        # only the per-row log-sum-exp saved; backward writes the hidden and (trainable) head gradients.
        forward = T * 4 * 2
        backward = T * 4 * 2 + T * h * c + (V * h * wb if head_trainable else 0.0)
        return forward, backward
    if kernel in ("torchtune_chunked_compiled", "axolotl_chunked"):
        # compile: true (data "torchtune" loss "compiled"), and axolotl's chunked_cross_entropy, which compiles the
        # same per-chunk function (data "axolotl" loss chunked): the per-chunk upcast and cross-entropy run as one
        # inductor graph that saves the 16-bit chunk and its per-row statistics, no fp32 copy or log-softmax. The
        # model's chunked 16-bit logits (T·V·c) stay saved until each chunk's backward, which writes one chunk's
        # 16-bit gradient; a trainable head's [V, h] gradient is summed chunk by chunk (_chunked_head_grad).
        rows = T / max(1, run.loss_chunks)
        head = _chunked_head_grad(run, V, h, wb) if head_trainable else 0.0
        forward = T * V * c + T * 4 * 2
        backward = T * V * c + max(rows * V * c + head, _summed_head_grads(run, head)) + T * 4 * 2
        return forward, backward
    if kernel in ("litgpt_head_chunks", "litgpt_ce_chunks", "litgpt_pretrain_ce"):
        return _litgpt_logits(run, kernel, T, V, c)
    if kernel in ("torchtune_chunked", "torchtune_linear_ce"):
        # torchtune (data/framework_semantics.json "torchtune" loss): each of n chunks is upcast to fp32 for
        # F.cross_entropy, whose log-softmax (fp32) every chunk saves: T·V·4 in all. CEWithChunkedOutputLoss also
        # holds the model's chunked 16-bit logits (T·V·c) until the recipe's `del outputs`; LinearCrossEntropyLoss
        # projects each chunk of hidden states inside the loss (one chunk's 16-bit logits at a time). Forward: the
        # saved log-softmax plus one chunk's cast; backward (outputs deleted): the log-softmax plus one chunk's
        # gradient (fp32 through the log-softmax, then the 16-bit cast), and a trainable head's summed gradient.
        rows = T / max(1, run.loss_chunks)
        upcast = rows * V * 4 if c != 4 else 0.0
        held = T * V * c if kernel == "torchtune_chunked" else rows * V * c
        head = _chunked_head_grad(run, V, h, wb) if head_trainable else 0.0
        forward = held + T * V * 4 + upcast
        buffered = _summed_head_grads(run, head) - head  # the buffer from the chunks already through backward
        backward = max(T * V * 4 + rows * V * (8 + (c if c != 4 else 0)) + buffered,
                       T * V * 4 + rows * V * c + _summed_head_grads(run, head))
        return forward, backward
    copy = T * V * 4 if c != 4 else 0
    forward = T * V * c + copy + T * V * 4
    backward = T * V * 4 * 3
    if _softcapped(arch):
        # Final-logit softcapping (logits / cap, tanh, * cap): tanh saves its output, one more [T, V] tensor
        # from the head to the start of backward.
        forward += T * V * c
        backward += T * V * c
    return forward, backward


def _chunked_head_grad(run: Run, V: float, h: int, wb: int) -> float:
    """The head weight's gradient while torchtune's chunks run backward.

    The head is applied once per chunk (torchtune/modules/transformer.py: TransformerDecoder.chunked_output,
    `[self.output(chunk) for chunk in ...]`; LinearCrossEntropyLoss projects each chunk itself), so its weight
    (the embedding's, through TiedLinear, when tied) feeds n matmuls whose [V, h] gradients the autograd engine
    sums into the weight's AccumulateGrad input buffer (torch/csrc/autograd/input_buffer.cpp: accumulate) until the
    last use's backward: from the second chunk's backward on, the buffer and the new chunk's gradient exist at
    once. Returned: one [V, h] gradient in the weight dtype."""
    return V * h * wb


def _summed_head_grads(run: Run, head: float) -> float:
    """The head's gradient buffer and the next chunk's gradient being summed into it (one with a single chunk)."""
    return 2 * head if run.loss_chunks > 1 else head


def _litgpt_logits(run: Run, kernel: str, T: int, V: float, c: int) -> tuple[float, float]:
    """LitGPT's loss (catalog/data/framework_semantics.json "litgpt" loss), beyond the logits `activations` keeps
    referenced in every phase (`kept_logits`, o = `logits_out_bytes` per logit: Fabric's precision plugins hand
    the logits back in fp32, convert_output of HalfPrecision, MixedPrecision, BitsandbytesPrecision, FSDPPrecision).

    Forward: the head's output in the compute dtype (c) is converted while the previous step's logits are still
    referenced: T·V·(c + o) above the kept logits (T·V·o when c = o: no conversion, the new logits beside the old). The full-fine-tune script
    slices `logits[..., :-1, :]` and reshapes it, a copy when the micro-batch has more than one row; each 128-row
    cross-entropy chunk saves its log-softmax (o). Backward start: the log-softmax (T·V·o) plus, with the head in
    128-token chunks (lora/adapter scripts), one chunk's gradient at a time; with full logits split in 128-row chunks
    (full script), every chunk's gradient and their concatenation (2·T·V·o) before the head's backward."""
    o = run.logits_out_bytes or c
    chunk = 128
    convert = T * V * (c + o) if c != o else T * V * o
    if kernel == "litgpt_head_chunks":
        rows = min(T, chunk * run.micro_batch)
        forward = max(convert, T * V * o)  # conversion, or the log-softmax beside the new logits
        backward = T * V * o + 2 * rows * V * o
        return forward, backward
    copy = T * V * o if run.micro_batch > 1 and kernel == "litgpt_ce_chunks" else 0.0  # pretrain: no shift slice
    forward = max(convert, T * V * o + copy)
    backward = 2 * T * V * o
    return forward, backward


# ---------------------------------------------------------------------------------------------
# Phases and the peak
# ---------------------------------------------------------------------------------------------

# The Run fields `model_states` and `activations` read, with the functions they call (tests/test_estimate.py holds
# these lists to the code): runs that agree on them have the same states or activations.
STATES_READ = ("arch", "precision", "head", "tp", "pp", "cp", "world", "peft", "deepspeed", "optimizer", "momentum",
               "lowrank", "optimizer_in_bwd", "fsdp", "zero_stage", "gpus_per_node", "reduce_bucket", "overlap_comm",
               "offload_optimizer", "offload_params", "kbit_fp32_upcast", "quantized_head")
ACTIVATIONS_READ = ("arch", "precision", "tp", "pp", "cp", "micro_batch", "seq_len", "grad_ckpt", "attn", "peft",
                    "activation_offload", "head", "image_tokens", "loss_kernel", "fused_loss", "liger_accum_fp32",
                    "ssm_path", "kv_expanded", "logits_out_bytes", "keeps_logits",
                    "fused_activation", "loss_chunks", "bnb_saves_input", "quantized_head")


class PartsMemo:
    """`model_states` and `activations` of runs that agree on the fields each reads, computed once: the fix
    planner re-estimates dozens of candidates of one run, each differing in a few fields (ZeRO stage, offload,
    micro-batch, checkpointing, attention), so most share their states or their activations with another.

    A key holds the identities of the values of those fields, so a hit means the very same values (a candidate's
    are the plan's own objects, the knobs' and the code's constants; equal values that are distinct objects only
    miss). The run is kept with its result, so no value of a key is freed (and its id reused) while the memo
    lives; the results are shared, never modified."""

    def __init__(self) -> None:
        self._states: dict[tuple, tuple[Run, States]] = {}
        self._activations: dict[tuple, tuple[Run, Activations]] = {}

    def states(self, run: Run) -> States:
        return self._part(self._states, _STATES_READ, model_states, run)

    def activations(self, run: Run) -> Activations:
        return self._part(self._activations, _ACTIVATIONS_READ, activations, run)

    @staticmethod
    def _part(memo: dict, read, compute, run: Run):
        key = tuple(map(id, read(run)))
        if key not in memo:
            memo[key] = (run, compute(run))
        return memo[key][1]


_STATES_READ = attrgetter(*STATES_READ)
_ACTIVATIONS_READ = attrgetter(*ACTIVATIONS_READ)


def estimate_run(run: Run, memo: PartsMemo | None = None) -> Estimate:
    terms, phase, phases, st, assumptions = _step(run, memo)
    return Estimate([Term(*t) for t in terms], _round(sum(t[2] for t in terms)), phase,
                    {k: int(v) for k, v in phases.items()}, int(st.host), int(st.paged), assumptions)


def peak_of(run: Run, memo: PartsMemo | None = None) -> tuple[int, int, int]:
    """`estimate_run(run)`'s (peak_allocated, host_bytes, paged_bytes), without making its Term and Estimate
    objects: the fix planner re-estimates dozens of candidates for these three numbers."""
    terms, _phase, _phases, st, _assumptions = _step(run, memo)
    return _round(sum(t[2] for t in terms)), int(st.host), int(st.paged)


def _step(run: Run, memo: PartsMemo | None):
    """The step's phases and the terms resident at its peak, as [key, label, bytes, assumption] lists (in the order
    and with the values of `Estimate.terms`), with the states and the assumptions."""
    st = memo.states(run) if memo is not None else model_states(run)
    assumptions: list[str] = []
    ref_model = reference_model(run, assumptions)
    rows_run = run
    if run.task in ("dpo", "orpo", "kto"):
        # Chosen and rejected sequences run through the model together: one forward of twice the rows (TRL
        # DPOTrainer._compute_loss on DataCollatorForPreference's [chosen; rejected] batch). The activations are
        # those of that forward, not twice one of b rows: what does not grow with the rows -- the fused head's
        # [4096, 32768] logits tile, the head weight's gradient -- is there once.
        rows_run = run._replace(micro_batch=2 * run.micro_batch)
        assumptions.append("chosen and rejected completions are concatenated: 2 x micro-batch rows")
    act = memo.activations(rows_run) if memo is not None else activations(rows_run)

    resident = st.weights + st.master + ref_model + act.kept_logits  # always there
    opt_states = st.optimizer
    acts = act.stack_total + act.outside
    ckpt = run.grad_ckpt == "full"
    # Under autocast the 16-bit weight copies live from their first use to their backward. With
    # checkpointing the layers' copies are not saved (they are recast during recompute); the
    # output head's copy still is.
    head_cast = _head_cast(run) if st.amp_weight_cache else 0.0
    cache_at_backward = head_cast if ckpt else st.amp_weight_cache
    layer_cast = (st.amp_weight_cache - head_cast) / max(1, run.arch.num_layers) if st.amp_weight_cache else 0.0
    # With gradient accumulation the gradients of the earlier micro-batches stay allocated through
    # every later micro-batch's forward and backward (zero_grad runs after the optimizer step). So do all of
    # them when zero_grad fills them with zeros instead of freeing them (set_to_none=False, torch < 2.0's
    # default: torch/optim/optimizer.py and torch/nn/modules/module.py zero_grad, changed in pytorch#92731).
    # Under optimizer_in_bwd each gradient is freed by its own step.
    accumulated = st.grads if run.grad_accum > 1 or (run.grads_kept and not run.optimizer_in_bwd) else 0.0
    # Forward end / loss: states from the previous step, all saved activations, the autocast cache
    # (all weight copies until autocast exits), and the logits at their forward peak.
    # Casts of frozen weights are not cached: with checkpointing only the layer being run holds its casts
    # (plus the head's, saved for backward).
    forward_cache = head_cast + layer_cast if (st.amp_frozen and ckpt) else st.amp_weight_cache
    # bitsandbytes' MatMul4Bit.forward runs F.linear(A, dequantize_4bit(B).to(A.dtype).t()): the weight in 16 bits
    # for the matmul (twice when the quant state's dtype is not the compute dtype), the head's when it is quantized
    # (beside the logit chunks computed so far), else a layer linear's (before any logits exist): the forward's end
    # is the larger of that moment and the logits' own peak. The previous step's 4-bit inputs (kept by its graph)
    # live through both.
    at_dequant, dequant = _dequant_moment(rows_run)
    head_end = max(act.logits_forward, at_dequant + dequant)
    # A separate reference model runs its no-grad forward after the policy's, inside the same autocast region (TRL
    # DPOTrainer._compute_loss under Trainer.compute_loss_context_manager), with every policy activation saved. Its
    # fp32 parameters still require grad (from_pretrained; Accelerator.prepare_model(evaluation_mode=True) does not
    # freeze them), and autocast caches the 16-bit cast of any fp32 leaf that requires grad, grad mode or not
    # (aten/src/ATen/autocast_mode.cpp, cached_cast: can_try_cache): the reference model's copies stay until autocast
    # exits. Its head's forward replaces the policy's: the forward's end is the reference forward's end plus them.
    ref_cast = st.amp_weight_cache if ref_model and run.peft is None else 0.0
    forward = (resident + opt_states + accumulated + st.buffers + acts + forward_cache + act.kv_cache
               + act.kept_4bit_inputs + head_end + ref_cast)
    if act.logits_forward >= at_dequant + dequant:
        at_dequant, dequant = act.logits_forward, 0.0
    # Start of backward: the vocabulary-sized loss gradient on top of everything saved.
    # (the loss gradient is gone by the time the last layer's backward runs: the larger of the two counts)
    backward_start = (resident + opt_states + accumulated + st.buffers + acts + cache_at_backward
                      + max(act.logits_backward, 0.0 if ckpt else act.layer_grads))
    # Late in backward with checkpointing: one layer recomputed (with its weight copies) while
    # nearly all gradients already exist.
    backward_layer = (resident + opt_states + st.buffers + st.grads + act.outside + act.layer_input
                      + act.recompute + act.layer_grads + layer_cast) if ckpt else 0.0
    # Early in backward with checkpointing: the last layer is recomputed while every layer's checkpointed input
    # is still held and few gradients exist yet (the larger of the two where gradients are small, as with LoRA).
    early_layer = (resident + opt_states + accumulated + st.buffers + acts + cache_at_backward + act.recompute
                   + act.layer_grads + layer_cast) if ckpt else 0.0
    early = early_layer > backward_layer
    backward_layer = max(backward_layer, early_layer)
    step = resident + opt_states + st.grads + st.buffers + st.step_temp
    # End of backward: every gradient exists, and a tied embedding's gradient is still being summed into the
    # head's (the embedding backward's dense [V, h] gradient and the sum, as the traced steps show). With a
    # fused (or no-temporary) optimizer step this is the step's true peak.
    tied_grad = 0.0
    if (run.arch.tie_word_embeddings and run.head == "lm" and run.peft is None and not run.optimizer_in_bwd
            and run.arch.kind != "encoder"):
        tied_grad = 2 * run.arch.vocab_size * run.arch.hidden_size * (st.grads / max(1, st.trainable)) / run.tp
        if run.zero_stage >= 2 or run.fsdp in ("full_shard", "hybrid_shard", "shard_grad_op", "hybrid_shard_zero2"):
            tied_grad = 0.0  # sharded gradients are reduced unit by unit
    backward_end = resident + opt_states + st.grads + st.buffers + tied_grad
    phases = {"forward": forward, "backward": max(backward_start, backward_layer, backward_end), "optimizer step": step}
    phase = max(phases, key=phases.__getitem__)
    late_backward = phase == "backward" and max(backward_layer, backward_end) > backward_start
    end_backward = late_backward and backward_end >= backward_layer

    terms: list[list[Any]] = [  # [key, label, bytes, assumption], as Term takes them
        ["weights", "weights", st.weights + ref_model, st.weights_note],
        ["gradients", "gradients",
         st.grads if phase == "optimizer step" or (late_backward and not (early and not end_backward))
         else accumulated,
         st.grads_note + ((" (zeroed, not freed, by zero_grad)" if run.grads_kept and run.grad_accum == 1
                           else " (kept across accumulation steps)") if accumulated and phase != "optimizer step"
                          else "")],
        ["optimizer_states", "optimizer states", opt_states + st.master,
         st.optimizer_note + (" + fp32 master weights" if st.master else "")],
    ]
    if end_backward:
        terms.append(["temporaries", "tied embedding gradient being accumulated", tied_grad,
                      "the embedding's [vocab, hidden] gradient and its sum into the tied head's, end of backward"])
    elif phase != "optimizer step":
        if late_backward and early:
            activation_bytes = acts + act.recompute + act.layer_grads
            note = "early in backward: the last checkpointed layer recomputed, every layer's input still held"
        elif late_backward:
            activation_bytes = act.outside + act.layer_input + act.recompute + act.layer_grads
            note = "late in backward: one checkpointed layer recomputed, nearly all gradients present"
        else:
            activation_bytes = acts
            note = act.note
        terms.append(["activations", "activations", activation_bytes, note])
        logits = 0.0 if late_backward else (at_dequant if phase == "forward" else act.logits_backward)
        kernel = run.loss_kernel or ("liger" if run.fused_loss else None)
        note = {None: "HF cross-entropy upcasts the logits to fp32", "liger": "Liger fused linear cross-entropy",
                "trl": "TRL's fused LM head (no full logits)", "trl_chunked": "TRL chunked_nll (256-token chunks)",
                "cce": "Cut Cross-Entropy (no full logits)",
                "litgpt_head_chunks": "LitGPT: the head in 128-token chunks, chunked cross-entropy",
                "litgpt_ce_chunks": "LitGPT: full logits, cross-entropy in 128-row chunks",
                "litgpt_pretrain_ce": "LitGPT pretrain: full logits, cross-entropy in 128-row chunks",
                "torchtune_chunked": "torchtune CEWithChunkedOutputLoss (fp32 per chunk)",
                "torchtune_chunked_compiled": "torchtune CEWithChunkedOutputLoss, compiled (no fp32 copy per chunk)",
                "axolotl_chunked": "axolotl chunked_cross_entropy: CEWithChunkedOutputLoss, its per-chunk cross-entropy "
                                   "compiled (no fp32 copy per chunk)",
                "torchtune_linear_ce": "torchtune LinearCrossEntropyLoss (head and fp32 per chunk)"}.get(kernel, "fused cross-entropy")
        if run.head != "lm":
            note = "classification head: no vocabulary logits"
        terms.append(["logits", "logits and loss", logits, note])
        if phase == "backward" and not late_backward and not ckpt and act.layer_grads > act.logits_backward:
            terms[-1][2] = 0.0
            terms.append(["temporaries", "activation gradients in the last layer", act.layer_grads,
                          "the MLP's [tokens, ffn] gradients and the layer output's gradient"])
        if st.amp_weight_cache:
            cache = forward_cache if phase == "forward" else (
                (cache_at_backward + layer_cast if early else layer_cast) if late_backward else cache_at_backward)
            terms.append(["buffers", "autocast weight copies", cache,
                          "torch.autocast keeps a 16-bit copy of each fp32 weight for backward"])
        if phase == "forward" and ref_cast:
            terms.append(["buffers", "reference model's autocast weight copies", ref_cast,
                          "the reference forward runs under the same autocast: its fp32 weights' 16-bit copies "
                          "are cached until autocast exits"])
        if phase == "forward" and dequant:
            terms.append(["temporaries", "dequantized 4-bit weight", dequant,
                          "bitsandbytes dequantizes each 4-bit weight to 16 bits for its matmul"
                          + (" (the head's, beside the logit chunks so far)" if run.quantized_head else "")])
        if phase == "forward" and act.kept_4bit_inputs:
            terms.append(["activations", "4-bit linear inputs of the step before", act.kept_4bit_inputs,
                          "bitsandbytes < 0.43.2 keeps MatMul4Bit's input on its autograd context, and the loop's "
                          "kept logits keep that graph until the next forward returns"])
        if phase == "forward" and act.kv_cache:
            terms.append(["buffers", "KV cache built in forward", act.kv_cache,
                          "use_cache keeps the un-repeated k/v alive with eager attention"])
    else:
        terms.append(["temporaries", "optimizer temporaries", st.step_temp,
                      ("Adafactor's fp32 temporaries of the largest parameter" if run.optimizer.factored
                       else "the step in backward of the largest parameter: its gradient and its foreach temporary"
                       if run.optimizer_in_bwd else "foreach AdamW allocates sqrt(v) for every parameter")
                      if st.step_temp else ""])
    if act.kept_logits:
        terms.append(["logits", "logits kept from the step before", act.kept_logits,
                      "the training loop keeps the last step's logits referenced until the next forward returns"])
    if st.buffers:
        terms.append(["buffers", "communication / gather buffers", st.buffers, st.buffers_note])
    terms = [t for t in terms if t[2] > 0 or t[0] in ("weights", "gradients", "optimizer_states", "activations")]
    return terms, phase, phases, st, assumptions


def _dequant_moment(run: Run) -> tuple[float, float]:
    """(logits alive, 16-bit weight copies) at the largest 4-bit matmul of the forward's end; (0, 0) without a 4-bit
    base. A layer linear is multiplied before any logits exist. A 4-bit head (LitGPT) is multiplied chunk by chunk
    (`lm_head_chunk_size`: 128 positions x the micro-batch rows, else all T rows at once): at the last chunk the
    earlier chunks' 16-bit logits are alive; MatMul4Bit then holds the quant state's dtype and its `.to(A.dtype)`
    cast together (`dequant_copies`), and after the first is dropped, the cast beside the chunk's output."""
    copies = _dequant_bytes(run)
    if not copies or not run.quantized_head:
        return 0.0, copies
    arch = run.arch
    c = BYTES[run.precision.compute_dtype]
    T = run.tokens
    V = arch.vocab_size / run.tp
    rows = min(T, 128 * run.micro_batch) if run.loss_kernel == "litgpt_head_chunks" else T
    earlier = (T - rows) * V * c
    one = arch.vocab_size * arch.hidden_size / run.tp * 2
    if copies >= one + rows * V * c:
        return earlier, copies
    return earlier + rows * V * c, one


def _dequant_bytes(run: Run) -> float:
    """The 16-bit copies of the 4-bit weight being multiplied at the end of the forward (0 without a 4-bit base)."""
    if run.peft is None or run.peft.base_bits != 4:
        return 0.0
    arch = run.arch
    if run.quantized_head:
        largest = arch.vocab_size * arch.hidden_size
    else:
        largest = max((lin.in_features * lin.out_features for stack in arch.stacks for lin in stack.linears),
                      default=0)
    return largest / run.tp * 2 * max(1, run.dequant_copies)


def reference_model(run: Run, assumptions: list[str] | None = None) -> float:
    """Bytes of the frozen reference model preference training keeps on the GPU (0 with PEFT, precomputed
    reference log-probs or an offloaded reference model), saying which in `assumptions`."""
    said = assumptions if assumptions is not None else []
    if run.task not in ("dpo", "kto") or (run.peft is not None and not run.ref_model_kept):
        return 0.0
    if run.ref_logps_precomputed:
        # TRL precompute_ref_log_probs / open-instruct's cached reference log-probs: no reference model in training.
        said.append("reference log-probs precomputed before training: no reference model on the GPU")
        return 0.0
    if run.ref_model_offload:
        said.append("the reference model is offloaded to the host between its forwards")
        return 0.0
    # A frozen reference model in the same dtype as the policy (sharded like it under ZeRO-3); beside an adapter, the
    # frozen base as the policy holds it (quantized like it: alignment-handbook's get_model builds both alike).
    ref_model = run.arch.total_params * BYTES[run.precision.param_dtype] / (run.tp * run.pp)
    if run.peft is not None:
        ref_model = model_states(run._replace(ref_model_kept=False, kbit_fp32_upcast=False)).weights
        said.append("the script's own reference model beside the adapter: a second copy of the frozen base")
        return ref_model
    if run.zero_stage == 3 or run.fsdp in ("full_shard", "hybrid_shard"):
        ref_model /= max(1, run.dp)
    said.append("preference training (DPO/KTO) keeps a frozen reference model on the GPU")
    return ref_model
