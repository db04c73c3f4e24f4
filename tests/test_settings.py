"""Settings precedence: CLI > directive comment > [tool.trainlint] (per-file first) > config > defaults."""

from __future__ import annotations

import pytest

from trainlint import engine
from trainlint.plan import Origin
from trainlint.context.settings import Overrides, Settings, SettingsError, find_project_config, parse_project_table

CONFIG = "model_name_or_path: meta-llama/Llama-3.2-1B\noutput_dir: out\nper_device_train_batch_size: 4\n"


def plan_for(tmp_path, text=CONFIG, cli=None, name="train.yaml"):
    path = tmp_path / name
    path.write_text(text)
    find_project_config.cache_clear()
    settings = Settings(cli=Overrides(cli or {}, Origin("cli")))
    return engine.check_path(path, settings).plan


def test_config_then_defaults(tmp_path):
    plan = plan_for(tmp_path)
    assert plan.micro_batch.value == 4 and plan.micro_batch.origin.kind == "config"
    assert plan.num_gpus.value == 1 and plan.num_gpus.origin.kind == "default"
    assert plan.model.value == "meta-llama/Llama-3.2-1B"


def test_project_overrides_config(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.trainlint]\nnum-gpus = 8\ngpu = "H100-80GB"\nmicro-batch = 2\n')
    plan = plan_for(tmp_path)
    assert plan.num_gpus.value == 8 and plan.num_gpus.origin.kind == "project"
    assert plan.micro_batch.value == 2 and plan.gpu.value == "H100-80GB"


def test_per_file_section_beats_global(tmp_path):
    (tmp_path / "trainlint.toml").write_text('num-gpus = 8\n[per-file."big_*.yaml"]\nnum-gpus = 64\n')
    assert plan_for(tmp_path, name="big_run.yaml").num_gpus.value == 64
    assert plan_for(tmp_path, name="small.yaml").num_gpus.value == 8


def test_directive_beats_project_and_cli_beats_directive(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.trainlint]\nnum-gpus = 8\nseq-len = 1024\n")
    text = "# trainlint: num-gpus=16 seq-len=4096 gpu=A100-80GB\n" + CONFIG
    plan = plan_for(tmp_path, text)
    assert plan.num_gpus.value == 16 and plan.num_gpus.origin.kind == "directive"
    assert plan.seq_len.value == 4096 and plan.gpu.value == "A100-80GB"
    plan = plan_for(tmp_path, text, cli={"num_gpus": 4})
    assert plan.num_gpus.value == 4 and plan.num_gpus.origin.kind == "cli"
    assert plan.seq_len.value == 4096


def test_bad_directive_is_a_diagnostic(tmp_path):
    path = tmp_path / "train.yaml"
    path.write_text("# trainlint: num-gpus=many\n" + CONFIG)
    result = engine.check_path(path, Settings(use_project_config=False))
    (diag,) = [d for d in result.diagnostics if d.code == "TL010"]
    assert diag.span.start.line == 0 and "whole number" in diag.message


def test_bad_project_settings_are_reported_not_raised(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.trainlint]\nnum-gpus = -3\n")
    path = tmp_path / "train.yaml"
    path.write_text(CONFIG)
    find_project_config.cache_clear()
    result = engine.check_path(path)
    assert any(d.code == "TL010" and "at least 1" in d.message for d in result.diagnostics)


def test_project_select_ignore_and_per_file_ignores(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.trainlint]\nignore = ["TL004"]\n[tool.trainlint.per-file-ignores]\n"legacy/*" = ["TL003"]\n')
    (tmp_path / "legacy").mkdir()
    path = tmp_path / "legacy" / "old.yaml"
    path.write_text(CONFIG + "learning_rate: 2e-5\nsave_strategy: no\n")
    find_project_config.cache_clear()
    codes = {d.code for d in engine.check_path(path).diagnostics}
    assert "TL003" not in codes and "TL004" not in codes


def test_parse_project_table_rejects_unknown_keys():
    with pytest.raises(SettingsError, match="unknown key"):
        parse_project_table({"gpus": "A100"}, "pyproject.toml")
    cfg = parse_project_table({"select": "TL0,TL1", "fail-level": "error"}, "x.toml")
    assert cfg.selection.select == ("TL0", "TL1") and cfg.fail_level == "error"


def test_a_count_in_the_gpu_name_is_that_sources_num_gpus(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.trainlint]\ngpu = "8x H100"\n')
    plan = plan_for(tmp_path)
    assert plan.gpu.value == "H100" and plan.num_gpus.value == 8 and plan.num_gpus.origin.kind == "project"
    # A stronger source's own count wins; a num-gpus named beside the GPU in the same source wins over its count.
    plan = plan_for(tmp_path, "# trainlint: gpu=4xA100-80GB\n" + CONFIG)
    assert plan.gpu.value == "A100-80GB" and plan.num_gpus.value == 4 and plan.num_gpus.origin.kind == "directive"
    plan = plan_for(tmp_path, cli={"gpu": "2x H100", "num_gpus": 16})
    assert plan.num_gpus.value == 16
