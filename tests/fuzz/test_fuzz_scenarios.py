"""Hostile files rather than hostile text: FIFOs, devices, sockets, folders and symlink loops as
configs, linked files and model folders; long and non-UTF-8 names; garbage on stdin; --fix through
symlinks and hard links, on read-only files and folders; linear work on many unknown keys."""

from __future__ import annotations

import pytest

from . import scenarios

# Scenarios that still fail (tracked; removed from here as they are fixed).
OPEN: set[str] = set()


@pytest.mark.parametrize("scenario", scenarios.SCENARIOS, ids=[s.__name__ for s in scenarios.SCENARIOS])
def test_scenario(scenario):
    if scenario.__name__ in OPEN:
        pytest.xfail("known, not fixed yet")
    assert scenarios.run_one(scenario) == []
