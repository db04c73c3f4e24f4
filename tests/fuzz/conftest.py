"""Fixtures for the fuzz tests: one trainlint worker process per module, the regression manifest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from . import harness

REGRESSIONS = Path(__file__).resolve().parent / "regressions"


def load_cases() -> list[dict]:
    manifest = REGRESSIONS / "cases.json"
    return json.loads(manifest.read_text()) if manifest.exists() else []


@pytest.fixture(scope="module")
def worker():
    w = harness.Worker()
    yield w
    w.close()
