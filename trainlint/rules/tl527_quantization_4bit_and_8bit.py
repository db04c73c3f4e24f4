"""TL527 quantization-4bit-and-8bit: `load_in_4bit` and `load_in_8bit` both true.

**What**: a TRL ModelConfig / script YAML or an Axolotl config with `load_in_4bit: true` and
`load_in_8bit: true`.

**Why**: the base model can be quantized one way only. TRL's `ModelConfig.__post_init__`
(`trl/trainer/model_config.py`, TRL 0.18 - 1.16) stops first: "You can't use 8 bit and 4 bit precision at
the same time"; a script that builds the quantization config itself gets transformers'
`BitsAndBytesConfig.__init__` (`utils/quantization_config.py`, 4.52 - 5.24): "load_in_4bit and
load_in_8bit are both True, but only one can be used at the same time". (TRL's own
`get_quantization_config` would pick 4-bit, but ModelConfig refuses the pair before.) Axolotl refuses it
for QLoRA ("Can't load qlora in 8bit").

**Evidence**: `trl/trainer/model_config.py: ModelConfig.__post_init__` (stops); verified against TRL 0.18
- 1.16; transformers 4.52 - 5.24. First message: "You can't use 8 bit and 4 bit precision at the same
time".

**Example**: `load_in_4bit: true` + `load_in_8bit: true` → keep `load_in_4bit` (QLoRA).

**Fix** (unsafe): set `load_in_8bit: false`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._frameworks import flag
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL527", "quantization-4bit-and-8bit", Severity.ERROR,
            "load_in_4bit and load_in_8bit both true", flavors=("huggingface", "axolotl"),
            framework="trl", evidence="trl/trainer/model_config.py: ModelConfig.__post_init__",
            raises="You can't use 8 bit and 4 bit precision at the same time")


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    four, eight = root.entry("load_in_4bit"), root.entry("load_in_8bit")
    if four is None or eight is None or flag(four.value) is not True or flag(eight.value) is not True:
        return
    yield RULE.at(doc, eight.key_span,
                  "`load_in_4bit` and `load_in_8bit` are both true: the model can be quantized one way only, and the "
                  "run stops", [fix("set `load_in_8bit: false`", replace_value(doc, eight.value, False), safe=False)],
                  detail="The base model can be quantized one way only. TRL's ModelConfig stops with \"You can't use 8 "
                         "bit and 4 bit precision at the same time\" (transformers' BitsAndBytesConfig: \"load_in_4bit "
                         "and load_in_8bit are both True, but only one can be used at the same time\"). Keep one "
                         "(4-bit for QLoRA).")
