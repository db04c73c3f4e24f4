"""TL502 deepspeed-deprecated-key: a deprecated or removed DeepSpeed key.

**What**: deprecated spellings DeepSpeed still migrates (`zero_optimization.cpu_offload` →
`offload_optimizer {"device": "cpu"}`, `cpu_offload_param` → `offload_param`,
`cpu_offload_use_pin_memory`, `stage3_gather_fp16_weights_on_model_save` →
`stage3_gather_16bit_weights_on_model_save`, top-level `bfloat16` → `bf16`), and the blocks and ZeRO
keys that DeepSpeed 0.19.7 (`nebula`, `compression_training`, `quantize_training`,
`sparse_attention`, `mics_shard_size`, `mics_hierarchical_params_gather`) and 0.19.8 (`amp`,
`sparse_gradients`, `eigenvalue`, `elasticity`, `graph_harvesting`, `curriculum_learning`,
`progressive_layer_drop`, `zeropp_loco_param`) removed. An error when the old and the new spelling
are both present, or when a removed key meets a DeepSpeed version known to refuse it; a warning that
names the version it assumed when the version is not known; information when the known version
still supports it.

**Why**: `runtime/zero/config.py` and `config_utils.py` warn "Config parameter cpu_offload is
deprecated use offload_optimizer instead" and stop with "Cannot provide deprecated parameter
'cpu_offload' and replacing parameter 'offload_optimizer' together". `bfloat16` is read silently, only
when `bf16` is absent. The removed keys stop the run as the very first check of the config
(`DeepSpeedConfigError`, DeepSpeed#8489), even `"amp": {"enabled": false}`. The hendrycks/apps config
(`cpu_offload`) reads as if optimizer offload were a boolean.

**Example**: `"zero_optimization": {"stage": 2, "cpu_offload": true}`.

**Fix** (safe): write the current spelling (`"offload_optimizer": {"device": "cpu"}`, the renamed key);
when both spellings are present, remove the deprecated one (unsafe); remove a removed block (unsafe).

**Evidence**: `deepspeed/runtime/config_utils.py` `DeepSpeedConfigModel._process_deprecated_field` (a warning
line, or an assert when both are given; DeepSpeed 0.17.0 to 0.19.8), `runtime/precision_config.py`
`get_bfloat16_config` (silent), `runtime/config.py` `_reject_removed_config_keys` (0.19.7 and newer;
DeepSpeedConfigError, a stop): "NVIDIA Apex AMP integration has been removed. Use DeepSpeed 'fp16', 'bf16',
or 'torch_autocast' instead. See https://github.com/deepspeedai/DeepSpeed/issues/8489."
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix, rename_key
from trainlint.diagnostics import Edit
from trainlint.document.tree import Node
from trainlint.flavors.base import as_bool
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule
from trainlint.catalog.schemas import describe

RULE = Rule("TL502", "deepspeed-deprecated-key", Severity.WARNING,
            "A deprecated or removed DeepSpeed key", flavors=ds.ALL_FLAVORS,
            framework="deepspeed", versions="",
            evidence="deepspeed/runtime/config_utils.py: DeepSpeedConfigModel._process_deprecated_field; deepspeed/runtime/config.py: _reject_removed_config_keys",
            raises="Config parameter cpu_offload is deprecated use offload_optimizer instead")

OFFLOAD_FLAGS = {"cpu_offload": "offload_optimizer", "cpu_offload_param": "offload_param"}
# DeepSpeed release that first refuses each removed key (runtime/config.py _REMOVED_*_CONFIG_KEYS).
REMOVED_SINCE = {
    "nebula": "0.19.7", "compression_training": "0.19.7", "quantize_training": "0.19.7", "sparse_attention": "0.19.7",
    "mics_shard_size": "0.19.7", "mics_hierarchical_params_gather": "0.19.7",
    "amp": "0.19.8", "sparse_gradients": "0.19.8", "eigenvalue": "0.19.8", "elasticity": "0.19.8",
    "graph_harvesting": "0.19.8", "curriculum_learning": "0.19.8", "progressive_layer_drop": "0.19.8",
    "zeropp_loco_param": "0.19.8",
}
RENAMES = {("zero_optimization", "stage3_gather_fp16_weights_on_model_save"):
           ("stage3_gather_16bit_weights_on_model_save", "gather_16bit_weights_on_model_save"),
           ("bfloat16",): ("bf16",)}


def check(ctx: LintContext):
    for cfg in ds.ds_configs(ctx):
        root = cfg.root
        if root is None:
            continue
        zero = root.get("zero_optimization")
        places: list[tuple[Node, tuple[str, ...]]] = [(root, ())]
        if zero is not None and zero.kind == "mapping":
            places.append((zero, ("zero_optimization",)))
        for mapping, prefix in places:
            for entry in mapping.entries:
                path = prefix + (entry.key,)
                info = describe("deepspeed", path)
                if info is None or not info.deprecated:
                    continue
                if info.removed:
                    yield _removed(ctx, cfg, mapping, entry, info)
                    continue
                yield from _deprecated(cfg, mapping, entry, path, info)


def _removed(ctx, cfg, mapping, entry, info):
    since = REMOVED_SINCE.get(entry.key, "0.19.8")
    fixes = [fix(f"remove {entry.key}", delete_entry(cfg.doc, mapping, entry), safe=False)]
    refused = ctx.version_in("deepspeed", f">={since}")
    message = info.description
    if refused is False:
        found = ctx.version_of("deepspeed")
        return RULE.at(cfg.doc, entry.key_span,
                       f"`{entry.key}` still works on DeepSpeed {found.version if found else 'this version'}, but "
                       f"DeepSpeed {since} removed it and refuses the config", fixes,
                       severity=Severity.INFO, detail=f"DeepSpeed {since} and newer stop with \"{message}\"")
    assumptions = [] if refused else [
        f"assumed DeepSpeed {since} or newer, which refuses it (older releases still read it): declare the version "
        "with `versions = {deepspeed = \"X.Y.Z\"}` in [tool.trainlint] or `# trainlint: deepspeed=X.Y.Z`"]
    return RULE.at(cfg.doc, entry.key_span,
                   f"`{entry.key}` was removed in DeepSpeed {since}: from that release DeepSpeed refuses the config",
                   fixes, severity=Severity.ERROR, assumptions=assumptions,
                   detail=f"From DeepSpeed {since} on, DeepSpeed stops before anything else with "
                          f"\"DeepSpeedConfigError: {message}\" Remove it.")


def _deprecated(cfg, mapping, entry, path, info):
    key = entry.key
    if key in OFFLOAD_FLAGS and path[0] == "zero_optimization":
        new = OFFLOAD_FLAGS[key]
        flag = as_bool(entry.value.value) if entry.value.kind == "scalar" else None
        if mapping.get(new) is not None:
            yield RULE.at(cfg.doc, entry.key_span,
                          f"`{key}` is deprecated and `{new}` is set too: DeepSpeed stops; remove `{key}`",
                          [fix(f"remove {key}", delete_entry(cfg.doc, mapping, entry), safe=False)],
                          severity=Severity.ERROR,
                          detail=f"DeepSpeed stops with \"Cannot provide deprecated parameter '{key}' and replacing "
                                 f"parameter '{new}' together\". Remove `{key}`.")
            return
        fixes = []
        if flag is True:
            fixes.append(fix(f'write {new}: {{"device": "cpu"}}', _rewrite(cfg, entry, new)))
        elif flag is False:
            fixes.append(fix(f"remove {key} (false is the default)", delete_entry(cfg.doc, mapping, entry)))
        yield RULE.at(cfg.doc, entry.key_span,
                      (f"`{key}` is deprecated: false is the default, remove it" if flag is False else
                       f"`{key}` is deprecated: write `\"{new}\": {{\"device\": \"cpu\"}}` inside zero_optimization"),
                      fixes,
                      detail=f"DeepSpeed: \"Config parameter {key} is deprecated use {new} instead\"; write "
                             f"`\"{new}\": {{\"device\": \"cpu\"}}` inside zero_optimization"
                             + (" (false is the default: just remove it)" if flag is False else "") + ".")
        return
    renames = RENAMES.get(path)
    if renames:
        new = renames[0]
        present = [n for n in renames if mapping.get(n) is not None]
        if present:
            if path == ("bfloat16",):
                yield RULE.at(cfg.doc, entry.key_span,
                              "`bfloat16` is ignored: `bf16` is set too, and the legacy `bfloat16` is read only without it",
                              [fix("remove bfloat16", delete_entry(cfg.doc, mapping, entry), safe=False)],
                              detail="`bfloat16` is the legacy name of `bf16` and is read only when `bf16` is absent; "
                                     "here `bf16` is set, so this section is ignored. Remove it.")
            else:
                yield RULE.at(cfg.doc, entry.key_span,
                              f"`{key}` is deprecated and `{present[0]}` is set too: DeepSpeed stops; remove `{key}`",
                              [fix(f"remove {key}", delete_entry(cfg.doc, mapping, entry), safe=False)],
                              severity=Severity.ERROR,
                              detail=f"DeepSpeed stops with \"Cannot provide deprecated parameter '{key}' and "
                                     f"replacing parameter '{renames[-1]}' together\". Remove `{key}`.")
            return
        if path == ("bfloat16",):
            yield RULE.at(cfg.doc, entry.key_span,
                          "`bfloat16` is the legacy name of `bf16`: integrations do not see it; rename it",
                          [fix(f"rename {key} to {new}", rename_key(cfg.doc, entry, new))],
                          detail="DeepSpeed reads it without any message, only while `bf16` is absent, and "
                                 "integrations look for `bf16` (HF Trainer and Accelerate fill and compare "
                                 "`bf16.enabled`). Rename it.")
            return
        field = renames[-1]  # DeepSpeed names the field, not its alias
        yield RULE.at(cfg.doc, entry.key_span,
                      f"`{key}` is deprecated: rename it to `{new}`",
                      [fix(f"rename {key} to {new}", rename_key(cfg.doc, entry, new))],
                      detail=f"DeepSpeed reads it as `{new}` with a warning (\"Config parameter {key} is "
                             f"deprecated use {field} instead\"). Rename it.")
        return
    replacement = f" use `{info.replacement}` instead" if info.replacement else ""
    yield RULE.at(cfg.doc, entry.key_span,
                  f"`{key}` is deprecated;{replacement or ' remove it'}",
                  detail=f"{info.description or 'DeepSpeed warns about it'}.")


def _rewrite(cfg, entry, new: str) -> Edit:
    doc = cfg.doc
    if doc.kind == "json":
        text = f'"{new}": {{"device": "cpu"}}'
    else:
        quote = entry.key_style if entry.key_style in ('"', "'") else ""
        text = f"{quote}{new}{quote}: {{device: cpu}}"
    return Edit(doc.path, doc.span(entry.key_span.start.offset, entry.value.span.end.offset), text)
