"""TL430 fsdp-wrap-class-not-in-model: FSDP's `transformer_layer_cls_to_wrap` names a layer class of another model.

**What**: `fsdp_config.transformer_layer_cls_to_wrap` (HF TrainingArguments, Axolotl) or
`fsdp_config.fsdp_transformer_layer_cls_to_wrap` (Accelerate, Axolotl) names the transformer layer class of a
different architecture than the model being trained (`BertLayer` for an XLM-RoBERTa model, `LlamaDecoderLayer`
for Qwen2), when the model is known (the config names it, or `--model` / `# trainlint: model=...`).

**Why**: Accelerate builds the auto-wrap policy from the class names:
`FullyShardedDataParallelPlugin.set_auto_wrap_policy` looks each one up in the model
(`get_module_class_from_name`) and stops with "Could not find the transformer layer class to wrap in the model."
(FSDP1; FSDP2's policy: "Could not find the transformer layer class {name} in the model.";
netease-youdao/BCEmbedding#66). The HF Trainer hands its `fsdp_config` to the same plugin.

**Evidence**: `accelerate/utils/dataclasses.py: FullyShardedDataParallelPlugin.set_auto_wrap_policy` (raises
ValueError); the layer classes per model type are those of `transformers/models/<type>/modeling_<type>.py`
(`catalog/data/layer_classes.json`); also `accelerate/utils/fsdp_utils.py: fsdp2_prepare_auto_wrap_policy`.
Accelerate 0.2x - 1.15.

**Example**: model `BAAI/bge-m3` (xlm-roberta) with `fsdp_transformer_layer_cls_to_wrap: BertLayer` →
`XLMRobertaLayer`.

In an Accelerate config whose `fsdp_auto_wrap_policy` is SIZE_BASED_WRAP or NO_WRAP the class names are never read
(`FullyShardedDataParallelPlugin.__post_init__` reads them only for TRANSFORMER_BASED_WRAP): not judged here, TL622
reports the key as having no effect.

The HF TrainingArguments field `fsdp_transformer_layer_cls_to_wrap` (the top-level key of transformers 4.x,
moved into `fsdp_config` by `TrainingArguments.__post_init__`) is read where `fsdp` is set. A name that differs
from the model's own class only in case is refused the same way (the lookup compares `__class__.__name__`
exactly): `LLaMADecoderLayer`, the class name of the pre-release LLaMA port, for a released transformers'
`LlamaDecoderLayer` (tatsu-lab/stanford_alpaca#58 and #224: transformers 4.28.1, "Exception: Could not find
the transformer layer class to wrap in the model.", raised by transformers' own Trainer before accelerate
took over the wrapping).

**Fix** (unsafe: the model's own class is a guess when it has several; safe for a case-only difference):
replace it with the model's layer class.
"""

from __future__ import annotations

import json
from functools import lru_cache

from trainlint.catalog.files import read_data
from trainlint.diagnostics import Severity
from trainlint.document.tree import Node
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules.base import LintContext, Rule
from trainlint.rules.tl622_accelerate_ignored_plugin_key import unread_under

RULE = Rule("TL430", "fsdp-wrap-class-not-in-model", Severity.ERROR,
            "FSDP transformer_layer_cls_to_wrap names a class the model does not have",
            flavors=("huggingface", "accelerate", "axolotl"), framework="accelerate",
            evidence="accelerate/utils/dataclasses.py: FullyShardedDataParallelPlugin.set_auto_wrap_policy",
            raises="Could not find the transformer layer class to wrap in the model.")

KEYS = ("transformer_layer_cls_to_wrap", "fsdp_transformer_layer_cls_to_wrap")


@lru_cache(maxsize=1)
def layer_classes() -> dict[str, tuple[str, ...]]:
    text = read_data("layer_classes.json")
    return {k: tuple(v) for k, v in json.loads(text).items() if not k.startswith("_") and isinstance(v, list)}


def _names(node) -> list[tuple[str, Node]]:
    if node.kind == "scalar" and isinstance(node.value, str):
        return [(n.strip(), node) for n in node.value.split(",") if n.strip()]
    if node.kind == "sequence":
        return [(i.value.strip(), i) for i in node.items if i.kind == "scalar" and isinstance(i.value, str)]
    return []


def check(ctx: LintContext):
    doc, arch = ctx.document, ctx.architecture
    if arch is None or doc.root is None or doc.root.kind != "mapping":
        return
    table = layer_classes()
    own = table.get(arch.model_type)
    if not own:
        return  # a model whose layer classes trainlint does not know: no claim
    foreign = {c for classes in table.values() for c in classes} - set(own)
    folded = {c.casefold(): c for c in own}
    for node in _nodes(ctx, doc):
        for name, where in _names(node):
            short = name.split(".")[-1]
            near = folded.get(short.casefold()) if short not in own else None
            if short not in foreign and near is None:
                continue
            right = near or own[0]
            fixes = []
            if (near or len(own) == 1) and node.kind == "scalar" and "," not in str(node.value):
                fixes = [fix(f"wrap `{right}`", replace_value(doc, node, right), safe=near is not None)]
            why = (f" (class names are matched exactly: the class is `{near}`)" if near else "")
            yield RULE.at(doc, where,
                          f"`{name}` is not a layer of {arch.name}: the FSDP wrap policy stops; wrap `{right}`", fixes,
                          detail=f"{arch.model_type} layers: {', '.join(own)}{why}. The FSDP wrap policy looks the "
                                 "name up in the model and stops with \"Could not find the transformer layer class to "
                                 f"wrap in the model.\" Wrap `{right}`.")


def _nodes(ctx: LintContext, doc):
    """The values that name the classes to wrap: `fsdp_config.{fsdp_,}transformer_layer_cls_to_wrap`, and the HF
    TrainingArguments field `fsdp_transformer_layer_cls_to_wrap` where `fsdp` turns FSDP on (the Trainer moves
    it into fsdp_config; without `fsdp` nothing reads it)."""
    section = doc.find(("fsdp_config",))
    for key in KEYS:
        node = doc.find(("fsdp_config", key))
        if node is None:
            continue
        if ctx.flavor == "accelerate" and section is not None and section.kind == "mapping" and \
                unread_under(section, "fsdp_config", f"fsdp_{key}" if not key.startswith("fsdp_") else key):
            continue  # a wrap policy that never reads it (SIZE_BASED_WRAP, NO_WRAP): TL622's
        yield node
    if ctx.plan is not None and getattr(ctx.plan, "flavor", "") == "huggingface":
        node = doc.find(("fsdp_transformer_layer_cls_to_wrap",))
        fsdp = doc.find(("fsdp",))
        on = fsdp is not None and ((fsdp.kind == "scalar" and isinstance(fsdp.value, str) and fsdp.value.strip()
                                    and fsdp.value.strip().lower() not in ("false", "no", "none"))
                                   or (fsdp.kind == "sequence" and fsdp.items) or fsdp.value is True)
        if node is not None and on:
            yield node
