"""TL660 trl-dpo-ref-model-with-peft: the launched script passes DPOTrainer a reference model and a PEFT config.

**What**: a DPO config with an adapter (`use_peft: true`) launched through a script that constructs TRL's
`DPOTrainer` with both a reference model (`ref_model=`, or the second positional argument) and a `peft_config=`
(alignment-handbook main's `scripts/dpo.py`: `ref_model = get_model(model_args, training_args)` beside
`peft_config=get_peft_config(model_args)`), without `force_use_ref_model: true`.

**Why**: with a PEFT config the reference is the base model with the adapter disabled, so TRL 0.19.1 - 0.27's
`DPOTrainer.__init__` (`_prepare_peft_model`) refuses a second model: "You passed both a ref_model and a
peft_config. For training PEFT adapters with DPO there is no need to pass a reference model. Please pass
`ref_model=None` in case you want to train PEFT adapters, or pass a ref_model with `force_use_ref_model=True` in
DPOTrainer's init. if you want to use a different ref_model."; the run stops before training. From 0.28 the check is
gone and the second model is kept beside the adapter: the estimate counts its weights then (one more copy of the
frozen base).

**Evidence**: `trl/trainer/dpo_trainer.py: DPOTrainer._prepare_peft_model` (the check in v0.19.1 - v0.27.0, gone in
v0.28.0, v1.0.0, v1.9.0); `alignment-handbook scripts/dpo.py: main` (from 19f0345). The script is read statically
(`context/codeargs.py: passes_reference_with_peft`).

**Example**: `recipes/zephyr-7b-beta/dpo/config_qlora.yaml` (`use_peft: true`, no `force_use_ref_model`) launched
with `accelerate launch scripts/dpo.py --config ...` under TRL 0.19.1 - 0.27.

**Fix**: `force_use_ref_model: true` (the reference model is then kept: a second copy of the base in memory), or
a TRL release from 0.28 (same memory), or a script that passes `ref_model=None` with the adapter.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules._frameworks import flag
from trainlint.rules.base import LintContext, Rule

REFUSED = ">=0.19.1,<0.28"  # DPOTrainer._prepare_peft_model's check (checked v0.19.1-v0.27.0; gone in v0.28.0)

RULE = Rule("TL660", "trl-dpo-ref-model-with-peft", Severity.ERROR,
            "DPOTrainer gets a reference model and a PEFT config: TRL 0.19.1-0.27 refuses it", flavors=("huggingface",),
            framework="trl",
            evidence="trl/trainer/dpo_trainer.py: DPOTrainer._prepare_peft_model",
            raises="You passed both a ref_model and a peft_config. For training PEFT adapters with DPO there is no "
                   "need to pass a reference model.")


def check(ctx: LintContext):
    doc, plan = ctx.document, ctx.plan
    if doc.root is None or doc.root.kind != "mapping" or plan is None or not plan.ref_model_with_peft.value:
        return
    force = doc.find(("force_use_ref_model",))
    if force is not None and flag(force) is True:
        return
    # the range is judged here, not by the engine: a release outside it is fine, one in it stops, and where the
    # release is not known (or the pins straddle the range) the finding says so, as a warning
    verdict = ctx.versions.admits("trl", REFUSED) if ctx.versions is not None else None
    if verdict is False:
        return
    found = ctx.versions.get("trl") if ctx.versions is not None else None
    assumptions = () if verdict else (
        f"TRL {REFUSED.replace(',', ', ')} refuses it, later releases keep the reference model; "
        + (f"{found.describe()}: {found.declare_hint()}" if found is not None else "TRL's release is not known"),)
    node = doc.find(("use_peft",)) or doc.find(("load_in_4bit",)) or doc.find(("load_in_8bit",))
    where = plan.ref_model_with_peft.origin.note
    yield RULE.at(doc, node, "the script passes DPOTrainer a reference model with this adapter: TRL 0.19.1-0.27 "
                             "refuses it", assumptions=assumptions, detail=(
                      f"{where}. DPOTrainer._prepare_peft_model raises \"You passed both a ref_model and a "
                      "peft_config. ...\" unless force_use_ref_model; from TRL 0.28 the reference model is kept "
                      "beside the adapter. Set `force_use_ref_model: true` (a second copy of the base in memory) or "
                      "pass ref_model=None in the script."))
