"""docs/rules/ is generated from the rule modules and must not drift from them."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from trainlint.rules import all_rules

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gen_rule_docs.py"


def load_script():
    spec = importlib.util.spec_from_file_location("gen_rule_docs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_rules_match_the_rules():
    gen = load_script()
    problems = gen.drift(gen.generate())
    assert not problems, ("docs/rules/ is out of date with trainlint/rules/:\n  " + "\n  ".join(problems)
                          + f"\nRegenerate it with `{gen.COMMAND}` (from the repository root) and commit the result.")


def test_every_rule_has_a_page_with_its_identity_and_docstring():
    gen = load_script()
    pages = gen.generate()
    assert set(pages) == {f"{m.RULE.code}.md" for m in all_rules()} | {"README.md"}
    for module in all_rules():
        rule = module.RULE
        page = pages[f"{rule.code}.md"]
        assert page.splitlines()[2] == f"# {rule.code} {rule.name}"
        assert f"| Severity | {rule.severity.value} |" in page
        assert f"**Summary**: {rule.summary}" in page
        body = module.__doc__.strip().splitlines()[-1]
        assert body in page, f"{rule.code}: docstring missing from its page"
        assert f"[{rule.code}]({rule.code}.md)" in pages["README.md"]
        assert rule.url.endswith(f"docs/rules/{rule.code}.md")


def test_generator_writes_what_check_accepts(tmp_path):
    gen = load_script()
    pages = gen.generate()
    (tmp_path / "TL999.md").write_text("stale")
    gen.write(pages, tmp_path)
    assert gen.drift(pages, tmp_path) == []
    assert not (tmp_path / "TL999.md").exists()
    (tmp_path / "TL001.md").write_text("edited by hand")
    assert gen.drift(pages, tmp_path) == ["out of date: docs/rules/TL001.md"]


def test_check_mode_exit_code():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
