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

Comment keys (`_comment`, `//`) are refused inside these sections as well (at the top level they
are harmless and never reported). An fp16/bf16 finding is a warning while the DeepSpeed version is
unknown: 0.17.0 and older ignored unknown keys there.

A key that a later DeepSpeed release added is refused the same way by the releases before it: with the
release known (an exact pin or setting) and older than the key (catalog/data/deepspeed_added_keys.json, read
from the tags v0.8.0 - v0.18.9: ZeRO++'s `zero_hpz_partition_size`, `zero_quantized_weights`,
`zero_quantized_gradients` since 0.10.0, `zenflow` since 0.17.5, `offload_optimizer.super_offload` since
0.18.0, ...), it is an error: "3 validation errors for DeepSpeedZeroConfig zero_hpz_partition_size extra
fields not permitted (type=value_error.extra)" on deepspeed 0.9.5 (DeepSpeed#3827, OpenRLHF#63; pydantic 1
wording before 0.15.0). With the release assumed it is not reported: the newest release has every key.

**Fix** (unsafe): rename to the close known key when there is one, else remove the key.

**Evidence**: `deepspeed/runtime/config_utils.py` `DeepSpeedConfigModel` (`extra="forbid"`), built by
`runtime/zero/config.py` `get_zero_config`, `runtime/precision_config.py` `get_float16_config` /
`get_bfloat16_config` (0.17.1 and newer), `compile/config.py` `CompileConfig` (0.16.6 and newer), and the
monitor, comms, tensor-parallel and hybrid-engine configs; DeepSpeed 0.17.0 to 0.19.8. First message (pydantic
ValidationError, a stop; nested sections are reported by the outer model with a dotted location): "1
validation error for DeepSpeedZeroConfig offload_optimizer.foo Extra inputs are not permitted
[type=extra_forbidden, ...]".
"""

from __future__ import annotations

import json
from functools import lru_cache

from trainlint.catalog.files import read_data
from trainlint.context.versions import parse_version
from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix, rename_key
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule
from trainlint.catalog.schemas import known_keys, validation_errors

RULE = Rule("TL500", "deepspeed-unknown-section-key", Severity.ERROR,
            "A key that DeepSpeed's strictly validated sections reject", flavors=ds.ALL_FLAVORS,
            framework="deepspeed", versions="",
            evidence="deepspeed/runtime/config_utils.py: DeepSpeedConfigModel (extra=\"forbid\"); deepspeed/runtime/zero/config.py: get_zero_config",
            raises="1 validation error for DeepSpeedZeroConfig ... Extra inputs are not permitted [type=extra_forbidden, ...]")

FP16_ONLY = {"loss_scale", "initial_scale_power", "loss_scale_window", "hysteresis", "consecutive_hysteresis",
             "min_loss_scale", "auto_cast", "fp16_master_weights_and_grads"}
SINCE = {"fp16": " (DeepSpeed 0.17.1 and newer; older releases ignored it)",
         "bf16": " (DeepSpeed 0.17.1 and newer; older releases ignored it)",
         "bfloat16": " (DeepSpeed 0.17.1 and newer; older releases ignored it)",
         "compile": " (DeepSpeed 0.16.6 and newer)"}
# The model DeepSpeed builds from each top-level section: pydantic names the outer model and the dotted location
# ("1 validation error for DeepSpeedZeroConfig\noffload_optimizer.foo\n  Extra inputs are not permitted").
MODEL = {"zero_optimization": "DeepSpeedZeroConfig", "fp16": "DeepSpeedFP16Config", "bf16": "DeepSpeedBF16Config",
         "bfloat16": "DeepSpeedBF16Config", "compile": "CompileConfig", "tensor_parallel": "TPTrainingConfig",
         "hybrid_engine": "HybridEngineConfig", "tensorboard": "DeepSpeedMonitorConfig",
         "wandb": "DeepSpeedMonitorConfig", "csv_monitor": "DeepSpeedMonitorConfig", "comet": "DeepSpeedMonitorConfig",
         "comms_logger": "CommsLoggerConfig"}
MONITORS = {"tensorboard", "wandb", "csv_monitor", "comet"}
# Sections DeepSpeed began to validate strictly at some release; before it, it read them with dict.get and
# ignored other keys (fp16/bf16), or took another schema (compile: the 2024 {enabled, backend, kwargs}).
STRICT_SINCE = {"fp16": ("0.17.1", "0.17.0 and older ignore unknown keys there"),
                "bf16": ("0.17.1", "0.17.0 and older ignore unknown keys there"),
                "bfloat16": ("0.17.1", "0.17.0 and older ignore unknown keys there"),
                "compile": ("0.16.6", "0.16.5 and older took the 2024 {enabled, backend, kwargs} section")}


def check(ctx: LintContext):
    for cfg in ds.ds_configs(ctx):
        root = cfg.root
        if root is None:
            continue
        try:
            errors = validation_errors("deepspeed", root.to_python())
        except Exception:  # noqa: BLE001 - the schema library is optional at run time
            continue
        counts: dict = {}
        for error in errors:
            if error.key_path:
                model = MODEL.get(str(error.key_path[0]))
                counts[model] = counts.get(model, 0) + 1
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
            assumptions = []
            since = STRICT_SINCE.get(str(path[0]))
            if since is not None:
                release, before = since
                strict = ctx.version_in("deepspeed", f">={release}")
                if strict is False:
                    continue  # that release did not validate this section strictly
                if strict is None:
                    assumptions.append(f"assumed DeepSpeed {release} or newer (`{path[0]}` is validated strictly since "
                                       f"{release}; {before}): declare it with "
                                       "`versions = {deepspeed = \"X.Y.Z\"}` in [tool.trainlint] or "
                                       "`# trainlint: deepspeed=X.Y.Z`")
            yield _finding(cfg, parent, entry, path, assumptions, counts.get(MODEL.get(str(path[0])), 1))
        yield from _too_new(ctx, cfg, root)


@lru_cache(maxsize=1)
def added_keys() -> dict:
    """Section path -> {key: the first DeepSpeed release that accepts it} (catalog/data/deepspeed_added_keys.json)."""
    try:
        sections = json.loads(read_data("deepspeed_added_keys.json")).get("sections") or {}
        return {tuple(path.split(".")): dict(keys) for path, keys in sections.items() if isinstance(keys, dict)}
    except Exception:  # noqa: BLE001 - a missing or broken table reports nothing
        return {}


def _too_new(ctx: LintContext, cfg, root):
    """Keys the pinned DeepSpeed release does not have yet: that release's model refuses them like any unknown key.
    Only where the release is known to be older (an exact pin or setting): the newest release has them all."""
    for path, keys in added_keys().items():
        parent = root.find(path)
        if parent is None or parent.kind != "mapping":
            continue
        found = [(entry, keys[entry.key]) for entry in parent.entries if entry.key in keys]
        found = [(entry, since) for entry, since in found if ctx.version_in("deepspeed", f"<{since}") is True]
        for entry, since in found:
            version = ctx.version_of("deepspeed")
            release = version.version if version is not None else "this release"
            where = ds.key_name(path)
            loc = ds.key_name((*path[1:], entry.key))
            count = len(found)
            errors = f"{count} validation error{'s' if count > 1 else ''} for {MODEL.get(path[0], 'its model')}"
            stop = (f"{errors} {loc} extra fields not permitted (type=value_error.extra)"
                    if _older(release, "0.15.0") else f"{errors} ... {loc} Extra inputs are not permitted")
            yield RULE.at(cfg.doc, entry.key_span,
                          f"`{entry.key}` is a key of `{where}` only since DeepSpeed {since}: {release} stops",
                          [fix(f"remove {entry.key}", delete_entry(cfg.doc, parent, entry), safe=False)],
                          detail=f"`{entry.key}` is a key of `{where}` only since DeepSpeed {since}, and this file runs "
                                 f"under DeepSpeed {release}: it refuses the key and stops with \"{stop}\". Upgrade "
                                 f"DeepSpeed to >= {since} or remove the key.")


def _older(version: str, than: str) -> bool:
    a, b = parse_version(version), parse_version(than)
    return a is not None and b is not None and a < b


def _finding(cfg: ds.DSConfig, parent, entry, path, assumptions=(), count: int = 1):
    key, section = entry.key, str(path[-2])
    known = known_keys("deepspeed", path[:-1]) or set()
    where = ds.key_name(path[:-1])
    top = str(path[0])
    model = MODEL.get(top, "its pydantic model")
    loc = ds.key_name(path if top in MONITORS else path[1:])
    why = ""
    suggestion = None
    if ds.is_comment_key(key):
        why = (" DeepSpeed refuses comment keys inside its validated sections too; keep comments at the top level, "
               "where DeepSpeed ignores them.")
    elif key == "aio" and section == "zero_optimization":
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
    fixes = []
    if suggestion:
        fixes.append(fix(f"rename {key} to {suggestion}", rename_key(cfg.doc, entry, suggestion), safe=False))
    fixes.append(fix(f"remove {key}", delete_entry(cfg.doc, parent, entry), safe=False))
    return RULE.at(cfg.doc, entry.key_span,
                   f"`{key}` is not a key of `{where}`: DeepSpeed stops"
                   + (f"; did you mean `{suggestion}`?" if suggestion else ""), fixes,
                   assumptions=assumptions,
                   detail=f"DeepSpeed validates this section strictly{SINCE.get(section, '')} and stops with "
                          f"\"{count} validation error{'s' if count > 1 else ''} for {model} ... {loc} Extra inputs are "
                          f"not permitted\".{why}")
