"""Throw-away repositories (pins, launch scripts, configs) for the context tests."""

from __future__ import annotations

import pytest

from trainlint.context import dialect, launch, pins


@pytest.fixture(autouse=True)
def _fresh_caches():
    launch.clear_cache()
    pins.clear_cache()
    dialect.clear_cache()
    yield
    launch.clear_cache()
    pins.clear_cache()


