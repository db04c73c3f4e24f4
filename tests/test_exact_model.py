"""`trainlint estimate --exact-model`: transformers' own count on the meta device, only when asked for."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from trainlint.catalog import meta_count
from trainlint.catalog.models import find_model

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "tests" / "data" / "hf_configs"


def estimate(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trainlint", "estimate", *args], capture_output=True, text=True,
                          timeout=300)


def test_without_the_flag_nothing_heavy_is_imported():
    code = ("import sys, trainlint.cli as c; c.main(['estimate', '--model', 'meta-llama/Llama-3.1-8B']); "
            "print('torch' in sys.modules, 'transformers' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip().splitlines()[-1] == "False False"


def test_the_config_behind_an_architecture():
    assert meta_count.model_config(find_model("meta-llama/Llama-3.1-8B"))["model_type"] == "llama"
    folder = CONFIGS / "google__gemma-3-4b-it"
    config = meta_count.model_config(find_model(str(folder)))
    assert config == json.loads((folder / "config.json").read_text())


def test_the_json_says_whether_the_exact_count_was_made():
    proc = estimate("--model", "meta-llama/Llama-3.1-8B", "--exact-model", "--output-format", "json")
    exact = json.loads(proc.stdout)["exact_model"]
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        assert exact["available"] is False and "needs torch and transformers" in exact["summary"]
        return
    assert exact["available"] and exact["params"] == exact["trainlint_params"] == 8_030_261_248


@pytest.mark.parametrize("name", ["meta-llama__Llama-3.1-8B-Instruct", "google__gemma-3-4b-it",
                                  "mistralai__Mixtral-8x7B-v0.1", "openai__whisper-large-v3"])
def test_the_meta_device_count_is_trainlints(name):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    folder = CONFIGS / name
    if not folder.is_dir():
        pytest.skip(f"{name} is not in the test set")
    arch = find_model(str(folder))
    expected = json.loads((CONFIGS / "expected_params.json").read_text())
    exact = meta_count.exact_count(meta_count.model_config(arch))
    assert exact.params == arch.total_params
    assert name in json.dumps(expected)
