"""What a long-running process (the language server re-lints and re-plans at every edit) keeps between checks stays
small: benchmarks/robustness/lsp_memory.py measures the server over 10,000 edits; these hold the caches it found
growing to their bounds."""

from __future__ import annotations

import gc
import tracemalloc

from trainlint.catalog.models import find_model
from trainlint.memory.estimate import TotalsCache, _run_total
from trainlint.memory.model import Run, optimizer_spec
from trainlint.plan import AMP_BF16


def test_a_full_totals_cache_holds_about_a_megabyte():
    # The fix planner keeps a total per candidate run (LIMIT of them): its keys, a (type, value) pair per field,
    # took ~2.2 kB an entry (4.5 MB full, most of what the server held after a few thousand planned edits).
    arch = find_model("meta-llama/Llama-3.1-8B")
    adamw = optimizer_spec("adamw_torch_fused")
    runs = [Run(arch=arch, micro_batch=1 + i % 64, grad_accum=1 + i // 64, seq_len=512 * (1 + i % 8),
                precision=AMP_BF16, optimizer=adamw) for i in range(TotalsCache.LIMIT - 1)]
    kept = TotalsCache()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for run in runs:
            kept.total(run)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(kept._totals) == len({(r.micro_batch, r.grad_accum, r.seq_len) for r in runs})
    assert held / len(kept._totals) < 1000, f"{held / len(kept._totals):.0f} bytes an entry"
    assert kept.total(runs[5]) == _run_total(runs[5], None)  # a hit is what estimating gives
