"""What `trainlint check DIR` costs on folders of real repositories, against an older source tree in the same run.

The 300-file case of run.py is a repository of one-file folders with a launch script and little else; the
repositories vendored under tests/realworld (and the rule fixtures beside them) are the other end: launch scripts
with shell variables, READMEs full of commands, the training scripts' own argument classes. CPU time (user + system)
of each child from `os.wait4`, median over `--runs` runs alternating this tree and, with `--baseline`, an older one
(`git archive REV | tar -x -C DIR`; its package first on PYTHONPATH), so that machine noise hits both alike.

    python benchmarks/startup/folders.py [--runs 3] [--baseline OLD_CHECKOUT --baseline-label REV] [FOLDER ...]

FOLDER defaults to tests/realworld and tests/fixtures, relative to the repository root. Result:
results/folders.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from run import HERE, ROOT, _alternate, _compile_bytecode, _env, _tool, write_result


def _configs_reported(trainlint: str, folder: str) -> int:
    """How many files the check reports on (the configs it found and read)."""
    out = subprocess.run([trainlint, "check", "--exit-zero", "--output-format", "json", folder], cwd=ROOT,
                         env=_env(), capture_output=True, text=True, check=False).stdout
    return len(json.loads(out)["files"]) if out.strip() else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("folders", nargs="*", default=["tests/realworld", "tests/fixtures"])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", type=Path, default=None,
                        help="a source tree of an older trainlint to measure in the same alternation")
    parser.add_argument("--baseline-label", default="", help="what the baseline is (a commit), for the result")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "folders.json")
    args = parser.parse_args()
    baseline = args.baseline.resolve() if args.baseline else None
    trainlint = _tool("trainlint")
    _compile_bytecode(*([baseline / "trainlint"] if baseline else []))
    result: dict[str, object] = {"python": sys.version.split()[0], "runs": args.runs,
                                 "baseline": (args.baseline_label or "given") if baseline else None, "folders": {}}
    for folder in args.folders:
        commands = {"trainlint": [trainlint, "check", "--exit-zero", folder]}
        if baseline is not None:
            commands["baseline"] = [trainlint, "check", "--exit-zero", folder]
        cpu = _alternate(commands, args.runs, ROOT, baseline)
        entry: dict[str, object] = {"configs_reported": _configs_reported(trainlint, folder),
                                    "cpu_seconds": {k: round(v, 3) for k, v in cpu.items()}}
        if baseline is not None:
            entry["over_baseline"] = round(cpu["trainlint"] / cpu["baseline"], 2)
        result["folders"][folder] = entry  # type: ignore[index]
    result["measured_at"] = time.strftime("%Y-%m-%d %H:%M:%S")
    write_result(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
