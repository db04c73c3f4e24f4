"""Every crash, hang or damage the fuzzer found, as a fixture: the minimized input goes through all
oracles (check in every output format, stdin, --diff, --fix twice, patch, the advertised edits
round by round) and nothing may be found. Cases marked "open" in cases.json are known and not yet
fixed (xfail)."""

from __future__ import annotations

import pytest

from . import harness
from .conftest import REGRESSIONS, load_cases

CASES = load_cases()


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_regression(case, worker, tmp_path):
    if case.get("open"):
        pytest.xfail(f"known, not fixed yet: {case['signature']}")
    data = (REGRESSIONS / case["file"]).read_bytes()
    suffix = "." + case["file"].rsplit(".", 1)[-1]
    findings = harness.check_input(worker, data, suffix, tmp_path / "case", rng=None, reference=True, stdin=True,
                                   extra=case.get("settings"), versions=case.get("versions"))
    assert [f"{f.kind}:{f.signature}: {f.detail[-300:]}" for f in findings] == []
