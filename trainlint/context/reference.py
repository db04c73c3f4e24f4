"""Whether the launched script hands TRL's DPOTrainer a reference model of its own beside a PEFT config.

alignment-handbook main's scripts/dpo.py builds `ref_model = get_model(...)` and passes it with
`peft_config=get_peft_config(model_args)`: with an adapter, TRL 0.19.1-0.27's DPOTrainer refuses it unless
`force_use_ref_model` (rule TL660), and from 0.28 it keeps that second model beside the adapter, whose frozen weights
the estimate then counts (memory/model.py reference_model). Read statically from the script (context/codeargs.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trainlint.context import codeargs, pins
from trainlint.context import dialect as dialect_context
from trainlint.context import launch as launch_context
from trainlint.plan import Origin, Setting, TrainingPlan


def launched_script(launch: Any) -> str | None:
    """The path of the Python script `launch` runs, when it lies in the repository; None otherwise."""
    if launch is None or not getattr(launch, "found", False) or not getattr(launch, "script", ""):
        return None
    try:
        root = pins.repo_root(Path(launch.origin.path).parent) if launch.origin.path else None
        return dialect_context.script_path(launch.script, launch_context.bases_of(launch, root)) or None
    except (OSError, ValueError, RuntimeError):
        return None


def apply(plan: TrainingPlan | None, launch: Any) -> TrainingPlan | None:
    """`plan` with `ref_model_with_peft` when a DPO run with an adapter is launched through a script that passes
    DPOTrainer both a reference model and a peft_config."""
    if plan is None or plan.flavor != "huggingface" or plan.task.value != "dpo" or plan.peft.value is None:
        return plan
    script = launched_script(launch)
    where = codeargs.passes_reference_with_peft(script) if script else None
    if where is None:
        return plan
    return plan.with_(ref_model_with_peft=Setting(True, Origin("inferred", note=where)))


__all__ = ["apply", "launched_script"]
