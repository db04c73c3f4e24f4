"""TL301 deepspeed-precision-conflicts-with-accelerate: Accelerate's `mixed_precision` against the DeepSpeed file's other 16-bit type.

**What**: an Accelerate config with `mixed_precision: fp16` whose DeepSpeed config file enables
`bf16`, or `mixed_precision: bf16` (or `fp8`, which Accelerate runs on bf16) with `fp16` enabled there
(`true`, or the string `"true"`).

**Why**: `accelerate/utils/dataclasses.py::DeepSpeedPlugin.set_mixed_precision` stops the launch:
"`--mixed_precision` arg cannot be set to `bf16` when `fp16` is set in the DeepSpeed config file."

**Example**: `mixed_precision: bf16` + `"fp16": {"enabled": true}`.

The finding is on `mixed_precision`; the fix edits the DeepSpeed file.

**Fix** (safe): set that `enabled` to `"auto"`, so Accelerate fills it from `mixed_precision`.

**Evidence**: `accelerate/utils/dataclasses.py` `DeepSpeedPlugin.set_mixed_precision`, called from
`AcceleratorState` (Accelerate 1.12 to 1.15): ``"`--mixed_precision` arg cannot be set to `bf16` when `fp16` is
set in the DeepSpeed config file."`` (ValueError, a stop before DeepSpeed starts). The test is
`str(enabled).lower() == "true"`, so the string "true" counts; `mixed_precision: fp8` conflicts with fp16 too.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix
from trainlint.flavors.base import as_str
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL301", "deepspeed-precision-conflicts-with-accelerate", Severity.ERROR,
            "Accelerate mixed_precision conflicts with the 16-bit type enabled in the DeepSpeed config",
            flavors=("accelerate",),
            framework="accelerate", versions="",
            evidence="accelerate/utils/dataclasses.py: DeepSpeedPlugin.set_mixed_precision",
            raises="`--mixed_precision` arg cannot be set to `bf16` when `fp16` is set in the DeepSpeed config file.")


def check(ctx: LintContext):
    mp = ctx.document.find(("mixed_precision",))
    value = as_str(mp.value) if mp is not None and mp.kind == "scalar" else None
    if value is None or value.lower() not in ("fp16", "bf16", "fp8"):
        return  # fp8 runs on bf16 autocast: Accelerate tests it against fp16 like bf16
    mixed = value.lower()
    other = "bf16" if mixed == "fp16" else "fp16"
    for cfg in ds.ds_configs(ctx):
        node = cfg.find(other, "enabled")
        if node is None or node.kind != "scalar" or str(node.value).lower() != "true":
            continue
        yield RULE.at(ctx.document, mp,
                      f"mixed_precision is {mixed} but the DeepSpeed config enables {other}: Accelerate stops",
                      [fix(f'set {other}.enabled to "auto"', ds.replace_text(cfg.doc, node, "auto"))],
                      detail=f"{cfg.name} enables {other} ({other}.enabled: {node.raw}); Accelerate stops with "
                             f"\"`--mixed_precision` arg cannot be set to `{mixed}` when `{other}` is set in the "
                             f"DeepSpeed config file.\" Set {other}.enabled to \"auto\" there (or make mixed_precision "
                             f"{other}).")
