"""Real repositories in their layout: lint each slice under tests/realworld/ the way a user meets trainlint.

Each `tests/realworld/<owner>__<name>/` folder is a slice of a public training repository (configs with their
pins, launch scripts and README launch blocks, at the repository's own relative paths; see SOURCES.md). The test
runs the real CLI from inside the slice, as a user would from the repository root:

    cd tests/realworld/<repo> && trainlint check --output-format json .

and compares the findings with tests/realworld/expected.json, which records, per repository:

- `expected`: findings trainlint should report (a framework maintainer would confirm them for the versions the
  repository pins and the launch it documents), with path, line, code and severity;
- `false`: findings trainlint reports today but should not, each with its cause (`version`: the repository's pins
  are ignored; `dialect`: the parser that reads the file has the key; `launch`: the documented launch rules the
  problem out; `foreign-format`; `comment-key`) and the evidence;
- `missed`: real failures trainlint does not report yet;
- `unsure`: findings that may be reported or not.

Currently wrong cases are strict xfails naming their reason, so they flip (and fail) when trainlint is fixed: then
move the entry (a fixed `false` entry is deleted, a fixed `missed`/`xfail` entry loses its marker). A finding that
is in none of the lists fails `test_no_unknown_findings`: triage it (the test prints a ready entry) and add it with its
`why`, the evidence for the verdict.
Codes in `ignored_codes` (the memory-not-checked notice, which depends on the flags given) are not pinned.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent / "realworld"
DATA = json.loads((HERE / "expected.json").read_text(encoding="utf-8"))
IGNORED = set(DATA["ignored_codes"])
REPOS = DATA["repos"]
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


@lru_cache(maxsize=None)
def findings(repo: str) -> frozenset[tuple[str, str, int, str]]:
    """(path relative to the slice, code, 1-based line, severity) of every finding, linked files included.

    Each slice is linted as the repository it stands for: a copy with a `.git` folder of its own, so that the
    repository-wide look-ups (the configs that link a file, the scripts and pins around it) stay inside the slice
    instead of reaching the other slices of trainlint's own checkout (fw-ai/cookbook's config names
    deepspeed_configs/zero1_torch_compile.json, which the axolotl slice holds)."""
    base = _as_repository(repo)
    proc = subprocess.run([sys.executable, "-m", "trainlint", "check", "--output-format", "json", "."],
                          cwd=base, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    out = json.loads(proc.stdout)
    found = set()
    for entry in out["files"]:
        for diag in entry["diagnostics"]:
            if diag["code"] in IGNORED:
                continue
            path = Path(diag.get("path") or entry["path"])
            path = path if path.is_absolute() else base / path
            rel = os.path.relpath(os.path.normpath(path), base).replace(os.sep, "/")
            found.add((rel, diag["code"], diag["range"]["start"]["line"], diag["severity"]))
    return frozenset(found)


_COPIES = Path(tempfile.mkdtemp(prefix="trainlint-realworld-"))
atexit.register(shutil.rmtree, _COPIES, True)


def _as_repository(repo: str) -> Path:
    base = _COPIES / repo
    if not base.exists():
        shutil.copytree(HERE / repo, base, symlinks=True)
        (base / ".git").mkdir()
    return base


def _located(repo: str) -> set[tuple[str, str, int]]:
    return {(p, c, line) for p, c, line, _ in findings(repo)}


def _case_id(repo: str, entry: dict) -> str:
    return f"{repo}:{entry['path']}:{entry['line']}:{entry.get('code') or 'any'}"


def _cases(kind: str):
    for repo, lists in REPOS.items():
        for entry in lists[kind]:
            marks = []
            if kind == "false":
                marks.append(pytest.mark.xfail(strict=True, reason=f"{entry['cause']}: {entry['why']}"))
            elif kind == "missed":
                marks.append(pytest.mark.xfail(strict=True, reason=f"{entry['cause']}: {entry['why']}"))
            elif entry.get("xfail"):
                marks.append(pytest.mark.xfail(strict=True, reason=entry["xfail"]))
            yield pytest.param(repo, entry, id=_case_id(repo, entry), marks=marks)


def test_every_slice_is_pinned():
    slices = sorted(p.name for p in HERE.iterdir() if p.is_dir())
    assert slices == sorted(REPOS), "every tests/realworld/<repo> needs an entry in expected.json"


@pytest.mark.parametrize("repo", sorted(REPOS))
def test_no_unknown_findings(repo):
    lists = REPOS[repo]
    known = {(e["path"], e["code"], e["line"]) for kind in ("expected", "false", "unsure") for e in lists[kind]}
    unknown = sorted(f for f in findings(repo) if f[:3] not in known)
    entries = [json.dumps({"path": p, "code": c, "line": line, "severity": s, "why": "..."}) for p, c, line, s in unknown]
    assert not unknown, ("findings not triaged in tests/realworld/expected.json (add each under `expected` if a "
                         "maintainer would confirm it for the repository's pins and launch, else under `false` with a "
                         "`cause`):\n" + "\n".join(entries))


@pytest.mark.parametrize("repo,entry", list(_cases("expected")))
def test_expected_finding_is_reported(repo, entry):
    assert (entry["path"], entry["code"], entry["line"], entry["severity"]) in findings(repo), entry["why"]


@pytest.mark.parametrize("repo,entry", list(_cases("false")))
def test_false_finding_is_not_reported(repo, entry):
    assert (entry["path"], entry["code"], entry["line"]) not in _located(repo)


@pytest.mark.parametrize("repo,entry", list(_cases("missed")))
def test_missed_failure_is_reported(repo, entry):
    least = SEVERITY_RANK[entry["severity"]]
    hits = [f for f in findings(repo) if f[0] == entry["path"] and f[2] == entry["line"]
            and (entry.get("code") in (None, f[1])) and SEVERITY_RANK[f[3]] >= least]
    assert hits, entry["why"]
