"""Combine the reports of several CLI fuzz runs (`python -m tests.fuzz cli --report R.json`) into one results file,
with the findings counted per oracle (every oracle listed, so a zero is a zero of a run that judged it) and the inputs
each oracle judged.

    .venv/bin/python benchmarks/robustness/fuzz_summary.py R1.json R2.json --out benchmarks/robustness/results/fuzz.json
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

# A traceback names the snapshot the campaign ran from; results name files relative to the repository.
SNAPSHOT_PATH = re.compile(r'File "[^"]*?/((?:trainlint|tests|benchmarks)/)')


def repository_relative(detail: str) -> str:
    return SNAPSHOT_PATH.sub(r'File "\1', detail)

# The oracles of tests/fuzz/harness.py, grouped as the issue of fixes that settle asks for them.
GROUPS = {
    "crashes": ("crash", "hang", "memory", "internal-error", "bad-exit"),
    "non-settling fixes": ("fix-not-settled", "fix-not-idempotent", "fix-many-rounds"),
    "advertised/applied differences": ("fix-not-advertised", "fix-one-round", "fix-diff-mismatch"),
    "absurd values written": ("fix-absurd-value",),
    "version-unsafe fixes": ("fix-version-unsafe",),
    "other fix damage": ("fix-broke-strict-parse", "fix-temp-files", "fix-mode", "fix-diff-wrote", "fix-lost-newline"),
    "bad output or positions": ("bad-output", "bad-position"),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("reports", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    runs = [json.loads(p.read_text()) for p in args.reports]
    by_kind: dict[str, int] = {k: 0 for kinds in GROUPS.values() for k in kinds}
    signatures: dict[str, dict] = {}
    oracles: dict[str, int] = {}
    for run in runs:
        for sig, found in run.get("signatures", {}).items():
            by_kind[found["kind"]] = by_kind.get(found["kind"], 0) + found["inputs"]
            detail = repository_relative(found["detail"])
            signatures.setdefault(sig, {"kind": found["kind"], "inputs": 0, "detail": detail})
            signatures[sig]["inputs"] += found["inputs"]
        for oracle, n in run.get("oracles", {}).items():
            oracles[oracle] = oracles.get(oracle, 0) + n
    combined = {
        "runs": [{k: run[k] for k in ("seed", "inputs", "jobs", "seconds", "inputs_with_findings", "inputs_with_crash")}
                 for run in runs],
        "inputs": sum(run["inputs"] for run in runs),
        "jobs": sum(run["jobs"] for run in runs),
        "inputs_with_findings": sum(run["inputs_with_findings"] for run in runs),
        "findings_per_group": {group: sum(by_kind.get(k, 0) for k in kinds) for group, kinds in GROUPS.items()},
        "findings_per_oracle": dict(sorted(by_kind.items())),
        "inputs_judged_per_oracle": dict(sorted(oracles.items())),
        "signatures": signatures,
    }
    args.out.write_text(json.dumps(combined, indent=1) + "\n")
    print(json.dumps({k: v for k, v in combined.items() if k != "signatures"}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
