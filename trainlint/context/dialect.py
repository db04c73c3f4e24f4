"""The parser that reads the file: plain HfArgumentParser, TrlParser, LLaMA-Factory, open-instruct, open-r1,
ms-swift, axolotl, torchtune, LitGPT, Lightning CLI, or unknown.

Which keys are legal depends on it (open-instruct's own dataclasses define `max_seq_length`; LLaMA-Factory reads
`template`, `finetuning_type`, ...). `Dialect.fields` is the set of keys that parser accepts when trainlint knows
it; rules judge unknown keys against it, and an unknown parser means no unknown-key claim above info.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainlint.plan import Origin

DIALECTS = ("hf", "trl", "llamafactory", "open-instruct", "open-r1", "ms-swift", "axolotl", "torchtune", "litgpt",
            "lightning-cli", "unknown")
# What people read for each name.
LABELS = {"hf": "HfArgumentParser", "trl": "TrlParser", "llamafactory": "LLaMA-Factory", "open-instruct":
          "open-instruct", "open-r1": "open-r1 (TrlParser)", "ms-swift": "ms-swift", "axolotl": "axolotl",
          "torchtune": "torchtune", "litgpt": "LitGPT", "lightning-cli": "Lightning CLI", "unknown": "unknown parser"}


@dataclass(frozen=True)
class Dialect:
    name: str = "unknown"  # one of DIALECTS
    origin: Origin = Origin("default", note="no script or package pins name the parser")
    fields: frozenset | None = None  # keys the parser accepts, when known
    script: str = ""  # the script whose parser was recognised, when any

    @property
    def known(self) -> bool:
        return self.name != "unknown"

    @property
    def label(self) -> str:
        return LABELS.get(self.name, self.name)

    def accepts(self, key: str) -> bool | None:
        """True/False when the parser's fields are known, None otherwise."""
        if self.fields is None:
            return None
        return key in self.fields

    def describe(self) -> str:
        return f"{self.label} ({self.origin.describe()})"
