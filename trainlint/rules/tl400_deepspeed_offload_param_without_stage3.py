"""TL400 deepspeed-offload-param-without-stage3: parameter offload below ZeRO stage 3 does nothing.

**What**: `zero_optimization.offload_param` with `device` `cpu` or `nvme` while `stage` is 0, 1 or 2.

**Why**: only the stage-3 optimizer receives `offload_param` (`deepspeed/runtime/engine.py` passes
it to `DeepSpeedZeroOptimizer_Stage3` alone; `runtime/zero/config.py` documents it as "Enable
offloading of model parameters to CPU or NVMe ... only valid with stage 3"). At stages 1 and 2 the
parameters stay on the GPU without any message, so a run sized for parameter offload runs out of
memory (trlx `ds_config_gpt_j.json`, Lightning#18134).

**Example**: `"zero_optimization": {"stage": 2, "offload_param": {"device": "cpu"}}`.

**Fix** (unsafe): remove `offload_param` (what DeepSpeed does anyway), or move to `"stage": 3` if you
need the parameters off the GPU.

**Evidence**: `deepspeed/runtime/engine.py` `DeepSpeedEngine._configure_zero_optimizer` passes
`offload_param_config` only to the stage-3 optimizers; `deepspeed/runtime/zero/config.py` `DeepSpeedZeroConfig`
accepts the section at every stage without a validator (DeepSpeed 0.17.0 to 0.19.8). Silent: no message.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL400", "deepspeed-offload-param-without-stage3", Severity.WARNING,
            "offload_param below ZeRO stage 3 is ignored", flavors=ds.ALL_FLAVORS,
            framework="deepspeed", versions="",
            evidence="deepspeed/runtime/engine.py: DeepSpeedEngine._configure_zero_optimizer",
            raises="")


def check(ctx: LintContext):
    for cfg in ds.ds_configs(ctx):
        stage = ds.stage(cfg)
        if stage is None or stage >= 3:
            continue
        device, section = ds.offload_device(cfg, "offload_param")
        if device not in ("cpu", "nvme"):
            continue
        zero = cfg.find("zero_optimization")
        entry = zero.entry("offload_param") if zero is not None else None
        if zero is None or entry is None:
            continue  # offload_device found the section: not reached
        yield RULE.at(cfg.doc, entry.key_span,
                      f"offload_param (device {device}) has no effect at ZeRO stage {stage}: every GPU keeps the full "
                      "16-bit weights",
                      [fix("remove offload_param (ignored below stage 3)", delete_entry(cfg.doc, zero, entry), safe=False)],
                      detail="Only stage 3 partitions and offloads parameters, so every GPU keeps the full 16-bit "
                             "weights. Use \"stage\": 3, or remove it.")
