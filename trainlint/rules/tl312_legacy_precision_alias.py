"""TL312 legacy-precision-alias: Lightning `precision: 16` / `"bf16"` instead of `16-mixed` / `bf16-mixed`.

**What**: a Lightning Trainer (LightningCLI YAML, Hydra Trainer config) or LitGPT `precision` written
with a historical alias: `16`, `"16"` or `bf16`.

**Why**: Lightning 2.x still maps them (`fabric/connector.py`, `_convert_precision_to_unified_args`:
16 → "16-mixed", "bf16" → "bf16-mixed") but warns on every run: "`precision=16` is supported for
historical reasons but its usage is discouraged. Please set your precision to 16-mixed instead!".
The explicit name also says what the alias hides: mixed precision keeps fp32 weights (the `-true`
variants do not).

`32` and `64` (→ "32-true", "64-true") are accepted without a warning and are not reported.

**Evidence**: `lightning/fabric/connector.py: _convert_precision_to_unified_args` (logs); verified against
Lightning 2.0 - 2.6 (on Lightning 1.x `16` and `bf16` are the only names: "16-mixed" is refused there,
TL313). First message: "`precision=16` is supported for historical reasons but its usage is
discouraged. Please set your precision to 16-mixed instead!".

**Example**: `precision: 16` → `precision: 16-mixed`; `precision: bf16` → `precision: bf16-mixed`.

**Fix** (safe): write the unified name Lightning maps the alias to.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._frameworks import lightning_trainer
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL312", "legacy-precision-alias", Severity.INFO,
            "A historical Lightning precision alias (16, bf16)", flavors=("lightning", "litgpt"),
            framework="lightning", versions=">=2.0.0",
            evidence="lightning/fabric/connector.py: _convert_precision_to_unified_args",
            raises="`precision=16` is supported for historical reasons but its usage is discouraged. Please set your precision to 16-mixed instead!")

ALIASES = {"16": "16-mixed", "bf16": "bf16-mixed"}


def precision_node(ctx: LintContext):
    doc = ctx.document
    if doc.root is None or doc.root.kind != "mapping":
        return None
    if ctx.flavor == "litgpt":
        return doc.find(("precision",))
    base = lightning_trainer(doc)
    return doc.find(base + ("precision",)) if base is not None else None


def check(ctx: LintContext):
    node = precision_node(ctx)
    if node is None or node.kind != "scalar" or isinstance(node.value, bool):
        return
    new = ALIASES.get(str(node.value))
    if new is None:
        return
    text = f'"{new}"' if node.style in ('"', "'") else new
    yield RULE.at(ctx.document, node,
                  f"`precision: {node.raw}` is a historical alias of \"{new}\": Lightning warns about it on every run",
                  [fix(f"write {new}", replace_value(ctx.document, node, text=text), safe=True)],
                  detail=f"Lightning maps it to \"{new}\" and warns \"`precision={node.value}` is supported for "
                         f"historical reasons but its usage is discouraged\". Write {new}.")
