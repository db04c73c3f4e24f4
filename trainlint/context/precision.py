"""The precision a Hugging Face-style file trains in, once its parser and framework versions are known.

The flavor reader (flavors/huggingface.py) reads what the file states; what it leaves unstated is decided by the
script's parser and the releases in play (data/framework_semantics.json):

- TRL's configs set `bf16 = not fp16` when bf16 is unset only from TRL 0.19.0 ("trl" precision); before it
  TrainingArguments' bf16=False keeps fp32.
- from_pretrained without a dtype loads fp32 up to transformers 4.x and the checkpoint's dtype from 5.0
  ("transformers" load_dtype); `torch_dtype: auto` loads the checkpoint's dtype in every release.
- open-instruct's scripts load bf16 weights themselves ("open-instruct" precision); ms-swift loads the checkpoint's
  dtype and sets bf16 / fp16 from it ("ms-swift" precision).

The checkpoint's dtype itself is the model's (config.json), resolved with the architecture in memory/estimate.py.
"""

from __future__ import annotations

from typing import Any

from trainlint.catalog import semantics
from trainlint.plan import FP32, Origin, Precision, Setting, TrainingPlan

TRL_DIALECTS = ("trl", "open-r1")


def _release(found: Any) -> str:
    return found.describe() if found is not None and hasattr(found, "describe") else ""


def apply(plan: TrainingPlan | None, dialect: Any, versions: Any) -> TrainingPlan | None:
    """`plan` with the precision the parser and the versions in play decide where the file states none."""
    if plan is None or plan.flavor != "huggingface" or plan.trainer.value == "llamafactory":
        return plan
    name = getattr(dialect, "name", "") or ""
    admits = getattr(versions, "admits", None)
    get = getattr(versions, "get", None)
    stated = plan.precision.origin.kind != "default"  # bf16 / fp16 / a torch_dtype written (or passed)
    if name == "ms-swift" or plan.trainer.value == "ms-swift":
        return _ms_swift(plan)
    plan = _trl_bf16_default(plan, stated, admits, get)
    if plan.load_dtype.value is not None or stated and plan.precision.value.param_dtype != "fp32":
        return plan  # a torch_dtype stated (`auto`: resolved with the model)
    if plan.precision.value.master_weights:
        return plan  # DeepSpeed holds its own fp32 master copy, whatever the load dtype
    if name == "open-instruct" or plan.trainer.value == "open-instruct":
        oi = semantics.entry("open-instruct", "precision") or {}
        if not plan.fused_loss.value:
            weights = oi.get("load_dtype", "bf16")
            origin = Origin("inferred", note=f"open-instruct's scripts load {weights} weights (from_pretrained(dtype="
                                             f"torch.{'bfloat16' if weights == 'bf16' else weights}))")
            autocast = plan.precision.value.autocast
            return plan.with_(load_dtype=Setting(weights, origin), precision=Setting(Precision(
                weights, autocast=None if autocast in (None, weights) else autocast), origin))
        # use_liger_kernel: AutoLigerKernelForCausalLM.from_pretrained without a dtype, transformers' default
    start = (semantics.entry("transformers", "load_dtype") or {}).get("checkpoint_default_from", "5.0")
    verdict = admits("transformers", f">={start}") if admits is not None else None
    found = get("transformers") if get is not None else None
    if verdict is True:
        return plan.with_(load_dtype=Setting("checkpoint", Origin(
            "inferred", note=f"{_release(found) or 'transformers >= ' + start}: from_pretrained without a dtype "
                             "loads the checkpoint's dtype")))
    if verdict is None and plan.precision.value.param_dtype == "fp32":
        # said by the estimate (memory/estimate.py): an assumption, not the transformers 4.x reading for certain
        return plan.with_(load_dtype=Setting(None, Origin("inferred", note=(
            f"no torch_dtype: fp32 weights assumed, as transformers < {start} loads them (from {start} the "
            "checkpoint's dtype); declare transformers' version or torch_dtype"))))
    return plan


def _ms_swift(plan: TrainingPlan) -> TrainingPlan:
    """ms-swift ModelArguments: torch_dtype unset -> the checkpoint's dtype (_init_torch_dtype); bf16 / fp16 unset
    -> from that dtype (_init_mixed_precision: bfloat16 -> bf16, float16 or float32 -> fp16)."""
    swift = semantics.entry("ms-swift", "precision") or {}
    if plan.precision.value.master_weights:
        return plan
    load = plan.load_dtype
    # bf16 / fp16 unset: the precision is the reader's default, or only the torch_dtype key decided it
    follows = bool(swift.get("autocast_follows_load")) and (
        plan.precision.origin.kind == "default" or
        (load.value is not None and plan.precision.origin.key_path == load.origin.key_path))
    note = "ms-swift sets bf16 / fp16 from the loaded dtype (ModelArguments._init_mixed_precision)"
    if load.value in (None, "auto"):
        plan = plan.with_(load_dtype=Setting(swift.get("load_dtype", "checkpoint"), Origin(
            "inferred", note="ms-swift: torch_dtype unset loads the model's registered / config.json dtype "
                             "(ModelArguments._init_torch_dtype)")))
        if follows:
            plan = plan.with_(autocast_follows_load=Setting(True, Origin("inferred", note=note)),
                              precision=Setting(FP32, Origin("inferred", note=note)))
        return plan
    if not follows:
        return plan
    weights = load.value
    autocast = (swift.get("autocast_of") or {}).get(weights)
    return plan.with_(precision=Setting(Precision(weights, autocast=None if autocast in (None, weights) else autocast),
                                        Origin("inferred", note=f"{note}: {autocast} autocast over {weights} weights")))


def _trl_bf16_default(plan: TrainingPlan, stated: bool, admits: Any, get: Any) -> TrainingPlan:
    """TRL's bf16 default (`bf16 = not fp16` in the configs' __post_init__) by TRL release."""
    if stated or plan.trainer.value != "trl" or plan.precision.value.autocast != "bf16":
        return plan
    start = (semantics.entry("trl", "precision") or {}).get("bf16_default_from", "0.19.0")
    verdict = admits("trl", f">={start}") if admits is not None else None
    found = get("trl") if get is not None else None
    if verdict is False:
        return plan.with_(precision=Setting(FP32, Origin("default", note=(
            f"{_release(found) or 'TRL < ' + start}: bf16 unset keeps TrainingArguments' False (TRL sets bf16 only "
            f"from {start}): fp32"))))
    if verdict is True:
        return plan.with_(precision=Setting(plan.precision.value, Origin("default", note=(
            f"{_release(found)}: TRL sets bf16 unless fp16 is set (from {start})"))))
    return plan.with_(precision=Setting(plan.precision.value, Origin("default", note=(
        f"TRL sets bf16 unless fp16 is set, assumed: TRL >= {start} (before {start} fp32); declare trl's version"))))


__all__ = ["apply"]
