"""Where the start-up cost is, in instructions: each tool's process and trainlint's parts, counted by callgrind.

CPU seconds on a shared machine move by +-15% from one run to the next (benchmarks/startup/README.md); the number of
instructions a process executes does not, so this script counts them (`valgrind --tool=callgrind`, the "Collected"
total) for the same cases as run.py, once each:

- the one-file check (the example config in the small repository run.py builds), yamllint and check-jsonschema on
  the same file, and their ratios (instructions are not seconds: a ratio here is close to, not the same as, the CPU
  ratio run.py's budget is judged by);
- trainlint's one-file check split into the interpreter's own start (`python -c pass`), the standard-library and
  third-party modules trainlint imports (imported alone, in a process of their own), trainlint's own modules
  (`import trainlint.cli` minus the two before) and the check itself (the rest, with the rule modules it imports);
- with `--many`, 300 configs of one repository in one run against one file there (slow: callgrind runs
  the ~6 billion instructions some 50x slower than the CPU does).

    python benchmarks/startup/instructions.py [--many] [--out benchmarks/startup/results/instructions.json]

Needs valgrind and `pip install yamllint check-jsonschema`. Reports only; judges no budget.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run  # noqa: E402 - the same repository and tools as the CPU benchmark

COLLECTED = re.compile(r"Collected\s*:\s*([\d,]+)")

# The modules trainlint's command line has imported once it is loaded, as a child process reports them.
_IMPORTED = ("import sys, trainlint.cli; "
             "print(' '.join(m for m in sys.modules if not m.startswith(('trainlint', '_')) and m != '__main__'))")


def instructions(argv: list[str], cwd: Path) -> int:
    """The instructions the process (and any child it waits for) executes, counted by callgrind."""
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv], cwd=cwd,
                          env=run._env(), capture_output=True, text=True)
    found = COLLECTED.search(proc.stderr)
    if not found:
        sys.exit(f"callgrind counted nothing for {argv[:3]}: {proc.stderr[-400:]}")
    return int(found.group(1).replace(",", ""))


def _millions(n: int) -> float:
    return round(n / 1e6, 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--many", action="store_true", help="also 300 configs in one run (slow)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "instructions.json")
    args = parser.parse_args()
    if not shutil.which("valgrind"):
        sys.exit("valgrind is not installed")
    trainlint, yamllint, jsonschema = run._tool("trainlint"), run._tool("yamllint"), run._tool("check-jsonschema")
    run._compile_bytecode()
    python = sys.executable
    result: dict[str, object] = {"python": sys.version.split()[0]}
    with tempfile.TemporaryDirectory() as tmp:
        repo = run._small_repository(Path(tmp))
        file = "configs/train.yaml"
        tools = {"trainlint": instructions([trainlint, "check", file], repo),
                 "yamllint": instructions([yamllint, file], repo),
                 "check-jsonschema": instructions(
                     [jsonschema, "--schemafile", str(run.SCHEMAS / "hf-training-args.schema.json"), file], repo)}
        modules = subprocess.run([python, "-c", _IMPORTED], capture_output=True, text=True, check=True,
                                 env=run._env()).stdout.split()
        interpreter = instructions([python, "-c", "pass"], repo)
        # in the order they were first imported: a submodule after its package
        libraries = instructions([python, "-c", "import " + ", ".join(modules)], repo)
        loaded = instructions([python, "-c", "import trainlint.cli"], repo)
        parts = {"interpreter start": interpreter, "standard library and third-party imports": libraries - interpreter,
                 "trainlint's own modules": loaded - libraries, "the check (and the rule modules it imports)":
                     tools["trainlint"] - loaded}
        result["one_file"] = {
            "file": file, "instructions_millions": {k: _millions(v) for k, v in tools.items()},
            "over_yamllint": round(tools["trainlint"] / tools["yamllint"], 2),
            "over_check_jsonschema": round(tools["trainlint"] / tools["check-jsonschema"], 2),
            "trainlint_parts_millions": {k: _millions(v) for k, v in parts.items()},
            "third_party_and_stdlib_modules": modules}
        if args.many:
            many = run._many_configs(repo, 300)
            one = instructions([trainlint, "check", file], repo)
            all_files = instructions([trainlint, "check", *many], repo)
            result["300_files"] = {"instructions_millions": {"one_file": _millions(one), "300_files": _millions(all_files)},
                                   "over_one_file": round(all_files / one, 2),
                                   "per_file_millions": _millions((all_files - one) // 299)}
    result["measured_at"] = time.strftime("%Y-%m-%d %H:%M:%S")
    run.write_result(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
