"""Follow-ups to the memory model: DeepSpeed Ulysses sequence parallelism, per-model dropout, state-space
(Mamba / Mamba-2) activations, vision-tower activations."""

from __future__ import annotations

import json

from trainlint import engine
from trainlint.context.settings import Settings
from trainlint.document.reading import parse_document


def lint(tmp_path, text, name="train.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return engine.check_path(path, Settings(use_project_config=False))


# ---- DeepSpeed sequence_parallel_size (Ulysses) ------------------------------------------------------------


def test_deepspeed_sequence_parallel_size_splits_the_sequence():
    from trainlint.flavors import deepspeed

    doc = parse_document(json.dumps({"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1,
                                     "zero_optimization": {"stage": 3}, "bf16": {"enabled": True},
                                     "sequence_parallel_size": 4}), "ds.json")
    plan = deepspeed.read(doc).plan
    assert plan.context_parallel.value == 4


def test_linked_deepspeed_sequence_parallel_size_lowers_the_activations(tmp_path):
    ds = {"zero_optimization": {"stage": 3}, "bf16": {"enabled": "auto"}, "train_micro_batch_size_per_gpu": "auto"}
    base = ("# trainlint: gpu=H100-80GB num-gpus=8\nmodel_name_or_path: meta-llama/Llama-3.1-8B\nbf16: true\n"
            "per_device_train_batch_size: 1\nmax_seq_length: 32768\ngradient_checkpointing: true\n")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "ds.json").write_text(json.dumps(ds))
    (tmp_path / "b" / "ds.json").write_text(json.dumps({**ds, "sequence_parallel_size": 4}))
    plain = lint(tmp_path / "a", base + "deepspeed: ds.json\n")
    split = lint(tmp_path / "b", base + "deepspeed: ds.json\n")
    plain_acts, split_acts = (next(c.bytes for c in r.estimate.components if c.key == "activations")
                              for r in (plain, split))
    assert split_acts < plain_acts / 3
