"""End-to-end: the real `trainlint` command as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from shared_corpus import corpus_files, needs_corpus


def run(*args: str, cwd: Path | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trainlint", *args], capture_output=True, text=True, cwd=cwd,
                          input=stdin, timeout=120)


HF_BAD = "model_name_or_path: meta-llama/Llama-3.2-1B\noutput_dir: out\nlearning_rate: 2e-5\nsave_strategy: no\n"


def test_text_output_has_exact_positions_and_exit_1(tmp_path):
    cfg = tmp_path / "train.yaml"
    cfg.write_text(HF_BAD)
    proc = run("check", "--isolated", str(cfg))
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert any(line.startswith(f"{cfg}:3:16: TL003 warning [*]") for line in lines), proc.stdout
    assert any(line.startswith(f"{cfg}:4:16: TL004 error [*]") for line in lines), proc.stdout


def test_clean_file_exits_0(tmp_path):
    cfg = tmp_path / "ds.json"
    cfg.write_text('{"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}}')
    proc = run("check", "--isolated", "--select", "TL0", str(cfg))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_json_output_follows_the_contract(tmp_path):
    cfg = tmp_path / "train.yaml"
    cfg.write_text(HF_BAD)
    proc = run("check", "--isolated", "--output-format", "json", str(cfg))
    data = json.loads(proc.stdout)
    assert data["version"] == 1
    (entry,) = data["files"]
    assert entry["path"] == str(cfg) and entry["flavor"] == "huggingface"
    assert "estimate" in entry
    diag = next(d for d in entry["diagnostics"] if d["code"] == "TL003")
    assert diag["severity"] == "warning" and diag["path"] == str(cfg)
    assert diag["range"] == {"start": {"line": 3, "column": 16}, "end": {"line": 3, "column": 20}}
    (fix,) = diag["fixes"]
    assert fix["applicability"] == "safe"
    assert fix["edits"] == [{"path": str(cfg), "range": diag["range"], "new_text": "2.0e-5"}]


def test_fix_writes_and_diff_does_not(tmp_path):
    cfg = tmp_path / "train.yaml"
    cfg.write_text(HF_BAD)
    diff = run("check", "--isolated", "--diff", str(cfg))
    assert diff.returncode == 1 and "+learning_rate: 2.0e-5" in diff.stdout
    assert cfg.read_text() == HF_BAD
    fixed = run("check", "--isolated", "--fix", str(cfg))
    assert fixed.returncode == 0, fixed.stdout
    assert cfg.read_text() == HF_BAD.replace("2e-5", "2.0e-5").replace("save_strategy: no", 'save_strategy: "no"')
    again = run("check", "--isolated", "--diff", str(cfg))
    assert again.returncode == 0 and again.stdout == ""


def test_fix_keeps_crlf_and_bom(tmp_path):
    cfg = tmp_path / "train.yaml"
    cfg.write_bytes(("\ufeff" + HF_BAD.replace("\n", "\r\n")).encode())
    run("check", "--isolated", "--fix", str(cfg))
    data = cfg.read_bytes().decode()
    assert data.startswith("\ufeff") and "learning_rate: 2.0e-5\r\n" in data and "\n" not in data.replace("\r\n", "")


def test_many_files_one_broken_one_binary(tmp_path):
    good = tmp_path / "a.yaml"
    good.write_text(HF_BAD)
    broken = tmp_path / "b.json"
    broken.write_text('{"zero_optimization": {"stage": 2,,}}')
    binary = tmp_path / "c.json"
    binary.write_bytes(b"\x00\x01\x02binary")
    proc = run("check", "--isolated", str(good), str(broken), str(binary))
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert f"{broken}:1:35: TL001 error" in proc.stdout
    assert f"{binary}:1:1: TL001 error" in proc.stdout and "binary" in proc.stdout
    assert f"{good}:3:16: TL003" in proc.stdout


def test_directory_is_expanded(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "train.yaml").write_text(HF_BAD)
    (tmp_path / "notes.txt").write_text("ignored")
    proc = run("check", "--isolated", str(tmp_path))
    assert "train.yaml:3:16" in proc.stdout


def test_usage_errors_exit_2(tmp_path):
    assert run("check", str(tmp_path / "missing.yaml")).returncode == 2
    assert run("check").returncode == 2
    assert run("rule", "TL999").returncode == 2
    proc = run("check", "--gpu", "A1OO-80GB", str(tmp_path))
    assert proc.returncode == 2 and "A100-80GB" in proc.stderr


def test_select_ignore_and_fail_level(tmp_path):
    cfg = tmp_path / "train.yaml"
    cfg.write_text(HF_BAD)
    only_003 = run("check", "--isolated", "--select", "TL003", str(cfg))
    assert "TL003" in only_003.stdout and "TL004" not in only_003.stdout
    ignored = run("check", "--isolated", "--ignore", "TL003,TL004", str(cfg))
    assert "TL003" not in ignored.stdout and "TL004" not in ignored.stdout
    errors_only = run("check", "--isolated", "--select", "TL003", "--fail-level", "error", str(cfg))
    assert errors_only.returncode == 0
    assert run("check", "--isolated", "--exit-zero", str(cfg)).returncode == 0


def test_suppression_comment(tmp_path):
    cfg = tmp_path / "train.yaml"
    cfg.write_text(HF_BAD.replace("2e-5\n", "2e-5  # trainlint: disable=TL003\n"))
    proc = run("check", "--isolated", str(cfg))
    assert "TL003" not in proc.stdout and "TL009" not in proc.stdout


def test_rules_and_rule(tmp_path):
    listing = run("rules")
    assert listing.returncode == 0 and "TL003" in listing.stdout and "yaml-number-as-string" in listing.stdout
    doc = run("rule", "tl003")
    assert doc.returncode == 0 and "YAML 1.1" in doc.stdout
    assert doc.stdout.startswith("TL003 yaml-number-as-string (warning)\n")
    assert run("rule", "TL102").stdout.startswith("TL102 memory-not-checked (info, off by default: --select TL102 runs it)")


def test_catalog_commands():
    gpus = run("gpus")
    assert gpus.returncode == 0 and "H100" in gpus.stdout
    models = run("models")
    assert models.returncode == 0 and "Llama" in models.stdout


def test_stdin(tmp_path):
    proc = run("check", "--isolated", "-", stdin=HF_BAD)
    assert "<stdin>:3:16: TL003" in proc.stdout


def test_cli_does_not_import_the_language_server():
    code = ("import sys, trainlint.cli as c; c.main(['rules']); "
            "print([m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol', 'jsonschema', 'cattrs')])")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip().endswith("[]"), proc.stdout


@needs_corpus
def test_whole_corpus_without_traceback():
    files = [str(p) for p in corpus_files()]
    proc = run("check", "--output-format", "json", *files)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    data = json.loads(proc.stdout)
    assert len(data["files"]) == len(files)
    assert all(f["flavor"] != "unknown" for f in data["files"])
    assert not any(d["code"] == "TL000" for f in data["files"] for d in f["diagnostics"])
