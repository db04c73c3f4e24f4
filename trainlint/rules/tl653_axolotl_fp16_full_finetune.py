"""TL653 axolotl-fp16-full-finetune: an Axolotl full fine-tune with `fp16: true` stops at its first optimizer step.

**What**: an Axolotl config with `fp16: true` (and neither `bf16` nor `bfloat16` on), no `adapter`, no
`deepspeed` and no FSDP.

**Why**: Axolotl loads the model in fp16 (`resolve_dtype`: `cfg.torch_dtype = torch.float16`) and passes
`fp16=True` to the HF Trainer, whose accelerate Accelerator then steps through a `torch.amp.GradScaler`. A full
fine-tune keeps every linear's weight in fp16, so their gradients are fp16; `GradScaler.unscale_` refuses them
(`_unscale_grads_(..., allow_fp16=False)`) and the run stops with "ValueError: Attempting to unscale FP16
gradients." at the first gradient clip (`accelerator.clip_grad_norm_`, `max_grad_norm` 1.0 by default) or in
`scaler.step`. Axolotl itself only warns, for fp16 with sample packing and no flash attention ("Full fine tune
w/o FA2 w/ sample packing and fp16/float16 is likely to raise errors. Try LoRA."). An adapter (PEFT keeps its
weights in fp32), DeepSpeed (its own fp16 loss scaler over fp32 master weights) or FSDP (accelerate upcasts the
parameters to fp32) avoid it.

**Evidence**: axolotl `src/axolotl/utils/config/__init__.py`, `resolve_dtype`; `src/axolotl/core/builders/base.py`,
`_configure_precision_settings` (`fp16 = cfg.fp16 and not cfg.bf16`); `src/axolotl/utils/schemas/validation.py`,
`check_fft_possible_bad_config` (a warning only), v0.4.0 to v0.18.0; accelerate `Accelerator.clip_grad_norm_`,
`unscale_gradients`; torch `torch/amp/grad_scaler.py`, `GradScaler.unscale_`.

**Example**: `fp16: true` with no `adapter:` → train a LoRA (`adapter: lora`), use `bf16: true` on a GPU with
bf16, or train under DeepSpeed.

**Fix**: none automatic (the choice changes what trains): `bf16: true` where the GPU has bf16, an adapter, or a
DeepSpeed config with an fp16 section.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules._frameworks import flag, is_set
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL653", "axolotl-fp16-full-finetune", Severity.ERROR,
            "An fp16 full fine-tune in Axolotl stops at the first optimizer step (fp16 gradients)",
            flavors=("axolotl",), framework="axolotl", versions=">=0.4.0",
            evidence="axolotl/utils/config/__init__.py: resolve_dtype; core/builders/base.py: "
                     "_configure_precision_settings; torch/amp/grad_scaler.py: GradScaler.unscale_",
            raises="ValueError: Attempting to unscale FP16 gradients.")

_SHARDED = ("zero1", "zero2", "zero3", "fsdp")


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    fp16 = root.entry("fp16")
    if fp16 is None or flag(fp16.value) is not True:
        return
    bf16 = root.get("bf16")
    if flag(bf16) is True or (bf16 is not None and bf16.kind == "scalar" and str(bf16.value).lower() == "full") \
            or flag(root.get("bfloat16")) is True:
        return  # bf16 wins: bf16 weights, and the Trainer's fp16 is off (or its scaler sees bf16 gradients)
    if any(is_set(root.get(key)) for key in ("adapter", "load_in_8bit", "load_in_4bit", "deepspeed", "fsdp",
                                              "fsdp_config")):
        return
    device = root.get("device")
    if device is not None and device.kind == "scalar" and device.value == "mps":
        return  # resolve_dtype's mps branch
    plan = ctx.plan
    if plan is not None and (plan.peft.value is not None or plan.fsdp.value is not None
                             or (plan.zero_stage.value or 0) > 0):
        return  # the launch adds what the file does not say
    launch = ctx.launch
    if launch.deepspeed_config or launch.sharding.value in _SHARDED:
        return
    yield RULE.at(doc, fp16.key_span,
                  "`fp16: true` full fine-tune: fp16 gradients stop the GradScaler at the first optimizer step",
                  detail="Axolotl loads the model in fp16 (resolve_dtype) and the HF Trainer trains it with fp16 AMP; "
                         "with no adapter, DeepSpeed or FSDP the trainable weights stay fp16 and torch's "
                         "GradScaler.unscale_ stops with \"ValueError: Attempting to unscale FP16 gradients.\" at the "
                         "first gradient clip or optimizer step. Use `bf16: true` where the GPU has bf16, train an "
                         "adapter (`adapter: lora`), or use DeepSpeed with an fp16 section.")
