"""TL406 deepspeed-activation-checkpointing-hf: DeepSpeed's `activation_checkpointing` section with an HF model.

**What**: an `activation_checkpointing` section in a DeepSpeed config used by HF Trainer, Axolotl or
Accelerate (linked from their config, or written for them: it holds `"auto"` values).

**Why**: the section only configures `deepspeed.checkpointing` (`runtime/activation_checkpointing/
config.py`: `partition_activations`, `cpu_checkpointing`, ...), which takes effect only in models
that call `deepspeed.checkpointing.checkpoint` (Megatron-style code). Hugging Face models checkpoint
through `gradient_checkpointing` in TrainingArguments; with the section alone, activations are
stored in full and memory is what it would be without it.

**Example**: `"activation_checkpointing": {"partition_activations": true, "cpu_checkpointing": true}`.

**Fix**: none; set `gradient_checkpointing: true` in the training arguments.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.flavors.base import as_bool
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL406", "deepspeed-activation-checkpointing-hf", Severity.INFO,
            "DeepSpeed activation_checkpointing does not checkpoint Hugging Face models", flavors=ds.ALL_FLAVORS)


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
            node = cfg.host_doc.find(("gradient_checkpointing",))
            hf_ckpt = as_bool(node.value) if node is not None and node.kind == "scalar" else None
        tail = ("gradient_checkpointing is on in the training arguments, which is what checkpoints the model"
                if hf_ckpt else "set gradient_checkpointing: true in the training arguments to checkpoint activations")
        yield RULE.at(cfg.doc, entry.key_span,
                      "activation_checkpointing only configures deepspeed.checkpointing, which Hugging Face models do "
                      f"not call, so it changes no activation memory; {tail}.")
