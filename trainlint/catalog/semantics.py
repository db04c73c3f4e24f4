"""Each framework's own precision, loss and adapter semantics (`data/framework_semantics.json`).

The flavor readers and the memory model ask this module, not their own if-chains, how a framework loads the weights,
which master copy it keeps, how it computes the loss and what its LoRA switches adapt. Every entry of the data file
names the framework code that decides it and the releases it was checked at; docs/frameworks/ has the tables.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import lru_cache
from typing import Any, NamedTuple

from trainlint.catalog.files import read_data


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    return json.loads(read_data("framework_semantics.json"))


def entry(framework: str, *path: str) -> Any:
    """The data under `framework` / `path` (None when absent)."""
    node: Any = _data().get(framework)
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def evidence(framework: str, *path: str) -> str:
    """The `_evidence` of an entry: the code that decides it."""
    node = entry(framework, *path)
    return str(node.get("_evidence", "")) if isinstance(node, dict) else ""


def release(text: Any) -> tuple[int, ...]:
    """(1, 15) from "1.15": a release boundary of the data file, compared with a parsed version tuple; () (below
    every release) when absent."""
    parts: list[int] = []
    for piece in str(text or "").split("."):
        if not piece.isdigit():
            break
        parts.append(int(piece))
    return tuple(parts)


# ---------------------------------------------------------------------------------------------
# axolotl
# ---------------------------------------------------------------------------------------------

def axolotl_load_dtype(flags: dict[str, bool]) -> tuple[str, str]:
    """(dtype, the flag that decided it) of axolotl's `cfg.torch_dtype` from its precision flags (`bf16` already
    resolved: `auto` counts as true on a bf16 GPU), as resolve_dtype decides: the first flag of the table's order
    that is set, else fp32."""
    table = entry("axolotl", "load_dtype") or {}
    for flag, dtype in table.get("order", ()):
        if flags.get(flag):
            return str(dtype), str(flag)
    return str(table.get("otherwise", "fp32")), ""


class AxolotlHeld(NamedTuple):
    """How axolotl holds the weights of a run: `load` the dtype they are loaded in, `fp32_rest` whether the
    embeddings, lm_head, norms and MoE gates stay upcast to fp32 (the layers' linears in `load`)."""

    load: str
    fp32_rest: bool
    why: str


def axolotl_held(load: str, *, adapter: bool, fsdp: bool, attention: str | None, cut_cross_entropy: bool) -> AxolotlHeld:
    """The weights as axolotl's ModelLoader leaves them (`_configure_embedding_dtypes`): loaded in `load`; unless
    FSDP, the embeddings, head and norms upcast to fp32, and cast back to `load` when an adapter, FSDP, an attention
    other than eager/SDPA, or Cut Cross-Entropy needs it."""
    rule = entry("axolotl", "fp32_modules") or {}
    if load == "fp32":
        return AxolotlHeld(load, False, "loaded in fp32")
    conditions = {"adapter": adapter, "fsdp": fsdp, "cut_cross_entropy": cut_cross_entropy}
    if any(conditions.get(c) for c in rule.get("skipped_when", ())):
        return AxolotlHeld(load, False, "FSDP: no fp32 upcast of the embeddings and norms")
    back = [c for c in rule.get("cast_back_when", ()) if conditions.get(c)]
    keeps = tuple(rule.get("attention_keeps_fp32", ("eager", "sdpa")))
    impl = (attention or "sdpa").lower()
    if not back and not any(impl == k or impl.startswith(k) for k in keeps):
        back = [f"attention {impl}"]
    if back:
        return AxolotlHeld(load, False, f"{rule.get('modules', 'embeddings and norms')} cast back to {load} "
                                        f"({', '.join(back)})")
    return AxolotlHeld(load, True, f"{rule.get('modules', 'embeddings and norms')} upcast to fp32 "
                                   f"({impl} attention, no adapter, no FSDP)")


# ---------------------------------------------------------------------------------------------
# LitGPT
# ---------------------------------------------------------------------------------------------

def litgpt_lora_defaults() -> dict[str, Any]:
    return dict(entry("litgpt", "lora", "defaults") or {})


def litgpt_lora_switches() -> tuple[str, ...]:
    return tuple((entry("litgpt", "lora", "switches") or {}).keys())


def _part(stack: Any, lin: Any) -> str:
    group = str(getattr(lin, "input_group", ""))
    parent = str(getattr(lin, "parent", "")).lower()
    if group.startswith(("mlp", "expert", "shared")) or any(w in parent for w in ("mlp", "expert", "moe",
                                                                                   "feed_forward", "ffn")):
        return "mlp"
    return "attention"


def litgpt_lora_targets(arch: Any, enabled: dict[str, bool]) -> list[str]:
    """The module paths (`parent.name`, matched as PEFT matches a dotted suffix) of the linears LitGPT's switches
    adapt in `arch`: q/k/v by name inside attention (a fused q/k/v linear when any of the three is on), the
    attention's output projection (its `attn_out` linear), every linear of the MLP. The head is outside the layers
    and not among them."""
    switches = entry("litgpt", "lora", "switches") or {}
    paths: list[str] = []
    for stack in getattr(arch, "stacks", ()):
        for lin in stack.linears:
            part = _part(stack, lin)
            for name, rule in switches.items():
                if not enabled.get(name):
                    continue
                hit = False
                if rule.get("part") == "mlp":
                    hit = part == "mlp"
                elif rule.get("part") == "attention" and part == "attention":
                    if name == "lora_projection":
                        hit = lin.input_group == "attn_out"
                    else:
                        hit = lin.input_group != "attn_out" and (lin.name in rule.get("names", ())
                                                                 or lin.name in rule.get("fused", ()))
                if hit and lin.path not in paths:
                    paths.append(lin.path)
    return paths


_UNTIED: dict[int, tuple[Any, Any]] = {}
_UNTIED_LIMIT = 64


def litgpt_arch(arch: Any) -> Any:
    """`arch` as LitGPT's own GPT builds it (data "litgpt" model): its own output head where the checkpoint ties it to
    the embedding (lm_head and wte are two parameters), and no dropout anywhere. The same object for the same
    architecture, so the estimator's caches keyed by the architecture keep working."""
    rule = entry("litgpt", "model") or {}
    found = _UNTIED.get(id(arch))
    if found is not None and found[0] is arch:
        return found[1]
    changes: dict[str, Any] = {}
    if rule.get("untied_head") and getattr(arch, "tie_word_embeddings", False) and getattr(arch, "kind", "") == "decoder":
        extra = arch.vocab_size * arch.hidden_size
        changes.update(tie_word_embeddings=False, head_params=arch.head_params + extra,
                       checkpoint_params=None if arch.checkpoint_params is None else arch.checkpoint_params + extra)
    if rule.get("no_dropout"):
        changes["dropout"] = (("resid", 0.0), ("attn", 0.0), ("embedding", 0.0))
    built = replace(arch, **changes) if changes else arch
    if len(_UNTIED) >= _UNTIED_LIMIT:
        _UNTIED.clear()
    _UNTIED[id(arch)] = (arch, built)
    return built


def litgpt_loss(script: str) -> dict[str, Any]:
    """The loss path of LitGPT's `script` ("lora", "full" or "pretrain"): {"kernel", "chunk"}."""
    return dict(entry("litgpt", "loss", script) or {})


def litgpt_true_precision(precision: str) -> bool:
    return precision.lower() in tuple(entry("litgpt", "precision", "true_precisions") or ())
