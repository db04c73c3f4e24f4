"""TL638 axolotl-model-quantization-conflict: `model_quantization_config` together with `load_in_4bit`/`load_in_8bit`.

**What**: an Axolotl config that sets `model_quantization_config` and also `load_in_8bit: true` or
`load_in_4bit: true`.

**Why**: both describe how to quantize the base model; Axolotl's validation stops with
"model_quantization_config and load_in_8bit or load_in_4bit cannot be used together.".

**Evidence**: axolotl `src/axolotl/utils/schemas/validation.py`, `check_model_quantization_config_vs_bnb`
(`model_validator(mode="before")`), since v0.12.0 (2025-08) to main (2026-07).

**Example**: `model_quantization_config: Mxfp4Config` with `load_in_4bit: true`.

**Fix**: none automatic: keep one way of quantizing.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules._frameworks import flag, is_set
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL638", "axolotl-model-quantization-conflict", Severity.ERROR,
            "model_quantization_config with load_in_4bit/load_in_8bit", flavors=("axolotl",),
            framework="axolotl", versions=">=0.12.0",
            evidence="axolotl/utils/schemas/validation.py: check_model_quantization_config_vs_bnb",
            raises="model_quantization_config and load_in_8bit or load_in_4bit cannot be used together.")


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping" or not is_set(root.get("model_quantization_config")):
        return
    for key in ("load_in_4bit", "load_in_8bit"):
        entry = root.entry(key)
        if entry is not None and flag(entry.value) is True:
            yield RULE.at(doc, entry.key_span,
                          f"`{key}: true` with `model_quantization_config`: Axolotl stops",
                          detail="Axolotl stops with \"model_quantization_config and load_in_8bit or load_in_4bit "
                                 "cannot be used together.\" Keep one way of quantizing the base.")
