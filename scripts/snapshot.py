"""Dump every finding, fix and estimate trainlint produces over the fixtures, tests/realworld, the shared
corpus and examples/, under several GPU targets, so that a refactor can be shown to change nothing.

    python scripts/snapshot.py OUT.json            # the dump
    python scripts/snapshot.py --compare A.json B.json [--ignore-messages] [--strip-prefix FOLDER ...]

Each root folder is checked from inside it (`trainlint check --output-format json .`, its `--diff`), and each
config file in it is estimated (`trainlint estimate --output-format json FILE`), once per GPU target. With
--ignore-messages the comparison leaves out the text fields a message rewrite changes (message, full, notes).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GPUS = ["A100-80GB", "H100-80GB", "A10G", "RTX4090", "V100-16GB"]
CONFIG_SUFFIXES = {".yaml", ".yml", ".json", ".toml", ".conf"}
MESSAGE_FIELDS = {"message", "detail"}


def roots() -> list[Path]:
    found = [REPO / "examples"]
    found += sorted(p for p in (REPO / "tests" / "fixtures").iterdir() if p.is_dir())
    found += sorted(p for p in (REPO / "tests" / "realworld").iterdir() if p.is_dir())
    corpus = REPO.parent / "shared" / "corpus"
    if corpus.is_dir():
        found.append(corpus)
    return found


def _run(args: list[str], cwd: Path) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-m", "trainlint", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1"}, timeout=300)
    out: object = done.stdout
    try:
        out = json.loads(done.stdout)
    except ValueError:
        pass
    return {"rc": done.returncode, "out": out}


def _jobs() -> list[tuple[str, list[str], Path]]:
    jobs = []
    for root in roots():
        name = str(root.relative_to(REPO.parent))
        for gpu in GPUS:
            jobs.append((f"check {name} {gpu}", ["check", "--output-format", "json", "--gpu", gpu, "."], root))
            jobs.append((f"diff {name} {gpu}", ["check", "--diff", "--unsafe-fixes", "--gpu", gpu, "."], root))
        files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in CONFIG_SUFFIXES)
        for path in files:
            rel = str(path.relative_to(root))
            for gpu in GPUS[:2]:
                jobs.append((f"estimate {name}/{rel} {gpu}",
                             ["estimate", "--output-format", "json", "--gpu", gpu, rel], root))
    return jobs


def dump(out: Path) -> None:
    jobs = _jobs()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda job: _run(job[1], job[2]), jobs))
    runs: dict[str, object] = {job[0]: result for job, result in zip(jobs, results)}
    runs["__root__"] = str(REPO.parent)
    out.write_text(json.dumps(runs, indent=1, sort_keys=True))
    print(f"{len(jobs)} runs -> {out}")


def _strip(value: object) -> object:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in MESSAGE_FIELDS}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _load(path: Path, prefixes: list[str]) -> dict[str, object]:
    """A dump with the folders it was made in (the checkout's parent: absolute paths in findings) made `<root>`."""
    text = path.read_text()
    data = json.loads(text)
    for prefix in sorted([*prefixes, str(data.get("__root__", ""))], key=len, reverse=True):
        if prefix:
            text = text.replace(json.dumps(prefix)[1:-1], "<root>")
    return json.loads(text)


def compare(a: Path, b: Path, ignore_messages: bool, prefixes: list[str]) -> int:
    left, right = _load(a, prefixes), _load(b, prefixes)
    differing = 0
    for key in sorted(set(left) | set(right)):
        x, y = left.get(key), right.get(key)
        if ignore_messages:
            x, y = _strip(x), _strip(y)
        if x != y:
            differing += 1
            if differing <= 20:
                print(f"differs: {key}")
    print(f"{differing} of {len(set(left) | set(right))} runs differ")
    return 1 if differing else 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--compare", action="store_true")
    parser.add_argument("--ignore-messages", action="store_true")
    parser.add_argument("--strip-prefix", action="append", default=[],
                        help="a folder a dump was made in, to compare dumps made in different places")
    args = parser.parse_args()
    if args.compare:
        return compare(args.paths[0], args.paths[1], args.ignore_messages, args.strip_prefix)
    dump(args.paths[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
