"""From a TrainingPlan to a per-GPU memory Breakdown: resolve the model and the GPU, turn the plan
into a `memory.model.Run`, run the model, add what lives outside the allocator.

Pure apart from reading catalogs and local config.json files (never the network).
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from trainlint.catalog import models, semantics
from trainlint.catalog.architecture import UnsupportedArchitecture
from trainlint.catalog.gpus import find_gpu
from trainlint.memory.breakdown import Breakdown, Component, PhasePeak, gib
from trainlint.memory.model import OptimizerSpec, PartsMemo, Run, optimizer_spec
from trainlint.memory.phases import TRAINING, estimate_phases, run_peak_of
from trainlint.plan import COUNT_LIMIT, Origin, Precision, Setting, TrainingPlan

GIB = 2**30
# Outside the caching allocator (assumptions; see docs/memory-model.md §7).
CUDA_CONTEXT = 512 * 2**20  # CUDA context, kernels and cuBLAS/cuBLASLt workspaces, torch 2.x with lazy loading
NCCL_BUFFERS = 512 * 2**20  # NCCL communicator buffers when more than one GPU talks
FRAGMENTATION = 0.10  # caching-allocator blocks held beyond the live peak: the median of the simulated allocator over the 48 traced steps (docs/accuracy.md)
DEFAULT_SEQ_LEN = 2048
ADAMW = OptimizerSpec("adamw", "AdamW", state_factor=2, step_temp_factor=1)


class Unestimable(NamedTuple):
    """Why no estimate could be made, and where to point."""

    reason: str
    setting: Any = None  # the Setting at fault (its origin has the span), or None


def resolve_architecture(plan: TrainingPlan):
    """(Architecture, None) or (None, Unestimable)."""
    name = plan.model.value
    if not name:
        return None, Unestimable("the config does not name a model; pass --model or add "
                                 "`# trainlint: model=<name or folder>` to estimate memory")
    base = Path(plan.path).parent if plan.path else None
    try:
        arch = models.find_model(name, base_dir=base)
    except (models.ModelLookupError, UnsupportedArchitecture) as exc:
        return None, Unestimable(f"the model {name!r} cannot be sized: {exc}", plan.model)
    if arch is None:
        hint = models.closest_models(name)
        tail = f" (closest catalog entries: {', '.join(hint)})" if hint else ""
        return None, Unestimable(f"the model {name!r} is not in the catalog, not a local folder with a config.json "
                                 f"and not in the offline Hugging Face cache{tail}; pass --model with a known name "
                                 "or a folder to estimate memory", plan.model)
    return arch, None


def resolve_gpu(plan: TrainingPlan):
    if not plan.gpu.value:
        return None
    return find_gpu(plan.gpu.value)


def build_run(plan: TrainingPlan, arch, assumptions: list[str]) -> Run:
    if plan.flavor == "litgpt":
        # LitGPT's GPT (litgpt/model.py): lm_head and the embedding are two parameters, no dropout anywhere.
        built = semantics.litgpt_arch(arch)
        if built.tie_word_embeddings != arch.tie_word_embeddings:
            assumptions.append(f"LitGPT's model keeps its own lm_head ({arch.vocab_size * arch.hidden_size / 1e6:,.0f}M "
                               "parameters the Hugging Face checkpoint ties to the embedding)")
        arch = built
    optimizer = optimizer_spec(plan.optimizer.value) if plan.optimizer.value else None
    replaced = semantics.entry("litgpt", "quantize", "optimizer")
    if plan.flavor == "litgpt" and plan.peft.value is not None and plan.peft.value.base_bits and replaced and \
            optimizer_spec(replaced) is not None:
        # data "litgpt" quantize: under BitsandbytesPrecision the LoRA script builds bitsandbytes' PagedAdamW with the
        # configured AdamW's arguments (instantiate_bnb_optimizer).
        optimizer = optimizer_spec(replaced)
        assumptions.append(f"LitGPT with quantize: {replaced} instead of {plan.optimizer.value or 'AdamW'} "
                           "(instantiate_bnb_optimizer)")
    if optimizer is None:
        assumptions.append(f"optimizer {plan.optimizer.value!r} is not in the optimizer table: sized as AdamW")
        optimizer = ADAMW
    seq = plan.seq_len.value
    if not seq:
        seq = min(DEFAULT_SEQ_LEN, arch.max_position_embeddings or DEFAULT_SEQ_LEN)
        assumptions.append(f"sequence length not set: {seq} tokens assumed (pass --seq-len)")
    deepspeed = plan.zero_stage.origin.kind != "default" or plan.precision.value.master_weights
    attn = (plan.attn_impl.value or "sdpa").lower()
    attn = "eager" if attn == "eager" else "sdpa"
    if arch.model_type == "gemma2" and attn == "sdpa" and "flash" not in (plan.attn_impl.value or "").lower():
        # transformers' Gemma2 sets _supports_sdpa = False (softcapping): it runs eager attention.
        attn = "eager"
        assumptions.append("Gemma-2 has no SDPA path in transformers: eager attention (with softcapping) assumed")
    peft = plan.peft.value
    trainer = plan.trainer.value
    precision = plan.precision.value
    if (trainer == "llamafactory" and peft is not None and not peft.base_bits and precision.param_dtype == "fp32"
            and precision.autocast and semantics.entry("llama-factory", "precision", "frozen") == "checkpoint"):
        # data "llama-factory" precision: loaded with torch_dtype="auto", the frozen base stays in the checkpoint
        # dtype; only the trainable adapters are upcast to fp32.
        known = {"bf16": "bf16", "fp16": "fp16", "bfloat16": "bf16", "float16": "fp16", "float32": "fp32",
                 "fp32": "fp32"}.get(str(arch.checkpoint_dtype or "").lower())
        base = known or "bf16"
        if base != "fp32":
            precision = Precision(base, autocast=precision.autocast)
        assumptions.append(f"LLaMA-Factory LoRA: frozen base in the checkpoint dtype ({base}"
                           + ("" if known else ", assumed: the checkpoint's dtype is not known") + "), fp32 adapters")
    precision = _loaded_precision(plan, precision, arch, peft, assumptions)
    task = plan.task.value
    head = plan.head.value or "lm"
    if task == "reward" and plan.head.is_default:
        head = "seq_cls"  # reward models are *ForSequenceClassification with one label
    loss_kernel = plan.loss_kernel.value
    fused = bool(plan.fused_loss.value)
    if plan.flavor == "axolotl":
        loss_kernel, fused = _axolotl_loss(plan, loss_kernel, fused, assumptions)
    if loss_kernel is None and fused:
        loss_kernel = "liger"
    trl = _version_tuple(plan.trainer_version.value) if trainer == "trl" else None
    fused_head = semantics.entry("trl", "loss", "fused_head") or {}
    chunked_nll = semantics.entry("trl", "loss", "chunked_nll") or {}
    if trainer == "trl" and head == "lm" and task in fused_head.get("tasks", ()):
        # data "trl" loss: the fused, tiled LM head (SFT and DPO turn Liger's fused cross-entropy off for it: Liger
        # then patches only its layer kernels); before it SFT's chunked_nll (checkpointed 256-token chunks); before
        # that, and DPO before the fused head, full logits (DPO with Liger: Liger's fused DPO loss).
        where = (plan.trainer_version.origin.note or f"trl {plan.trainer_version.value}") if trl else \
            "the newest TRL: its version is not known"
        if trl is None or trl >= semantics.release(fused_head.get("from")):
            if loss_kernel == "liger":
                assumptions.append(f"use_liger_kernel: Liger's layer kernels only, its fused cross-entropy off "
                                   f"for TRL's fused LM head ({where})")
            loss_kernel = "trl"
            assumptions.append(f"TRL's fused LM head, no [tokens, vocab] logits ({where})")
        elif trl >= semantics.release(chunked_nll.get("from")) and task in chunked_nll.get("tasks", ()) \
                and loss_kernel != "liger":
            loss_kernel = "trl_chunked"
            assumptions.append(f"TRL's chunked_nll loss: checkpointed 256-token chunks ({where})")
        elif loss_kernel is None:
            assumptions.append(f"{where} builds the full [tokens, vocab] logits")
    kbit_upcast = False
    if peft is not None and peft.base_bits:
        if peft.kbit_upcast is not None:
            kbit_upcast = peft.kbit_upcast
        elif plan.flavor == "axolotl":
            # axolotl's loader calls prepare_model_for_kbit_training except where data "axolotl" kbit_upcast skips it.
            skipped = semantics.entry("axolotl", "kbit_upcast", "skipped_when") or ()
            kbit_upcast = not (("fsdp" in skipped and plan.fsdp.value is not None)
                               or ("zero3" in skipped and (plan.zero_stage.value or 0) >= 3))
        elif plan.flavor == "huggingface" and trainer in (None, "transformers"):
            kbit_upcast = True
            assumptions.append("4/8-bit base: the script calls PEFT's prepare_model_for_kbit_training (embeddings "
                               "and norms upcast to fp32), as the transformers examples do")
        quantized = semantics.entry("trl", "quantized") or {}
        if trainer == "trl" and trl is not None and trl < semantics.release(quantized.get("kbit_upcast_before")) \
                and peft.kbit_upcast is None:
            kbit_upcast = True  # older SFTTrainer called prepare_model_for_kbit_training
        if trainer == "trl" and peft.adapter_dtype is None and \
                (trl is None or trl >= semantics.release(quantized.get("bf16_adapters_from"))):
            # newer SFTTrainer casts the trainable parameters of a quantized base to bf16.
            peft = peft._replace(adapter_dtype="bf16")
    lowrank = None
    optim_name = (plan.optimizer.value or "").lower()
    args = dict(plan.optim_args.value or ())
    if optim_name.startswith(("galore_", "apollo_")):
        kind = optim_name.split("_", 1)[0]
        try:
            rank = int(args.get("rank", 128))
        except (TypeError, ValueError, OverflowError):
            rank = 128
        rank = rank if 1 <= rank <= COUNT_LIMIT else 128
        lowrank = (kind, max(1, rank), plan.optim_target_modules.value)
        full_rank = optimizer_spec(optim_name.replace("galore_", "").replace("apollo_", "").replace("_layerwise", "")
                                   .replace("adamw_8bit", "adamw_8bit"))
        if full_rank is not None:
            optimizer = full_rank
        assumptions.append(f"{kind.upper()} rank {rank}: low-rank optimizer states for optim_target_modules")
    momentum = None
    if "momentum" in args:
        try:
            momentum = float(args["momentum"])
        except (TypeError, ValueError, OverflowError):
            momentum = None
        momentum = momentum if momentum is not None and math.isfinite(momentum) else None
    in_bwd = bool(plan.optimizer_in_bwd.value) or optim_name.endswith("_layerwise")
    fsdp = plan.fsdp.value
    multi = semantics.entry("torchtune", "multi_gpu", "sharding")
    if plan.flavor == "torchtune" and multi and fsdp is None and plan.num_gpus.value > 1 and \
            (plan.zero_stage.value or 0) == 0:
        # data "torchtune" multi_gpu: no DDP path; the distributed recipes shard with FSDP2 (fully_shard).
        fsdp = multi
        assumptions.append("torchtune on several GPUs: a distributed recipe, FSDP2-sharded (torchtune has no DDP)")
    if plan.flavor == "axolotl" and not precision.master_weights:
        precision = _axolotl_precision(plan, precision, fsdp, peft, loss_kernel, assumptions)
    kv_expanded, keeps_logits, logits_out = _framework_layout(plan, precision, loss_kernel)
    if peft is not None and peft.switches:
        targets = semantics.litgpt_lora_targets(arch, {name: True for name in peft.switches})
        head_lora = "lora_head" in peft.switches and \
            (semantics.entry("litgpt", "lora", "switches", "lora_head") or {}).get("part") == "head"
        peft = peft._replace(target_modules=targets, head_rank=peft.rank if head_lora else 0)
        assumptions.append(f"LitGPT LoRA ({', '.join(peft.switches) or 'no switch on'}): "
                           f"{', '.join(targets + (['lm_head'] if head_lora else [])) or 'no linear'} adapted")
    if plan.torch_compile.value:
        assumptions.append("torch_compile: the compiled chunked loss is modelled, the layers as in eager mode "
                           "(compiled graphs can save less)" if loss_kernel == "torchtune_chunked_compiled" else
                           "torch_compile: memory as in eager mode (compiled graphs can save less)")
    if plan.padding_free.value:
        assumptions.append("padding_free: sequences packed without padding; the sequence length is the packed length")
    if any(getattr(st, "ssm", None) is not None for st in getattr(arch, "stacks", ())):
        # transformers' Mamba/Mamba-2/Jamba mixers take the fused CUDA kernels in training when mamba_ssm and
        # causal_conv1d are installed; without them the torch slow path saves [tokens, d_inner, d_state] tensors.
        assumptions.append("Mamba layers: the fused CUDA kernels (mamba_ssm, causal_conv1d installed); the torch "
                           "slow path without them saves far more (fp32 [tokens, d_inner, d_state] tensors)")
    # Values a framework would reject (the schema rules report them) are clamped to something sane.
    return Run(
        arch=arch, micro_batch=max(1, plan.micro_batch.value), seq_len=max(1, seq), precision=precision,
        optimizer=optimizer, zero_stage=min(3, max(0, plan.zero_stage.value or 0)), fsdp=fsdp,
        offload_optimizer=plan.offload_optimizer.value, offload_params=plan.offload_params.value,
        world=max(1, plan.num_gpus.value), tp=max(1, plan.tensor_parallel.value),
        pp=max(1, plan.pipeline_parallel.value), cp=max(1, plan.context_parallel.value), grad_ckpt=plan.grad_ckpt.value,
        attn=attn, peft=peft, fused_loss=fused, task=task, deepspeed=deepspeed,
        activation_offload=bool(plan.activation_offload.value), grad_accum=max(1, plan.grad_accum.value),
        kbit_fp32_upcast=kbit_upcast, head=head, loss_kernel=loss_kernel, grads_kept=bool(plan.grads_kept.value),
        liger_accum_fp32=bool(plan.liger_accum_fp32.value), optimizer_in_bwd=in_bwd, momentum=momentum,
        lowrank=lowrank, ref_logps_precomputed=bool(plan.ref_logps_precomputed.value),
        ref_model_offload=bool(plan.ref_model_offload.value), ref_model_kept=_ref_model_kept(plan, peft, assumptions), image_tokens=_image_tokens(plan, arch, assumptions),
        kv_expanded=kv_expanded, keeps_logits=keeps_logits, logits_out_bytes=logits_out,
        fused_activation=plan.flavor == "litgpt" and bool(semantics.entry("litgpt", "model", "fused_activation")),
        bnb_saves_input=_bnb_saves_input(plan, peft, assumptions),
        quantized_head=plan.flavor == "litgpt" and peft is not None and bool(peft.base_bits),
        dequant_copies=_dequant_copies(plan, precision, peft),
        loss_chunks=max(1, plan.loss_chunks.value or int(semantics.entry("torchtune", "loss", "default_chunks") or 8)),
        **_phase_fields(plan, fsdp, max(1, seq), assumptions))


def _ref_model_kept(plan: TrainingPlan, peft, assumptions: list[str]) -> bool:
    """A DPO run with an adapter whose script passes DPOTrainer its own reference model (context/reference.py): TRL
    from 0.28 keeps it beside the adapter (0.19.1-0.27 refuse it unless force_use_ref_model, rule TL660)."""
    if peft is None or not plan.ref_model_with_peft.value:
        return False
    assumptions.append(f"a reference model beside the adapter ({plan.ref_model_with_peft.origin.note}): kept on the "
                       "GPU, as TRL >= 0.28 (and force_use_ref_model) do")
    return True


_DTYPE_NAMES = {"bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16", "float16": "fp16", "half": "fp16",
                "fp32": "fp32", "float32": "fp32", "float": "fp32"}


def _loaded_precision(plan: TrainingPlan, precision: Precision, arch, peft, assumptions: list[str]) -> Precision:
    """The precision with the weights in the dtype from_pretrained loads them in (plan.load_dtype, decided by
    context/precision.py): `checkpoint` is the model's config.json dtype (data "transformers" load_dtype), else
    an assumed one that is said. Autocast in the weights' own dtype is pure 16-bit training (the optimizer states
    follow the parameters' dtype); ms-swift's bf16 / fp16 follow the loaded dtype when the file sets neither."""
    load = plan.load_dtype
    if plan.flavor != "huggingface" or precision.master_weights or precision.param_dtype != "fp32":
        return precision
    if load.value is None:
        if load.origin.kind == "inferred" and load.origin.note:
            assumptions.append(load.origin.note)
        return precision
    if load.value in ("auto", "checkpoint"):
        known = _DTYPE_NAMES.get(str(arch.checkpoint_dtype or "").lower())
        fallback = (semantics.entry("transformers", "load_dtype") or {}).get("unknown_checkpoint", "bf16")
        weights = known or fallback
        why = "torch_dtype: auto" if load.value == "auto" else (load.origin.note or "the checkpoint's dtype")
        assumptions.append(f"weights loaded in the checkpoint's dtype, {weights} ({why})" if known else
                           f"weights loaded in the checkpoint's dtype ({why}): {weights} assumed, config.json "
                           "names none known here; declare torch_dtype")
    else:
        return precision  # a dtype stated or known (the precision already holds it)
    autocast = precision.autocast
    if plan.autocast_follows_load.value:
        autocast = ((semantics.entry("ms-swift", "precision") or {}).get("autocast_of") or {}).get(weights, autocast)
        assumptions.append(f"{autocast} autocast: {plan.autocast_follows_load.origin.note}")
    if weights == "fp32":
        return Precision("fp32", autocast=autocast, fp8=precision.fp8)
    if weights == "fp16" and autocast == "fp16" and peft is None:
        assumptions.append("fp16 weights under fp16 AMP: torch's GradScaler.unscale_ refuses fp16 gradients "
                           "('Attempting to unscale FP16 gradients.') at the first optimizer step")
    return Precision(weights, autocast=None if autocast in (None, weights) else autocast, fp8=precision.fp8)


def _axolotl_loss(plan: TrainingPlan, kernel: str | None, fused: bool,
                  assumptions: list[str]) -> tuple[str | None, bool]:
    """(loss kernel, fused) as the axolotl release runs them (data/framework_semantics.json "axolotl" loss): the
    Cut Cross-Entropy plugin exists from 0.8.0 and patches on its own (cut_cross_entropy unset) only from 0.9.0;
    chunked_cross_entropy exists from 0.11.0. An unknown release is taken to be the newest."""
    rules = semantics.entry("axolotl", "loss") or {}
    release = _version_tuple(plan.trainer_version.value)
    where = plan.trainer_version.origin.note or f"axolotl {plan.trainer_version.value}"
    if kernel == "cce":
        cce = rules.get("cut_cross_entropy") or {}
        alone = plan.loss_kernel.origin.key_path == ("plugins",)
        start = cce.get("plugin_alone_from") if alone else cce.get("from")
        if release is not None and start and release < semantics.release(start):
            assumptions.append(f"{where}: Cut Cross-Entropy " + ("not patched: cut_cross_entropy unset (the plugin's "
                               f"default is on from {start})" if alone else f"plugin absent (from {start})"))
            return None, False
        if release is None and alone:
            assumptions.append(f"CutCrossEntropyPlugin with cut_cross_entropy unset: patched (axolotl >= {start}; "
                               "the release is not known)")
    chunked = rules.get("chunked") or {}
    if kernel is not None and kernel == chunked.get("kernel"):
        start = chunked.get("from")
        if release is not None and start and release < semantics.release(start):
            assumptions.append(f"{where}: no chunked_cross_entropy (from {start}): the full fp32 logits")
            return None, fused
    return kernel, fused


def _dequant_copies(plan: TrainingPlan, precision: Precision, peft) -> int:
    """16-bit copies of a 4-bit weight in bitsandbytes' MatMul4Bit.forward: dequantize_4bit returns the quant state's
    dtype, then .to(A.dtype). Fabric's BitsandbytesPrecision quantizes from fp16 (_Linear4bit.quantize:
    weight.to(dtype=torch.half)), so a bf16 run makes a second copy; elsewhere the weight is taken to be quantized
    from the compute dtype (one copy)."""
    if peft is None or peft.base_bits != 4:
        return 0
    if plan.flavor == "litgpt" and precision.compute_dtype != "fp16":
        return 2
    return 1


def _bnb_saves_input(plan: TrainingPlan, peft, assumptions: list[str]) -> bool:
    """Whether bitsandbytes' 4-bit matmul keeps each quantized linear's input (data "bitsandbytes" matmul_4bit), for
    the bitsandbytes a LitGPT release pins (data "litgpt" quantize); elsewhere the bitsandbytes version is not known
    and the newer behaviour (no input kept) is assumed."""
    if peft is None or peft.base_bits != 4 or plan.flavor != "litgpt":
        return False
    litgpt = _version_tuple(plan.trainer_version.value)
    if litgpt is None:
        return False
    pins = semantics.entry("litgpt", "quantize", "bitsandbytes_by_release") or []
    bnb = next((pin for start, pin in pins if litgpt >= semantics.release(start)), None)
    before = semantics.entry("bitsandbytes", "matmul_4bit", "saves_input_before")
    if bnb is None or not before or semantics.release(bnb) >= semantics.release(before):
        return False
    assumptions.append(f"bitsandbytes {bnb} (pinned by litgpt {plan.trainer_version.value}): every 4-bit linear keeps "
                       f"its input for backward (MatMul4Bit, before {before})")
    return True


def _axolotl_precision(plan: TrainingPlan, precision: Precision, fsdp: str | None, peft, loss_kernel: str | None,
                       assumptions: list[str]) -> Precision:
    """The weights as axolotl holds them for this run (data/framework_semantics.json "axolotl"), from the dtype it
    loads in, for the run as planned (the fix planner may add FSDP or an adapter): under FSDP accelerate upcasts the
    16-bit parameters to fp32; otherwise the embeddings, head and norms stay fp32 only for a full fine-tune with
    eager/SDPA attention and no Cut Cross-Entropy."""
    load = precision.linears or (precision.param_dtype if precision.param_dtype in ("bf16", "fp16") else None)
    if load is None:
        return precision
    if fsdp is not None:
        if semantics.entry("axolotl", "fsdp_params", "value") != "fp32":
            return precision
        assumptions.append("axolotl under FSDP: accelerate upcasts the 16-bit parameters to fp32 (mixed precision)")
        return Precision("fp32", autocast=load)
    attention = None if plan.attn_impl.is_default else plan.attn_impl.value
    held = semantics.axolotl_held(load, adapter=peft is not None, fsdp=False, attention=attention,
                                  cut_cross_entropy=loss_kernel == "cce")
    return Precision("fp32", autocast=load, linears=load) if held.fp32_rest else Precision(load)


def _framework_layout(plan: TrainingPlan, precision: Precision, loss_kernel: str | None) -> tuple[bool, bool, int]:
    """(k/v expanded before attention, the loop keeps the last logits, bytes per logit handed to the loss) as the
    framework's own code runs them (data/framework_semantics.json); HF semantics elsewhere."""
    if plan.flavor != "litgpt":
        return False, False, 0
    kv = bool(semantics.entry("litgpt", "attention", "kv_expanded"))
    kernels = {semantics.litgpt_loss(script).get("kernel") for script in ("lora", "full", "pretrain")}
    keeps = loss_kernel in kernels and bool(semantics.entry("litgpt", "loss", "previous_logits_alive"))
    # Every Fabric precision plugin (true, mixed, bitsandbytes, FSDP, DeepSpeed) converts the module's floating
    # outputs to torch.get_default_dtype() (data "litgpt" precision logits_returned).
    returned = semantics.entry("litgpt", "precision", "logits_returned")
    return kv, keeps, (4 if returned == "fp32" else 0)


def _phase_fields(plan: TrainingPlan, fsdp: str | None, seq: int, assumptions: list[str]) -> dict[str, Any]:
    """The Run fields of the phases around the step (memory/phases.py): evaluation's batch and what it keeps,
    generation, TRL's reference log-prob precompute, and how checkpoints are saved."""
    out: dict[str, Any] = {"low_cpu_mem_usage": plan.low_cpu_mem_usage.value,
                           "save_optimizer": not plan.save_only_model.value}
    world = max(1, plan.num_gpus.value)
    dp = plan.data_parallel
    # Unset: TrainingArguments' per_device_eval_batch_size default 8; axolotl's normalize_config sets its
    # eval_batch_size to micro_batch_size.
    eval_batch = max(1, plan.eval_batch.value or (plan.micro_batch.value if plan.flavor == "axolotl" else 8))
    if plan.evaluation.value:
        out["eval_batch"] = eval_batch
        kept = plan.eval_predictions.value or "none"
        if plan.predict_with_generate.value and kept == "none":
            kept = "generated"
        out["eval_predictions"] = kept
        if kept != "none":
            # gather_for_metrics hands every rank all ranks' predictions.
            accumulation = plan.eval_accumulation.value or (plan.grad_accum.value if plan.flavor == "axolotl" else None)
            if accumulation:
                out["eval_kept_rows"] = accumulation * eval_batch * dp
            elif plan.eval_samples.value:
                out["eval_kept_rows"] = plan.eval_samples.value
            else:
                out["eval_kept_rows"] = eval_batch * dp
                assumptions.append(f"evaluation keeps its {kept} on the GPU until it ends (eval_accumulation_steps "
                                   "unset): counted for one batch; the evaluation set's size is not known (declare "
                                   "`# trainlint: eval-samples=N`)")
        elif plan.eval_predictions.is_default:
            assumptions.append("evaluation keeps only the loss: the Trainer gathers predictions only with a "
                               "compute_metrics (declare `# trainlint: eval-predictions=logits` if the script passes one)")
        if plan.predict_with_generate.value:
            out["gen_length"] = plan.generation_max_length.value or seq
            out["gen_beams"] = max(1, plan.generation_num_beams.value or 1)
    if plan.ref_logps_precomputed.value and plan.task.value in ("dpo", "kto") and plan.trainer.value == "trl":
        # DPOTrainer._precompute_ref_logps: precompute_ref_batch_size, else the train batch (the eval set: the eval
        # batch).
        batch = plan.precompute_ref_batch.value or max(plan.micro_batch.value, eval_batch if plan.evaluation.value else 0)
        out["precompute_batch"] = max(1, batch)
    sharded_fsdp = fsdp is not None and fsdp != "no_shard" and world > 1
    if sharded_fsdp:
        kind = (plan.fsdp_state_dict.value or ("FULL_STATE_DICT" if plan.fsdp_version.value == 1 else
                                               "SHARDED_STATE_DICT")).upper()
        out["save_mode"] = "fsdp_full" if kind == "FULL_STATE_DICT" else "fsdp_sharded"
    elif (plan.zero_stage.value or 0) >= 3 and world > 1:
        out["save_mode"] = "zero3_16bit" if plan.zero3_save_16bit.value else "zero3_shards"
    return out


def _image_tokens(plan: TrainingPlan, arch, assumptions: list[str]) -> int:
    """Vision-tower tokens per row: images per sample x (resolution // patch)^2, when the plan gives the number of
    images and a resolution is known (the plan's, else the tower config's image_size). Otherwise 0, and the sizing
    assumptions say the image tokens' activations are not modelled."""
    towers = [t for t in getattr(arch, "towers", ()) if t.role == "vision" and t.num_layers]
    images = plan.images_per_sample.value
    if not towers or not images or images <= 0:
        return 0
    tower = towers[0]
    size = plan.image_size.value or tower.image_size
    if not size or not tower.patch_size:
        return 0
    if plan.vision_frozen.value:
        # LLaMA-Factory keeps lora_target "all" out of a frozen tower too (model_utils/misc.py find_all_linear_modules).
        assumptions.append(f"vision tower frozen ({plan.vision_frozen.origin.note or 'freeze_vision_tower'}): "
                           "its image-token activations are not saved for backward")
        return 0
    tokens = images * (size // tower.patch_size) ** 2
    assumptions.append(f"vision tower: {images} image(s) x ({size} // {tower.patch_size})^2 patches = {tokens:,} "
                       "image tokens per sample, activations as a ViT encoder stack")
    return tokens


def _sizing_assumptions(arch, images_stated: bool = False) -> list[str]:
    """How the model's parameters were counted, when it is not the exact per-family builder, and
    what of a multimodal model the layer-by-layer terms leave out."""
    notes = []
    if getattr(arch, "approximate", False):
        notes.append(f"model size approximate ({arch.total_params / 1e9:.2f}B params): {arch.sizing_note}")
    elif getattr(arch, "sizing", "exact") == "checkpoint":
        notes.append(f"parameters: {arch.sizing_note}")
    towers = getattr(arch, "towers", ())
    if towers:
        parts = ", ".join(f"{t.role} {t.params / 1e6:,.0f}M" for t in towers)
        if images_stated:
            notes.append(f"multimodal: {parts} params are in the weights, gradients and optimizer states")
        else:
            notes.append(f"multimodal: {parts} params are in the weights, gradients and optimizer states; "
                         "their activations (image tokens) are not modelled: name images-per-sample (and "
                         "image-size) in a `# trainlint:` directive or [tool.trainlint] to model them")
    return notes


def _version_tuple(text) -> tuple | None:
    """(1, 16, 0) from "1.16.0" (pre/dev suffixes dropped); None when absent or unreadable."""
    return _parsed_version(str(text)) if text else None


@lru_cache(maxsize=64)  # every re-estimate of the fix planner reads the same trainer version
def _parsed_version(text: str) -> tuple | None:
    parts = []
    for piece in text.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit()) if piece[:1].isdigit() else ""
        if not digits:
            break
        parts.append(int(digits[:6]))
    return tuple(parts) or None


def with_versions(plan: TrainingPlan, versions) -> TrainingPlan:
    """The plan with the trainer library's resolved version (from `LintContext.versions`), so every re-estimate of
    it (fix planner, hovers) follows the same framework semantics."""
    # LitGPT and axolotl run their own scripts: their release is the trainer's version.
    plan = _zeroed_grads_kept(plan, versions)
    trainer = plan.trainer.value or (plan.flavor if plan.flavor in ("litgpt", "axolotl") else None)
    found = versions.get(trainer) if versions is not None and trainer and hasattr(versions, "get") else None
    if found is None or not getattr(found, "version", None) or not plan.trainer_version.is_default:
        return plan
    note = found.describe() if hasattr(found, "describe") else str(found.version)
    return plan.with_(trainer_version=Setting(found.version, Origin("inferred", note=note)))


def _zeroed_grads_kept(plan: TrainingPlan, versions) -> TrainingPlan:
    """The plan with `grads_kept` when the run's torch is known to be one whose `zero_grad()` fills the gradients with
    zeros (before 2.0) and its trainer calls it with the default (data/framework_semantics.json "torch" zero_grad)."""
    entry = semantics.entry("torch", "zero_grad") or {}
    admits = getattr(versions, "admits", None)
    if not plan.grads_kept.is_default or plan.flavor not in entry.get("default_callers", ()) or admits is None:
        return plan
    if admits("torch", entry.get("keeps_zeroed", "")) is not True:
        return plan
    found = versions.get("torch")
    note = (f"{found.describe() if hasattr(found, 'describe') else 'torch'}: the Trainer's model.zero_grad() keeps "
            "zero-filled gradients (set_to_none=False before torch 2.0)")
    return plan.with_(grads_kept=Setting(True, Origin("inferred", note=note)))


def estimate_plan(plan: TrainingPlan, arch, gpu=None) -> Breakdown:
    assumptions: list[str] = []
    run = build_run(plan, arch, assumptions)
    whole = estimate_phases(run)
    result = whole.step
    assumptions.extend(result.assumptions)
    assumptions.extend(whole.assumptions)
    assumptions.extend(_sizing_assumptions(arch, images_stated=any(a.startswith("vision tower") for a in assumptions)))
    deciding = whole.deciding
    terms = result.terms if deciding.name == TRAINING else deciding.terms
    components = tuple(Component(t.key, t.label, int(t.bytes), t.assumption) for t in terms)
    reserved = _reserved(deciding.allocated)
    overhead = [Component("overhead", label, size, note)
                for label, size, note in _outside_allocator(run, result.paged_bytes)]
    outside = sum(c.bytes for c in overhead)
    total = reserved + outside
    run_phases = tuple(PhasePeak(p.name, p.allocated, _reserved(p.allocated) + outside, p.host_bytes, p.knobs,
                                 p.note, tuple(Component(t.key, t.label, int(t.bytes), t.assumption) for t in p.terms))
                       for p in whole.phases)
    for setting, what in ((plan.micro_batch, "micro-batch"), (plan.num_gpus, "world size"),
                          (plan.precision, "precision"), (plan.optimizer, "optimizer"), (plan.grad_ckpt, "checkpointing")):
        if setting.origin.kind == "default" and setting.origin.note:
            assumptions.append(f"{what}: {setting.origin.note}")
    assumptions.append(f"peak reserved = allocated + {FRAGMENTATION:.0%} caching-allocator fragmentation")
    return Breakdown(model=arch.name, gpu=gpu, gpu_count=plan.num_gpus.value, components=components,
                     peak_allocated=deciding.allocated, peak_reserved=reserved, total=total,
                     peak_phase=result.peak_phase if deciding.name == TRAINING else deciding.name,
                     overhead=tuple(overhead), host_bytes=result.host_bytes,
                     assumptions=tuple(dict.fromkeys(assumptions)), phases=result.phases, run_phases=run_phases,
                     paged_bytes=result.paged_bytes)


def estimate_total(plan: TrainingPlan, arch, memo: PartsMemo | None = None,
                   kept: TotalsCache | None = None) -> tuple[int, int]:
    """`(total, host_bytes)` of `estimate_plan(plan, arch)`: what the fix planner compares with the card and shows,
    without building the breakdown (its components and assumptions) for each candidate it re-estimates; `memo`
    shares the model states and activations between candidates, `kept` the totals of runs estimated before."""
    run = build_run(plan, arch, [])
    return kept.total(run, memo) if kept is not None else _run_total(run, memo)


def _run_total(run: Run, memo: PartsMemo | None) -> tuple[int, int]:
    allocated, host_bytes, paged_bytes = run_peak_of(run, memo)
    return _reserved(allocated) + sum(size for _, size, _ in _outside_allocator(run, paged_bytes)), host_bytes


_ARCH_AT = Run._fields.index("arch")


class TotalsCache:
    """`estimate_total` of runs estimated before, by the runs' values: the language server re-plans a file at
    every edit, and a check of many copies of one config plans the same candidates for each.

    A key holds the Run fields' types and values (8 and 8.0 are different keys), the architecture by identity
    (catalog architectures are made once per process; it is kept with the total, so its id is not reused); a run
    with an unhashable value (a list of LoRA target modules) is estimated and not kept. The total is a function of
    the run alone (`estimate_run` is pure), so a hit is what estimating would give. The tuple of types is shared by
    the keys that have it: a (type, value) pair per field made each entry ~2.2 kB (a full cache ~4.5 MB), ~0.5 kB so."""

    LIMIT = 2048  # totals kept (~0.5 kB each, ~20 plans); all are dropped when it is reached

    def __init__(self) -> None:
        self._totals: dict[tuple, tuple[Any, int, int]] = {}
        self._types: dict[tuple, tuple] = {}

    def total(self, run: Run, memo: PartsMemo | None = None) -> tuple[int, int]:
        values = list(run)
        values[_ARCH_AT] = id(values[_ARCH_AT])
        types = tuple(map(type, values))
        key = (self._types.setdefault(types, types), tuple(values))
        try:
            found = self._totals.get(key)
        except TypeError:  # unhashable
            return _run_total(run, memo)
        if found is None:
            if len(self._totals) >= self.LIMIT:
                self._totals.clear()
                self._types.clear()
            found = self._totals[key] = (run.arch, *_run_total(run, memo))
        return found[1], found[2]


def _reserved(peak_allocated: int) -> int:
    """What the caching allocator holds at the peak: the live tensors plus fragmentation."""
    return int(peak_allocated * (1 + FRAGMENTATION))


def _outside_allocator(run: Run, paged_bytes: int) -> list[tuple[str, int, str]]:
    """The card's memory outside the caching allocator: (label, bytes, assumption) of each part."""
    parts = [("CUDA context and workspaces", CUDA_CONTEXT,
              "CUDA context, kernels and cuBLAS workspaces (torch 2.x, lazy module loading)")]
    if run.world > 1:
        parts.append(("NCCL buffers", NCCL_BUFFERS, "NCCL communicator buffers"))
    if paged_bytes:
        parts.append(("paged optimizer state", paged_bytes,
                      "bitsandbytes paged optimizer state in CUDA unified memory; it can spill to host RAM under "
                      "pressure, slowly"))
    return parts


def attach(ctx) -> None:
    """Fill ctx.architecture, ctx.gpu, ctx.estimate (or ctx.unestimable) for the rules."""
    plan = ctx.plan
    ctx.gpu = resolve_gpu(plan)
    arch, problem = resolve_architecture(plan)
    ctx.architecture = arch
    if arch is None:
        ctx.unestimable = problem
        return
    plan = with_versions(plan, getattr(ctx, "versions", None))
    ctx.plan = plan
    ctx.estimate = estimate_plan(plan, arch, ctx.gpu)
    ctx.replan = lambda changes: estimate_plan(plan.with_(**changes), arch, ctx.gpu)


def what_if(result, **changes) -> Breakdown | None:
    """The estimate with some plan fields changed (values, not Settings), for hovers and inlay hints."""
    plan = getattr(result, "plan", None)
    if plan is None:
        return None
    arch, _ = resolve_architecture(plan)
    if arch is None:
        return None
    fields = {name: Setting(value, Origin("cli", note="what if")) for name, value in changes.items()}
    return estimate_plan(plan.with_(**fields), arch, resolve_gpu(plan))


__all__ = ["attach", "estimate_plan", "estimate_total", "TotalsCache", "what_if", "resolve_architecture", "resolve_gpu",
           "Unestimable", "gib"]
