"""TL502 deepspeed-deprecated-key: a deprecated or removed DeepSpeed key.

**What**: deprecated spellings DeepSpeed still migrates (`zero_optimization.cpu_offload` →
`offload_optimizer {"device": "cpu"}`, `cpu_offload_param` → `offload_param`,
`cpu_offload_use_pin_memory`, `stage3_gather_fp16_weights_on_model_save` →
`stage3_gather_16bit_weights_on_model_save`, top-level `bfloat16` → `bf16`), and top-level blocks
that DeepSpeed 0.19 removed (`amp`, `sparse_attention`, `elasticity`, ...). An error when the old and
the new spelling are both present.

**Why**: `runtime/zero/config.py` and `config_utils.py` warn "Config parameter {dep_field} is
deprecated use {new_field} instead" and stop with "Cannot provide deprecated parameter '{dep}' and
replacing parameter '{new}' together"; removed blocks are refused or ignored by current releases
(schema notes, DeepSpeed#8489). The migration disappears with the next removal, and the hendrycks/apps
config (`cpu_offload`) reads as if optimizer offload were a boolean.

**Example**: `"zero_optimization": {"stage": 2, "cpu_offload": true}`.

**Fix** (safe): write the current spelling (`"offload_optimizer": {"device": "cpu"}`, the renamed key);
when both spellings are present, remove the deprecated one (unsafe).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix, rename_key
from trainlint.diagnostics import Edit
from trainlint.flavors.base import as_bool
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule
from trainlint.catalog.schemas import describe

RULE = Rule("TL502", "deepspeed-deprecated-key", Severity.WARNING,
            "A deprecated or removed DeepSpeed key", flavors=ds.ALL_FLAVORS)

OFFLOAD_FLAGS = {"cpu_offload": "offload_optimizer", "cpu_offload_param": "offload_param"}
RENAMES = {("zero_optimization", "stage3_gather_fp16_weights_on_model_save"):
           ("stage3_gather_16bit_weights_on_model_save", "gather_16bit_weights_on_model_save"),
           ("bfloat16",): ("bf16",)}


def check(ctx: LintContext):
    for cfg in ds.ds_configs(ctx):
        root = cfg.root
        if root is None:
            continue
        zero = root.get("zero_optimization")
        places = [(root, ())]
        if zero is not None and zero.kind == "mapping":
            places.append((zero, ("zero_optimization",)))
        for mapping, prefix in places:
            for entry in mapping.entries:
                path = prefix + (entry.key,)
                info = describe("deepspeed", path)
                if info is None or not info.deprecated:
                    continue
                if info.removed:
                    yield RULE.at(cfg.doc, entry.key_span, f"`{entry.key}` is no longer a DeepSpeed setting: "
                                  f"{info.description}",
                                  [fix(f"remove {entry.key}", delete_entry(cfg.doc, mapping, entry), safe=False)])
                    continue
                yield from _deprecated(cfg, mapping, entry, path, info)


def _deprecated(cfg, mapping, entry, path, info):
    key = entry.key
    if key in OFFLOAD_FLAGS and path[0] == "zero_optimization":
        new = OFFLOAD_FLAGS[key]
        flag = as_bool(entry.value.value) if entry.value.kind == "scalar" else None
        if mapping.get(new) is not None:
            yield RULE.at(cfg.doc, entry.key_span,
                          f"`{key}` is deprecated and `{new}` is set too: DeepSpeed stops with \"Cannot provide deprecated "
                          f"parameter '{key}' and replacing parameter '{new}' together\". Remove `{key}`.",
                          [fix(f"remove {key}", delete_entry(cfg.doc, mapping, entry), safe=False)],
                          severity=Severity.ERROR)
            return
        fixes = []
        if flag is True:
            fixes.append(fix(f'write {new}: {{"device": "cpu"}}', _rewrite(cfg, entry, new)))
        elif flag is False:
            fixes.append(fix(f"remove {key} (false is the default)", delete_entry(cfg.doc, mapping, entry)))
        yield RULE.at(cfg.doc, entry.key_span,
                      f"`{key}` is deprecated (DeepSpeed: \"Config parameter {key} is deprecated use {new} instead\"); "
                      f"write `\"{new}\": {{\"device\": \"cpu\"}}` inside zero_optimization"
                      + (" (false is the default: just remove it)" if flag is False else "") + ".", fixes)
        return
    renames = RENAMES.get(path)
    if renames:
        new = renames[0]
        present = [n for n in renames if mapping.get(n) is not None]
        if present:
            if path == ("bfloat16",):
                yield RULE.at(cfg.doc, entry.key_span,
                              "`bfloat16` is the legacy name of `bf16` and is read only when `bf16` is absent; here `bf16` "
                              "is set, so this section is ignored. Remove it.",
                              [fix("remove bfloat16", delete_entry(cfg.doc, mapping, entry), safe=False)])
            else:
                yield RULE.at(cfg.doc, entry.key_span,
                              f"`{key}` is deprecated and `{present[0]}` is set too: DeepSpeed stops with \"Cannot provide "
                              f"deprecated parameter '{key}' and replacing parameter '{present[0]}' together\". Remove `{key}`.",
                              [fix(f"remove {key}", delete_entry(cfg.doc, mapping, entry), safe=False)],
                              severity=Severity.ERROR)
            return
        yield RULE.at(cfg.doc, entry.key_span,
                      f"`{key}` is deprecated: DeepSpeed reads it as `{new}` with a warning (\"Config parameter {key} is "
                      f"deprecated use {new} instead\"). Rename it.",
                      [fix(f"rename {key} to {new}", rename_key(cfg.doc, entry, new))])
        return
    replacement = f" use `{info.replacement}` instead" if info.replacement else ""
    yield RULE.at(cfg.doc, entry.key_span,
                  f"`{key}` is deprecated ({info.description or 'DeepSpeed warns about it'});{replacement or ' remove it'}.")


def _rewrite(cfg, entry, new: str) -> Edit:
    doc = cfg.doc
    if doc.kind == "json":
        text = f'"{new}": {{"device": "cpu"}}'
    else:
        quote = entry.key_style if entry.key_style in ('"', "'") else ""
        text = f"{quote}{new}{quote}: {{device: cpu}}"
    return Edit(doc.path, doc.span(entry.key_span.start.offset, entry.value.span.end.offset), text)
