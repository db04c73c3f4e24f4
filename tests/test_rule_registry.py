"""The rule registry: each line names its module's code and flavors, every rule module is registered, and a check
imports only what it needs (the rules of the file's flavor; no heavy module a plain check does not use)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from trainlint import rules

RULES_DIR = Path(rules.__file__).parent
ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("module,code,flavors", rules.RULES, ids=[code for _, code, _ in rules.RULES])
def test_registry_line_matches_its_module(module, code, flavors):
    rule = importlib.import_module(f"trainlint.rules.{module}").RULE
    assert rule.code == code
    assert rule.flavors == tuple(flavors.split())


def test_every_rule_module_is_registered_once():
    on_disk = {p.stem for p in RULES_DIR.glob("tl[0-9]*.py")}
    names = [module for module, _, _ in rules.RULES]
    assert sorted(names) == sorted(on_disk)
    codes = [code for _, code, _ in rules.RULES]
    assert len(set(codes)) == len(codes)


def test_registry_knows_codes_without_importing():
    assert "TL100" in rules.REGISTRY and "TL999" not in rules.REGISTRY
    assert list(rules.codes()) == sorted(rules.REGISTRY)
    assert rules.get("tl100").RULE.code == "TL100"
    assert rules.get("TL999") is None
    assert {m.RULE.code for m in rules.all_rules()} == set(rules.codes())
    hf = {m.RULE.code for m in rules.all_rules("huggingface")}
    assert "TL100" in hf and "TL630" not in hf  # every-flavor rules and HF rules, no axolotl-only rule


_PROBE = """
import json, sys
sys.argv = ["trainlint", "check", "--output-format", "json", sys.argv[1]]
from trainlint.cli import main
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def _modules_after_check(path: Path, cwd: Path) -> set[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAINLINT")}
    proc = subprocess.run([sys.executable, "-c", _PROBE, str(path)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)
    return set(json.loads(proc.stderr.strip().splitlines()[-1]))


def test_plain_check_imports_only_what_it_needs(tmp_path):
    config = tmp_path / "train.yaml"
    config.write_text("model_name_or_path: gpt2\nper_device_train_batch_size: 2\nlearning_rate: 1.0e-5\n"
                      "bf16: true\n")
    loaded = _modules_after_check(config, tmp_path)
    assert "trainlint.rules.tl630_axolotl_qlora_without_4bit" not in loaded  # not an axolotl file
    assert "trainlint.rules.tl621_lightning_unknown_strategy" not in loaded  # not a Lightning file
    assert "trainlint.rules.tl640_torchtune_optimizer_in_bwd_conflict" not in loaded  # not a torchtune file
    assert "trainlint.rules.tl100_out_of_memory" in loaded
    # The heavy libraries used off the common path only: jsonschema (trainlint.catalog.schema_check validates
    # against the own schemas) and the language server.
    for heavy in ("jsonschema", "pygls", "lsprotocol"):
        assert heavy not in loaded, heavy


def _reads_deepspeed_configs_alone(source: str) -> bool:
    """A check made of guards (`if ...: return`), assignments and one loop over `ds.ds_configs(ctx)`."""
    import ast

    check = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == "check")
    loops = 0
    for statement in check.body:
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            continue  # a docstring
        if isinstance(statement, ast.If) and not statement.orelse and len(statement.body) == 1 and \
                isinstance(statement.body[0], ast.Return) and statement.body[0].value is None:
            continue
        if isinstance(statement, (ast.Assign, ast.AnnAssign)):
            continue
        if isinstance(statement, ast.For) and not statement.orelse and \
                ast.unparse(statement.iter) in ("ds.ds_configs(ctx)", "ds_configs(ctx)"):
            loops += 1
            continue
        return False
    return loops == 1


@pytest.mark.parametrize("code", sorted(rules.DEEPSPEED_CONFIG_RULES))
def test_a_deepspeed_config_rule_reads_the_deepspeed_configs_alone(code):
    """Such a rule is not even imported for a file without DeepSpeed configs: its check must find nothing then."""
    source = (RULES_DIR / f"{rules._MODULE_OF[code]}.py").read_text(encoding="utf-8")
    assert _reads_deepspeed_configs_alone(source)


def test_a_file_without_deepspeed_configs_imports_no_deepspeed_config_rule(tmp_path):
    config = tmp_path / "train.yaml"
    config.write_text("model_name_or_path: gpt2\nper_device_train_batch_size: 2\nbf16: true\n")
    loaded = _modules_after_check(config, tmp_path)
    assert "trainlint.rules.tl500_deepspeed_unknown_section_key" not in loaded
    config.write_text("model_name_or_path: gpt2\nper_device_train_batch_size: 2\nbf16: true\n"
                      "deepspeed: {zero_optimization: {stage: 2}}\n")
    assert "trainlint.rules.tl500_deepspeed_unknown_section_key" in _modules_after_check(config, tmp_path)


def _every_config() -> list[Path]:
    suffixes = (".yaml", ".yml", ".json")
    files = [p for p in (ROOT / "tests" / "fixtures").rglob("*") if p.suffix in suffixes]
    files += [p for p in (ROOT / "examples").rglob("*") if p.suffix in suffixes]
    from shared_corpus import AVAILABLE, CORPUS

    if AVAILABLE:
        files += [p for p in CORPUS.rglob("*") if p.suffix in suffixes]
    return sorted(files)


def test_the_rules_left_unimported_find_nothing_on_any_test_file(monkeypatch):
    """Skipping a DeepSpeed-config rule for a file without DeepSpeed configs, or a keyed rule for a file without its
    keys, changes no finding: every fixture, example and corpus config is checked both ways."""
    from trainlint import engine
    from trainlint.context.settings import Settings

    def findings(path: Path):
        result = engine.check_path(str(path), Settings(), display_path=str(path.relative_to(path.parents[2])))
        return [(d.code, d.span.start.line, d.span.start.column, d.message) for d in result.diagnostics]

    files = _every_config()
    assert len(files) > 300
    gated = {path: findings(path) for path in files}
    monkeypatch.setattr(rules, "KEYED_RULES", {})
    monkeypatch.setattr(rules, "DEEPSPEED_CONFIG_RULES", frozenset())
    for path in files:
        assert findings(path) == gated[path], path
