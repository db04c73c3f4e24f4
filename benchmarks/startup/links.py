"""What finding the configs that link a file costs: `trainlint check ds/zero2.json` in a repository of 300 configs
against checking the same file alone, measured in the same run.

Three runs of the same command on the same JSON, alternating so that machine noise hits them alike:
- alone: the JSON in a folder of its own (nothing to walk, nothing links it);
- repo, 0 linking: in a git repository of 300 configs (copies of ../shared/corpus, else generated) none of which
  links it: the cost of building the link index (the walk, reading each config once);
- repo, 3 linking: the same repository where 3 HF configs link it with `deepspeed:`, so each is linted too.
CPU time (user + system) of each child from `os.wait4`, median over `--runs`.

    python benchmarks/startup/links.py [--runs 9] [--out benchmarks/startup/results/links.json]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from run import CORPUS, HERE, ROOT, _compile_bytecode, _cpu, _tool, write_result

DS = """{
  "train_micro_batch_size_per_gpu": 8,
  "gradient_accumulation_steps": "auto",
  "bf16": {"enabled": "auto"},
  "zero_optimization": {"stage": 2, "overlap_comm": true}
}
"""
HF = """model_name_or_path: meta-llama/Llama-3.1-8B
per_device_train_batch_size: {batch}
gradient_accumulation_steps: 2
learning_rate: 2.0e-5
bf16: true
gradient_checkpointing: true
deepspeed: {link}
"""


def _repo(root: Path, configs: int, linking: int) -> Path:
    (root / ".git").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "bench"\n\n[tool.trainlint]\ngpu = "A100-80GB"\nnum-gpus = 8\n')
    (root / ".gitignore").write_text("outputs/\n")
    (root / "ds").mkdir()
    (root / "ds" / "zero2.json").write_text(DS)
    sources = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml", ".json") and p.is_file()
                     and "issues" not in p.parts)
    for i in range(configs - linking):
        folder = root / "configs" / f"exp{i // 20:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        if sources:
            src = sources[i % len(sources)]
            shutil.copyfile(src, folder / f"{i:03d}_{src.name}")
        else:
            (folder / f"{i:03d}.yaml").write_text(HF.format(batch=4, link=f"../../ds/other{i}.json"))
    for i in range(linking):
        (root / "configs" / f"sft_{i}.yaml").write_text(HF.format(batch=4 + 4 * i, link="ds/zero2.json"))
    return root


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "links.json")
    args = parser.parse_args()
    trainlint = _tool("trainlint")
    _compile_bytecode()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        alone = base / "alone"
        (alone / "ds").mkdir(parents=True)
        (alone / "ds" / "zero2.json").write_text(DS)
        quiet = _repo(base / "quiet", 300, 0)
        linked = _repo(base / "linked", 300, 3)
        cases = {"alone": alone, "repo_300_configs_0_linking": quiet, "repo_300_configs_3_linking": linked}
        argv = {name: [trainlint, "check", "--exit-zero", str(root / "ds" / "zero2.json")] for name, root in cases.items()}
        for command in argv.values():  # warm the file cache
            _cpu(command)
        runs: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, command in argv.items():
                runs[name].append(_cpu(command))
    median = {name: statistics.median(values) for name, values in runs.items()}
    result = {
        "runs": args.runs,
        "python": sys.version.split()[0],
        "cpu_seconds": {name: round(value, 4) for name, value in median.items()},
        "ratio_repo_0_linking_over_alone": round(median["repo_300_configs_0_linking"] / median["alone"], 2),
        "ratio_repo_3_linking_over_alone": round(median["repo_300_configs_3_linking"] / median["alone"], 2),
        "measured_at": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    write_result(result, args.out)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    sys.exit(main())
