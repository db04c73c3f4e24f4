"""TL530 gradient-checkpointing-use-cache: `use_cache: true` while training with gradient checkpointing.

**What**: gradient checkpointing on (`gradient_checkpointing: true`, or TRL's default) together with
`use_cache: true` at the top level or in `model_init_kwargs`.

**Why**: the KV cache is for generation; during training with checkpointing it is turned off anyway.
transformers 4.53+ does it in `GradientCheckpointingLayer` (`modeling_layers.py`) and logs once
(`logger.warning_once`): "Caching is incompatible with gradient checkpointing in LlamaDecoderLayer.
Setting `use_cache=False`."; up to 4.52 each model's forward logged "`use_cache=True` is incompatible
with gradient checkpointing. Setting `use_cache=False`.". TRL's trainers pass `use_cache=False`
themselves (SFTTrainer, DPOTrainer; GRPOTrainer's `model_init_kwargs`), without a message. The
setting does nothing but (at most) warn; it usually comes from an inference config.

**Evidence**: `transformers/modeling_layers.py: GradientCheckpointingLayer` (logs once (TRL trainers:
silent)); verified against transformers 4.52 - 5.24, TRL 0.18 - 1.16. First message: "Caching is
incompatible with gradient checkpointing in {layer}. Setting `use_cache=False`.".

**Example**: `gradient_checkpointing: true` + `model_init_kwargs: {use_cache: true}`.

**Fix** (safe: transformers turns it off anyway): `use_cache: false`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._frameworks import flag
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL530", "gradient-checkpointing-use-cache", Severity.INFO,
            "use_cache: true with gradient checkpointing (transformers turns it off)", flavors=("huggingface",),
            framework="transformers", evidence="transformers/modeling_layers.py: GradientCheckpointingLayer",
            raises="Caching is incompatible with gradient checkpointing in {layer}. Setting `use_cache=False`.")


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
                      f"`{key}: {node.raw}` with gradient checkpointing on: the cache is turned off anyway",
                      [fix("write `use_cache: false`", replace_value(doc, node, False), safe=True)],
                      detail="transformers logs \"Caching is incompatible with gradient checkpointing in ... Setting "
                             "`use_cache=False`.\" once; TRL's trainers pass use_cache=False themselves. Write "
                             "`use_cache: false`.")
