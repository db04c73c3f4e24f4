"""TL530 gradient-checkpointing-use-cache: `use_cache: true` while training with gradient checkpointing.

**What**: gradient checkpointing on (`gradient_checkpointing: true`, or TRL's default) together with
`use_cache: true` at the top level or in `model_init_kwargs`.

**Why**: the KV cache is for generation; during training with checkpointing transformers turns it off
with a warning on every forward: "`use_cache=True` is incompatible with gradient checkpointing.
Setting `use_cache=False`." (modeling layers' checkpointing code). Without checkpointing, a cache
kept during training only costs memory. The setting does nothing but warn; it usually comes from
an inference config.

**Example**: `gradient_checkpointing: true` + `model_init_kwargs: {use_cache: true}`.

**Fix** (safe: transformers turns it off anyway): `use_cache: false`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._frameworks import flag
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL530", "gradient-checkpointing-use-cache", Severity.INFO,
            "use_cache: true with gradient checkpointing (transformers turns it off)", flavors=("huggingface",))


def check(ctx: LintContext):
    doc = ctx.document
    plan = ctx.plan
    if doc.root is None or doc.root.kind != "mapping" or plan is None or plan.grad_ckpt.value == "none":
        return
    for path in (("use_cache",), ("model_init_kwargs", "use_cache")):
        node = doc.find(path)
        if node is None or flag(node) is not True:
            continue
        key = ".".join(path)
        yield RULE.at(doc, node,
                      f"`{key}: {node.raw}` with gradient checkpointing on: transformers turns the cache off with "
                      f"\"`use_cache=True` is incompatible with gradient checkpointing. Setting `use_cache=False`.\" "
                      f"on every step. Write `use_cache: false`.",
                      [fix("write `use_cache: false`", replace_value(doc, node, False), safe=True)])
