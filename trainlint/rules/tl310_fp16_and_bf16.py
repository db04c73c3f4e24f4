"""TL310 fp16-and-bf16: `fp16` and `bf16` both true in TrainingArguments (or Axolotl).

**What**: `fp16: true` together with `bf16: true` (or `fp16_full_eval` with `bf16_full_eval`) in an
HF TrainingArguments / TRL / LLaMA-Factory file or an Axolotl config.

**Why**: `TrainingArguments.__post_init__` (transformers `training_args.py`) refuses it: "At most one
of fp16 and bf16 can be True, but not both" ("... can be True for full eval, but not both"). Axolotl
passes both flags on to TrainingArguments and fails the same way.

**Evidence**: `transformers/training_args.py: TrainingArguments.__post_init__` (stops); verified against
transformers 4.40 - 5.24. First message: "At most one of fp16 and bf16 can be True, but not both".

**Example**: `bf16: true` and `fp16: true` → keep one.

**Fix** (unsafe): set `fp16: false` (bf16 needs no loss scaling; on GPUs without bf16 keep fp16
instead).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._frameworks import flag
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL310", "fp16-and-bf16", Severity.ERROR,
            "fp16 and bf16 both enabled: TrainingArguments refuses it", flavors=("huggingface", "axolotl"),
            framework="transformers", evidence="transformers/training_args.py: TrainingArguments.__post_init__",
            raises="At most one of fp16 and bf16 can be True, but not both")

PAIRS = (("fp16", "bf16", ""), ("fp16_full_eval", "bf16_full_eval", " for full eval"))


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    for fp16_key, bf16_key, what in PAIRS:
        fp16, bf16 = root.entry(fp16_key), root.entry(bf16_key)
        if fp16 is None or bf16 is None or flag(fp16.value) is not True or flag(bf16.value) is not True:
            continue
        yield RULE.at(doc, fp16.key_span, f"`{fp16_key}` and `{bf16_key}` are both true: TrainingArguments stops",
                      [fix(f"set `{fp16_key}: false` (keep bf16)", replace_value(doc, fp16.value, False), safe=False)],
                      detail=f"TrainingArguments stops with \"At most one of fp16 and bf16 can be True{what}, but not "
                             f"both\". Keep `{bf16_key}` on GPUs that support bf16 (Ampere and newer), else "
                             f"`{fp16_key}`.")
