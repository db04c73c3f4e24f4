"""TL420 deepspeed-and-fsdp: DeepSpeed and FSDP enabled together.

**What**: an HF TrainingArguments/TRL/LLaMA-Factory file or an Axolotl config that sets both
`deepspeed` (a config path or an inline mapping) and `fsdp` (non-empty).

**Why**: the two are alternative sharding engines; only one can wrap the model. Axolotl's config
validation stops with "deepspeed and fsdp cannot be used together." (`utils/schemas/validation.py`);
the HF Trainer with "Using --fsdp xxx together with --deepspeed is not possible, deactivate one of
those flags." (transformers `trainer.py`).

**Evidence**: `transformers/trainer.py: Trainer.__init__` (stops); verified against transformers 4.52 -
5.24. First message: "Using --fsdp xxx together with --deepspeed is not possible, deactivate one of
those flags.".

**Example**: `deepspeed: ds_zero3.json` with `fsdp: full_shard auto_wrap`.

**Fix**: none automatic: keep one of them (and its settings).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules._frameworks import is_set, words
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL420", "deepspeed-and-fsdp", Severity.ERROR,
            "DeepSpeed and FSDP cannot be used together", flavors=("huggingface", "axolotl"),
            framework="transformers", evidence="transformers/trainer.py: Trainer.__init__",
            raises="Using --fsdp xxx together with --deepspeed is not possible, deactivate one of those flags.")


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    ds = root.entry("deepspeed")
    if ds is None or not is_set(ds.value):
        return
    fsdp = root.entry("fsdp")
    if fsdp is None or not [w for w in words(fsdp.value) if w not in ("false", "no", "none", "")]:
        return
    yield RULE.at(doc, fsdp.key_span,
                  f"both `deepspeed` and `{fsdp.key}` are set: only one can shard the model, and the trainer stops",
                  detail="They are alternative ways to shard the model and only one can wrap it. The HF Trainer stops "
                         "with \"Using --fsdp xxx together with --deepspeed is not possible\" (Axolotl: \"deepspeed "
                         "and fsdp cannot be used together.\"). Keep one of them.")
