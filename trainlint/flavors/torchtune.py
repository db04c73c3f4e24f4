"""torchtune recipe YAML: `_component_` builders (the model builder's name says the architecture and
whether it is LoRA/QLoRA), batch_size, dtype, activation checkpointing, optimizer component
(pytorch/torchtune `recipes/*.py`, `torchtune/training/precision.py`). torchtune trains in the `dtype`
itself: bf16 means pure bf16."""

from __future__ import annotations


from trainlint._patterns import compile_later
from trainlint.catalog import semantics
from trainlint.document.tree import Document
from trainlint.flavors.base import ConfigView, as_bool, as_targets, top_keys
from trainlint.plan import FP32, PURE_BF16, PURE_FP16, Peft, ReadResult, Setting, TrainingPlan, default

NAME = "torchtune"

_BUILDER = compile_later(r"^(?P<kind>lora_|qlora_)?(?P<model>.+)$")
LORA_MODULE_NAMES = {"q_proj": "q_proj", "k_proj": "k_proj", "v_proj": "v_proj", "output_proj": "o_proj"}


def detect(doc: Document) -> float:
    root = doc.root
    if root is None or root.kind != "mapping":
        return 0.0
    components = sum(1 for e in root.entries if e.value.kind == "mapping" and e.value.get("_component_") is not None)
    if components >= 2:
        return 0.95
    return 0.5 if components == 1 and top_keys(doc) & {"batch_size", "epochs", "dtype", "device"} else 0.0


def read(doc: Document, overrides: dict | None = None) -> ReadResult:
    """`overrides`: {key path: (value, Origin)} that win over the file's (see ConfigView)."""
    view = ConfigView(doc, overrides=overrides)
    changes: dict = {}
    component = view.str("model", "_component_")
    peft = None
    # The builder is the path's last part; a path ending in "." (`torchtune.models.`) names none.
    match = _BUILDER.match(component.value.rsplit(".", 1)[-1]) if component is not None else None
    if component is not None and match is not None:
        changes["model"] = Setting(match.group("model"), component.origin)
        if match.group("kind"):
            modules = as_targets(view.value("model", "lora_attn_modules")) or ["q_proj", "v_proj"]
            modules = [modules] if isinstance(modules, str) else modules
            targets = [LORA_MODULE_NAMES.get(m, m) for m in modules]
            if as_bool(view.value("model", "apply_lora_to_mlp")):
                targets += ["gate_proj", "up_proj", "down_proj"]
            if as_bool(view.value("model", "apply_lora_to_output")):
                targets += ["lm_head"]
            rank = view.int("model", "lora_rank")
            dropout = view.value("model", "lora_dropout")
            # recipes/lora_finetune_*.py: _setup_model builds the model (adapters included) under
            # training.set_default_dtype(self._dtype) and validate_expected_param_dtype(adapter_params, self._dtype):
            # the adapters are in the recipe's dtype (bf16 by default), not PEFT's fp32.
            dtype = view.str("dtype")
            adapter_dtype = "bf16" if dtype is None or dtype.value == "bf16" else None
            peft = Setting(Peft("lora", rank.value if rank else 8, targets,
                                4 if match.group("kind") == "qlora_" else None,
                                dropout=float(dropout) if isinstance(dropout, (int, float)) else 0.0,
                                adapter_dtype=adapter_dtype), component.origin)
    if peft is not None:
        changes["peft"] = peft
    changes["micro_batch"] = view.int("batch_size") or default(1, "batch_size not set")
    gas = view.int("gradient_accumulation_steps")
    if gas is not None:
        changes["grad_accum"] = gas
    seq = view.first(("tokenizer", "max_seq_len"), ("dataset", "max_seq_len"), ("max_seq_len",))
    if seq is not None:
        changes["seq_len"] = seq
    dtype = view.str("dtype")
    if dtype is not None:
        table = {"bf16": PURE_BF16, "fp16": PURE_FP16, "fp32": FP32}
        if dtype.value in table:
            changes["precision"] = Setting(table[dtype.value], dtype.origin)
    else:
        changes["precision"] = default(PURE_BF16, "dtype not set: torchtune recipes default to bf16")
    ckpt = view.bool("enable_activation_checkpointing")
    if ckpt is not None:
        changes["grad_ckpt"] = Setting("full" if ckpt.value else "none", ckpt.origin)
    offload = view.bool("enable_activation_offloading")
    if offload is not None and offload.value:
        changes["activation_offload"] = offload
    optimizer = view.str("optimizer", "_component_")
    if optimizer is not None:
        changes["optimizer"] = _optimizer_variant(view, optimizer)
    compile_flag = view.bool("compile")
    if compile_flag is not None:
        changes["torch_compile"] = compile_flag
    loss = view.str("loss", "_component_")
    kernels = semantics.entry("torchtune", "loss", "components") or {}
    kernel = kernels.get(loss.value.rsplit(".", 1)[-1]) if loss is not None else None
    if loss is not None and kernel is not None:
        # torchtune's chunked losses: the logits (or the head's projection) in num_output_chunks chunks, each
        # upcast to fp32 for its cross-entropy (data/framework_semantics.json "torchtune" loss).
        changes["fused_loss"] = Setting(True, loss.origin)
        changes["loss_kernel"] = Setting(kernel, loss.origin)
        compiled = (semantics.entry("torchtune", "loss", "compiled") or {}).get(loss.value.rsplit(".", 1)[-1])
        if compile_flag is not None and compile_flag.value and compiled:
            # compile: true compiles the loss's per-chunk upcast + cross-entropy (training.compile_loss)
            changes["loss_kernel"] = Setting(compiled, compile_flag.origin)
        chunks = view.int("loss", "num_output_chunks")
        if chunks is not None and chunks.value > 0:
            changes["loss_chunks"] = chunks
    in_bwd = view.bool("optimizer_in_bwd")
    if in_bwd is not None and in_bwd.value:
        changes["optimizer_in_bwd"] = in_bwd  # the step runs per parameter in backward, freeing its gradient
    offload_fsdp = view.bool("fsdp_cpu_offload")
    if offload_fsdp is not None and offload_fsdp.value:
        changes["offload_params"] = Setting("cpu", offload_fsdp.origin)
        changes["offload_optimizer"] = Setting("cpu", offload_fsdp.origin)
    if "distributed" in str(view.value("output_dir") or "") or view.node("fsdp_cpu_offload") is not None or \
            view.node("fsdp_reshard_after_forward") is not None:
        changes["fsdp"] = Setting("full_shard", view.origin(("fsdp_cpu_offload",)) if view.has("fsdp_cpu_offload")
                                  else view.origin(("fsdp_reshard_after_forward",)))
    tp = view.int("tensor_parallel_dim")
    if tp is not None and tp.value > 1:
        changes["tensor_parallel"] = tp
    return ReadResult(TrainingPlan(flavor=NAME, path=doc.path).with_(**changes))


def _optimizer_variant(view: ConfigView, component: Setting) -> Setting:
    """The optimizer component with the keywords the recipe passes it (`config.instantiate(cfg_optimizer, ...)`)
    that change its step's memory: torch AdamW/Adam `fused: true` (no temporary) or `foreach: false` (one parameter
    at a time) instead of the foreach default (data/framework_semantics.json "torchtune" optimizer)."""
    variants = (semantics.entry("torchtune", "optimizer", "variants") or {}).get(component.value) or {}
    for keyword, name in variants.items():
        key, _, wanted = keyword.partition("=")
        given = view.bool("optimizer", key)
        if given is not None and given.value == as_bool(wanted):
            # The origin stays the component's: an edit of the optimizer rewrites `_component_`, not the keyword.
            return Setting(name, component.origin)
    return component
