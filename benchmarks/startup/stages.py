"""Where the per-file work of the 300-file case goes: each stage of the engine's pipeline, measured in one process.

In the repository run.py builds for its 300-file case, `trainlint check` of the 300 configs runs once to import and
warm everything, then `--runs` more times; each stage's own time (wall clock, its nested stages' time taken out) is
summed per run, and the run with the smallest total is reported. A last set of runs replaces the fix-settling stage
(`engine._settled`) by a pass-through, so the share of its re-lints, which run all the other stages again, shows as
the difference.

    python benchmarks/startup/stages.py [--runs 3] [--out benchmarks/startup/results/stages.json]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from run import HERE, _many_configs, _small_repository, write_result

# (module attribute, label): the stages of engine._run and what check_path and the command line do around them
STAGES = (("read_document", "reading and parsing a file"), ("parse_document", "parsing a fixed text (re-lints)"),
          ("_declared", "declared settings (project, directives)"), ("_flavor", "flavor"),
          ("_surroundings", "surroundings (versions, launch, dialect)"), ("_PlanReader.read", "plan"),
          ("_estimate", "memory estimate"), ("_rule_findings", "rules"), ("_filtered", "filtering, suppressions"),
          ("settle_fixes", "fix settling (its own work)"), ("check_document", "the rest of a file's check"))


def _timed(stages: Counter, stack: list[float], label: str, function):
    def timed(*args, **kwargs):
        start = time.perf_counter()
        stack.append(0.0)
        try:
            return function(*args, **kwargs)
        finally:
            elapsed = time.perf_counter() - start
            nested = stack.pop()
            stages[label] += elapsed - nested
            if stack:
                stack[-1] += elapsed
    return timed


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "stages.json")
    args = parser.parse_args()
    from trainlint import cli, engine

    stages: Counter = Counter()
    stack: list[float] = []
    for name, label in STAGES:
        owner, attribute = (engine._PlanReader, "read") if name == "_PlanReader.read" else (engine, name)
        setattr(owner, attribute, _timed(stages, stack, label, getattr(owner, attribute)))
    with tempfile.TemporaryDirectory() as tmp:
        repo = _small_repository(Path(tmp))
        files = _many_configs(repo, 300)
        os.chdir(repo)

        def check() -> float:
            stages.clear()
            start = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                cli.main(["check", "--exit-zero", *files])
            return time.perf_counter() - start

        check()  # imports, catalogs, per-run caches
        total, shares = min(((check(), dict(stages)) for _ in range(args.runs)), key=lambda run: run[0])
        settled = engine._settled
        engine._settled = lambda doc, settings, diagnostics: diagnostics  # type: ignore[assignment]
        unsettled = min(check() for _ in range(args.runs))
        engine._settled = settled
        os.chdir(HERE)
    outside = total - sum(shares.values())
    result = {
        "python": sys.version.split()[0], "runs": args.runs, "files": len(files),
        "seconds": round(total, 4), "ms_per_file": round(1000 * total / len(files), 3),
        "stage_shares": {label: round(seconds / total, 3) for label, seconds in
                         sorted(shares.items(), key=lambda item: -item[1])},
        "outside_the_check_of_a_file": round(outside / total, 3),  # the link index's walk, output, the CLI
        "fix_settling_with_its_relints": round((total - unsettled) / total, 3),
        "measured_at": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    write_result(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
