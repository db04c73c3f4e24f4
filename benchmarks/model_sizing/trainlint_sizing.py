"""How trainlint sizes each config in tests/data/hf_configs, compared with transformers' exact counts.

Runs the real CLI, `trainlint estimate --model FOLDER --precision fp32 --output-format json`, on every
folder, reads the parameter count back from the weights (fp32: 4 bytes per parameter) and compares it
with tests/data/hf_configs/expected_params.json (see count_params.py). Each config is then

* exact: trainlint's count equals transformers';
* approximate: within 5% (the estimate says it is approximate where it knows);
* wrong: sized, but off by more than 5% (a vision tower left out, say);
* refused: trainlint could not size it (exit code 2, the reason in `reason`).

    .venv/bin/python benchmarks/model_sizing/trainlint_sizing.py [--out FILE.json]

prints one line per config and a summary by model type.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "tests" / "data" / "hf_configs"
TRAINLINT = [sys.executable, "-m", "trainlint"]


def size(folder: Path) -> tuple[int | None, str, bool]:
    """(params or None, reason when refused, whether the output labels the count approximate)."""
    proc = subprocess.run([*TRAINLINT, "estimate", "--model", str(folder), "--gpu", "A100-80GB", "--isolated",
                           "--precision", "fp32", "--output-format", "json"],
                          capture_output=True, text=True, cwd=ROOT, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    try:
        out = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return None, (proc.stderr.strip() or proc.stdout.strip())[-300:], False
    weights = out.get("per_gpu_bytes", {}).get("weights")
    if not weights:
        return None, "no weights in the estimate", False
    approximate = "approximate" in json.dumps(out.get("assumptions", [])).lower()
    return weights // 4, "", approximate


def classify(got: int | None, expected: int, also: tuple[int, ...] = ()) -> str:
    """`also`: the counts other transformers versions build (`other_versions`); matching one is exact."""
    if got is None:
        return "refused"
    if got == expected or got in also:
        return "exact"
    return "approximate" if abs(got - expected) <= 0.05 * expected else "wrong"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, help="write the per-config results here as JSON")
    args = parser.parse_args(argv)
    expected = json.loads((CONFIGS / "expected_params.json").read_text())["models"]
    results = {}
    for name, exp in expected.items():
        got, reason, approx = size(CONFIGS / name)
        verdict = classify(got, exp["total_params"], tuple(exp.get("other_versions", {}).values()))
        results[name] = {"model_type": exp["model_type"], "expected": exp["total_params"], "trainlint": got,
                         "verdict": verdict, "labelled_approximate": approx, **({"reason": reason} if reason else {})}
        delta = f"{(got - exp['total_params']) / exp['total_params']:+.2%}" if got else reason[:90]
        print(f"{verdict:11s} {name:52s} {exp['model_type']:16s} {delta}")
    by_type: dict[str, Counter] = {}
    for r in results.values():
        by_type.setdefault(r["model_type"], Counter())[r["verdict"]] += 1
    worst = {t: min(c, key=["refused", "wrong", "approximate", "exact"].index) for t, c in by_type.items()}
    print()
    print("configs:", dict(Counter(r["verdict"] for r in results.values())))
    print("model types (by their worst config):", dict(Counter(worst.values())))
    for verdict in ("refused", "wrong", "approximate"):
        types = sorted(t for t, v in worst.items() if v == verdict)
        if types:
            print(f"  {verdict}: {', '.join(types)}")
    if args.out:
        args.out.write_text(json.dumps({"configs": results, "types": dict(sorted(worst.items()))}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
