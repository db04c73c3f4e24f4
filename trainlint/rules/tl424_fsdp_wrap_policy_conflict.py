"""TL424 fsdp-wrap-policy-conflict: `min_num_params` and `transformer_layer_cls_to_wrap` together.

**What**: an HF `fsdp_config` that sets both `min_num_params` (size-based wrapping) and
`transformer_layer_cls_to_wrap` (layer-class wrapping), with or without the `fsdp_` prefix.

**Why**: one auto-wrap policy is built from them, and TrainingArguments refuses both at once:
"`min_num_params` and `transformer_layer_cls_to_wrap` are mutually exclusive." (transformers
`training_args.py`).

**Example**: `fsdp_config: {min_num_params: 100000000, transformer_layer_cls_to_wrap: [LlamaDecoderLayer]}`.

**Fix**: none automatic: for transformer models keep `transformer_layer_cls_to_wrap`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules._frameworks import is_set
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL424", "fsdp-wrap-policy-conflict", Severity.ERROR,
            "fsdp_config min_num_params and transformer_layer_cls_to_wrap together", flavors=("huggingface",))


def check(ctx: LintContext):
    doc = ctx.document
    config = doc.find(("fsdp_config",))
    if config is None or config.kind != "mapping":
        return
    size = config.entry("min_num_params") or config.entry("fsdp_min_num_params")
    layer = config.entry("transformer_layer_cls_to_wrap") or config.entry("fsdp_transformer_layer_cls_to_wrap")
    if size is None or layer is None or not is_set(layer.value):
        return
    if size.value.kind == "scalar" and size.value.value in (0, None):
        return
    yield RULE.at(doc, size.key_span,
                  f"`fsdp_config` sets both `{size.key}` and `{layer.key}`: TrainingArguments stops with "
                  f"\"`min_num_params` and `transformer_layer_cls_to_wrap` are mutually exclusive.\" Keep "
                  f"`{layer.key}` for transformer models.")
