"""TL002 duplicate-key: the same key appears twice in one mapping.

**What**: a key repeated in the same mapping of a YAML or JSON config.

**Why**: when DeepSpeed reads a config file itself (`deepspeed train.py --deepspeed_config ds.json`,
`deepspeed.initialize(config="ds.json")`) it refuses duplicates at start-up ("Duplicate keys in DeepSpeed
config: ['stage']"). Everything else keeps the last value without a word: PyYAML, and `json.load` in the HF
Trainer and Accelerate (`HfDeepSpeedConfig`) and Lightning's `DeepSpeedStrategy`, which then hand DeepSpeed a
dict it does not check. Either way, what runs is not what one of the lines says. A DeepSpeed JSON checked on
its own is reported with the assumption that DeepSpeed reads it (a warning: it may be used through an
integration that silently keeps the last value); one linked from a config, or using `"auto"` (which only the
integrations fill), is a warning that says which value wins.

**Evidence**: `deepspeed/runtime/config.py` `DeepSpeedConfig.__init__` (`hjson.load(..., object_pairs_hook=
dict_raise_error_on_duplicate_keys)`, "Duplicate keys in DeepSpeed config: {keys}", a `ValueError`; only for a
path, not a dict), DeepSpeed 0.17.0 to 0.19.8; `accelerate/utils/deepspeed.py` `HfDeepSpeedConfig.__init__`
(`json.load`), accelerate 1.13 to 1.15.

**Example**: `"stage": 3, ... "stage": 2` inside `zero_optimization`.

**Fix** (unsafe: which value was meant is a human decision): remove the earlier occurrence, keeping
the value the YAML/JSON loaders use today.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix
from trainlint.flavors.base import uses_auto
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL002", "duplicate-key", Severity.WARNING, "A key appears twice in the same mapping",
            framework="deepspeed", versions="",
            evidence="deepspeed/runtime/config.py: DeepSpeedConfig.__init__ (dict_raise_error_on_duplicate_keys)",
            raises="Duplicate keys in DeepSpeed config: ['stage']")



def check(ctx: LintContext):
    for doc in [ctx.document, *ctx.linked]:
        # Only DeepSpeed reading the file itself refuses duplicates; a linked file is read by the integration.
        standalone_ds = (doc is ctx.document and ctx.flavor == "deepspeed" and doc.kind == "json"
                         and not uses_auto(doc))
        for dup in doc.duplicates:
            key = ".".join(str(k) for k in dup.key_path)
            first = dup.first.start.line + 1
            assumptions: tuple[str, ...] = ()
            if standalone_ds:
                message = f"`{key}` is set twice (first on line {first}): DeepSpeed refuses a config with duplicate keys"
                detail = (f"DeepSpeed stops with \"Duplicate keys in DeepSpeed config: ['{dup.key_path[-1]}']\"; through "
                          "the HF Trainer, Accelerate or Lightning only this last value is used. Keep one.")
                severity = Severity.ERROR
                assumptions = ("assumed DeepSpeed reads this file itself (deepspeed --deepspeed_config); through "
                               "an integration json.load keeps the last value instead",)
            else:
                reader = "json.load in the HF Trainer / Accelerate" if doc.kind == "json" else "the YAML loader"
                message = f"`{key}` is set twice (first on line {first}): {reader} silently keeps only this last value"
                detail = "Remove the one you do not mean."
                severity = None
            fixes = []
            parent = doc.find(dup.key_path[:-1])
            if parent is not None and parent.kind == "mapping":
                earlier = next((e for e in parent.entries if e.key_span == dup.first), None)
                if earlier is not None:
                    fixes.append(fix(f"remove the earlier `{dup.key_path[-1]}` (line {first})",
                                     delete_entry(doc, parent, earlier), safe=False))
            yield RULE.at(doc, dup.duplicate, message, fixes, severity, assumptions=assumptions, detail=detail)
