"""Exact parameter counts of the hub-style configs in tests/data/hf_configs, from real transformers.

Every folder under tests/data/hf_configs holds one `config.json` as published on the Hugging Face hub.
This script builds each model with `transformers` on the meta device (no weights are read or
downloaded, no memory is allocated) and counts `sum(p.numel() for p in model.parameters())`, the
number `model.num_parameters()` reports: a tied weight (lm_head tied to the input embedding) is one
Parameter and is counted once. The result goes to tests/data/hf_configs/expected_params.json, which
tests/test_model_sizing.py compares trainlint's counts with.

The class built per config (`auto_class` in the output):

* configs with a vision tower: `AutoModelForImageTextToText` (the `...ForConditionalGeneration`
  class of the checkpoint: language model, vision tower, projector, lm_head);
* encoder-only models (BERT, RoBERTa, DeBERTa, ModernBERT, ELECTRA, ALBERT, DistilBERT, ViT):
  the bare `AutoModel`, as trainlint counts them (a task head adds little);
* Whisper: `AutoModelForSpeechSeq2Seq`; other encoder-decoders: `AutoModelForSeq2SeqLM`;
* everything else: `AutoModelForCausalLM`.

For multimodal models the count is split by parameter name into `text` (language model and
lm_head), `vision` (the vision tower) and `projector` (the multimodal projector / connector).

Run it in an environment with torch and transformers (not trainlint's own: it needs neither):

    VENV=../torchenv   # any folder outside the repository
    python3 -m venv $VENV && $VENV/bin/pip install torch transformers accelerate
    $VENV/bin/python benchmarks/model_sizing/count_params.py [--only NAME ...]

Everything is offline: `HF_HUB_OFFLINE=1` is set before transformers is imported.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "tests" / "data" / "hf_configs"
OUTPUT = CONFIGS / "expected_params.json"

sys.path.insert(0, str(ROOT))  # the class choice is trainlint's own (its exact path builds the same classes)
from trainlint.catalog.meta_count import ENCODER_ONLY, auto_class_name  # noqa: E402,F401

PROJECTOR_WORDS = ("multi_modal_projector", "mm_projector", "connector", "image_newline", "perceiver")
VISION_WORDS = ("vision", "visual", "image_")


def part_of(name: str) -> str:
    if any(w in name for w in PROJECTOR_WORDS):
        return "projector"
    if any(w in name for w in VISION_WORDS):
        return "vision"
    return "text"


def lora_all_linear(folder: Path, rank: int = 8) -> int:
    """Trainable parameters PEFT adds with target_modules="all-linear" (every nn.Linear but the output head)."""
    import peft
    import torch
    import transformers

    config = transformers.AutoConfig.from_pretrained(folder)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.device("meta"):
            model = getattr(transformers, auto_class_name(config)).from_config(config)
            wrapped = peft.get_peft_model(model, peft.LoraConfig(r=rank, target_modules="all-linear"))
    return sum(p.numel() for p in wrapped.parameters() if p.requires_grad)


def count(folder: Path) -> dict:
    import torch
    import transformers

    config = transformers.AutoConfig.from_pretrained(folder)
    auto = auto_class_name(config)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.device("meta"):
            model = getattr(transformers, auto).from_config(config)
    split: dict[str, int] = {}
    total = 0
    for name, param in model.named_parameters():  # each Parameter once: tied weights count once
        split[part_of(name)] = split.get(part_of(name), 0) + param.numel()
        total += param.numel()
    assert total == model.num_parameters(), (total, model.num_parameters())
    raw = json.loads((folder / "config.json").read_text())
    entry = {"model_type": raw.get("model_type"), "auto_class": auto, "class": type(model).__name__,
             "total_params": total}
    if len(split) > 1:
        entry["split"] = dict(sorted(split.items()))
    return entry


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--only", nargs="*", help="folder names to (re)count; the others are kept")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="where to write (default: %(default)s)")
    parser.add_argument("--lora", action="store_true",
                        help="also record, for the multimodal configs, the trainable parameters of PEFT's "
                             "LoraConfig(r=8, target_modules='all-linear') (needs peft)")
    parser.add_argument("--merge-other", type=Path, metavar="FILE",
                        help="the output of a run under another transformers version: record its count as "
                             "`other_versions` where it differs, then exit")
    args = parser.parse_args(argv)
    if args.merge_other:
        return merge_other(args.output, args.merge_other)
    import torch
    import transformers

    previous = json.loads(args.output.read_text())["models"] if args.output.exists() and args.only else {}
    results: dict[str, dict] = dict(previous)
    failures = 0
    for folder in sorted(p for p in CONFIGS.iterdir() if (p / "config.json").is_file()):
        if args.only and folder.name not in args.only:
            continue
        try:
            results[folder.name] = count(folder)
            if args.lora and "vision" in results[folder.name].get("split", {}):
                results[folder.name]["lora_all_linear_r8"] = lora_all_linear(folder)
        except Exception as exc:  # report and go on: one config must not hide the others
            failures += 1
            print(f"{folder.name}: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        r = results[folder.name]
        print(f"{folder.name:55s} {r['model_type']:18s} {r['total_params']:>16,d} {r['class']}")
    out = {"_comment": "Generated by benchmarks/model_sizing/count_params.py: parameter counts that transformers "
                       "builds from each config.json on the meta device (sum of numel over model.parameters(), "
                       "tied weights once). Do not edit by hand.",
           "transformers_version": transformers.__version__, "torch_version": torch.__version__.split("+")[0],
           "models": dict(sorted(results.items()))}
    args.output.write_text(json.dumps(out, indent=1) + "\n")
    return 1 if failures else 0


def merge_other(path: Path, other_path: Path) -> int:
    """Note, per config, the count another transformers version builds where it differs from this one's."""
    data, other = json.loads(path.read_text()), json.loads(other_path.read_text())
    version = other["transformers_version"]
    for name, entry in data["models"].items():
        theirs = other["models"].get(name)
        versions = {v: n for v, n in entry.get("other_versions", {}).items() if v != version}
        if theirs and theirs["total_params"] != entry["total_params"]:
            versions[version] = theirs["total_params"]
        if versions:
            entry["other_versions"] = versions
        else:
            entry.pop("other_versions", None)
    path.write_text(json.dumps(data, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
