"""TL402 deepspeed-stage3-key-below-stage3: `stage3_*` settings in a config that is not ZeRO stage 3.

**What**: the known `stage3_*` keys of `zero_optimization` (and their short aliases such as
`max_live_parameters`, `prefetch_bucket_size`, `param_persistence_threshold`,
`gather_16bit_weights_on_model_save`) while `stage` is 0, 1 or 2.

**Why**: only `runtime/zero/stage3.py` and `partition_parameters.py` read them; at stages 1 and 2
DeepSpeed accepts and ignores them, so the tuning they suggest (prefetching, live-parameter
limits, 16-bit gathering at save) does not happen (Lightning#18134's config).

**Example**: `"stage": 2, "stage3_max_live_parameters": 1e9`.

**Fix** (unsafe): remove the key, or move to stage 3.

**Evidence**: `deepspeed/runtime/zero/config.py` `DeepSpeedZeroConfig` (the `stage3_*` aliases are fields at
every stage); read only by `engine.py` `_configure_zero_optimizer`'s stage-3 branch, `zero/stage3.py` and
`zero/parameter_offload.py` (DeepSpeed 0.17.0 to 0.19.8). Silent: no message. Unknown `stage3_*` names are
refused by the model (TL500), the deprecated `stage3_gather_fp16_weights_on_model_save` is TL502's.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule
from trainlint.catalog.schemas import describe

RULE = Rule("TL402", "deepspeed-stage3-key-below-stage3", Severity.WARNING,
            "stage3_* ZeRO settings have no effect below stage 3", flavors=ds.ALL_FLAVORS,
            framework="deepspeed", versions="",
            evidence="deepspeed/runtime/zero/config.py: DeepSpeedZeroConfig; deepspeed/runtime/engine.py: DeepSpeedEngine._configure_zero_optimizer",
            raises="")

STAGE3_ALIASES = {
    "max_live_parameters", "max_reuse_distance", "prefetch_bucket_size", "param_persistence_threshold",
    "model_persistence_threshold", "module_granularity_threshold", "use_all_reduce_for_fetch_params",
    "allgather_sequential", "gather_16bit_weights_on_model_save",
}


def check(ctx: LintContext):
    for cfg in ds.ds_configs(ctx):
        stage = ds.stage(cfg)
        zero = cfg.find("zero_optimization")
        if stage is None or stage >= 3 or zero is None or zero.kind != "mapping":
            continue
        for entry in zero.entries:
            if not (entry.key.startswith("stage3_") or entry.key in STAGE3_ALIASES):
                continue
            info = describe("deepspeed", ("zero_optimization", entry.key))
            if info is None or info.deprecated:
                continue  # unknown: DeepSpeed refuses it (TL500); deprecated: TL502
            yield RULE.at(cfg.doc, entry.key_span,
                          f"{entry.key} has no effect at ZeRO stage {stage}: only the stage-3 engine reads it",
                          [fix(f"remove {entry.key}", delete_entry(cfg.doc, zero, entry), safe=False)],
                          detail="Remove it, or use \"stage\": 3 if you meant to partition the parameters.")
