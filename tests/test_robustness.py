"""Bad input never crashes anything: mutated real configs (broken syntax, wrong types, odd values)
give diagnostics, never an internal error (TL000). Deterministic seeds; bounded work."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import yaml

from trainlint import engine
from trainlint.plan import Origin
from trainlint.context.settings import Overrides, Settings

from shared_corpus import MISSING, corpus_files

FILES = corpus_files()
ODD_VALUES = [None, [], {}, [1, 2], {"a": 1}, "auto", -1, 0, -3, 5, 1e30, "xxx", True, 3.5, "8", "2e-5",
              [None, "q_proj"], "[", "0,1"]
TEXT_NOISE = ["{", "}", "[", "]", ":", '"', "'", "\n", "  ", "\t", "- ", "*a", "&a ", "!!python/object ", "0", "-1",
              "1e9", "auto", "yes", "null", "\x00", "\ufeff", "<<: *x\n"]
SETTINGS = [Settings(use_project_config=False),
            Settings(use_project_config=False, cli=Overrides(
                {"gpu": "A100-80GB", "num_gpus": 8, "model": "meta-llama/Llama-3.1-8B"}, Origin("cli")))]


def _mutate_values(node, rng):
    if isinstance(node, dict):
        for key in list(node):
            node[key] = rng.choice(ODD_VALUES) if rng.random() < 0.2 else _mutate_values(node[key], rng)
    elif isinstance(node, list):
        for i in range(len(node)):
            node[i] = rng.choice(ODD_VALUES) if rng.random() < 0.2 else _mutate_values(node[i], rng)
    return node


def _mutate_text(text: str, rng) -> str:
    for _ in range(rng.randint(1, 4)):
        pos = rng.randrange(len(text) + 1)
        roll = rng.random()
        if roll < 0.3:
            text = text[:pos] + text[pos + rng.randint(1, 20):]
        elif roll < 0.6:
            text = text[:pos] + rng.choice(TEXT_NOISE) + text[pos:]
        else:
            start = rng.randrange(len(text) + 1)
            text = text[:pos] + text[start:start + 40] + text[pos:]
    return text


def _assert_no_internal_error(text: str, path: Path):
    for settings in SETTINGS:
        result = engine.check_text(text, str(path), settings)
        assert not result.internal_error, [d.message for d in result.diagnostics if d.code == "TL000"]


@pytest.mark.skipif(not FILES, reason=MISSING)
@pytest.mark.parametrize("seed", range(4))
def test_wrong_types_and_values(seed):
    rng = random.Random(seed)
    for _ in range(60):
        path = rng.choice(FILES)
        text = path.read_text()
        data = json.loads(text) if path.suffix in (".json", ".conf") else yaml.safe_load(text)
        data = _mutate_values(data, rng)
        mutated = json.dumps(data) if path.suffix in (".json", ".conf") else yaml.safe_dump(data)
        _assert_no_internal_error(mutated, path)


@pytest.mark.skipif(not FILES, reason=MISSING)
@pytest.mark.parametrize("seed", range(4))
def test_broken_text(seed):
    rng = random.Random(1000 + seed)
    for _ in range(60):
        path = rng.choice(FILES)
        _assert_no_internal_error(_mutate_text(path.read_text(), rng), path)
