"""The exact path, when torch and transformers are installed: build the model on the meta device and count.

Opt-in (`trainlint estimate --exact-model`): never imported at start-up and never by the language server. The
model is built from its `config.json` with `torch.device("meta")` (no weights are read or downloaded, no memory
is allocated), as the class trainlint counts: `AutoModelForImageTextToText` for a config with a vision tower,
the bare `AutoModel` for encoder-only models, `AutoModelForSpeechSeq2Seq` for Whisper, `AutoModelForSeq2SeqLM`
for other encoder-decoders, else `AutoModelForCausalLM`. `sum(p.numel() for p in model.parameters())` counts a
tied weight once, as `model.num_parameters()` does. Everything stays offline (`HF_HUB_OFFLINE`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import NamedTuple

from trainlint.catalog import models

ENCODER_ONLY = {"bert", "roberta", "xlm-roberta", "distilbert", "deberta", "deberta-v2", "modernbert", "electra",
                "albert", "vit"}


class ExactCountUnavailable(RuntimeError):
    """torch or transformers is not installed, or transformers cannot build this config."""


class ExactCount(NamedTuple):
    """A parameter count from transformers itself (the model built on the meta device), and how it was built."""
    params: int
    auto_class: str
    transformers_version: str


def model_config(arch) -> dict | None:
    """The `config.json` content an architecture was built from: its file, or the catalog entry's fields."""
    source = getattr(arch, "source", "") or ""
    if source and source != "catalog" and Path(source).is_file():
        try:
            return json.loads(Path(source).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
    entry = models._catalog_entry(arch.name, by_short_name=False)
    return dict(entry.config) if entry is not None else None


def auto_class_name(config) -> str:
    """The transformers Auto class trainlint counts a config as (see the module docstring)."""
    if getattr(config, "vision_config", None) is not None:
        return "AutoModelForImageTextToText"
    if config.model_type in ENCODER_ONLY:
        return "AutoModel"
    if config.model_type == "whisper":
        return "AutoModelForSpeechSeq2Seq"
    if getattr(config, "is_encoder_decoder", False):
        return "AutoModelForSeq2SeqLM"
    return "AutoModelForCausalLM"


def exact_count(config: dict) -> ExactCount:
    """transformers' own parameter count of `config`, built on the meta device."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise ExactCountUnavailable(f"the exact count needs torch and transformers installed ({exc.name} is not)") \
            from None
    fields = dict(config)
    model_type = fields.pop("model_type", None)
    if not model_type:
        raise ExactCountUnavailable("the config has no model_type")
    try:
        hf_config = transformers.AutoConfig.for_model(model_type, **fields)
        auto_class = auto_class_name(hf_config)
        with torch.device("meta"):
            model = getattr(transformers, auto_class).from_config(hf_config)
    except Exception as exc:  # noqa: BLE001 - whatever transformers raises for a config it cannot build
        raise ExactCountUnavailable(f"transformers {transformers.__version__} cannot build it: "
                                    f"{type(exc).__name__}: {exc}"[:300]) from None
    return ExactCount(sum(p.numel() for p in model.parameters()), auto_class, transformers.__version__)
