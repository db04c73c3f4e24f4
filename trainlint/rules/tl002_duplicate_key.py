"""TL002 duplicate-key: the same key appears twice in one mapping.

**What**: a key repeated in the same mapping of a YAML or JSON config.

**Why**: DeepSpeed refuses such a config at start-up ("Duplicate keys in DeepSpeed config"), while
PyYAML and `json.load` silently keep the last value, so one of the two settings is lost without a
word. Either way, what runs is not what one of the lines says.

**Example**: `"stage": 3, ... "stage": 2` inside `zero_optimization`.

**Fix** (unsafe: which value was meant is a human decision): remove the earlier occurrence, keeping
the value the YAML/JSON loaders use today.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL002", "duplicate-key", Severity.WARNING, "A key appears twice in the same mapping")


def check(ctx: LintContext):
    for doc in [ctx.document, *ctx.linked]:
        is_deepspeed = doc is not ctx.document or ctx.flavor == "deepspeed"
        for dup in doc.duplicates:
            key = ".".join(str(k) for k in dup.key_path)
            first = dup.first.start.line + 1
            if is_deepspeed and doc.kind == "json":
                message = (f"`{key}` is set twice (first on line {first}); DeepSpeed refuses a config with "
                           "duplicate keys. Keep one.")
                severity = Severity.ERROR
            else:
                message = (f"`{key}` is set twice (first on line {first}); the loader silently keeps only this "
                           "last value. Remove the one you do not mean.")
                severity = None
            fixes = []
            parent = doc.find(dup.key_path[:-1])
            if parent is not None and parent.kind == "mapping":
                earlier = next((e for e in parent.entries if e.key_span == dup.first), None)
                if earlier is not None:
                    fixes.append(fix(f"remove the earlier `{dup.key_path[-1]}` (line {first})",
                                     delete_entry(doc, parent, earlier), safe=False))
            yield RULE.at(doc, dup.duplicate, message, fixes, severity)
