"""Linked files both ways: checking only a DeepSpeed JSON finds the configs in the repository that link it
(an HF `deepspeed:` key, an accelerate config's `deepspeed_config_file`) and reports their findings about
the pair; `--fix` / `--diff` write only the files being checked. Throw-away repositories, the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from trainlint import engine
from trainlint.context import links

PYPROJECT = '[project]\nname = "demo"\n\n[tool.trainlint]\ngpu = "A100-80GB"\nnum-gpus = 8\n'
TRAIN = """\
model_name_or_path: meta-llama/Llama-3.1-8B
per_device_train_batch_size: 4
gradient_accumulation_steps: 2
learning_rate: 2.0e-5
bf16: true
gradient_checkpointing: true
deepspeed: ds/zero2.json
"""
DS_GOOD = """\
{
  "train_micro_batch_size_per_gpu": "auto",
  "gradient_accumulation_steps": "auto",
  "bf16": {"enabled": "auto"},
  "zero_optimization": {"stage": 2}
}
"""
# What breaks the agreement: a micro-batch that is not the HF one (TL600 in HF's own words).
DS_BAD = DS_GOOD.replace('"train_micro_batch_size_per_gpu": "auto"', '"train_micro_batch_size_per_gpu": 8')
ACCEL = """\
compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
deepspeed_config:
  deepspeed_config_file: ../ds/zero2.json
num_processes: 8
"""


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trainlint", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def make_repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir()  # a git root is where the walk stops (no git needed for that)
    for name, text in {"pyproject.toml": PYPROJECT, ".gitignore": "outputs/\n", **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(autouse=True)
def _fresh_index():
    links.clear_cache()
    yield
    links.clear_cache()


def test_checking_only_the_json_reports_the_linking_config_findings(tmp_path):
    repo = make_repo(tmp_path / "repo", {"configs/train.yaml": TRAIN, "ds/zero2.json": DS_BAD})
    proc = run("check", "--select", "TL6,TL0", "ds/zero2.json", cwd=repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    line = next(line for line in proc.stdout.splitlines() if "TL600" in line)
    assert line.startswith("ds/zero2.json:2:37: TL600 error"), proc.stdout
    assert "configs/train.yaml" in line  # the linking config is named

    data = json.loads(run("check", "--select", "TL6", "--output-format", "json", "ds/zero2.json", cwd=repo).stdout)
    (entry,) = data["files"]
    assert entry["path"] == "ds/zero2.json"
    (d,) = [d for d in entry["diagnostics"] if d["code"] == "TL600"]
    assert d["path"] == "ds/zero2.json" and d["fixes"][0]["edits"][0]["path"] == "ds/zero2.json"


def test_the_json_that_agrees_passes(tmp_path):
    repo = make_repo(tmp_path / "repo", {"configs/train.yaml": TRAIN, "ds/zero2.json": DS_GOOD})
    proc = run("check", "--select", "TL6,TL0", "ds/zero2.json", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_an_accelerate_config_naming_the_json_is_found_and_its_pair_findings_reported(tmp_path):
    accel = ACCEL.replace("num_processes: 8", "num_processes: 8\nmixed_precision: fp16")
    repo = make_repo(tmp_path / "repo", {"configs/accel.yaml": accel,
                                         "ds/zero2.json": DS_GOOD.replace('"enabled": "auto"', '"enabled": true')})
    proc = run("check", "--select", "TL3,TL6", "ds/zero2.json", cwd=repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    # located in the accelerate config (it names the pair: fp16 there, bf16 in the JSON)
    assert any(line.startswith("configs/accel.yaml:6:18: TL301 error") for line in proc.stdout.splitlines()), \
        proc.stdout


def test_relaxed_json_is_reported_because_a_linking_config_reads_it_with_json_load(tmp_path):
    relaxed = '{\n  "train_micro_batch_size_per_gpu": "auto",\n  "zero_optimization": {"stage": 2},\n}\n'
    repo = make_repo(tmp_path / "repo", {"configs/accel.yaml": ACCEL, "ds/zero2.json": relaxed})
    proc = run("check", "--select", "TL006", "ds/zero2.json", cwd=repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "ds/zero2.json:3:36: TL006" in proc.stdout and "configs/accel.yaml" in proc.stdout, proc.stdout


def test_ignored_vendored_and_outside_configs_are_not_linking(tmp_path):
    outside = tmp_path / "elsewhere.yaml"  # above the git root: not part of the repository
    outside.write_text(TRAIN.replace("ds/zero2.json", "repo/ds/zero2.json"))
    repo = make_repo(tmp_path / "repo", {"ds/zero2.json": DS_BAD, "outputs/run1/train.yaml": TRAIN,
                                         "third_party/lib/train.yaml": TRAIN.replace("ds/", "../../ds/"),
                                         "configs/notes.yaml": "# see ds/zero2.json\nlr: 1\n"})
    assert run("check", "--select", "TL6", "ds/zero2.json", cwd=repo).returncode == 0
    index = links.index_for(repo / "ds" / "zero2.json")
    assert index.root == str(repo.resolve()) and not index.truncated
    assert all("outputs" not in p and "third_party" not in p for ps in index.by_name.values() for p in ps)


def test_fix_writes_only_the_named_files(tmp_path):
    repo = make_repo(tmp_path / "repo", {"configs/train.yaml": TRAIN, "ds/zero2.json": DS_BAD})
    # Checking the config: the fix is in the JSON, which was not named: shown, not applied.
    proc = run("check", "--select", "TL6", "--fix", "configs/train.yaml", cwd=repo)
    assert (repo / "ds/zero2.json").read_text() == DS_BAD
    assert proc.returncode == 1
    assert "ds/zero2.json:2:37: TL600 fix not applied" in proc.stderr and "not among the files" in proc.stderr
    diff = run("check", "--select", "TL6", "--diff", "configs/train.yaml", cwd=repo)
    assert diff.stdout == "" and "TL600 fix not applied" in diff.stderr
    # Checking the JSON: its fix is applied (the finding came from the config linking it).
    proc = run("check", "--select", "TL6", "--fix", "ds/zero2.json", cwd=repo)
    assert (repo / "ds/zero2.json").read_text() == DS_GOOD, proc.stdout + proc.stderr
    assert (repo / "configs/train.yaml").read_text() == TRAIN
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_fix_in_the_linking_config_is_not_applied_when_only_the_json_is_named(tmp_path):
    accel = ACCEL.replace("num_processes: 8", "num_processes: 8\nmixed_precision: fp16")
    ds = DS_GOOD.replace('"enabled": "auto"', '"enabled": true')
    repo = make_repo(tmp_path / "repo", {"configs/accel.yaml": accel, "ds/zero2.json": ds})
    # TL301's fix edits the JSON: applied, although the finding sits in the accelerate config
    proc = run("check", "--select", "TL301", "--diff", "ds/zero2.json", cwd=repo)
    assert '+  "bf16": {"enabled": "auto"},' in proc.stdout, proc.stdout + proc.stderr
    assert (repo / "ds/zero2.json").read_text() == ds and (repo / "configs/accel.yaml").read_text() == accel


def test_named_linking_configs_are_not_linted_twice(tmp_path):
    repo = make_repo(tmp_path / "repo", {"configs/train.yaml": TRAIN, "ds/zero2.json": DS_BAD})
    proc = run("check", "--select", "TL600", "--output-format", "json", ".", cwd=repo)
    found = [(Path(d["path"]).name, d["code"]) for f in json.loads(proc.stdout)["files"] for d in f["diagnostics"]]
    assert found.count(("zero2.json", "TL600")) == 1, found


def test_stdin_json_is_read_by_the_linking_configs(tmp_path):
    repo = make_repo(tmp_path / "repo", {"configs/train.yaml": TRAIN, "ds/zero2.json": DS_GOOD})
    proc = subprocess.run([sys.executable, "-m", "trainlint", "check", "--select", "TL600", "--stdin-filename",
                           "ds/zero2.json", "-"], input=DS_BAD, capture_output=True, text=True, cwd=repo, timeout=120)
    assert proc.returncode == 1 and "TL600" in proc.stdout, proc.stdout + proc.stderr


def test_index_bounds(tmp_path, monkeypatch):
    files = {f"configs/c{i:03}.yaml": TRAIN for i in range(12)}
    repo = make_repo(tmp_path / "repo", {**files, "ds/zero2.json": DS_BAD})
    monkeypatch.setattr(links, "MAX_FILES", 5)
    index = links.build(repo)
    assert index.truncated and index.files == 6
    monkeypatch.setattr(links, "MAX_FILES", 5000)
    index = links.build(repo)
    assert not index.truncated and len(index.candidates(repo / "ds" / "zero2.json")) == 12


def test_engine_linking_results_confirm_the_link(tmp_path, monkeypatch):
    # a config that mentions the name but does not link it (a comment) is a candidate, not a linking config
    repo = make_repo(tmp_path / "repo", {"configs/train.yaml": TRAIN,
                                         "configs/other.yaml": "# deepspeed: ds/zero2.json\nlearning_rate: 1.0e-5\n",
                                         "ds/zero2.json": DS_BAD})
    monkeypatch.chdir(repo)
    assert sorted(Path(p).name for p in links.candidates("ds/zero2.json")) == ["other.yaml", "train.yaml"]
    found = engine.linking_results("ds/zero2.json")
    assert [r.path for r in found] == ["configs/train.yaml"]


def test_several_linking_configs_report_once_and_name_each_other(tmp_path):
    repo = make_repo(tmp_path / "repo", {"configs/a.yaml": TRAIN, "configs/b.yaml": TRAIN.replace(": 4", ": 2", 1),
                                         "configs/c.yaml": TRAIN.replace(": 4", ": 8", 1), "ds/zero2.json": DS_BAD})
    proc = run("check", "--select", "TL600", "--output-format", "json", "ds/zero2.json", cwd=repo)
    (found,) = [d for f in json.loads(proc.stdout)["files"] for d in f["diagnostics"] if d["code"] == "TL600"]
    said = found["message"] + " " + found["detail"]
    assert "configs/a.yaml" in found["message"] and "Also reported from configs/b.yaml" in found["detail"]
    assert "configs/c.yaml" not in said, said  # c agrees


def test_a_bound_reached_is_said_on_stderr(tmp_path):
    repo = make_repo(tmp_path / "repo", {f"configs/c{i}.yaml": TRAIN for i in range(3)})
    (repo / "ds").mkdir(exist_ok=True)
    (repo / "ds" / "zero2.json").write_text(DS_GOOD)
    code = ("import sys; from trainlint.context import links; links.MAX_FILES = 2; from trainlint.cli import main; "
            "sys.exit(main(['check', '--select', 'TL6', 'ds/zero2.json']))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=repo, timeout=120)
    assert "index of linking configs stopped early (more than 2 config files" in proc.stderr, proc.stderr


def test_project_without_git_or_settings_is_bounded_by_its_pyproject(tmp_path):
    root = tmp_path / "proj"
    (root / "configs").mkdir(parents=True)
    (root / "ds").mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (root / "configs" / "train.yaml").write_text(TRAIN)
    (root / "ds" / "zero2.json").write_text(DS_BAD)
    assert links.root_of(root / "ds" / "zero2.json") == root.resolve()
    proc = run("check", "--select", "TL600", "ds/zero2.json", cwd=root)
    assert proc.returncode == 1 and "configs/train.yaml" in proc.stdout, proc.stdout + proc.stderr


LIGHTNING = """\
trainer:
  accelerator: gpu
  devices: 8
  precision: bf16-mixed
  strategy:
    class_path: lightning.pytorch.strategies.DeepSpeedStrategy
    init_args:
      config: ds/zero2.json
model:
  class_path: my.Model
"""
AXOLOTL = """\
base_model: meta-llama/Llama-3.1-8B
micro_batch_size: 2
gradient_accumulation_steps: 4
sequence_len: 2048
datasets:
  - path: data.jsonl
    type: alpaca
deepspeed: ds/zero2.json
"""


def test_a_lightning_config_linking_the_json_through_deepspeed_strategy(tmp_path):
    ds = '{\n  "gradient_accumulation_steps": 4,\n  "zero_optimization": {"stage": 2}\n}\n'
    repo = make_repo(tmp_path / "repo", {"configs/fit.yaml": LIGHTNING, "ds/zero2.json": ds})
    proc = run("check", "--select", "TL604", "ds/zero2.json", cwd=repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (line,) = [line for line in proc.stdout.splitlines() if "TL604" in line]
    assert line.startswith("ds/zero2.json:2:3: TL604 error") and "configs/fit.yaml" in line, line


def test_an_axolotl_config_linking_the_json(tmp_path):
    repo = make_repo(tmp_path / "repo", {"configs/lora.yml": AXOLOTL, "ds/zero2.json": DS_GOOD})
    monkey = tmp_path / "repo"
    found = subprocess.run([sys.executable, "-c", "from trainlint import engine; "
                            "print([r.path for r in engine.linking_results('ds/zero2.json')])"],
                           capture_output=True, text=True, cwd=monkey, timeout=120)
    assert found.stdout.strip() == "['configs/lora.yml']", found.stdout + found.stderr


def test_the_json_gets_no_name_a_model_note_with_its_linking_configs_or_alone(tmp_path):
    # a DeepSpeed JSON never names a model (the configs linking it or the launch do): TL102, off by default, is not
    # reported on it even when selected
    repo = make_repo(tmp_path / "repo", {"configs/train.yaml": TRAIN, "ds/zero2.json": DS_GOOD})
    assert "TL102" not in run("check", "--select", "TL102", "ds/zero2.json", cwd=repo).stdout
    alone = make_repo(tmp_path / "alone", {"ds/zero2.json": DS_GOOD})
    assert "TL102" not in run("check", "ds/zero2.json", cwd=alone).stdout
    selected = run("check", "--select", "TL102", "ds/zero2.json", cwd=alone)
    assert selected.returncode == 0 and "TL102" not in selected.stdout, selected.stdout + selected.stderr


def test_a_launch_script_naming_the_accelerate_config_links_the_config_it_runs(tmp_path):
    """`accelerate launch --config_file configs/accel.yaml train.py --config configs/train.yaml`: checking only
    the accelerate config lints configs/train.yaml, launched with it (the launch context's index of commands)."""
    accel = ACCEL.replace("  deepspeed_config_file: ../ds/zero2.json\n", "  zero_stage: 2\n")
    repo = make_repo(tmp_path / "repo", {
        "configs/accel.yaml": accel, "configs/train.yaml": TRAIN.replace("deepspeed: ds/zero2.json\n", ""),
        "scripts/train.sh": "#!/bin/sh\naccelerate launch --config_file configs/accel.yaml train.py "
                            "--config configs/train.yaml\n"})
    code = ("from trainlint import engine; "
            "print([r.path for r in engine.linking_results('configs/accel.yaml')])")
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=repo, timeout=120)
    assert found.stdout.strip() == "['configs/train.yaml']", found.stdout + found.stderr
    assert run("check", "configs/accel.yaml", cwd=repo).returncode in (0, 1)  # runs; findings depend on the rules


def test_a_config_naming_several_checked_files_is_linted_once(tmp_path, monkeypatch, capsys):
    """A config whose text names two DeepSpeed files that are checked (without it) is a candidate for both: linted
    once, its findings reported for the one it links."""
    from trainlint import cli

    train = TRAIN + "# for ZeRO-3: ds/zero3.json\n"
    repo = make_repo(tmp_path / "repo", {"configs/train.yaml": train, "ds/zero2.json": DS_BAD,
                                         "ds/zero3.json": DS_GOOD.replace('"stage": 2', '"stage": 3')})
    monkeypatch.chdir(repo)
    linted: list[str] = []
    check_path = engine.check_path

    def counting(path, *args, **kwargs):
        linted.append(Path(path).name)
        return check_path(path, *args, **kwargs)

    monkeypatch.setattr(engine, "check_path", counting)
    code = cli.main(["check", "--select", "TL600", "--output-format", "json", "ds/zero2.json", "ds/zero3.json"])
    files = {f["path"]: [d["code"] for d in f["diagnostics"]] for f in json.loads(capsys.readouterr().out)["files"]}
    assert code == 1 and files == {"ds/zero2.json": ["TL600"], "ds/zero3.json": []}, files
    assert linted.count("train.yaml") == 1, linted
