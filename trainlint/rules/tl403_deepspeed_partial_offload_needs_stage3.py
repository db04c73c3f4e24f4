"""TL403 deepspeed-partial-offload-needs-stage3: `offload_optimizer.ratio` below 1 outside ZeRO stage 3.

**What**: `zero_optimization.offload_optimizer.ratio` < 1.0 while `stage` is not 3.

**Why**: the pydantic validator of `DeepSpeedZeroConfig` (`runtime/zero/config.py`) rejects it:
"Partial offloading only supported for ZeRO Stage 3."

**Example**: `"stage": 2, "offload_optimizer": {"device": "cpu", "ratio": 0.3}`.

**Fix** (unsafe): remove `ratio` (offload everything), or use stage 3.

**Evidence**: `deepspeed/runtime/zero/config.py` `DeepSpeedZeroConfig.offload_ratio_check` (an `assert` in a
pydantic `after` validator, since DeepSpeed 0.12.3; 0.17.0 to 0.19.8). First message: "1 validation error for
DeepSpeedZeroConfig ... Assertion failed, Partial offloading only supported for ZeRO Stage 3." (pydantic
ValidationError, a stop). The device is not looked at: `"device": "none"` with a ratio below 1 stops too.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix
from trainlint.flavors.base import as_float
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL403", "deepspeed-partial-offload-needs-stage3", Severity.ERROR,
            "offload_optimizer.ratio < 1 needs ZeRO stage 3", flavors=ds.ALL_FLAVORS,
            framework="deepspeed", versions="",
            evidence="deepspeed/runtime/zero/config.py: DeepSpeedZeroConfig.offload_ratio_check",
            raises="1 validation error for DeepSpeedZeroConfig ... Assertion failed, Partial offloading only supported for ZeRO Stage 3.")


def check(ctx: LintContext):
    for cfg in ds.ds_configs(ctx):
        stage = ds.stage(cfg)
        section = cfg.find("zero_optimization", "offload_optimizer")
        if stage is None or stage == 3 or section is None or section.kind != "mapping":
            continue
        node = section.get("ratio")
        value = ds.scalar(node)
        ratio = as_float(value) if value is not None else None
        ratio_entry = section.entry("ratio")
        if ratio is None or ratio >= 1.0 or ratio_entry is None:
            continue
        yield RULE.at(cfg.doc, node,
                      f"offload_optimizer.ratio {ratio:g} (partial offload) at ZeRO stage {stage}: DeepSpeed refuses "
                      "the config",
                      [fix("remove ratio (offload all optimizer states)",
                           delete_entry(cfg.doc, section, ratio_entry), safe=False)],
                      detail=f"offload_optimizer.ratio {ratio:g} asks for partial optimizer offload at ZeRO stage "
                             f"{stage}; DeepSpeed refuses the config: \"1 validation error for DeepSpeedZeroConfig ... "
                             "Assertion failed, Partial offloading only supported for ZeRO Stage 3.\" Remove ratio or "
                             "use \"stage\": 3.")
