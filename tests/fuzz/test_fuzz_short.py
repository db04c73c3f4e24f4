"""A short fixed-seed fuzz run (CLI and language server), bounded in time: well under a minute on
two slow cores. Findings must all be known (an open case in regressions/cases.json); once every
class is fixed, none may be found. The long run is `python -m tests.fuzz` (see README.md)."""

from __future__ import annotations

import pytest

from . import campaign, lsp_campaign, mutate
from .conftest import load_cases

pytestmark = pytest.mark.skipif(not mutate.corpus_files(), reason="the shared corpus is not next to this checkout")
SEED = 20261201
# Language-server properties that do not hold yet (tracked; removed as they are fixed).
LSP_OPEN: set[str] = set()
# While classes found by the fuzzer are still being fixed, new ones are reported, not failed.
CLI_OPEN = False


def test_cli_fuzz_fixed_seed():
    result = campaign.run(SEED, budget_s=30, max_inputs=80, minimize=False, timeout=8)
    assert result.inputs >= 10
    known = {c["signature"] for c in load_cases() if c.get("open")}
    new = {sig: f.to_json() for sig, f in result.findings.items() if sig not in known}
    if new and CLI_OPEN:
        pytest.xfail(f"open finding classes: {sorted(new)}")
    assert new == {}, f"{len(new)} new finding class(es) from {result.inputs} inputs"


def test_lsp_fuzz_fixed_seed():
    stats = lsp_campaign.run(SEED, ops=100, budget_s=12)
    assert not stats["exited_early"], stats.get("stderr_tail")
    assert stats["malformed_answers"] == []
    assert stats["exit_code"] == 0
    problems = {}
    if stats["no_answer"]:
        problems["no_answer"] = stats["no_answer"][:5]
    if stats["inconsistent"]:
        problems["inconsistent"] = stats["inconsistent"]
    growth = stats["rss_kb"]["after_ops"] - stats["rss_kb"]["after_open"]
    if growth > 40 * 1024:
        problems["rss"] = f"+{growth // 1024} MiB over {stats['ops']} operations"
    unexpected = {k: v for k, v in problems.items() if k not in LSP_OPEN}
    assert unexpected == {}
