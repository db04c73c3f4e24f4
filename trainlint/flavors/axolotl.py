"""Axolotl YAML: base_model, micro_batch_size, sequence_len, adapter lora/qlora, deepspeed/fsdp
(axolotl src/axolotl/utils/schemas and src/axolotl/utils/config/__init__.py)."""

from __future__ import annotations

from trainlint.document.tree import Document
from trainlint.flavors.base import ConfigView, as_bool, as_str, as_targets, top_keys
from trainlint.flavors.huggingface import link_deepspeed, link_launch_deepspeed
from trainlint.catalog import semantics
from trainlint.plan import (AMP_BF16, AMP_FP16, FP32, PURE_BF16, PURE_FP16, Origin, Peft, Precision, ReadResult, Setting,
                            TrainingPlan, default)

NAME = "axolotl"

COMPANIONS = {"micro_batch_size", "sequence_len", "adapter", "lora_r", "num_epochs", "output_dir",
              "special_tokens", "load_in_4bit", "load_in_8bit", "datasets", "gradient_accumulation_steps"}


def detect(doc: Document) -> float:
    keys = top_keys(doc)
    if "base_model" in keys and len(keys & COMPANIONS) >= 1:
        return 0.95
    return 0.6 if {"micro_batch_size", "sequence_len"} <= keys else 0.0


def read(doc: Document, overrides: dict | None = None) -> ReadResult:
    """`overrides`: {key path: (value, Origin)} that win over the file's (see ConfigView)."""
    view = ConfigView(doc, overrides=overrides)
    changes: dict = {}
    model = view.str("base_model")
    if model is not None:
        changes["model"] = model
    changes["micro_batch"] = view.int("micro_batch_size") or default(1, "micro_batch_size not set: Axolotl's default is 1")
    gas = view.int("gradient_accumulation_steps")
    if gas is not None:
        changes["grad_accum"] = gas
    changes["seq_len"] = view.int("sequence_len") or default(512, "sequence_len not set: Axolotl's default is 512")

    precision_flags = _precision_flags(view)

    ckpt = view.node("gradient_checkpointing")
    if ckpt is not None and ckpt.kind == "scalar":
        on = ckpt.value is True or (isinstance(ckpt.value, str) and ckpt.value.startswith("offload"))
        changes["grad_ckpt"] = Setting("full" if on else "none", view.origin(("gradient_checkpointing",)))
    offload = view.node("activation_offloading")
    if offload is not None and offload.kind == "scalar" and offload.value not in (False, None):
        changes["activation_offload"] = Setting(True, view.origin(("activation_offloading",)))
    optimizer = view.str("optimizer")
    changes["optimizer"] = optimizer or default("adamw_torch_fused", "optimizer not set: the HF Trainer default")

    attn = view.str("attn_implementation")
    if attn is not None:
        changes["attn_impl"] = attn
    elif as_bool(view.value("flash_attention")):
        changes["attn_impl"] = Setting("flash_attention_2", view.origin(("flash_attention",)))
    elif as_bool(view.value("sdp_attention")):
        changes["attn_impl"] = Setting("sdpa", view.origin(("sdp_attention",)))
    elif as_bool(view.value("xformers_attention")):
        changes["attn_impl"] = Setting("xformers", view.origin(("xformers_attention",)))

    _loss(view, changes)
    cp = view.first(("context_parallel_size",), ("sequence_parallel_degree",))
    if cp is not None and isinstance(cp.value, int) and cp.value > 1:
        changes["context_parallel"] = cp  # the sequence is split across cp GPUs (ring / Ulysses attention)
    size = view.int("image_size")
    if size is not None and size.value > 0:
        changes["image_size"] = size  # axolotl resizes images to image_size x image_size
    rl = view.str("rl")
    if rl is not None and rl.value in ("dpo", "ipo", "kto", "orpo", "grpo"):
        changes["task"] = Setting({"ipo": "dpo"}.get(rl.value, rl.value), rl.origin)

    adapter = view.str("adapter")
    if adapter is not None and adapter.value in ("lora", "qlora"):
        bits = 4 if adapter.value == "qlora" or as_bool(view.value("load_in_4bit")) else (
            8 if as_bool(view.value("load_in_8bit")) else None)
        rank = view.int("lora_r")
        targets = "all-linear" if as_bool(view.value("lora_target_linear")) else as_targets(view.value("lora_target_modules"))
        saved = view.value("lora_modules_to_save")
        dropout = view.value("lora_dropout")
        dropout = float(dropout) if isinstance(dropout, (int, float)) and not isinstance(dropout, bool) else 0.0
        changes["peft"] = Setting(Peft("dora" if as_bool(view.value("peft_use_dora")) else "lora",
                                       rank.value if rank else 8, targets, bits,
                                       modules_to_save=tuple(saved) if isinstance(saved, list) else (),
                                       dropout=max(0.0, dropout)), adapter.origin)

    fsdp = view.node("fsdp")
    if fsdp is not None and fsdp.kind == "sequence":
        options = [str(v) for v in fsdp.to_python()]
        mode = next((o for o in options if o in ("full_shard", "shard_grad_op", "hybrid_shard", "no_shard")), None)
        if mode:
            changes["fsdp"] = Setting(mode, view.origin(("fsdp",)))
        offload_params = view.first(("fsdp_config", "fsdp_offload_params"), ("fsdp_config", "offload_params"),
                                    convert=as_bool)
        if "offload" in options or (offload_params is not None and offload_params.value):
            origin = offload_params.origin if offload_params is not None else view.origin(("fsdp",))
            changes["offload_params"] = Setting("cpu", origin)
            changes["offload_optimizer"] = Setting("cpu", origin)
    elif view.node("fsdp_config") is not None and view.node("fsdp_version") is not None:
        changes["fsdp"] = Setting("full_shard", view.origin(("fsdp_config",)))

    changes["precision"] = _precision(view, precision_flags, changes)
    _evaluation(view, changes)
    plan = TrainingPlan(flavor=NAME, path=doc.path).with_(**changes)
    linked: list = []
    ds_node = view.node("deepspeed")
    if view.overrides.get(("deepspeed",), (None,))[0] is not None:  # the launch's --deepspeed X wins
        plan, linked = link_launch_deepspeed(plan, doc, view, host=NAME)
    elif ds_node is not None and as_str(ds_node.value if ds_node.kind == "scalar" else None) or (ds_node is not None and ds_node.kind == "mapping"):
        plan, linked = link_deepspeed(plan, doc, ds_node, host=NAME)
    return ReadResult(plan, linked)


def _plugins(view: ConfigView) -> list[str]:
    plugins = view.value("plugins")
    return [str(p) for p in plugins] if isinstance(plugins, list) else []


def _listed(plugins: list[str], name: object) -> bool:
    return bool(name) and any(str(name) in p for p in plugins)


def _loss(view: ConfigView, changes: dict) -> None:
    """The loss axolotl runs (data/framework_semantics.json "axolotl" loss): the Liger and Cut Cross-Entropy keys
    belong to their plugins (without the plugin listed in `plugins:` nothing is patched); the Cut Cross-Entropy
    plugin patches unless `cut_cross_entropy: false` (alone only from v0.9.0: the estimator decides by the
    release); otherwise `chunked_cross_entropy` replaces the causal-LM loss (v0.11.0 on)."""
    rules = semantics.entry("axolotl", "loss") or {}
    plugins = _plugins(view)
    liger = view.first(("liger_fused_linear_cross_entropy",), convert=as_bool)
    if liger is not None and liger.value and _listed(plugins, (rules.get("liger") or {}).get("plugin")):
        changes["fused_loss"] = liger
        changes["loss_kernel"] = Setting("liger", liger.origin)
        return
    if _listed(plugins, (rules.get("cut_cross_entropy") or {}).get("plugin")):
        cce = view.first(("cut_cross_entropy",), convert=as_bool)
        if cce is None:
            where = view.origin(("plugins",), "CutCrossEntropyPlugin listed, cut_cross_entropy unset: the plugin's "
                                              "default (on from axolotl 0.9.0)")
            changes["fused_loss"] = Setting(True, where)
            changes["loss_kernel"] = Setting("cce", where)
            return
        if cce.value:
            changes["fused_loss"] = cce
            changes["loss_kernel"] = Setting("cce", cce.origin)
            return
    chunked = view.first(("chunked_cross_entropy",), convert=as_bool)
    spec = rules.get("chunked") or {}
    if chunked is not None and chunked.value and spec.get("kernel"):
        changes["loss_kernel"] = Setting(spec["kernel"], chunked.origin)
        chunks = view.int("chunked_cross_entropy_num_chunks")
        changes["loss_chunks"] = chunks if chunks is not None and chunks.value > 0 else default(
            int(spec.get("default_chunks") or 8), "chunked_cross_entropy_num_chunks not set: axolotl's 8 chunks")


def _precision_flags(view: ConfigView) -> dict[str, tuple[bool, Origin, str]]:
    """axolotl's precision flags as resolve_dtype reads them: {flag: (set, where, note)}; `bf16: auto` counts as
    set (it resolves to true on a GPU with bf16, as every GPU trainlint sizes for training bf16 has)."""
    flags: dict[str, tuple[bool, Origin, str]] = {}
    for key in ("bf16", "bfloat16", "load_in_8bit", "fp16", "float16"):
        node = view.node(key)
        if node is None or node.kind != "scalar":
            continue
        value = node.value
        note = ""
        if isinstance(value, str):
            low = value.strip().lower()
            on = low in ("true", "auto", "full")
            note = {"auto": "bf16: auto uses bf16 where the GPU supports it",
                    "full": "bf16: full trains without autocast"}.get(low, "")
        else:
            on = value is True
        flags[key] = (on, view.origin((key,), note), note)
    if flags.get("fp16", (False,))[0] and view.value("bf16") == "auto":
        flags["bf16"] = (False, flags["bf16"][1], "fp16 set: bf16 auto resolves to false")
    return flags


def _precision(view: ConfigView, flags: dict[str, tuple[bool, Origin, str]], changes: dict) -> Setting:
    """The weights as axolotl holds them (catalog/semantics.py, data/framework_semantics.json "axolotl"): loaded in
    cfg.torch_dtype (resolve_dtype), trained by the HF Trainer with autocast and no master copy; the embeddings,
    head and norms upcast to fp32 unless an adapter, FSDP, a non-eager/SDPA attention or Cut Cross-Entropy casts
    them back; under FSDP accelerate upcasts every parameter to fp32."""
    load, flag = semantics.axolotl_load_dtype({k: v[0] for k, v in flags.items()})
    if load == "fp32":
        return default(FP32, "neither bf16 nor fp16 set: axolotl loads and trains in fp32")
    origin = flags[flag][1]
    origin = Origin(origin.kind, origin.path, origin.key_path, origin.span,
                    f"axolotl loads the model in {load} (resolve_dtype)" + (f"; {flags[flag][2]}" if flags[flag][2] else ""))
    fsdp = "fsdp" in changes
    if fsdp:
        # accelerate upcasts low-precision parameters to fp32 under FSDP with mixed precision.
        return Setting(AMP_BF16 if load == "bf16" else AMP_FP16, origin)
    held = semantics.axolotl_held(
        load, adapter="peft" in changes, fsdp=False,
        attention=changes["attn_impl"].value if "attn_impl" in changes else None,
        cut_cross_entropy=changes.get("loss_kernel") is not None and changes["loss_kernel"].value == "cce")
    if held.fp32_rest:
        return Setting(Precision("fp32", autocast=load, linears=load),
                       Origin(origin.kind, origin.path, origin.key_path, origin.span, origin.note + "; " + held.why))
    return Setting(PURE_BF16 if load == "bf16" else PURE_FP16, origin)


def _evaluation(view: ConfigView, changes: dict) -> None:
    """Axolotl evaluates when `val_set_size` > 0 or `test_datasets` are given (core/builders/base.py: eval_strategy
    "no" otherwise), at `eval_batch_size`, else micro_batch_size (utils/config normalize_config), passes no
    compute_metrics and sets eval_accumulation_steps to gradient_accumulation_steps (core/builders/causal.py)."""
    size = view.node("val_set_size")
    tests = view.node("test_datasets")
    value = size.value if size is not None and size.kind == "scalar" else None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        changes["evaluation"] = Setting(True, view.origin(("val_set_size",)))
        if value >= 1:
            changes["eval_samples"] = Setting(int(value), view.origin(("val_set_size",)))
    elif tests is not None and tests.kind == "sequence":
        changes["evaluation"] = Setting(True, view.origin(("test_datasets",)))
    else:
        return
    batch = view.int("eval_batch_size")
    if batch is not None and batch.value > 0:
        changes["eval_batch"] = batch
    # Unset eval_batch_size and eval_accumulation_steps follow micro_batch_size and gradient_accumulation_steps,
    # whatever they become (memory/estimate.py _phase_fields).
