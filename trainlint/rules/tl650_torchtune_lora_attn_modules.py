"""TL650 torchtune-lora-attn-modules: a `lora_attn_modules` name torchtune's builders never test for.

**What**: a torchtune config whose `model.lora_attn_modules` lists a name outside `q_proj`, `k_proj`, `v_proj`,
`output_proj` (`o_proj`, `out_proj`, `query`, `gate_proj`: the Hugging Face names, or MLP layers, which
`apply_lora_to_mlp` covers). The set is data: `catalog/data/closed_values.json` (`torchtune`).

**Why**: every torchtune LoRA builder takes `lora_attn_modules: list[LORA_ATTN_MODULES]`
(`torchtune/modules/peft/_utils.py`, `peft_utils.py` in 0.1: `Literal["q_proj", "k_proj", "v_proj",
"output_proj"]`), a type hint nothing enforces, and builds each projection with LoRA only when its own name is in
the list (`models/*/_component_builders.py: lora_*_self_attention`, `"q_proj" in lora_modules`). Any other name
matches nothing: no error, no warning, and that projection trains without LoRA (a list of only such names trains
no attention LoRA at all; an empty list is refused: "Must pass one or more of ... as lora_modules"). The config
silently does something other than it says, for every torchtune release (0.1.0 - 0.6.1 and main).

The reader is established by the format itself: `model._component_: torchtune.models...` names torchtune's builder
by its import path (resolved by `torchtune/config/_utils.py: _get_component_from_path`), whichever recipe runs it.
Where `model._component_` is not a `torchtune.` path, the repository's own builder decides the names: a warning that
says so.

**Evidence**: `torchtune/modules/peft/_utils.py: LORA_ATTN_MODULES` and `torchtune/models/llama3/_component_builders.py:
lora_llama3_self_attention` (silent); torchtune v0.1.0 - v0.6.1 and main (2026-04).

**Example**: `lora_attn_modules: ['q_proj', 'v_proj', 'o_proj']` → `output_proj`.

**Fix** (safe for the Hugging Face names of the same layer: `o_proj` / `out_proj` → `output_proj`; otherwise
none).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._closed_values import rejected
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL650", "torchtune-lora-attn-modules", Severity.ERROR,
            "A torchtune lora_attn_modules name that matches no layer (silently no LoRA there)",
            flavors=("torchtune",), framework="torchtune",
            evidence="torchtune/modules/peft/_utils.py: LORA_ATTN_MODULES; models/*/_component_builders.py",
            raises="")

MLP = {"gate_proj", "up_proj", "down_proj", "w1", "w2", "w3", "fc1", "fc2", "mlp"}
SAME_LAYER = {"o_proj": "output_proj", "out_proj": "output_proj", "query": "q_proj", "key": "k_proj",
              "value": "v_proj", "q": "q_proj", "k": "k_proj", "v": "v_proj", "wq": "q_proj", "wk": "k_proj",
              "wv": "v_proj", "wo": "output_proj", "dense": "output_proj"}


def _builder_assumption(doc) -> tuple[str, ...]:
    """() where `model._component_` is torchtune's own builder (or absent: the recipe's model is torchtune's), else
    the assumption that the repository's builder hands the names to torchtune's: its own code decides them."""
    node = doc.find(("model", "_component_"))
    path = node.value if node is not None and node.kind == "scalar" and isinstance(node.value, str) else ""
    if not path or path.startswith("torchtune."):
        return ()
    return (f"assumed `{path}` builds the LoRA layers with torchtune's builders (it is not a torchtune path, so its "
            "own code decides which names it tests)",)


def check(ctx: LintContext):
    doc = ctx.document
    builder = _builder_assumption(doc)
    for r in rejected(ctx, "torchtune"):
        if r.key != "model.lora_attn_modules":
            continue
        same = SAME_LAYER.get(str(r.value).lower())
        listed = {str(n.value) for n in (doc.find(("model", "lora_attn_modules")) or r.node).items}
        fixes = [fix(f"write {same}", replace_value(doc, r.node, same), safe=True)] \
            if same is not None and same not in listed else []
        mlp = str(r.value).lower() in MLP
        hint = f"; torchtune calls it `{same}`" if same is not None else (
            "; MLP layers take `apply_lora_to_mlp: true`" if mlp else "")
        yield RULE.at(doc, r.node,
                      f"`{r.value}` in lora_attn_modules matches no torchtune layer: it silently gets no LoRA{hint}",
                      fixes, severity=Severity.WARNING if builder else None, assumptions=builder,
                      detail="torchtune's LoRA builders test only for q_proj, k_proj, v_proj and output_proj "
                             "(`\"q_proj\" in lora_modules`); any other name is ignored without a word, so that "
                             "projection trains without LoRA. MLP layers are `apply_lora_to_mlp: true`, the output "
                             "layer `apply_lora_to_output: true`.")
