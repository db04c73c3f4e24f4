"""Stage 2, flavors: one reader per config family, `detect(document) -> confidence` and
`read(document) -> ReadResult` (a `TrainingPlan` whose every value knows where it came from, plus the
linked documents). Detection picks the most confident reader. May import: `document`, `plan`, `catalog`.
"""

from __future__ import annotations

from trainlint.document.tree import Document
from trainlint.flavors import accelerate, axolotl, deepspeed, huggingface, lightning, litgpt, torchtune

READERS = {module.NAME: module for module in (deepspeed, huggingface, lightning, accelerate, axolotl, torchtune, litgpt)}
FLAVORS = tuple(READERS) + ("unknown",)
MIN_CONFIDENCE = 0.3


def detect(doc: Document) -> str:
    """The flavor of a parsed document, or "unknown"."""
    if doc.root is None or doc.root.kind != "mapping":
        return "unknown"
    scores = {name: module.detect(doc) for name, module in READERS.items()}
    best = max(scores, key=scores.get)
    return best if scores[best] >= MIN_CONFIDENCE else "unknown"
