"""Start-up cost of `trainlint check` against yamllint on the same file, measured in the same run.

CPU time (user + system) of each child process, from `os.wait4`, median over `--runs` alternating runs; both
tools run from this interpreter's environment with bytecode compiled first (as `pip install` leaves it), and
with PYTHONDONTWRITEBYTECODE unset for the children. Also: trainlint on 1 file versus 300 files (per-file cost),
and where pygls is installed, the language server's didChange -> diagnostics latency (benchmarks/lsp_latency).

    python benchmarks/startup/run.py [--runs 15] [--file PATH] [--out benchmarks/startup/results/latest.json]
                                     [--baseline OLD_CHECKOUT]

With `--baseline`, trainlint from another source tree (an older checkout: `git archive REV | tar -x -C DIR`) runs in
the same alternation (its package first on PYTHONPATH), so a change is measured against what it replaced under the
same machine load.

Needs `yamllint` installed (`pip install yamllint`). Prints the ratios; the target is trainlint/yamllint <= 1.0.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
DEFAULT_FILE = ROOT / "examples" / "hf-llama3-8b-sft" / "train.yaml"


def _env(baseline: Path | None = None) -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["NO_COLOR"] = "1"
    if baseline is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(baseline)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


def _cpu(argv: list[str], cwd: Path | None = None, baseline: Path | None = None) -> float:
    """CPU seconds (user + system) the child used (with `baseline`, running that tree's trainlint)."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env(baseline), cwd=cwd)
    _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_utime + usage.ru_stime


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if not found:
        sys.exit(f"{name} is not installed in this environment")
    return found


def _compile_bytecode() -> None:
    import trainlint

    for folder in {Path(trainlint.__file__).parent, Path(sysconfig.get_paths()["purelib"])}:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(folder)], env=_env(),
                       stdout=subprocess.DEVNULL, check=False)


def _compile_baseline(baseline: Path) -> None:
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(baseline / "trainlint")], env=_env(),
                   stdout=subprocess.DEVNULL, check=False)


def _many_files(folder: Path, count: int, source: Path | None = None) -> list[str]:
    """`count` copies of the corpus files (of `source` alone when given, or when the corpus is not there)."""
    if source is not None:
        sources = [source]
    else:
        sources = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml", ".json") and p.is_file())
        sources = sources or [DEFAULT_FILE]
    paths = []
    for i in range(count):
        src = sources[i % len(sources)]
        sub = folder / f"{i:03d}"
        sub.mkdir()
        dst = sub / src.name
        shutil.copyfile(src, dst)
        paths.append(str(dst))
    return paths


def _small_repository(folder: Path) -> Path:
    """A training repository as users have them: the example config and its DeepSpeed JSON, pins, a launch script,
    a README, git. Returns the config. (This repository itself, with its 19 vendored real-world slices of scripts
    under tests/realworld, is a much larger launch and parser search than a real project's.)"""
    repo = folder / "proj"
    (repo / ".git").mkdir(parents=True)
    (repo / "configs").mkdir()
    example = ROOT / "examples" / "hf-llama3-8b-sft"
    for name in ("train.yaml", "ds_zero2.json"):
        shutil.copyfile(example / name, repo / "configs" / name)
    (repo / "pyproject.toml").write_text('[project]\nname = "proj"\nversion = "0"\ndependencies = ["transformers>=4.52,<5", '
                                         '"trl==0.18.0", "deepspeed>=0.16", "accelerate"]\n')
    (repo / "train.sh").write_text("#!/bin/bash\naccelerate launch --num_processes 8 train.py configs/train.yaml\n")
    (repo / "train.py").write_text("from trl import TrlParser, SFTConfig\nparser = TrlParser((SFTConfig,))\n")
    (repo / "README.md").write_text("# proj\n\n```sh\nbash train.sh\n```\n")
    return repo / "configs" / "train.yaml"


def _ratio(trainlint: str, yamllint: str, paths: list[str], runs: int, cwd: Path | None = None,
           baseline: Path | None = None) -> tuple[float, float, float | None]:
    """Median CPU seconds of trainlint, yamllint (and the baseline's trainlint), alternating run by run so that
    machine noise hits all alike."""
    t_runs, y_runs, b_runs = [], [], []
    for _ in range(runs):
        t_runs.append(_cpu([trainlint, "check", *paths], cwd))
        y_runs.append(_cpu([yamllint, *paths], cwd))
        if baseline is not None:
            b_runs.append(_cpu([trainlint, "check", *paths], cwd, baseline))
    return statistics.median(t_runs), statistics.median(y_runs), statistics.median(b_runs) if b_runs else None


def _each_corpus_file(trainlint: str, yamllint: str, runs: int) -> dict | None:
    """Each config of ../shared/corpus checked alone, in its folder (median CPU of `runs` alternating runs per file):
    the median and the worst of the per-file ratios, and the worst files."""
    if not CORPUS.is_dir():
        return None
    files = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml", ".json") and p.is_file())
    ratios = []
    for path in files:
        t, y, _ = _ratio(trainlint, yamllint, [path.name], runs, cwd=path.parent)
        ratios.append((round(t / y, 2), str(path.relative_to(CORPUS))))
    ratios.sort()
    return {"files": len(ratios), "median_ratio": statistics.median(r for r, _ in ratios),
            "share_at_most_1": round(sum(1 for r, _ in ratios if r <= 1.0) / len(ratios), 2),
            "highest": ratios[-5:][::-1]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "latest.json")
    parser.add_argument("--many-from", type=Path, default=None, metavar="PATH",
                        help="the 300-file case copies this one file (default: the corpus beside the checkout)")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="a source tree of an older trainlint to measure in the same alternation")
    args = parser.parse_args()
    baseline = args.baseline.resolve() if args.baseline else None

    trainlint, yamllint = _tool("trainlint"), _tool("yamllint")
    _compile_bytecode()
    if baseline is not None:
        _compile_baseline(baseline)
    for argv in ([trainlint, "check", str(args.file)], [yamllint, str(args.file)]):  # warm the file cache
        _cpu(argv)
    t_one, y_one, b_one = _ratio(trainlint, yamllint, [str(args.file)], args.runs, baseline=baseline)
    with tempfile.TemporaryDirectory() as tmp:
        config = _small_repository(Path(tmp))
        t_small, y_small, b_small = _ratio(trainlint, yamllint, [str(config.relative_to(config.parents[1]))],
                                           args.runs, cwd=config.parents[1], baseline=baseline)
        # pre-commit passes only the changed file: a DeepSpeed JSON alone (trainlint also lints the config linking it)
        linked = config.parent / "ds_zero2.json"
        t_linked, y_linked, _ = _ratio(trainlint, yamllint, [str(linked.relative_to(config.parents[1]))], args.runs,
                                       cwd=config.parents[1])
    per_file = _each_corpus_file(trainlint, yamllint, max(3, args.runs // 5))

    with tempfile.TemporaryDirectory() as tmp:
        files = _many_files(Path(tmp), 300, args.many_from)
        t_many, y_many, b_many = _ratio(trainlint, yamllint, files, max(3, args.runs // 5), baseline=baseline)

    result = {
        "file": str(args.file.relative_to(ROOT) if args.file.is_relative_to(ROOT) else args.file),
        "runs": args.runs,
        "300_files_from": str(args.many_from) if args.many_from else
        ("the corpus (../shared/corpus)" if CORPUS.is_dir() else "copies of the file"),
        "python": sys.version.split()[0],
        "cpu_seconds": {"trainlint_1_file": round(t_one, 4), "yamllint_1_file": round(y_one, 4),
                        "trainlint_1_file_small_repository": round(t_small, 4),
                        "yamllint_1_file_small_repository": round(y_small, 4),
                        "trainlint_linked_deepspeed_json_alone": round(t_linked, 4),
                        "yamllint_linked_deepspeed_json_alone": round(y_linked, 4),
                        "trainlint_300_files": round(t_many, 4), "yamllint_300_files": round(y_many, 4)},
        "ratio_1_file_trainlint_over_yamllint": round(t_one / y_one, 2),
        "ratio_1_file_small_repository_trainlint_over_yamllint": round(t_small / y_small, 2),
        "ratio_linked_deepspeed_json_alone_small_repository_trainlint_over_yamllint": round(t_linked / y_linked, 2),
        "each_corpus_file_alone": per_file,
        "ratio_300_files_trainlint_over_yamllint": round(t_many / y_many, 2),
        "trainlint_300_over_1_file": round(t_many / t_one, 1),
        "measured_at": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    if baseline is not None:
        result["baseline"] = {
            "tree": str(baseline),
            "cpu_seconds": {"trainlint_1_file": round(b_one, 4), "trainlint_1_file_small_repository": round(b_small, 4),
                            "trainlint_300_files": round(b_many, 4)},
            "ratio_1_file_trainlint_over_yamllint": round(b_one / y_one, 2),
            "ratio_1_file_small_repository_trainlint_over_yamllint": round(b_small / y_small, 2),
            "ratio_300_files_trainlint_over_yamllint": round(b_many / y_many, 2),
        }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
