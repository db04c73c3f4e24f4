"""TL501 deepspeed-unknown-top-level-key: a top-level key DeepSpeed silently ignores.

**What**: a top-level key of a DeepSpeed config that DeepSpeed does not read (removed keys are
TL502's). Keys that belong inside `zero_optimization` (`cpu_offload`, `offload_optimizer`,
`stage`, ...) are named as such.

**Why**: `deepspeed/runtime/config.py` reads the top level with `param_dict.get(...)` and never
validates it, so a typo or a misplaced key loses its setting without a message (corpus: top-level
`cpu_offload` in Lightning#18134's config, `cuda_visible_devices` in a DeepSpeedExamples config,
`comms_config` in LLaMA-Factory's `ds_z3_fp8_config.json`).

**Example**: `"cpu_offload": true` at the top level.

Comment keys (`_comment`, `__note`, `//`, `#...`, `comment`) are never reported: at the top level they
do nothing, which is what they are for.

**Fix** (unsafe): rename to the close known key when there is one, else remove the key.

**Evidence**: `deepspeed/runtime/config.py` `DeepSpeedConfig._initialize_params` reads each top-level key with
`param_dict.get(...)` and nothing lists the rest (DeepSpeed 0.17.0 to 0.19.8; 0.19.7 and newer refuse only the
removed keys, TL502). Silent: no message.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix, rename_key
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule
from trainlint.catalog.schemas import describe, known_keys

RULE = Rule("TL501", "deepspeed-unknown-top-level-key", Severity.WARNING,
            "A top-level DeepSpeed key that DeepSpeed ignores (typo or misplaced)", flavors=ds.ALL_FLAVORS,
            framework="deepspeed", versions="",
            evidence="deepspeed/runtime/config.py: DeepSpeedConfig._initialize_params (param_dict.get)",
            raises="")

HINTS = {
    "cuda_visible_devices": "GPUs are chosen by the launcher (`deepspeed --include`, CUDA_VISIBLE_DEVICES)",
    "comms_config": "Communication logging is configured by `comms_logger`",
    "monitor_config": "Monitoring is configured by the top-level `tensorboard`, `wandb`, `csv_monitor` and `comet` sections",
}


def check(ctx: LintContext):
    top = known_keys("deepspeed", ()) or set()
    zero = known_keys("deepspeed", ("zero_optimization",)) or set()
    for cfg in ds.ds_configs(ctx):
        root = cfg.root
        if root is None or not top:
            continue
        absent = top - set(root.keys())  # once per file: a file with thousands of unknown keys stays linear
        for entry in root.entries:
            key = entry.key
            if key in top or ds.is_comment_key(key) or describe("deepspeed", (key,)) is not None:
                continue
            suggestion = None
            hint = ""
            if key in zero:
                hint = "; it belongs in zero_optimization"
                extra = (f" `{key}` is a zero_optimization key"
                         + (" (and deprecated: use zero_optimization.offload_optimizer {\"device\": \"cpu\"})"
                            if key == "cpu_offload" else "") + "; at the top level it does nothing.")
            elif key in HINTS:
                extra = f" {HINTS[key]}."
            else:
                suggestion = ds.did_you_mean(key, absent)
                hint = f"; did you mean `{suggestion}`?" if suggestion else ""
                extra = ""
            fixes = []
            if suggestion:
                fixes.append(fix(f"rename {key} to {suggestion}", rename_key(cfg.doc, entry, suggestion), safe=False))
            fixes.append(fix(f"remove {key}", delete_entry(cfg.doc, root, entry), safe=False))
            yield RULE.at(cfg.doc, entry.key_span,
                          f"`{key}` is not a DeepSpeed setting: DeepSpeed ignores it{hint}", fixes,
                          detail="DeepSpeed does not validate its top level and ignores the key, so whatever it was "
                                 f"meant to do does not happen.{extra}")
