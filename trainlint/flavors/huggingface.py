"""Hugging Face TrainingArguments-style YAML/JSON: plain HfArgumentParser scripts, TRL (SFT/DPO/GRPO +
ModelConfig, alignment-handbook recipes), LLaMA-Factory and open-instruct.

Defaults follow the frameworks (transformers `training_args.py`, TRL `trl/trainer/*_config.py`):
per_device_train_batch_size 8; TRL turns bf16 (from 0.19: context/precision.py) and gradient checkpointing on by
default; LLaMA-Factory checkpoints by default and holds trainable weights in fp32 unless `pure_bf16`.
"""

from __future__ import annotations

import math

from trainlint.catalog import semantics
from trainlint.document.tree import Document
from trainlint.flavors import deepspeed as ds
from trainlint.flavors.base import ConfigView, as_bool, as_str, as_targets, top_keys
from trainlint.plan import (
    AMP_BF16,
    AMP_FP16,
    FP32,
    PURE_BF16,
    PURE_FP16,
    Origin,
    Peft,
    ReadResult,
    Setting,
    TrainingPlan,
    default,
    inferred,
)

NAME = "huggingface"

TRAINING_KEYS = {
    "output_dir", "per_device_train_batch_size", "gradient_accumulation_steps", "learning_rate",
    "num_train_epochs", "max_steps", "lr_scheduler_type", "warmup_ratio", "warmup_steps", "logging_steps",
    "save_strategy", "save_steps", "eval_strategy", "evaluation_strategy", "bf16", "fp16", "optim",
    "report_to", "deepspeed", "fsdp", "gradient_checkpointing", "per_device_eval_batch_size", "do_train",
    "model_name_or_path", "weight_decay", "seed", "per_gpu_train_batch_size",
}
TRL_KEYS = {"max_length", "max_seq_length", "packing", "beta", "use_peft", "lora_r", "num_generations",
            "dataset_name", "max_prompt_length", "max_completion_length", "dataset_mixture", "dataset_mixer",
            "chat_template", "loss_type", "dataset_text_field", "completion_only_loss"}
LLAMAFACTORY_KEYS = {"stage", "finetuning_type", "template", "cutoff_len", "lora_target", "quantization_bit"}
OPEN_INSTRUCT_KEYS = {"with_tracking", "checkpointing_steps", "dataset_mixer", "use_flash_attn", "use_qlora"}
OTHER_FLAVOR_KEYS = {"trainer", "distributed_type", "base_model", "checkpoint_dir", "zero_optimization",
                     "train_micro_batch_size_per_gpu", "micro_batch_size", "sequence_len"}

DTYPES = {"bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "fp16": "fp16", "half": "fp16",
          "float32": "fp32", "fp32": "fp32", "float": "fp32"}


def detect(doc: Document) -> float:
    keys = top_keys(doc)
    if not keys or keys & {"trainer", "distributed_type", "base_model", "zero_optimization"}:
        return 0.0
    if any(doc.find((k, "_component_")) is not None for k in keys):
        return 0.0
    hits = len(keys & TRAINING_KEYS) + len(keys & (TRL_KEYS | LLAMAFACTORY_KEYS | OPEN_INSTRUCT_KEYS))
    kind = doc.root.get("type") if doc.root is not None else None
    if kind is not None and kind.kind == "scalar" and isinstance(kind.value, str):
        # A top-level `type:` selects a registered class (levanter/draccus `type: sophia-h`, mmengine-style
        # registries); no TrainingArguments/TRL/LLaMA-Factory dataclass has that field: more evidence is needed.
        return min(0.95, 0.5 + 0.05 * hits) if hits >= 3 else 0.0
    if hits >= 2:
        return min(0.95, 0.5 + 0.05 * hits)
    return 0.3 if hits == 1 and len(keys) <= 3 else 0.0


def dialect(doc: Document) -> str:
    keys = top_keys(doc)
    if keys & LLAMAFACTORY_KEYS:
        return "llamafactory"
    if keys & {"with_tracking", "checkpointing_steps", "use_flash_attn", "use_qlora"}:
        return "open-instruct"
    if keys & TRL_KEYS:
        return "trl"
    return "transformers"


def read(doc: Document, overrides: dict | None = None) -> ReadResult:
    """`overrides`: {key path: (value, Origin)} that win over the file's (see ConfigView)."""
    view = ConfigView(doc, overrides=overrides)
    kind = dialect(doc)
    plan = TrainingPlan(flavor=NAME, path=doc.path)
    changes: dict = {}

    model = view.first(("model_name_or_path",), ("model_name",), convert=as_str)
    if model is not None:
        changes["model"] = model

    micro = view.first(("per_device_train_batch_size",), ("per_gpu_train_batch_size",))
    changes["micro_batch"] = micro or default(8, "per_device_train_batch_size not set: the TrainingArguments default is 8")
    gas = view.int("gradient_accumulation_steps")
    changes["grad_accum"] = gas or default(1, "gradient_accumulation_steps not set: 1")

    seq = view.first(("max_length",), ("max_seq_length",), ("cutoff_len",), ("model_max_length",),
                     ("block_size",), ("sequence_len",))
    if seq is None and view.has("max_prompt_length") and view.has("max_completion_length"):
        prompt, completion = view.int("max_prompt_length"), view.int("max_completion_length")
        if prompt and completion:
            seq = Setting(prompt.value + completion.value,
                          view.origin(("max_completion_length",), "max_prompt_length + max_completion_length"))
    if seq is None:
        if kind == "trl":
            seq = default(1024, "max_length not set: TRL's default is 1024 tokens")
        elif kind == "llamafactory":
            seq = default(2048, "cutoff_len not set: LLaMA-Factory's default is 2048 tokens")
    if seq is not None:
        changes["seq_len"] = seq

    changes["precision"] = _precision(view, kind)
    stated = view.first(("torch_dtype",), ("dtype",), convert=as_str)
    loaded = DTYPES.get(stated.value.strip().lower(), stated.value.strip().lower()) if stated is not None else None
    if stated is not None and loaded in ("auto", "bf16", "fp16", "fp32") and kind != "llamafactory":
        # the dtype from_pretrained gets; `auto`: the checkpoint's (resolved with the model, memory/estimate.py)
        changes["load_dtype"] = Setting(loaded, stated.origin)

    ckpt = view.bool("gradient_checkpointing")
    if ckpt is not None:
        changes["grad_ckpt"] = Setting("full" if ckpt.value else "none", ckpt.origin)
    elif kind == "llamafactory":
        off = view.bool("disable_gradient_checkpointing")
        changes["grad_ckpt"] = (Setting("none" if off.value else "full", off.origin) if off is not None else
                                default("full", "LLaMA-Factory checkpoints activations unless disable_gradient_checkpointing"))
    elif kind == "trl":
        changes["grad_ckpt"] = default("full", "TRL configs enable gradient_checkpointing by default")

    optim = view.str("optim")
    if optim is not None:
        changes["optimizer"] = optim
    elif as_bool(view.value("adafactor")):
        changes["optimizer"] = Setting("adafactor", view.origin(("adafactor",)))
    else:
        changes["optimizer"] = default("adamw_torch_fused", "optim not set: transformers defaults to adamw_torch_fused")

    attn = view.str("attn_implementation")
    if attn is not None:
        changes["attn_impl"] = attn
    elif kind == "llamafactory":
        fa = view.str("flash_attn")
        mapping = {"fa2": "flash_attention_2", "sdpa": "sdpa", "disabled": "eager", "auto": "sdpa"}
        if fa is not None and fa.value in mapping:
            changes["attn_impl"] = Setting(mapping[fa.value], fa.origin)
    elif as_bool(view.value("use_flash_attn")):
        changes["attn_impl"] = Setting("flash_attention_2", view.origin(("use_flash_attn",)))

    liger = view.first(("use_liger_kernel",), ("enable_liger_kernel",), ("use_liger",), convert=as_bool)
    if liger is not None:
        changes["fused_loss"] = liger
        stage = view.str("stage")
        fused_stages = semantics.entry("llama-factory", "liger", "fused_stages") or ()
        if kind == "llamafactory" and liger.value and stage is not None and stage.value not in fused_stages:
            # apply_liger_kernel(require_logits=True): Liger without its fused linear cross-entropy; the stage
            # builds the full logits.
            changes["fused_loss"] = Setting(False, view.origin(("stage",), f"LLaMA-Factory stage {stage.value}: Liger "
                                                               "without fused linear cross-entropy (liger_kernel.py)"))

    peft = _peft(view, kind)
    if peft is not None:
        changes["peft"] = peft

    fsdp = _fsdp(view)
    if fsdp is not None:
        changes["fsdp"], offload = fsdp
        if offload is not None:
            changes["offload_params"] = offload
            changes["offload_optimizer"] = offload
        # FSDP's own checkpointing (fsdp_config.activation_checkpointing: accelerate's FSDP plugin wraps every layer
        # in checkpoint_wrapper), the spelling TL425 recommends under FSDP instead of gradient_checkpointing.
        fsdp_ckpt = view.bool("fsdp_config", "activation_checkpointing")
        if fsdp_ckpt is not None and fsdp_ckpt.value and fsdp[0].value != "no_shard":
            changes["grad_ckpt"] = Setting("full", fsdp_ckpt.origin)

    task = _task(view, kind)
    if task is not None:
        changes["task"] = task
    _extras(view, kind, changes)

    plan = plan.with_(**changes)
    linked = []
    ds_node = view.node("deepspeed")
    if view.overrides.get(("deepspeed",), (None,))[0] is not None:  # the launch's --deepspeed X wins
        plan, linked = link_launch_deepspeed(plan, doc, view, host=NAME)
    elif ds_node is not None:
        plan, linked = link_deepspeed(plan, doc, ds_node, host=NAME)
    return ReadResult(plan, linked)


def link_launch_deepspeed(plan: TrainingPlan, doc: Document, view: ConfigView, host: str):
    """Lay the DeepSpeed config that the launch's `--deepspeed X` names over `plan`: the command line wins over the
    file's own `deepspeed:` key (HfArgumentParser / TrlParser / axolotl's CLI options: the command line last); X was
    read from the folder the launch runs in (launch.applying.view_overrides)."""
    raw, _origin = view.overrides[("deepspeed",)]
    target = as_str(raw) if isinstance(raw, str) else None
    if target is None or target.lower() in ("none", "null", "false", ""):
        return plan, []
    return link_deepspeed(plan, doc, None, host, target=target)


def link_deepspeed(plan: TrainingPlan, doc: Document, node, host: str, target: str | None = None):
    """Lay the DeepSpeed config that a `deepspeed:` key names (a path, or an inline mapping) over `plan` (or the
    file at `target`, a path the launch passes)."""
    linked, note = ds.open_link(doc, node) if node is not None else ds.open_path(doc, target)
    if note:
        plan = plan.with_(notes=plan.notes + (note,))
    if linked is None:
        return plan, []
    files = [linked] if linked.path != doc.path else []
    if linked.root is None or linked.root.kind != "mapping":
        return plan, files
    return ds.overlay(plan, linked, host), files


def _precision(view: ConfigView, kind: str) -> Setting:
    bf16 = view.bool("bf16")
    fp16 = view.bool("fp16")
    dtype_setting = view.first(("torch_dtype",), ("dtype",), convert=as_str)
    weights = DTYPES.get(dtype_setting.value.lower()) if dtype_setting is not None else None
    if kind == "llamafactory":
        pure = view.bool("pure_bf16")
        if pure is not None and pure.value:
            return Setting(PURE_BF16, pure.origin)
        weights = None  # LLaMA-Factory upcasts trainable weights to fp32 unless pure_bf16
    half: tuple[str, Origin] | None = None  # the autocast dtype and where it was set
    if bf16 is not None and bf16.value:
        half = "bf16", bf16.origin
    elif fp16 is not None and fp16.value:
        half = "fp16", fp16.origin
    elif bf16 is None and fp16 is None and kind == "trl":
        half = "bf16", Origin("default", note="TRL sets bf16 unless fp16 is set")
    if weights in ("bf16", "fp16") and dtype_setting is not None:
        return Setting(PURE_BF16 if weights == "bf16" else PURE_FP16, dtype_setting.origin)
    if half is not None:
        return Setting(AMP_BF16 if half[0] == "bf16" else AMP_FP16, half[1])
    if bf16 is not None:
        return Setting(FP32, bf16.origin)
    return default(FP32, "neither bf16 nor fp16 set: fp32")


def _peft(view: ConfigView, kind: str) -> Setting | None:
    bits_4 = as_bool(view.value("load_in_4bit"))
    bits_8 = as_bool(view.value("load_in_8bit"))
    quant = view.int("quantization_bit")
    base_bits = 4 if bits_4 else 8 if bits_8 else (quant.value if quant is not None else None)
    if kind == "llamafactory":
        ftype = view.str("finetuning_type")
        if ftype is None or ftype.value not in ("lora", "dora"):
            return None
        rank = view.int("lora_rank")
        target = view.value("lora_target") or "all"
        targets = "all-linear" if target == "all" else [t.strip() for t in str(target).split(",") if t.strip()]
        dora = as_bool(view.value("use_dora"))
        return Setting(Peft("dora" if dora else "lora", rank.value if rank else 8, targets, base_bits,
                            dropout=_float(view.value("lora_dropout"), 0.0), kbit_upcast=False), ftype.origin)
    use_peft = view.bool("use_peft")
    if kind == "open-instruct" and (use_peft is None or not use_peft.value):
        # open-instruct finetune.py / dpo_tune_cache.py: use_lora, use_qlora (4-bit), lora_rank, lora_dropout 0.1
        lora = view.bool("use_lora")
        qlora = view.bool("use_qlora")
        on = qlora if qlora is not None and qlora.value else lora
        if on is not None and on.value:
            rank = view.int("lora_rank")
            return Setting(Peft("lora", rank.value if rank else 64, "all-linear",
                                4 if qlora is not None and qlora.value else base_bits,
                                dropout=_float(view.value("lora_dropout"), 0.1)), on.origin)
    if use_peft is None or not use_peft.value:
        if base_bits:
            return Setting(Peft("lora", 16, None, base_bits), view.origin(("load_in_4bit",) if bits_4 else ("load_in_8bit",)))
        return None
    rank = view.int("lora_r")
    targets = as_targets(view.value("lora_target_modules"))
    dora = as_bool(view.value("use_dora"))
    dropout = _float(view.value("lora_dropout"), 0.05 if kind == "trl" else 0.0)  # TRL ModelConfig: 0.05
    return Setting(Peft("dora" if dora else "lora", rank.value if rank else 16, targets, base_bits, dropout=dropout),
                   use_peft.origin)


def _float(value, fallback: float) -> float:
    if isinstance(value, bool) or value is None:
        return fallback
    try:
        return float(value)
    except (TypeError, ValueError):
        return fallback


def _fsdp(view: ConfigView):
    node = view.node("fsdp")
    if node is None:
        return None
    value = node.to_python()
    if isinstance(value, bool):
        options = ["full_shard"] if value else []
    elif isinstance(value, str):
        options = value.split()
    elif isinstance(value, list):
        options = [str(v) for v in value]
    else:
        return None
    mode = next((o for o in options if o in ("full_shard", "shard_grad_op", "hybrid_shard", "hybrid_shard_zero2", "no_shard")), None)
    if mode is None:
        return None
    origin = view.origin(("fsdp",))
    offload = Setting("cpu", origin) if "offload" in options else None
    return Setting(mode, origin), offload


def _extras(view: ConfigView, kind: str, changes: dict) -> None:
    """Settings the memory model reads beyond the basics: the trainer library, optimizer arguments, GaLore
    targets, precomputed reference log-probs, torch.compile and padding-free batches."""
    if kind in ("trl", "llamafactory", "open-instruct"):
        changes["trainer"] = Setting(kind, Origin("inferred", note=f"{kind} keys in the config"))
    args = view.node("optim_args")
    if args is not None:
        value = args.to_python()
        pairs = {}
        if isinstance(value, str):
            for part in value.split(","):
                if "=" in part:
                    key, _, val = part.partition("=")
                    pairs[key.strip()] = val.strip()
        elif isinstance(value, dict):
            pairs = {str(k): v for k, v in value.items()}
        if pairs:
            changes["optim_args"] = Setting(tuple(sorted((k, str(v)) for k, v in pairs.items())),
                                            view.origin(("optim_args",)))
    targets = view.value("optim_target_modules")
    if targets is not None:
        changes["optim_target_modules"] = Setting(as_targets(targets), view.origin(("optim_target_modules",)))
    for key, field in (("precompute_ref_log_probs", "ref_logps_precomputed"), ("torch_compile", "torch_compile"),
                       ("padding_free", "padding_free")):
        flag = view.bool(key)
        if flag is not None:
            changes[field] = flag
    if kind == "llamafactory":
        # LLaMA-Factory's freeze_vision_tower (default True, hparams/finetuning_args.py): a frozen tower whose inputs
        # need no gradient saves no activations for backward.
        frozen = view.bool("freeze_vision_tower")
        changes["vision_frozen"] = frozen if frozen is not None else inferred(
            True, "LLaMA-Factory freezes the vision tower by default (freeze_vision_tower)")
    pixels = view.int("image_max_pixels")
    if pixels is not None and pixels.value > 0:
        # LLaMA-Factory resizes each image to at most image_max_pixels pixels: a square of that area at most.
        changes["image_size"] = Setting(math.isqrt(pixels.value), pixels.origin)
    _phase_keys(view, kind, changes)
    task = changes.get("task")
    if kind == "open-instruct" and task is not None and task.value == "dpo" and "ref_logps_precomputed" not in changes:
        # open_instruct/dpo_tune_cache.py and dpo.py cache the reference log-probs with the policy model before
        # training (dpo_utils.build_reference_logprobs_cache): no reference model is held.
        changes["ref_logps_precomputed"] = inferred(True, "open-instruct caches the reference log-probs before training")


def _phase_keys(view: ConfigView, kind: str, changes: dict) -> None:
    """What the phases around the training step read (memory/phases.py): evaluation (TrainingArguments
    eval_strategy, per_device_eval_batch_size, eval_accumulation_steps, prediction_loss_only; Seq2SeqTrainingArguments
    predict_with_generate, generation_max_length, generation_num_beams; LLaMA-Factory compute_accuracy, val_size),
    TRL's precompute_ref_batch_size, from_pretrained's low_cpu_mem_usage and save_only_model."""
    strategy = view.first(("eval_strategy",), ("evaluation_strategy",), convert=as_str)
    if strategy is not None:
        changes["evaluation"] = Setting(str(strategy.value).lower() not in ("no", "none", ""), strategy.origin)
    do_eval = view.bool("do_eval")
    if do_eval is not None and do_eval.value and "evaluation" not in changes:
        changes["evaluation"] = do_eval  # the scripts (run_clm.py, ...) call trainer.evaluate() with do_eval
    for key, field in (("per_device_eval_batch_size", "eval_batch"), ("eval_accumulation_steps", "eval_accumulation"),
                       ("generation_max_length", "generation_max_length"),
                       ("generation_num_beams", "generation_num_beams"),
                       ("precompute_ref_batch_size", "precompute_ref_batch")):
        number = view.int(key)
        if number is not None and number.value > 0:
            changes[field] = number
    for key, field in (("predict_with_generate", "predict_with_generate"), ("save_only_model", "save_only_model"),
                       ("low_cpu_mem_usage", "low_cpu_mem_usage")):
        flag = view.bool(key)
        if flag is not None:
            changes[field] = flag
    loss_only = view.bool("prediction_loss_only")
    generate = view.bool("predict_with_generate")
    if loss_only is not None and loss_only.value:
        changes["eval_predictions"] = Setting("none", loss_only.origin)
    elif kind == "llamafactory":
        # run_sft (train/sft/workflow.py): predict_with_generate keeps the generated ids (ComputeSimilarity);
        # compute_accuracy reduces the logits to their argmax ids (metric.py eval_logit_processor).
        accuracy = view.bool("compute_accuracy")
        if generate is not None and generate.value:
            changes["eval_predictions"] = Setting("generated", generate.origin)
        elif accuracy is not None and accuracy.value:
            changes["eval_predictions"] = Setting("token_ids", accuracy.origin)
        size = _float(view.value("val_size"), 0.0)
        if size >= 1:
            changes["eval_samples"] = Setting(int(size), view.origin(("val_size",)))


def _task(view: ConfigView, kind: str) -> Setting | None:
    if kind == "llamafactory":
        stage = view.str("stage")
        names = {"sft": "sft", "pt": "pretrain", "dpo": "dpo", "kto": "kto", "rm": "reward", "ppo": "ppo"}
        if stage is not None and stage.value in names:
            return Setting(names[stage.value], stage.origin)
        return None
    if view.has("num_generations") or view.has("use_vllm"):
        return Setting("grpo", view.origin(("num_generations",) if view.has("num_generations") else ("use_vllm",)))
    if view.has("beta") and (view.has("max_prompt_length") or view.has("loss_type") or view.has("ref_model_init_kwargs")
                             or (kind == "open-instruct" and view.has("dpo_loss_type"))):
        return Setting("dpo", view.origin(("beta",), "preference training keeps a reference model"))
    return None


__all__ = ["NAME", "detect", "read", "dialect", "link_deepspeed", "link_launch_deepspeed"]
