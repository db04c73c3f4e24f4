"""TL300 deepspeed-fp16-and-bf16: a DeepSpeed config that enables fp16 and bf16 together.

**What**: `fp16.enabled` and `bf16.enabled` (or the legacy `bfloat16.enabled`) both true, counting
`"auto"` as what the integration fills it with: HF Trainer's `fp16`/`bf16` (or `*_full_eval`),
Accelerate's `mixed_precision`. String booleans count the way DeepSpeed's pydantic model reads them.

**Why**: `deepspeed/runtime/config.py::_initialize_params` asserts
`not (fp16.enabled and bf16.enabled)`: "bfloat16 and fp16 modes cannot be simultaneously enabled".

**Example**: `"fp16": {"enabled": true}, "bf16": {"enabled": "auto"}` with `bf16: true` in the HF config.

**Fix**: when one side is `"auto"` under HF or Accelerate, set the other to `"auto"` too (safe: the
integration then fills both from one flag); otherwise turn fp16 off (unsafe: it picks bf16 for you).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.flavors.base import as_bool, as_str
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL300", "deepspeed-fp16-and-bf16", Severity.ERROR,
            "fp16 and bf16 both enabled in a DeepSpeed config", flavors=ds.ALL_FLAVORS)


def enabled(cfg: ds.DSConfig, ctx: LintContext, section: str):
    """(on?, node, how) for fp16/bf16: on is None when unknown."""
    names = (section, "bfloat16") if section == "bf16" else (section,)
    for name in names:
        sec = cfg.find(name)
        if sec is None:
            continue
        if sec.kind != "mapping":
            return None, None, ""
        node = sec.get("enabled")
        if node is None:
            return False, sec, ""
        if not ds.is_auto(node):
            return (as_bool(node.value) if node.kind == "scalar" else None), node, ""
        if cfg.host in ds.HF_HOSTS:
            hv = ds.host_value(cfg, section)
            if hv is None:
                return None, node, ""
            return bool(hv.value), node, f" (\"auto\", filled from {hv.describe(cfg.host_doc)})"
        if cfg.host == "accelerate":
            mp = ctx.document.find(("mixed_precision",))
            value = as_str(mp.value) if mp is not None and mp.kind == "scalar" else None
            if value is None:
                return None, node, ""
            return value.lower() == section, node, f" (\"auto\", filled from mixed_precision: {value})"
        return None, node, ""
    return False, None, ""


def check(ctx: LintContext):
    for cfg in ds.ds_configs(ctx):
        fp16, fp16_node, fp16_how = enabled(cfg, ctx, "fp16")
        bf16, bf16_node, bf16_how = enabled(cfg, ctx, "bf16")
        if not (fp16 and bf16) or fp16_node is None or bf16_node is None:
            continue
        fixes = []
        filler = cfg.host in ds.FILLING_HOSTS
        if filler and ds.is_auto(bf16_node) and not ds.is_auto(fp16_node) and fp16_node.kind == "scalar":
            target = fp16_node
            fixes.append(fix('set fp16.enabled to "auto"', replace_value(cfg.doc, fp16_node, text=ds.auto_text(cfg.doc))))
        elif filler and ds.is_auto(fp16_node) and not ds.is_auto(bf16_node) and bf16_node.kind == "scalar":
            target = bf16_node
            fixes.append(fix('set bf16.enabled to "auto"', replace_value(cfg.doc, bf16_node, text=ds.auto_text(cfg.doc))))
        else:
            target = fp16_node if not ds.is_auto(fp16_node) else bf16_node
            if fp16_node.kind == "scalar" and not ds.is_auto(fp16_node):
                fixes.append(fix("turn fp16 off (keep bf16)", replace_value(cfg.doc, fp16_node, text=_false(cfg)),
                                 safe=False))
        yield RULE.at(cfg.doc, target,
                      f"fp16.enabled is true{fp16_how} and bf16.enabled is true{bf16_how}: DeepSpeed stops with "
                      "\"bfloat16 and fp16 modes cannot be simultaneously enabled\". Keep one (bf16 on Ampere and newer).",
                      fixes)


def _false(cfg: ds.DSConfig) -> str:
    from trainlint.fixes.edits import scalar_text

    return scalar_text(cfg.doc, False)
