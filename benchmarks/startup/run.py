"""Start-up cost of `trainlint check` against yamllint and check-jsonschema on the same file, measured side by side.

CPU time (user + system) of each child process, from `os.wait4`, median over `--runs` runs that alternate the tools
so that machine noise hits all alike; every tool runs from this interpreter's environment with bytecode compiled
first (as `pip install` leaves it) and PYTHONDONTWRITEBYTECODE unset for the children.

The budget (each a ratio measured in this run):
- a one-file check: at most 2.0x yamllint's CPU and at most 0.5x check-jsonschema's, on the same file (the example
  config in a small repository of the usual shape; also its DeepSpeed JSON alone, pre-commit's other case);
- 300 files in one run: at most 3x trainlint's own one-file check (reported beside it: yamllint over the YAML ones
  among them, and what a further file costs each tool);
- the language server's didChange -> diagnostics: at most 20 ms median (benchmarks/lsp_latency, run here).

    python benchmarks/startup/run.py [--runs 15] [--out benchmarks/startup/results/latest.json] [--no-lsp]
                                     [--baseline OLD_CHECKOUT]

check-jsonschema validates the file against trainlint's own schema for its format (schemas/), which is the job a
schema-only linter does. With `--baseline`, trainlint from another source tree (`git archive REV | tar -x -C DIR`)
runs in the same alternation (its package first on PYTHONPATH). Needs `pip install yamllint check-jsonschema`.
Exit 1 when a budget is missed.
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
EXAMPLE = ROOT / "examples" / "hf-llama3-8b-sft"
SCHEMAS = ROOT / "schemas"
CONFIG_SUFFIXES = (".yaml", ".yml", ".json")

BUDGET = {"one_file_over_yamllint": 2.0, "one_file_over_check_jsonschema": 0.5, "300_files_over_one_file": 3.0,
          "lsp_median_ms": 20.0}


def write_result(result: dict, out: Path) -> None:
    """The benchmark's result as JSON at `out` (its folder made), and on standard output."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


def _env(baseline: Path | None = None) -> dict[str, str]:
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
        sys.exit(f"{name} is not installed in this environment (pip install yamllint check-jsonschema)")
    return found


def _compile_bytecode(*trees: Path) -> None:
    import trainlint

    for folder in {Path(trainlint.__file__).parent, Path(sysconfig.get_paths()["purelib"]), *trees}:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(folder)], env=_env(),
                       stdout=subprocess.DEVNULL, check=False)


def _small_repository(folder: Path) -> Path:
    """A training repository as users have them: the example config and its DeepSpeed JSON, pins, a launch script,
    the training script, a README, git. Returns the repository."""
    repo = folder / "proj"
    (repo / ".git").mkdir(parents=True)
    (repo / "configs").mkdir()
    for name in ("train.yaml", "ds_zero2.json"):
        shutil.copyfile(EXAMPLE / name, repo / "configs" / name)
    (repo / "pyproject.toml").write_text('[project]\nname = "proj"\nversion = "0"\ndependencies = ["transformers>=4.52,<5", '
                                         '"trl==0.18.0", "deepspeed>=0.16", "accelerate"]\n')
    (repo / "train.sh").write_text("#!/bin/bash\naccelerate launch --num_processes 8 train.py configs/train.yaml\n")
    (repo / "train.py").write_text("from trl import TrlParser, SFTConfig\nparser = TrlParser((SFTConfig,))\n")
    (repo / "README.md").write_text("# proj\n\n```sh\nbash train.sh\n```\n")
    return repo


def _many_configs(repo: Path, count: int) -> list[str]:
    """`count` configs in one repository: copies of the corpus configs (of the example where the corpus is absent),
    each in a folder of its own, as a repository with many recipes has them. Paths relative to `repo`."""
    sources = sorted(p for p in CORPUS.rglob("*") if p.suffix in CONFIG_SUFFIXES and p.is_file()) \
        if CORPUS.is_dir() else []
    sources = sources or [EXAMPLE / "train.yaml"]
    paths = []
    for i in range(count):
        source = sources[i % len(sources)]
        folder = repo / "recipes" / f"{i:03d}"
        folder.mkdir(parents=True)
        shutil.copyfile(source, folder / source.name)
        paths.append(str((folder / source.name).relative_to(repo)))
    return paths


def _alternate(commands: dict[str, list[str]], runs: int, cwd: Path,
               baseline: Path | None = None) -> dict[str, float]:
    """Median CPU seconds of each command, run by run in turn. A command named `baseline:...` runs with the baseline
    tree's trainlint."""
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, argv in commands.items():
            samples[name].append(_cpu(argv, cwd, baseline if name.startswith("baseline") else None))
    return {name: statistics.median(values) for name, values in samples.items()}


def _one_file(trainlint: str, yamllint: str, jsonschema: str, file: str, schema: Path, runs: int, cwd: Path,
              baseline: Path | None) -> dict[str, object]:
    commands = {"trainlint": [trainlint, "check", file], "yamllint": [yamllint, file],
                "check-jsonschema": [jsonschema, "--schemafile", str(schema), file]}
    if baseline is not None:
        commands["baseline"] = [trainlint, "check", file]
    cpu = _alternate(commands, runs, cwd, baseline)
    out: dict[str, object] = {"file": file, "cpu_seconds": {k: round(v, 4) for k, v in cpu.items()},
                              "over_yamllint": round(cpu["trainlint"] / cpu["yamllint"], 2),
                              "over_check_jsonschema": round(cpu["trainlint"] / cpu["check-jsonschema"], 2)}
    if baseline is not None:
        out["baseline_over_yamllint"] = round(cpu["baseline"] / cpu["yamllint"], 2)
    return out


def _per_file(cpu: dict[str, float], files: int, yaml_files: int) -> dict[str, object]:
    """Beside the budget: each tool's CPU per file beyond its one-file run (what a further file costs), trainlint's
    over its 300 files and yamllint's over their YAML ones (it reads no JSON), and their ratio."""
    trainlint = (cpu["300_files"] - cpu["one_file"]) / files
    yamllint = (cpu["yamllint_yaml_files"] - cpu["yamllint_one_file"]) / yaml_files
    return {"yaml_files": yaml_files,
            "yamllint_over_its_one_file": round(cpu["yamllint_yaml_files"] / cpu["yamllint_one_file"], 2),
            "per_further_file_ms": {"trainlint": round(1000 * trainlint, 3), "yamllint": round(1000 * yamllint, 3)},
            "per_further_file_over_yamllint": round(trainlint / yamllint, 2)}


def _lsp(edits: int) -> dict[str, object] | None:
    try:
        import pygls  # noqa: F401 - the server's library: without it there is no server to measure
    except ImportError:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "lsp.json"
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "lsp_latency" / "run.py"), "--edits", str(edits),
                        "--out", str(out)], stdout=subprocess.DEVNULL, env=_env(), check=True)
        result = json.loads(out.read_text())
    return {"push_median_ms": result["push"]["median_ms"], "pull_median_ms": result["pull"]["median_ms"],
            "check_text_median_ms": result["baseline_check_text"]["median_ms"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "latest.json")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="a source tree of an older trainlint to measure in the same alternation")
    parser.add_argument("--no-lsp", action="store_true", help="leave out the language server's latency")
    parser.add_argument("--lsp-edits", type=int, default=50)
    args = parser.parse_args()
    baseline = args.baseline.resolve() if args.baseline else None

    trainlint, yamllint, jsonschema = _tool("trainlint"), _tool("yamllint"), _tool("check-jsonschema")
    _compile_bytecode(*([baseline / "trainlint"] if baseline else []))
    result: dict[str, object] = {"python": sys.version.split()[0], "runs": args.runs, "budget": BUDGET}
    with tempfile.TemporaryDirectory() as tmp:
        repo = _small_repository(Path(tmp))
        for argv in ([trainlint, "check", "."], [yamllint, "."]):  # warm the file cache
            _cpu(argv, repo)
        result["one_file"] = _one_file(trainlint, yamllint, jsonschema, "configs/train.yaml",
                                       SCHEMAS / "hf-training-args.schema.json", args.runs, repo, baseline)
        result["deepspeed_json_alone"] = _one_file(trainlint, yamllint, jsonschema, "configs/ds_zero2.json",
                                                   SCHEMAS / "deepspeed.schema.json", args.runs, repo, baseline)
        many = _many_configs(repo, 300)
        many_yaml = [p for p in many if not p.endswith(".json")]  # the files yamllint lints
        commands = {"one_file": [trainlint, "check", "configs/train.yaml"], "300_files": [trainlint, "check", *many],
                    "yamllint_one_file": [yamllint, "configs/train.yaml"], "yamllint_yaml_files": [yamllint, *many_yaml]}
        if baseline is not None:
            commands["baseline_300_files"] = [trainlint, "check", *many]
        cpu = _alternate(commands, max(3, args.runs // 3), repo, baseline)
        result["300_files"] = {"from": "the corpus (../shared/corpus)" if CORPUS.is_dir() else "copies of the example",
                               "cpu_seconds": {k: round(v, 4) for k, v in cpu.items()},
                               "over_one_file": round(cpu["300_files"] / cpu["one_file"], 2),
                               **_per_file(cpu, len(many), len(many_yaml))}
    lsp = None if args.no_lsp else _lsp(args.lsp_edits)
    result["lsp"] = lsp
    one = result["one_file"]
    assert isinstance(one, dict)
    verdicts = {
        "one_file_over_yamllint": one["over_yamllint"] <= BUDGET["one_file_over_yamllint"],
        "one_file_over_check_jsonschema": one["over_check_jsonschema"] <= BUDGET["one_file_over_check_jsonschema"],
        "300_files_over_one_file":
            result["300_files"]["over_one_file"] <= BUDGET["300_files_over_one_file"],  # type: ignore[index]
    }
    if lsp is not None:
        verdicts["lsp_median_ms"] = max(lsp["push_median_ms"], lsp["pull_median_ms"]) <= BUDGET["lsp_median_ms"]
    result["met"] = verdicts
    result["measured_at"] = time.strftime("%Y-%m-%d %H:%M:%S")
    write_result(result, args.out)
    return 0 if all(verdicts.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
