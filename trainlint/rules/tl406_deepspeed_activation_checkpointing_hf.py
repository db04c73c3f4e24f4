"""TL406 deepspeed-activation-checkpointing-hf: DeepSpeed's `activation_checkpointing` section with an HF model.

**What**: an `activation_checkpointing` section in a DeepSpeed config used by HF Trainer, Axolotl or
Accelerate (linked from their config, or written for them: it holds `"auto"` values).

**Why**: the section only configures `deepspeed.checkpointing` (`runtime/activation_checkpointing/
config.py`: `partition_activations`, `cpu_checkpointing`, ...), which takes effect only in models
that call `deepspeed.checkpointing.checkpoint` (Megatron-style code). Hugging Face models checkpoint
through `activation_checkpointing` in TrainingArguments (transformers 5.23 and newer; before, and in
Axolotl, `gradient_checkpointing`, which 5.23 keeps as a deprecated alias); with the section alone,
activations are stored in full and memory is what it would be without it.

**Example**: `"activation_checkpointing": {"partition_activations": true, "cpu_checkpointing": true}`.

**Fix**: none; set `activation_checkpointing: true` (`gradient_checkpointing: true` before transformers
5.23 and in Axolotl) in the training arguments.

**Evidence**: `deepspeed/runtime/activation_checkpointing/config.py` is only read into
`DeepSpeedConfig.activation_checkpointing_config`; the engine never applies it (DeepSpeed 0.17.0 to 0.19.8),
and transformers 5.0 to 5.24 and Accelerate 1.12 to 1.15 never call `deepspeed.checkpointing`. Silent: no
message. `transformers/training_args.py` (5.23.0): "`gradient_checkpointing` is deprecated and will be
removed in v6. Use `activation_checkpointing` instead." (FutureWarning).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.flavors.base import as_bool
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL406", "deepspeed-activation-checkpointing-hf", Severity.INFO,
            "DeepSpeed activation_checkpointing does not checkpoint Hugging Face models", flavors=ds.ALL_FLAVORS,
            framework="deepspeed", versions="",
            evidence="deepspeed/runtime/activation_checkpointing/config.py: DeepSpeedActivationCheckpointingConfig (read, never applied by the engine)",
            raises="")


def check(ctx: LintContext):
    for cfg in ds.ds_configs(ctx):
        if cfg.host == "lightning" or not ds.looks_integrated(cfg):
            continue
        root = cfg.root
        entry = root.entry("activation_checkpointing") if root is not None else None
        if entry is None or entry.value.kind != "mapping":
            continue
        hf_ckpt = None
        if cfg.host_doc is not None:
            for key in ("activation_checkpointing", "gradient_checkpointing"):
                node = cfg.host_doc.find((key,))
                if node is not None and node.kind == "scalar":
                    hf_ckpt = as_bool(node.value)
                    break
        note = ""
        if cfg.host == "axolotl" or ctx.version_in("transformers", ">=5.23") is False:
            key = "gradient_checkpointing"
        else:
            key = "activation_checkpointing"
            if not ctx.version_in("transformers", ">=5.23"):
                note = " (gradient_checkpointing before transformers 5.23)"
        tail = ("checkpointing is on in the training arguments, which is what checkpoints the model"
                if hf_ckpt else f"set {key}: true{note} in the training arguments to checkpoint activations")
        yield RULE.at(cfg.doc, entry.key_span,
                      "activation_checkpointing changes no activation memory: Hugging Face models do not call "
                      "deepspeed.checkpointing",
                      detail="activation_checkpointing only configures deepspeed.checkpointing, which Hugging Face "
                             f"models do not call, so it changes no activation memory; {tail}.")
