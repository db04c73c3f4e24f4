"""File discovery like ruff's, through the real CLI on a throw-away git repository."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CONFIG = "model_name_or_path: gpt2\noutput_dir: out\nper_device_train_batch_size: 2\nsave_strategy: no\n"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trainlint", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def checked(proc: subprocess.CompletedProcess) -> set[str]:
    return {f["path"] for f in json.loads(proc.stdout)["files"]}


@pytest.fixture
def repo(tmp_path):
    (tmp_path / ".git" / "info").mkdir(parents=True)  # a repository as git lays it out; git itself is not needed
    files = {
        "configs/sft.yaml": CONFIG,
        "configs/broken.yaml": "learning_rate: [1,\n",
        "legacy/old.yaml": CONFIG,
        "out/generated.yaml": CONFIG,
        "local/mine.yaml": CONFIG,
        "sub/.gitignore": "scratch.yaml\n",
        "sub/scratch.yaml": CONFIG,
        "sub/kept.yaml": CONFIG,
        ".github/workflows/ci.yml": "name: ci\non: [push]\njobs:\n  t:\n    runs-on: ubuntu-latest\n",
        "docker-compose.yml": "services:\n  web:\n    image: nginx\n",
        "tsconfig.json": '{"compilerOptions": {"strict": true}}',
        "garbage.yaml": "services: [x\n",
        "ds/ds_config_gpt_TEMPLATE.json": '{"train_batch_size": CONFIG_BATCH_SIZE, "zero_optimization": {"stage": ZERO_STAGE}}',
        ".venv/lib/site.yaml": CONFIG,
        ".gitignore": "out/\n",
        ".git/info/exclude": "local/\n",
        "pyproject.toml": '[tool.trainlint]\nextend-exclude = ["legacy/"]\n',
    }
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_walking_a_folder_skips_ignored_files_and_files_that_are_not_training_configs(repo):
    proc = run("check", "--output-format", "json", ".", cwd=repo)
    assert checked(proc) == {"configs/sft.yaml", "configs/broken.yaml", "sub/kept.yaml"}, proc.stdout
    diagnostics = [d for f in json.loads(proc.stdout)["files"] for d in f["diagnostics"]]
    assert not [d for d in diagnostics if d["code"] == "TL005"]
    assert any(d["code"] == "TL001" for d in diagnostics)  # a broken training config is still reported


def test_a_template_is_skipped_when_walking_and_named_as_one_when_checked_by_name(repo):
    # Megatron-DeepSpeed's ds_config_*_TEMPLATE.json: bare placeholders a launch script fills in with sed
    proc = run("check", "--output-format", "json", "ds", cwd=repo)
    assert proc.returncode == 0 and checked(proc) == set(), proc.stdout  # the walk finds no config in ds/
    proc = run("check", "--output-format", "json", "ds/ds_config_gpt_TEMPLATE.json", cwd=repo)
    found = [(d["code"], d["severity"]) for f in json.loads(proc.stdout)["files"] for d in f["diagnostics"]]
    assert found == [("TL005", "info")], proc.stdout


def test_a_lightning_cli_config_that_does_not_parse_is_reported_when_walking(tmp_path):
    # terratorch's examples/confs/object_detection_vhr10_vit.yaml: a key indented one level too deep, so
    # `terratorch fit --config` stops in jsonargparse's YAML loading; walking the folder must not drop it.
    (tmp_path / ".git").mkdir()
    (tmp_path / "confs").mkdir()
    (tmp_path / "confs" / "vit.yaml").write_text(
        "seed_everything: 0\ntrainer:\n  accelerator: auto\n  max_epochs: 2\nmodel:\n  init_args:\n"
        "    backbone_pretrained: true\n          backbone_img_size: 896\n")
    (tmp_path / "compose.yaml").write_text("services: [x\n")
    proc = run("check", "--output-format", "json", ".", cwd=tmp_path)
    assert checked(proc) == {"confs/vit.yaml"}, proc.stdout
    codes = [(d["code"], d["range"]["start"]["line"]) for f in json.loads(proc.stdout)["files"] for d in f["diagnostics"]]
    assert ("TL001", 8) in codes


def test_a_file_named_explicitly_is_checked_even_if_excluded_and_gets_tl005_if_foreign(repo):
    proc = run("check", "--output-format", "json", "legacy/old.yaml", "docker-compose.yml", cwd=repo)
    assert checked(proc) == {"legacy/old.yaml", "docker-compose.yml"}
    codes = {d["code"] for f in json.loads(proc.stdout)["files"] for d in f["diagnostics"]}
    assert "TL005" in codes


def test_force_exclude_applies_the_excludes_to_named_files_too(repo):
    proc = run("check", "--force-exclude", "--output-format", "json", "legacy/old.yaml", "out/generated.yaml",
               "configs/sft.yaml", cwd=repo)
    assert checked(proc) == {"configs/sft.yaml"}
    proc = run("check", "--force-exclude", "legacy/old.yaml", cwd=repo)
    assert proc.returncode == 0


def test_exclude_flags(repo):
    proc = run("check", "--output-format", "json", "--extend-exclude", "sub/,configs/broken.yaml", ".", cwd=repo)
    assert checked(proc) == {"configs/sft.yaml"}
    # --exclude replaces the default list (and the settings' extend-exclude still applies)
    proc = run("check", "--output-format", "json", "--exclude", "configs/", ".", cwd=repo)
    assert "configs/sft.yaml" not in checked(proc) and ".venv/lib/site.yaml" in checked(proc)


def test_gitignore_can_be_ignored_by_the_settings(repo):
    (repo / "pyproject.toml").write_text('[tool.trainlint]\nrespect-gitignore = false\n')
    proc = run("check", "--output-format", "json", ".", cwd=repo)
    assert {"out/generated.yaml", "local/mine.yaml", "sub/scratch.yaml", "legacy/old.yaml"} <= checked(proc)


def test_a_folder_without_configs_is_a_warning_and_an_empty_report_not_a_tool_failure(tmp_path):
    # a repository whose settings all live in shell scripts (princeton-nlp/LESS): CI must not fail on it
    (tmp_path / "train.sh").write_text("python train.py --learning_rate 2e-5\n")
    proc = run("check", "--output-format", "json", ".", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["files"] == []
    assert "no config files found" in proc.stderr
