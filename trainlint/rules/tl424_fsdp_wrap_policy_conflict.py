"""TL424 fsdp-wrap-policy-conflict: `min_num_params` and `transformer_layer_cls_to_wrap` together.

**What**: an HF `fsdp_config` that sets both `min_num_params` (size-based wrapping) and
`transformer_layer_cls_to_wrap` (layer-class wrapping), with or without the `fsdp_` prefix.

**Why**: one auto-wrap policy is built from them. Up to transformers 5.9
`TrainingArguments.__post_init__` (`training_args.py`) stops: "`min_num_params` and
`transformer_layer_cls_to_wrap` are mutually exclusive."; from 5.10
`TrainingArguments._process_fsdp_args` uses `auto_wrap_policy` (default TRANSFORMER_BASED_WRAP) and
drops `min_num_params` without a word. An error where the release is known to be < 5.10, a warning
otherwise.

**Evidence**: `transformers/training_args.py: TrainingArguments.__post_init__` (stops up to 5.9; silent
from 5.10 (min_num_params dropped)); verified against transformers 4.40 - 5.24. First message:
"`min_num_params` and `transformer_layer_cls_to_wrap` are mutually exclusive.".

**Example**: `fsdp_config: {min_num_params: 100000000, transformer_layer_cls_to_wrap: [LlamaDecoderLayer]}`.

**Fix**: none automatic: for transformer models keep `transformer_layer_cls_to_wrap`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules._frameworks import Claim, is_set, version_status
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL424", "fsdp-wrap-policy-conflict", Severity.ERROR,
            "fsdp_config min_num_params and transformer_layer_cls_to_wrap together", flavors=("huggingface",),
            framework="transformers", evidence="transformers/training_args.py: TrainingArguments.__post_init__",
            raises="`min_num_params` and `transformer_layer_cls_to_wrap` are mutually exclusive.")

CLAIMS = (
    Claim("transformers", "training_args.py TrainingArguments.__post_init__",
          "`min_num_params` and `transformer_layer_cls_to_wrap` are mutually exclusive.", "stops", until="5.10.0"),
    Claim("transformers", "training_args.py TrainingArguments._process_fsdp_args", "", "silent", since="5.10.0"),
)


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
    old, assumptions = version_status(ctx, "transformers", "<5.10")
    stop = "TrainingArguments stops with \"`min_num_params` and `transformer_layer_cls_to_wrap` are mutually exclusive.\""
    silent = f"transformers wraps by layer class and drops `{size.key}` without a word"
    what = stop if old else silent if old is False else f"on transformers < 5.10 {stop}; from 5.10 {silent}"
    short = ("TrainingArguments stops" if old else f"`{size.key}` is ignored" if old is False
             else f"TrainingArguments stops (< 5.10) or drops `{size.key}`")
    yield RULE.at(doc, size.key_span,
                  f"`fsdp_config` sets both `{size.key}` and `{layer.key}`: {short}",
                  severity=None if old else Severity.WARNING, assumptions=assumptions,
                  detail=f"{what}. Keep `{layer.key}` for transformer models.")
