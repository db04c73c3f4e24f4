"""Settings mistakes are never silent: the real CLI on throw-away repositories with a pyproject.toml."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CONFIG = ("model_name_or_path: meta-llama/Llama-3.1-8B\noutput_dir: out\nper_device_train_batch_size: 1\n"
          "bf16: true\nsave_strategy: no\n")


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trainlint", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "configs").mkdir()
    for name in ("a.yaml", "b.yaml", "c.yaml"):
        (tmp_path / "configs" / name).write_text(CONFIG)
    return tmp_path


@pytest.mark.parametrize("toml, where, says", [
    ('[tool.trainlint]\nnum-gpus = 8\ngpu = "A100-80GX"\n', "pyproject.toml:3:1", "did you mean A100-80GB"),
    ('[tool.trainlint]\ngpu = "A100-80GB"\n\n[tool.trainlint.per-file."configs/b.yaml"]\nmodel = "meta-llama/Lama-3.1-8B"\n',
     "pyproject.toml:5:1", "did you mean Llama-3.1-8B"),
    ('[tool.trainlint]\nselect = ["TL100", "TL999"]\n', "pyproject.toml:2:1", "unknown rule code TL999"),
    ('[tool.trainlint]\nnum_gpu = 8\n', "pyproject.toml:2:1", "did you mean 'num-gpus'"),
    ('[tool.trainlint]\nfail-level = "warn"\n', "pyproject.toml:2:1", "fail-level must be one of"),
])
def test_an_unusable_project_setting_fails_the_run_once_with_its_position(repo, toml, where, says):
    (repo / "pyproject.toml").write_text(toml)
    proc = run("check", "configs", cwd=repo)
    assert proc.returncode == 2
    assert proc.stderr.count("TL010") == 1, proc.stderr  # once per run, not once per file
    assert f"{where}: TL010 error" in proc.stderr and says in proc.stderr, proc.stderr
    assert proc.stdout == ""  # nothing was checked


def test_a_trainlint_toml_takes_the_same_keys_without_the_prefix(repo):
    (repo / "trainlint.toml").write_text('gpu = "H100-8OGB"\n')
    proc = run("check", "configs", cwd=repo)
    assert proc.returncode == 2 and "trainlint.toml:1:1: TL010 error gpu: unknown GPU" in proc.stderr
    (repo / "trainlint.toml").write_text('gpu = "H100-80GB"\nnum-gpus = 8\n')
    proc = run("check", "--output-format", "json", "configs/a.yaml", cwd=repo)
    assert proc.returncode in (0, 1) and '"count": 8' in proc.stdout


def test_fail_level_from_the_project_decides_the_exit_code(repo):
    # save_strategy: no is read by YAML as false: a finding of some severity in every file.
    proc = run("check", "--isolated", "--output-format", "json", "configs/a.yaml", cwd=repo)
    import json

    severities = {d["severity"] for f in json.loads(proc.stdout)["files"] for d in f["diagnostics"]}
    assert "error" in severities or "warning" in severities
    (repo / "pyproject.toml").write_text('[tool.trainlint]\nfail-level = "error"\nignore = ["TL004", "TL1"]\n')
    proc = run("check", "--output-format", "json", "configs/a.yaml", cwd=repo)
    found = {d["severity"] for f in json.loads(proc.stdout)["files"] for d in f["diagnostics"]}
    assert proc.returncode == (1 if "error" in found else 0), (found, proc.stdout)
    # the flag is stronger than the project
    proc = run("check", "--fail-level", "info", "configs/a.yaml", cwd=repo)
    assert proc.returncode == (1 if found else 0)


@pytest.mark.parametrize("flag", ["--select", "--ignore"])
def test_unknown_rule_codes_on_the_command_line_are_a_usage_error(repo, flag):
    proc = run("check", flag, "TL9999", "configs", cwd=repo)
    assert proc.returncode == 2 and "unknown rule code TL9999" in proc.stderr
    assert run("check", flag, "TL1", "configs", cwd=repo).returncode in (0, 1)  # a prefix of real codes is fine


def test_a_gpu_typo_in_a_directive_is_a_finding_on_its_line(repo):
    (repo / "configs" / "a.yaml").write_text("# trainlint: gpu=A100-80GX\n" + CONFIG)
    proc = run("check", "configs/a.yaml", cwd=repo)
    assert proc.returncode == 1
    assert "configs/a.yaml:1:1: TL010 error" in proc.stdout and "A100-80GB" in proc.stdout
