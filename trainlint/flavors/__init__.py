"""Stage 2, flavors: one reader per config family, `detect(document) -> confidence` and
`read(document) -> ReadResult` (a `TrainingPlan` whose every value knows where it came from, plus the
linked documents). Detection picks the most confident reader. May import: `document`, `plan`, `catalog`.
"""

from __future__ import annotations

import functools

from trainlint.catalog.dialects import not_training_configs
from trainlint.document.tree import Document
from trainlint.flavors import accelerate, axolotl, deepspeed, huggingface, lightning, litgpt, torchtune

READERS = {module.NAME: module for module in (deepspeed, huggingface, lightning, accelerate, axolotl, torchtune, litgpt)}
FLAVORS = tuple(READERS) + ("unknown",)
# Readers whose reading depends on the script the launch runs (`read(doc, overrides, script=...)`): LitGPT's adapter
# scripts take the full script's keys.
READS_SCRIPT = ("litgpt",)
MIN_CONFIDENCE = 0.3


def detect(doc: Document) -> str:
    """The flavor of a parsed document, or "unknown"."""
    if doc.root is None or doc.root.kind != "mapping":
        return "unknown"
    scores = {name: module.detect(doc) for name, module in READERS.items()}
    best = max(scores, key=scores.__getitem__)
    return best if scores[best] >= MIN_CONFIDENCE else "unknown"


# Display names of the formats trainlint recognises but does not read (schemas/dialects.json not_training_configs).
FOREIGN_LABELS = {"gpt-neox": "GPT-NeoX", "megatron-lm": "Megatron-LM", "nemo": "NeMo", "hydra": "a Hydra app config",
                  "app-config": "an application / CI / infrastructure config",
                  "model-or-data-json": "a model, tokenizer, adapter or trainer-state file",
                  "trlx": "a trlx (CarperAI) TRLConfig", "lm-eval-task": "an lm-evaluation-harness task config"}


def foreign(doc: Document, flavor: str) -> str | None:
    """The name of a format that looks like `flavor` but is not a training config trainlint reads (GPT-NeoX's
    DeepSpeed sections, Megatron-LM, NeMo, Hydra apps, CI / compose / Kubernetes files, HF config.json ...),
    or None. Read from `schemas/dialects.json` (`not_training_configs`)."""
    if doc.root is None or doc.root.kind != "mapping":
        return None
    try:
        formats = _foreign_formats()
    except Exception:  # noqa: BLE001 - no data: nothing is foreign
        return None
    keys = {"on" if k is True else str(k) for k in doc.root.keys()}  # YAML 1.1 reads a bare `on:` as true
    for name, spec, spec_keys in formats:
        looks_like = spec.get("looks_like", "any")
        if looks_like not in ("any", flavor) and not (flavor == "unknown" and looks_like != "any"):
            continue
        if any(isinstance(ks, list) and ks and all(k in keys for k in ks) for ks in spec.get("key_sets") or ()):
            return name
        hits = len(keys & spec_keys)
        for path in spec.get("key_paths") or ():
            if isinstance(path, list) and doc.root.find(tuple(path)) is not None:
                hits += 1
        if spec.get("keys") or spec.get("key_paths"):
            if hits >= max(1, int(spec.get("min_keys") or 1)):
                return name
    return None


@functools.lru_cache(maxsize=1)
def _foreign_formats() -> tuple[tuple[str, dict, frozenset], ...]:
    """The not_training_configs formats with each one's key set made once (the data does not change)."""
    return tuple((name, spec, frozenset(spec.get("keys") or ())) for name, spec in not_training_configs().items())
