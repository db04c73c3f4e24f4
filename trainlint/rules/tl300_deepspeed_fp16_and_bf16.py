"""TL300 deepspeed-fp16-and-bf16: a DeepSpeed config that enables fp16 and bf16 together.

**What**: `fp16.enabled` and `bf16.enabled` (or the legacy `bfloat16.enabled`) both true, counting
`"auto"` as what the integration fills it with: HF Trainer's `fp16`/`bf16` (or `*_full_eval`),
Accelerate's `mixed_precision`. String booleans count the way DeepSpeed's pydantic model reads them.

**Why**: raw DeepSpeed and Lightning stop in `DeepSpeedConfig._initialize_params`: "bfloat16 and
fp16 modes cannot be simultaneously enabled". Under HF Trainer and Accelerate the integration stops
first, and the message quotes that: `Accelerator(mixed_precision=...)` refuses a DeepSpeed file that
enables the other 16-bit type ("`--mixed_precision` arg cannot be set to `bf16` when `fp16` is set in
the DeepSpeed config file."), and with HF's own precision off, HF Trainer reports both as mismatches
("- ds fp16.enabled=True vs hf fp16|fp16_full_eval=False").

Under Lightning the Trainer's `precision` adds the section the file lacks (`16-mixed` adds fp16,
`bf16-mixed` adds bf16 when fp16 is present but bf16 is not), which can enable the second type.

**Example**: `"fp16": {"enabled": true}, "bf16": {"enabled": "auto"}` with `bf16: true` in the HF config.

**Fix**: when one side is `"auto"` under HF or Accelerate, set the other to `"auto"` too (safe: the
integration then fills both from one flag); otherwise turn fp16 off (unsafe: it picks bf16 for you).

**Evidence**: `deepspeed/runtime/config.py` `DeepSpeedConfig._initialize_params` (assert, a stop; DeepSpeed
0.17.0 to 0.19.8; before 0.17.1 `enabled` was read raw, so the string "false" counted as on);
`accelerate/utils/dataclasses.py` `DeepSpeedPlugin.set_mixed_precision` (ValueError, a stop; Accelerate 1.12
to 1.15), called from `AcceleratorState` when HF Trainer builds its `Accelerator`;
`transformers/integrations/deepspeed.py` `HfTrainerDeepSpeedConfig.trainer_config_finalize` (ValueError;
transformers 5.0 to 5.24); `lightning/fabric/strategies/deepspeed.py` `_format_precision_config` (Lightning 2.4
to 2.6.6) adds the missing section.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value, scalar_text
from trainlint.flavors.base import as_bool, as_str
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL300", "deepspeed-fp16-and-bf16", Severity.ERROR,
            "fp16 and bf16 both enabled in a DeepSpeed config", flavors=ds.ALL_FLAVORS,
            framework="deepspeed", versions="",
            evidence="deepspeed/runtime/config.py: DeepSpeedConfig._initialize_params; accelerate/utils/dataclasses.py: DeepSpeedPlugin.set_mixed_precision",
            raises="bfloat16 and fp16 modes cannot be simultaneously enabled")


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


LIGHTNING_ADDS = {"16": "fp16", "16-mixed": "fp16", "16-true": "fp16", "bf16": "bf16", "bf16-mixed": "bf16",
                  "bf16-true": "bf16"}


def _lightning_added(cfg: ds.DSConfig) -> tuple[str | None, str]:
    """The section Lightning's _format_precision_config adds from Trainer(precision=...), and the precision."""
    doc = cfg.host_doc
    if doc is None:
        return None, ""
    for path in (("trainer", "precision"), ("fit", "trainer", "precision")):
        node = doc.find(path)
        if node is not None and node.kind == "scalar":
            value = str(node.value).strip().lower()
            added = LIGHTNING_ADDS.get(value)
            if added == "fp16" and cfg.find("fp16") is None:
                return "fp16", value
            if added == "bf16" and cfg.find("fp16") is not None and cfg.find("bf16") is None:
                return "bf16", value
            return None, value
    return None, ""


def check(ctx: LintContext):
    for cfg in ds.ds_configs(ctx):
        fp16, fp16_node, fp16_how = enabled(cfg, ctx, "fp16")
        bf16, bf16_node, bf16_how = enabled(cfg, ctx, "bf16")
        if cfg.host == "lightning":
            added, precision = _lightning_added(cfg)
            present, node = ("bf16", bf16_node) if added == "fp16" else ("fp16", fp16_node)
            if added and (bf16 if added == "fp16" else fp16) and node is not None:
                yield RULE.at(cfg.doc, node,
                              f"{present}.enabled is true and the Trainer's precision `{precision}` enables {added} "
                              "too: DeepSpeed stops",
                              detail=f"The Trainer's precision `{precision}` makes Lightning add `\"{added}\": "
                                     f"{{\"enabled\": true}}` (the file has no `{added}` section): DeepSpeed stops with "
                                     "\"bfloat16 and fp16 modes cannot be simultaneously enabled\". Make the Trainer's "
                                     f"precision match `{present}`, or turn it off here.")
                continue
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
        stop = first_stop(cfg, ctx, fp16_node, bf16_node)
        yield RULE.at(cfg.doc, target,
                      f"fp16.enabled and bf16.enabled are both true: {stop.split(' stops', 1)[0]} stops", fixes,
                      detail=f"fp16.enabled is true{fp16_how} and bf16.enabled is true{bf16_how}: {stop}. Keep one "
                             "(bf16 on Ampere and newer).")


def _host_precision(cfg: ds.DSConfig, ctx: LintContext) -> str | None:
    """The integration's mixed_precision ("fp16" / "bf16" / "no"), None when unknown."""
    if cfg.host in ds.HF_HOSTS:
        fp16, bf16 = ds.host_value(cfg, "fp16"), ds.host_value(cfg, "bf16")
        if fp16 is None and bf16 is None:
            return None
        return "fp16" if fp16 is not None and fp16.value else "bf16" if bf16 is not None and bf16.value else "no"
    if cfg.host == "accelerate":
        mp = ctx.document.find(("mixed_precision",))
        value = as_str(mp.value) if mp is not None and mp.kind == "scalar" else None
        return value.lower() if value else None
    return None


def first_stop(cfg: ds.DSConfig, ctx: LintContext, fp16_node, bf16_node) -> str:
    """Who stops the run first, quoted."""
    if cfg.host in ds.FILLING_HOSTS:
        mp = _host_precision(cfg, ctx)
        if mp in ("fp16", "bf16", "fp8"):
            other, other_node = ("bf16", bf16_node) if mp == "fp16" else ("fp16", fp16_node)
            if not ds.is_auto(other_node):
                return (f"Accelerate stops before DeepSpeed starts with \"`--mixed_precision` arg cannot be set to "
                        f"`{mp}` when `{other}` is set in the DeepSpeed config file.\"")
        elif mp == "no" and cfg.host in ds.HF_HOSTS:
            return ("HF Trainer stops before DeepSpeed starts with \"Please correct the following DeepSpeed config "
                    "values that mismatch TrainingArguments values: - ds fp16.enabled=True vs hf "
                    "fp16|fp16_full_eval=False ...\"")
    return "DeepSpeed stops with \"bfloat16 and fp16 modes cannot be simultaneously enabled\""


def _false(cfg: ds.DSConfig) -> str:
    return scalar_text(cfg.doc, False)
