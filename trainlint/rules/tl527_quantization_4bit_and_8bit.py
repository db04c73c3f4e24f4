"""TL527 quantization-4bit-and-8bit: `load_in_4bit` and `load_in_8bit` both true.

**What**: a TRL ModelConfig / script YAML or an Axolotl config with `load_in_4bit: true` and
`load_in_8bit: true`.

**Why**: the base model can be quantized one way only. transformers' `BitsAndBytesConfig` stops with
"You can't use 8 bit and 4 bit precision at the same time" (TRL `get_quantization_config` builds it
from these two flags); Axolotl refuses the pair for QLoRA ("Can't load qlora in 8bit").

**Example**: `load_in_4bit: true` + `load_in_8bit: true` → keep `load_in_4bit` (QLoRA).

**Fix** (unsafe): set `load_in_8bit: false`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._frameworks import flag
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL527", "quantization-4bit-and-8bit", Severity.ERROR,
            "load_in_4bit and load_in_8bit both true", flavors=("huggingface", "axolotl"))


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    four, eight = root.entry("load_in_4bit"), root.entry("load_in_8bit")
    if four is None or eight is None or flag(four.value) is not True or flag(eight.value) is not True:
        return
    yield RULE.at(doc, eight.key_span,
                  "`load_in_4bit` and `load_in_8bit` are both true: the base model can be quantized one way only, and "
                  "transformers stops with \"You can't use 8 bit and 4 bit precision at the same time\". Keep one "
                  "(4-bit for QLoRA).", [fix("set `load_in_8bit: false`", replace_value(doc, eight.value, False), safe=False)])
