"""Fixes that settle and do what they advertise, on every file the project has: the rule fixtures, the real
repositories of tests/realworld and the shared corpus, with safe fixes and with unsafe ones, under no declared
versions and under old and new pinned version sets.

- **Fixed point**: `compute_fixes` (what `--fix` runs) reaches a text on which no fix of the selection is offered in
  at most two rounds, and never gives up ("did not settle").
- **Advertised = applied**: the edits a lint advertises (the first applicable fix of each finding: what the JSON and
  SARIF output list and the language server offers as code actions, from the same diagnostics) applied once give
  what `--fix` writes, unless a finding says a further round follows (its edits overlap another fix's).
- A fixed file keeps its last line break.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from shared_corpus import AVAILABLE, CORPUS
from trainlint import engine
from trainlint.context.settings import ContextSettings, Settings, parse_versions
from trainlint.fixes.apply import compute_fixes
from trainlint.fixes.edits import apply_edits
from trainlint.fixes.settle import FURTHER_ROUND
from trainlint.plan import Origin

REPO = Path(__file__).resolve().parents[1]
SUFFIXES = (".yaml", ".yml", ".json", ".conf")
MAX_ROUNDS = 2
# Version sets the files may run under (releases trainlint knows, old and new), besides none declared.
VERSION_SETS = ("", "transformers=4.40.2,trl=0.12.2,deepspeed=0.14.4", "transformers=5.24.0,trl=1.16.0,deepspeed=0.18.3")


def _groups(root: Path) -> list[tuple[str, list[str], bool]]:
    """(name, files, whether the project around them is read) for each folder of files, copied under `root`."""
    out = []
    fixtures = root / "fixtures"
    shutil.copytree(REPO / "tests" / "fixtures", fixtures)
    for folder in sorted(p for p in fixtures.iterdir() if p.is_dir()):
        out.append((f"fixtures/{folder.name}", _configs(folder), False))
    realworld = root / "realworld"
    shutil.copytree(REPO / "tests" / "realworld", realworld)
    for folder in sorted(p for p in realworld.iterdir() if p.is_dir()):
        (folder / ".git").mkdir(exist_ok=True)  # each slice is its repository (as tests/test_realworld.py reads it)
        out.append((f"realworld/{folder.name}", _configs(folder), True))
    if AVAILABLE:
        corpus = root / "corpus"
        shutil.copytree(CORPUS, corpus)
        out.append(("corpus", sorted(str(p) for p in corpus.glob("*/*") if p.suffix in SUFFIXES), False))
    return out


def _configs(folder: Path) -> list[str]:
    return sorted(str(p) for p in folder.rglob("*") if p.is_file() and p.suffix in SUFFIXES and ".git" not in p.parts)


@pytest.fixture(scope="module")
def groups(tmp_path_factory):
    return _groups(tmp_path_factory.mktemp("settle"))


def _settings(project: bool, versions: str) -> Settings:
    context = ContextSettings(parse_versions(versions, "test"), "", "", Origin("cli")) if versions else None
    return Settings(use_project_config=project, context=context)


def _advertised_once(path: str, result, unsafe: bool) -> tuple[str | None, bool]:
    """The file's text after the advertised edits applied once, and whether a finding says a further round follows."""
    further = any(FURTHER_ROUND in d.detail for d in result.diagnostics)
    edits = []
    for d in result.diagnostics:
        fix = next((f for f in d.fixes if f.safe or unsafe), None)
        if fix is not None:
            edits.extend(e for e in fix.edits if os.path.realpath(e.path) == os.path.realpath(path))
    if not edits:
        return None, further
    text, _ = apply_edits(result.document.text, edits)
    return ("\ufeff" if result.document.bom else "") + text, further


CASES = [(False, v) for v in VERSION_SETS] + [(True, "")]


@pytest.mark.parametrize("unsafe,versions", CASES, ids=[f"{'unsafe' if u else 'safe'}-{v or 'unpinned'}"
                                                        for u, v in CASES])
def test_fixes_settle_and_do_what_they_advertise(groups, unsafe, versions):
    problems = []
    fixed_files = 0
    for name, files, project in groups:
        settings = _settings(project, versions)
        for path in files:
            rounds = [0]

            def lint(p, settings=settings, rounds=rounds):
                rounds[0] += 1
                return engine.check_path(p, settings)

            first = engine.check_path(path, settings)
            outcome = compute_fixes([path], lint, unsafe=unsafe)
            where = f"{name}: {Path(path).name}"
            if outcome.problems:
                problems.append(f"{where}: {outcome.problems}")
                continue
            if rounds[0] - 1 > MAX_ROUNDS:
                problems.append(f"{where}: {rounds[0] - 1} rounds to settle")
            fixed = outcome.fixed.get(path)
            if fixed is None:
                continue
            fixed_files += 1
            once, further = _advertised_once(path, first, unsafe)
            if not further and once != fixed:
                problems.append(f"{where}: the advertised edits applied once differ from what --fix writes")
            original = outcome.original[path]
            if original.endswith(("\n", "\r")) and not fixed.endswith(("\n", "\r")):
                problems.append(f"{where}: the fixed file lost its last line break")
    assert fixed_files > 0, "some files have fixes"
    assert problems == []
