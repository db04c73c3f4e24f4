"""Every rule's fixtures (tests/fixtures/<CODE>/, see its README): findings at the expected positions
on `bad*` files, none on `good*` files, and `--fix` producing exactly the `fixed*` text."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from trainlint import engine
from trainlint.cli import _cli_overrides, build_parser
from trainlint.fixes.apply import compute_fixes
from trainlint.rules import REGISTRY
from trainlint.context.settings import Settings

FIXTURES = Path(__file__).parent / "fixtures"


def _settings(folder: Path) -> Settings:
    args_file = folder / "args"
    extra = args_file.read_text().split() if args_file.exists() else []
    args = build_parser().parse_args(["check", "x", *extra])
    # `--select` in args: a rule off by default (TL102) is checked on its fixtures as when a user selects it
    return Settings(cli=_cli_overrides(args), selection=engine.selection_from(args.select, args.ignore),
                    use_project_config=False)


def _cases(prefix: str):
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        for path in sorted(folder.iterdir()):
            if path.name.startswith(prefix) and not path.name.endswith(".expected"):
                yield pytest.param(folder.name, path.name, id=f"{folder.name}/{path.name}")


def _copy(folder: Path, tmp_path: Path) -> Path:
    target = tmp_path / folder.name
    shutil.copytree(folder, target)
    return target


def _codes_at(result, code: str) -> list[str]:
    return sorted(f"{d.span.start.line + 1}:{d.span.start.column + 1}" for d in result.diagnostics
                  if d.code == code and d.path == result.path)


def test_every_rule_has_fixtures():
    missing = [code for code in REGISTRY if not (FIXTURES / code).is_dir()]
    assert not missing, f"rules without fixtures: {missing}"


@pytest.mark.parametrize("code,name", list(_cases("bad")))
def test_bad_fixture_reports_expected_positions(code, name, tmp_path):
    folder = _copy(FIXTURES / code, tmp_path)
    expected = sorted((folder / f"{name}.expected").read_text().split())
    result = engine.check_path(folder / name, _settings(folder), display_path=str(folder / name))
    assert not result.internal_error, result.diagnostics
    assert _codes_at(result, code) == expected, [d.message for d in result.diagnostics]


@pytest.mark.parametrize("code,name", list(_cases("good")))
def test_good_fixture_is_clean_for_its_rule(code, name, tmp_path):
    folder = _copy(FIXTURES / code, tmp_path)
    result = engine.check_path(folder / name, _settings(folder))
    assert not result.internal_error, result.diagnostics
    assert _codes_at(result, code) == [], [d.message for d in result.diagnostics if d.code == code]


@pytest.mark.parametrize("code,name", list(_cases("fixed")))
def test_fix_produces_fixed_fixture(code, name, tmp_path):
    folder = _copy(FIXTURES / code, tmp_path)
    unsafe = name.startswith("fixed-unsafe")
    suffix = name[len("fixed-unsafe"):] if unsafe else name[len("fixed"):]
    bad = folder / f"bad{suffix}"
    settings = _settings(folder)
    outcome = compute_fixes([str(bad)], lambda p: engine.check_path(p, settings), unsafe=unsafe)
    assert outcome.problems == []
    assert outcome.fixed.get(str(bad)) == (folder / name).read_text()
    # What is left of this rule's findings has no fix of the kind that was applied.
    after = engine.check_text(outcome.fixed[str(bad)], str(bad), settings)
    leftover = [d for d in after.diagnostics if d.code == code and any(f.safe or unsafe for f in d.fixes)]
    assert leftover == []
