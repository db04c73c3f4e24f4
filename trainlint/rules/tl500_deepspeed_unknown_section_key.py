"""TL500 deepspeed-unknown-section-key: a key DeepSpeed's strictly validated sections refuse.

**What**: a key that the pydantic model of its section does not define, in the sections DeepSpeed
validates with `extra="forbid"`: `zero_optimization`, `offload_param`, `offload_optimizer`, `fp16`,
`bf16` (DeepSpeed ≥ 0.17.1), `compile` (≥ 0.16.6), `tensor_parallel`, `hybrid_engine`, the monitor
sections, `comms_logger`. Aliases such as `max_live_parameters` for `stage3_max_live_parameters`
are valid; deprecated keys are TL502's.

**Why**: `DeepSpeedConfigModel` rejects extra fields at start-up: "1 validation error for
DeepSpeedZeroConfig ... Extra inputs are not permitted [type=extra_forbidden ...]" (pydantic v1
builds: "extra fields not permitted"). Seen in the wild: `aio` placed inside `zero_optimization`
(DeepSpeed#2721), the apex key `opt_level` in `fp16` (trlx `ds_config_gpt_j.json`), fp16 loss-scale
keys in `bf16` (FlagEmbedding#1487), Axolotl's 2024 `"compile": {"disable": false, "backend":
"inductor"}` (refused since DeepSpeed 0.16.6's DeepCompile `CompileConfig`).

**Example**: `"fp16": {"enabled": true, "opt_level": "O2"}`.

**Fix** (unsafe): rename to the close known key when there is one, else remove the key.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix, rename_key
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule
from trainlint.catalog.schemas import known_keys, validation_errors

RULE = Rule("TL500", "deepspeed-unknown-section-key", Severity.ERROR,
            "A key that DeepSpeed's strictly validated sections reject", flavors=ds.ALL_FLAVORS)

FP16_ONLY = {"loss_scale", "initial_scale_power", "loss_scale_window", "hysteresis", "consecutive_hysteresis",
             "min_loss_scale", "auto_cast", "fp16_master_weights_and_grads"}
SINCE = {"fp16": " (DeepSpeed 0.17.1 and newer; older releases ignored it)",
         "bf16": " (DeepSpeed 0.17.1 and newer; older releases ignored it)",
         "bfloat16": " (DeepSpeed 0.17.1 and newer; older releases ignored it)",
         "compile": " (DeepSpeed 0.16.6 and newer)"}
MODEL = {"zero_optimization": "DeepSpeedZeroConfig", "offload_param": "DeepSpeedZeroOffloadParamConfig",
         "offload_optimizer": "DeepSpeedZeroOffloadOptimizerConfig", "fp16": "DeepSpeedFP16Config",
         "bf16": "DeepSpeedBF16Config", "bfloat16": "DeepSpeedBF16Config", "compile": "CompileConfig"}


def check(ctx: LintContext):
    for cfg in ds.ds_configs(ctx):
        root = cfg.root
        if root is None:
            continue
        try:
            errors = validation_errors("deepspeed", root.to_python())
        except Exception:  # noqa: BLE001 - the schema library is optional at run time
            continue
        for error in errors:
            if error.kind != "unknown-key" or not error.key_path or not isinstance(error.key_path[-1], str):
                continue
            path = tuple(error.key_path)
            parent = root.find(path[:-1]) if len(path) > 1 else root
            if parent is None or parent.kind != "mapping" or len(path) < 2:
                continue
            entry = parent.entry(path[-1])
            if entry is None:
                continue
            yield _finding(cfg, parent, entry, path)


def _finding(cfg: ds.DSConfig, parent, entry, path):
    key, section = entry.key, str(path[-2])
    known = known_keys("deepspeed", path[:-1]) or set()
    where = ds.key_name(path[:-1])
    model = MODEL.get(section, "its pydantic model")
    why = ""
    suggestion = None
    if key == "aio" and section == "zero_optimization":
        why = " `aio` (NVMe tuning) is a top-level section, not part of zero_optimization (DeepSpeed#2721)."
    elif section in ("bf16", "bfloat16") and key in FP16_ONLY:
        why = " It is an fp16 loss-scaling key; bf16 needs no loss scaling."
    elif section == "fp16" and key == "opt_level":
        why = " `opt_level` is an apex AMP setting that DeepSpeed's fp16 mode never had."
    elif section == "compile" and key in ("disable", "backend", "enabled", "kwargs"):
        why = (" The 2024 `compile {enabled, backend, kwargs}` section was removed; today's `compile` configures "
               "DeepCompile, and torch.compile is enabled from code (engine.compile()).")
    else:
        suggestion = ds.did_you_mean(key, known - set(parent.keys()))
        if suggestion:
            why = f" Did you mean `{suggestion}`?"
    fixes = []
    if suggestion:
        fixes.append(fix(f"rename {key} to {suggestion}", rename_key(cfg.doc, entry, suggestion), safe=False))
    fixes.append(fix(f"remove {key}", delete_entry(cfg.doc, parent, entry), safe=False))
    return RULE.at(cfg.doc, entry.key_span,
                   f"`{key}` is not a key of `{where}`: DeepSpeed validates this section strictly{SINCE.get(section, '')} "
                   f"and stops with \"validation error for {model} ... Extra inputs are not permitted\".{why}", fixes)
