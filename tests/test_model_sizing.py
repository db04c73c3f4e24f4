"""Every hub-style config in tests/data/hf_configs is sized as real transformers builds it.

tests/data/hf_configs/expected_params.json holds the exact parameter counts transformers builds from
each config.json on the meta device (benchmarks/model_sizing/count_params.py; `other_versions` where
another transformers version builds a different count, as for T5's lm_head). trainlint must match one
of them exactly, or be within 5% where it labels its count approximate; the vision tower and projector
of a multimodal model are counted, never dropped.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trainlint.catalog.models import load_config_file

DATA = Path(__file__).parent / "data" / "hf_configs"
EXPECTED = json.loads((DATA / "expected_params.json").read_text())["models"]


def test_the_set_covers_sixty_model_types():
    folders = {p.name for p in DATA.iterdir() if (p / "config.json").is_file()}
    assert folders == set(EXPECTED)
    assert len({e["model_type"] for e in EXPECTED.values()}) >= 60


@pytest.mark.parametrize("folder", sorted(EXPECTED))
def test_sized_as_transformers_builds_it(folder):
    expected = EXPECTED[folder]
    allowed = {expected["total_params"], *expected.get("other_versions", {}).values()}
    arch = load_config_file(DATA / folder / "config.json")
    if arch.approximate:
        assert abs(arch.total_params - expected["total_params"]) <= 0.05 * expected["total_params"], arch.sizing_note
    else:
        assert arch.total_params in allowed, f"{arch.total_params:,} vs {sorted(allowed)}"


@pytest.mark.parametrize("folder", sorted(f for f, e in EXPECTED.items() if "vision" in e.get("split", {})))
def test_vision_towers_are_counted(folder):
    split = EXPECTED[folder]["split"]
    arch = load_config_file(DATA / folder / "config.json")
    assert arch.tower_params == split["vision"] + split.get("projector", 0)
    assert {t.role for t in arch.towers} >= {"vision"}
    assert "vision" in arch.summary()


def _unknown_type_copy(tmp_path, folder="meta-llama__Meta-Llama-3-8B", model_type="exaone_like"):
    config = json.loads((DATA / folder / "config.json").read_text())
    config["model_type"] = model_type
    target = tmp_path / "model"
    target.mkdir()
    (target / "config.json").write_text(json.dumps(config))
    return target


def test_generic_tier_is_approximate_and_says_so(tmp_path):
    arch = load_config_file(_unknown_type_copy(tmp_path) / "config.json")
    expected = EXPECTED["meta-llama__Meta-Llama-3-8B"]["total_params"]
    assert arch.approximate and "exaone_like" in arch.sizing_note and "approximate" in arch.summary()
    assert abs(arch.total_params - expected) <= 0.05 * expected


def test_approximate_model_caps_memory_findings_at_warning(tmp_path):
    from trainlint import engine
    from trainlint.context.settings import Settings
    from trainlint.diagnostics import Severity

    model = _unknown_type_copy(tmp_path)
    config = tmp_path / "train.yaml"
    config.write_text(f"# trainlint: gpu=A100-80GB num-gpus=1 model={model}\noutput_dir: out\n"
                      "per_device_train_batch_size: 16\nmax_length: 4096\nbf16: true\n")
    result = engine.check_path(config, Settings(use_project_config=False))
    (oom,) = [d for d in result.diagnostics if d.code == "TL100"]
    assert oom.severity is Severity.WARNING
    assert any("approximate" in a for a in oom.assumptions)
    assert any("approximate" in a for a in result.estimate.assumptions)
