"""The normalized description of one training run, with where each setting came from.

Flavor readers fill a `TrainingPlan` from a config; settings (CLI flags, directive comments,
[tool.trainlint]) are laid over it. Every field is a `Setting`: its value and its `Origin`, so rules
point at the line that decided it and fixes know what to edit or where to insert.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

from trainlint.diagnostics import Span

T = TypeVar("T")

# Where a value came from, strongest first.
ORIGIN_KINDS = ("cli", "directive", "project", "launch", "config", "linked", "inferred", "default")


class Origin(NamedTuple):
    """Where a setting's value came from: the config, a linked file, the launch, a default, ..."""
    kind: str  # one of ORIGIN_KINDS
    path: str = ""  # the file holding it (config, linked config, pyproject.toml)
    key_path: tuple = ()
    span: Span | None = None
    note: str = ""  # for defaults and inferences: why this value

    def describe(self) -> str:
        path = _shown(self.path)
        if self.kind in ("config", "linked"):
            key = ".".join(str(k) for k in self.key_path)
            return f"{key} in {path}" if key else path
        if self.kind == "cli":
            return "command line"
        if self.kind == "directive":
            return "trainlint directive comment"
        if self.kind == "project":
            return f"[tool.trainlint] in {path}" if path else "[tool.trainlint]"
        if self.kind == "launch":
            where = path + (f":{self.span.start.line + 1}" if self.span is not None else "")
            return "launch " + ", ".join(x for x in (self.note, where) if x)
        return f"{self.kind}: {self.note}" if self.note else self.kind


DEFAULT = Origin("default")

# The run settings a user may override (flags, `# trainlint:` directives, [tool.trainlint]), by their CLI/TOML
# spelling -> TrainingPlan field and parser.
OVERRIDABLE = {
    "gpu": ("gpu", str),
    "num-gpus": ("num_gpus", int),
    "model": ("model", str),
    "seq-len": ("seq_len", int),
    "micro-batch": ("micro_batch", int),
    "grad-accum": ("grad_accum", int),
    "images-per-sample": ("images_per_sample", int),
    "image-size": ("image_size", int),
    "eval-batch": ("eval_batch", int),
    "eval-samples": ("eval_samples", int),
    "eval-predictions": ("eval_predictions", str),
}


def _shown(path: str) -> str:
    """A file as a message names it: relative to the working directory when it lies under it (a project file found
    by walking up is held absolute), else as held."""
    if not path or not os.path.isabs(path):
        return path
    cwd = os.getcwd()
    return os.path.relpath(path, cwd) if path.startswith(cwd.rstrip(os.sep) + os.sep) else path


@dataclass(frozen=True)
class Setting(Generic[T]):
    """A value of the training plan and where it came from."""
    value: T  # an int, a str, a Precision, ...
    origin: Origin = DEFAULT

    @property
    def is_default(self) -> bool:
        return self.origin.kind == "default"


def default(value: Any, note: str) -> Setting:
    return Setting(value, Origin("default", note=note))


def inferred(value: Any, note: str) -> Setting:
    return Setting(value, Origin("inferred", note=note))


class Precision(NamedTuple):
    """How weights, compute and optimizer master copies are held.

    param_dtype: the dtype the model's parameters live in on the GPU.
    autocast: the dtype matmuls run in under torch.autocast, or None.
    master_weights: an fp32 copy of the weights is kept by the optimizer (DeepSpeed/Megatron bf16/fp16).
    fp8: fp8 matmuls (Transformer Engine / torchao) on top of the above.
    linears: the layers' linear weights are held in this dtype while the rest (embeddings, head, norms) is in
        param_dtype: axolotl loads in bf16 and upcasts only those to fp32 (catalog/semantics.py).
    """

    param_dtype: str  # "fp32" | "bf16" | "fp16"
    autocast: str | None = None  # "bf16" | "fp16" | None
    master_weights: bool = False
    fp8: bool = False
    linears: str | None = None  # "bf16" | "fp16" | None (None: param_dtype)

    @property
    def label(self) -> str:
        if self.linears and self.linears != self.param_dtype:
            base = (f"{self.linears} linears, {self.param_dtype} embeddings/head/norms"
                    + (f", {self.autocast} autocast" if self.autocast else ""))
        elif self.param_dtype == "fp32" and self.autocast:
            base = f"{self.autocast} autocast over fp32 weights"
        elif self.param_dtype == "fp32":
            base = "fp32"
        elif self.master_weights:
            base = f"{self.param_dtype} weights with an fp32 master copy"
        else:
            base = f"pure {self.param_dtype}"
        return base + (" + fp8 matmuls" if self.fp8 else "")

    @property
    def compute_dtype(self) -> str:
        return self.autocast or self.param_dtype


FP32 = Precision("fp32")
AMP_BF16 = Precision("fp32", autocast="bf16")
AMP_FP16 = Precision("fp32", autocast="fp16")
PURE_BF16 = Precision("bf16")
PURE_FP16 = Precision("fp16")
MASTER_BF16 = Precision("bf16", master_weights=True)
MASTER_FP16 = Precision("fp16", master_weights=True)


class Peft(NamedTuple):
    """The adapter a run trains (LoRA, DoRA, ...): rank, targets and how the base model is quantized."""
    method: str = "lora"  # "lora" | "dora" | "adapter" | "adapter_v2" (LitGPT's adapter scripts)
    rank: int = 8
    target_modules: Any = None  # list of names, "all-linear", a regex string, or None (PEFT's per-model default)
    base_bits: int | None = None  # 4 (QLoRA NF4) | 8 (LLM.int8) | None (base in the param dtype)
    double_quant: bool = True
    modules_to_save: tuple[str, ...] = ()
    dropout: float = 0.0  # lora_dropout: PEFT puts an nn.Dropout on each adapted linear's input when > 0
    adapter_dtype: str | None = None  # None: PEFT's default (fp32 adapters over a 16-bit base); "bf16": TRL QLoRA
    kbit_upcast: bool | None = None  # prepare_model_for_kbit_training (non-quantized params to fp32); None: unknown
    # Switches a framework maps to the model's modules itself (LitGPT lora_query, lora_mlp, ...); the estimator
    # turns them into target_modules for the architecture (catalog/semantics.py).
    switches: tuple[str, ...] = ()
    # LoRA on the output head (LitGPT lora_head: lm_head's A [rank, hidden] and B [vocab, rank]); 0: none.
    head_rank: int = 0
    # LitGPT's adapter methods ("adapter", "adapter_v2"): the prefix length and the first adapted layer.
    adapter_prompt: int = 10
    adapter_start: int = 2


# The one bound on the counts a plan holds (the conversion boundary of config values into the estimate): a count
# is a whole number from its minimum to COUNT_LIMIT (int32's largest: no run holds more micro-batches, tokens, GPUs
# or ranks; below it every product the estimate forms stays a finite float). A value outside (negative, zero where
# one is the least, infinite, NaN, 1e+308, 4,400 digits) is not used: the field keeps its default and the value is
# listed in `TrainingPlan.rejected` with its origin, for TL011 to report at the value.
COUNT_LIMIT = 2**31 - 1
COUNT_BOUNDS: dict[str, tuple[int, int]] = {
    "micro_batch": (1, COUNT_LIMIT), "seq_len": (1, COUNT_LIMIT), "grad_accum": (1, COUNT_LIMIT),
    "num_gpus": (1, COUNT_LIMIT), "num_nodes": (1, COUNT_LIMIT), "global_batch": (1, COUNT_LIMIT),
    "zero_stage": (0, 3), "tensor_parallel": (1, COUNT_LIMIT), "pipeline_parallel": (1, COUNT_LIMIT),
    "context_parallel": (1, COUNT_LIMIT), "images_per_sample": (0, COUNT_LIMIT), "image_size": (1, COUNT_LIMIT),
}
RANK_BOUNDS = (1, COUNT_LIMIT)  # a LoRA rank (Peft.rank)
# What a count field's value is, in the words of the findings about it.
COUNT_LABELS = {"micro_batch": "micro-batch size", "seq_len": "sequence length", "grad_accum": "accumulation step count",
                "num_gpus": "GPU count", "num_nodes": "node count", "global_batch": "global batch size",
                "zero_stage": "ZeRO stage (0-3)", "tensor_parallel": "tensor-parallel size",
                "pipeline_parallel": "pipeline-parallel size", "context_parallel": "context-parallel size",
                "images_per_sample": "image count", "image_size": "image size", "peft.rank": "LoRA rank"}


def count_problem(value: Any, bounds: tuple[int, int]) -> str | None:
    """Why `value` is not a count within `bounds` (None when it is one): the one test every plan count passes."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "not a number"
    if isinstance(value, float) and not math.isfinite(value):
        return "not a finite number"
    if isinstance(value, float) and not value.is_integer():
        return "not a whole number"
    low, high = bounds
    if value < low:
        return f"below {low}"
    if value > high:
        return f"above {high:,}"
    return None


class Rejected(NamedTuple):
    """A value a plan did not take (`count_problem`), with where it came from."""

    field: str  # the plan field ("peft.rank" for a LoRA rank)
    value: Any
    origin: Origin
    problem: str


def _bounded(fields: dict[str, Any], defaults: dict[str, Any]) -> tuple[dict[str, Any], tuple[Rejected, ...]]:
    """`fields` with each count outside its bounds replaced by its default, and what was replaced."""
    out: dict[str, Any] = {}
    rejected: list[Rejected] = []
    for name, setting in fields.items():
        bounds = COUNT_BOUNDS.get(name)
        if bounds is not None and isinstance(setting, Setting):
            problem = count_problem(setting.value, bounds)
            if problem is not None:
                rejected.append(Rejected(name, setting.value, setting.origin, problem))
                out[name] = defaults[name]
        elif name == "peft" and isinstance(setting, Setting) and isinstance(setting.value, Peft):
            problem = count_problem(setting.value.rank, RANK_BOUNDS)
            if problem is not None:
                rejected.append(Rejected("peft.rank", setting.value.rank, setting.origin, problem))
                out[name] = Setting(setting.value._replace(rank=Peft._field_defaults["rank"]), setting.origin)
    return out, tuple(rejected)


class _PlanFields(NamedTuple):
    """A TrainingPlan's fields (TrainingPlan adds the bounds check of its counts)."""
    flavor: str
    path: str
    model: Setting[str | None] = default(None, "no model named")
    micro_batch: Setting[int] = default(1, "micro-batch not set")
    seq_len: Setting[int | None] = default(None, "sequence length not set")
    grad_accum: Setting[int] = default(1, "gradient accumulation not set")
    num_gpus: Setting[int] = default(1, "world size not set: one GPU assumed")
    num_nodes: Setting[int] = default(1, "one node")
    global_batch: Setting[int | None] = default(None, "")
    precision: Setting[Precision] = default(FP32, "no precision set: fp32")
    # What from_pretrained loads the weights in when the file states no dtype of its own (`precision` holds a
    # stated one): None (fp32, transformers < 5's default) | "auto" (`torch_dtype: auto`) | "checkpoint" (the
    # checkpoint's config.json dtype, resolved by the estimate) | "bf16" / "fp16" / "fp32" (the script's own).
    load_dtype: Setting[str | None] = default(None, "torch_dtype not set")
    # ms-swift: bf16 / fp16 follow the loaded dtype when neither is set (ModelArguments._init_mixed_precision).
    autocast_follows_load: Setting[bool] = default(False, "bf16 / fp16 as the file sets them")
    optimizer: Setting[str] = default("adamw", "AdamW, the frameworks' default")
    zero_stage: Setting[int] = default(0, "no ZeRO")
    offload_optimizer: Setting[str | None] = default(None, "no optimizer offload")
    offload_params: Setting[str | None] = default(None, "no parameter offload")
    fsdp: Setting[str | None] = default(None, "no FSDP")  # full_shard | shard_grad_op | hybrid_shard | no_shard
    tensor_parallel: Setting[int] = default(1, "no tensor parallelism")
    pipeline_parallel: Setting[int] = default(1, "no pipeline parallelism")
    context_parallel: Setting[int] = default(1, "no sequence/context parallelism")
    grad_ckpt: Setting[str] = default("none", "activation checkpointing off")  # none | full | selective
    activation_offload: Setting[bool] = default(False, "activations stay on the GPU")
    attn_impl: Setting[str] = default("sdpa", "PyTorch SDPA, transformers' default")
    peft: Setting[Peft | None] = default(None, "full fine-tuning")
    fused_loss: Setting[bool] = default(False, "the framework's cross-entropy (logits materialized)")
    # Which fused/chunked loss: liger (fused linear cross-entropy) | cce (Cut Cross-Entropy) | trl (TRL's fused LM
    # head) | torchtune_chunked; None with fused_loss means Liger.
    loss_kernel: Setting[str | None] = default(None, "no fused loss kernel named")
    loss_chunks: Setting[int | None] = default(None, "the loss kernel's own number of chunks")
    liger_accum_fp32: Setting[bool] = default(False, "Liger accumulates the head gradient in the weight dtype")
    trainer: Setting[str | None] = default(None, "the plain framework trainer")  # trl | llamafactory | open-instruct | ...
    trainer_version: Setting[str | None] = default(None, "the trainer library's version is not known")
    head: Setting[str] = default("lm", "a language-model head")  # lm | seq_cls | token_cls
    # zero_grad fills the gradients with zeros instead of freeing them (torch < 2.0's set_to_none=False default)
    grads_kept: Setting[bool] = default(False, "zero_grad frees the gradients (set_to_none=True, torch >= 2.0)")
    optimizer_in_bwd: Setting[bool] = default(False, "the optimizer steps after the backward pass")
    optim_args: Setting[tuple] = default((), "no optimizer arguments")  # (("momentum", 0.9), ...)
    optim_target_modules: Setting[object] = default(None, "no GaLore/APOLLO target modules")
    ref_logps_precomputed: Setting[bool] = default(False, "reference log-probs computed during training")
    ref_model_offload: Setting[bool] = default(False, "the reference model stays on the GPU")
    # the launched script passes DPOTrainer its own reference model beside a peft_config (context/reference.py)
    ref_model_with_peft: Setting[bool] = default(False, "with an adapter the reference is the base without it")
    torch_compile: Setting[bool] = default(False, "eager PyTorch")
    padding_free: Setting[bool] = default(False, "padded batches")
    # The phases around the training step (docs/memory-model.md §9): evaluation, loading, saving.
    evaluation: Setting[bool] = default(False, "no evaluation during training (eval_strategy no)")
    eval_batch: Setting[int | None] = default(None, "per_device_eval_batch_size not set")
    eval_accumulation: Setting[int | None] = default(None, "eval_accumulation_steps not set")
    # What evaluation keeps per sample until it ends: none (no compute_metrics: the Trainer passes
    # prediction_loss_only) | logits | token_ids (preprocess_logits_for_metrics argmax) | generated
    eval_predictions: Setting[str] = default("none", "no compute_metrics known: evaluation keeps only the loss")
    eval_samples: Setting[int | None] = default(None, "the evaluation set's size is not known")
    predict_with_generate: Setting[bool] = default(False, "evaluation does not generate")
    generation_max_length: Setting[int | None] = default(None, "generation length not set")
    generation_num_beams: Setting[int | None] = default(None, "one beam")
    precompute_ref_batch: Setting[int | None] = default(None, "precompute_ref_batch_size not set")
    low_cpu_mem_usage: Setting[bool | None] = default(None, "transformers' default loading")
    fsdp_version: Setting[int] = default(1, "FSDP 1 (accelerate's default)")
    fsdp_state_dict: Setting[str | None] = default(None, "FSDP state-dict type not set")  # FULL_/SHARDED_/LOCAL_STATE_DICT
    zero3_save_16bit: Setting[bool] = default(False, "stage3_gather_16bit_weights_on_model_save not set: false")
    save_only_model: Setting[bool] = default(False, "checkpoints hold the optimizer and scheduler too")
    # Image tokens for a vision tower's activations: images per sample and the (square) resolution they reach the
    # tower at (LLaMA-Factory image_max_pixels, axolotl image_size; else the tower config's image_size).
    images_per_sample: Setting[int | None] = default(None, "images per sample not set")
    image_size: Setting[int | None] = default(None, "image resolution not set")
    vision_frozen: Setting[bool] = default(False, "the vision tower trains with the model")
    task: Setting[str] = default("sft", "plain supervised training")  # sft | dpo | orpo | kto | grpo | ppo | reward | pretrain
    gpu: Setting[str | None] = default(None, "no target GPU named")
    # DeepSpeed config linked from this one (HF `deepspeed:`, Lightning strategy config, Accelerate file).
    linked_paths: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # reader remarks worth showing (e.g. "model size unknown: class_path mae.MAE")
    rejected: tuple[Rejected, ...] = ()  # values outside the count bounds, not used (COUNT_BOUNDS; TL011)


class TrainingPlan(_PlanFields):
    """What a config means for a run, framework-neutral: every setting the estimate and rules need. A count outside
    its bounds (COUNT_BOUNDS, RANK_BOUNDS) is replaced by its default and listed in `rejected`, for TL011."""

    __slots__ = ()

    if not TYPE_CHECKING:  # mypy checks a construction against _PlanFields' fields
        def __new__(cls, *args, **kwargs):
            plan = super().__new__(cls, *args, **kwargs)
            fixed, rejected = _bounded(plan._asdict(), _DEFAULTS)
            return plan._replace(**fixed, rejected=plan.rejected + rejected) if rejected else plan

    def with_(self, **changes: Any) -> TrainingPlan:
        """A copy with some fields replaced (`_replace`), its counts checked as a construction checks them."""
        unknown = [name for name in changes if name not in self._fields]
        if unknown:
            raise TypeError(f"TrainingPlan has no field {unknown[0]!r}")
        fixed, rejected = _bounded(changes, _DEFAULTS)
        if rejected:
            changes = {**changes, **fixed, "rejected": self.rejected + rejected}
        return self._replace(**changes)

    @property
    def data_parallel(self) -> int:
        return max(1, self.num_gpus.value // max(1, self.tensor_parallel.value * self.pipeline_parallel.value
                                                  * self.context_parallel.value))

    @property
    def effective_batch(self) -> int:
        return self.micro_batch.value * self.grad_accum.value * self.data_parallel


_DEFAULTS: dict[str, Any] = {name: value for name, value in _PlanFields._field_defaults.items()
                             if name in COUNT_BOUNDS}


@dataclass(eq=False)  # state, compared by identity
class ReadResult:
    """What a flavor reader hands back: the plan plus any linked documents it opened."""

    plan: TrainingPlan
    linked: list = field(default_factory=list)  # Documents
