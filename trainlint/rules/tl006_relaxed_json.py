"""TL006 relaxed-json: comments or trailing commas in a DeepSpeed JSON that a strict reader loads.

**What**: `//`, `#` or `/* */` comments, or trailing commas, in a DeepSpeed config that the HF
Trainer or Accelerate will read: it is linked from an HF/Accelerate/Axolotl config, or it uses
`"auto"` values, which only those integrations fill.

**Why**: DeepSpeed itself reads its config with hjson, which allows these. The HF Trainer
(`HfTrainerDeepSpeedConfig`) and Accelerate read the same file with `json.load`, which fails with
"Expecting property name enclosed in double quotes" before training starts.

A file linked from a config is an error (the integration that reads it is known and `json.load` fails for
certain); a file checked on its own that uses `"auto"` is a warning that names its assumption.

**Evidence**: `deepspeed/runtime/config.py` `DeepSpeedConfig.__init__` reads paths with `hjson.load` (DeepSpeed
0.17.0 to 0.19.8); `accelerate/utils/deepspeed.py` `HfDeepSpeedConfig.__init__` (`json.load(f)`, accelerate 1.13
to 1.15; transformers' `HfTrainerDeepSpeedConfig` subclasses it), `lightning/fabric/strategies/deepspeed.py`
`DeepSpeedStrategy._load_config` (`json.load(f)`, Lightning 2.4 to 2.6). Python's message: "Expecting property
name enclosed in double quotes: line 2 column 3 (char 4)" (a comment or a trailing comma before `}`).

**Fix**: a trailing comma is removed (safe). A comment is removed only as an unsafe fix, since it
holds your text; move it to a README if you want to keep it.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix
from trainlint.diagnostics import Edit
from trainlint.flavors.base import uses_auto
from trainlint.document.tree import Document
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL006", "relaxed-json", Severity.WARNING, "hjson-only syntax in a JSON that a strict reader loads",
            framework="accelerate", versions="",
            evidence="accelerate/utils/deepspeed.py: HfDeepSpeedConfig.__init__ (json.load); "
                     "lightning/fabric/strategies/deepspeed.py: DeepSpeedStrategy._load_config",
            raises="json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes")


def check(ctx: LintContext):
    docs: list[tuple[Document, str, str, Severity, tuple[str, ...]]] = []
    if ctx.flavor == "deepspeed" and ctx.document.kind == "json" and uses_auto(ctx.document):
        docs.append((ctx.document, "the HF Trainer or Accelerate",
                     "it uses \"auto\" values, so it is meant for the HF Trainer or Accelerate, which",
                     Severity.WARNING, ("assumed the file is used through the HF Trainer or Accelerate, as its "
                                        "\"auto\" values say",)))
    for linked in ctx.linked:
        if linked.kind == "json":
            docs.append((linked, f"the {ctx.flavor} integration",
                         f"it is used by {ctx.document.path} through the {ctx.flavor} integration, which",
                         Severity.ERROR, ()))
    for doc, reader, reason, severity, assumptions in docs:
        for item in doc.relaxed:
            message = f"{item.what}: {reader} reads this file with json.load, which fails before training"
            detail = (f"{item.what[0].upper()}{item.what[1:]} is valid for DeepSpeed's hjson reader, but {reason} "
                      "reads the file with json.load and fails before training. Remove it.")
            if item.what == "a trailing comma":
                fixes = [fix("remove the trailing comma", Edit(doc.path, item.span, ""))]
            else:
                fixes = [fix("remove the comment", Edit(doc.path, item.span, ""), safe=False)]
            yield RULE.at(doc, item.span, message, fixes, severity, assumptions=assumptions, detail=detail)
