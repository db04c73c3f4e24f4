"""`trainlint estimate` through the real command: the table's columns line up, the bars say what they are
scaled to, flags alone default to mixed precision as runs use it, and a run that does not fit gets the
planner's suggestions (text and JSON)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trainlint", "estimate", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


FLAGS = ("--model", "meta-llama/Llama-3.1-8B", "--gpu", "A100-80GB", "--seq-len", "4096", "--micro-batch", "4")


def test_table_columns_line_up_and_bars_say_their_scale():
    proc = run(*FLAGS)
    assert proc.returncode == 1, proc.stderr  # does not fit
    lines = proc.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("per GPU"))
    end = next(i for i, line in enumerate(lines) if line.strip().startswith("GPU capacity"))
    header = lines[start]
    gib_end = header.index("GiB") + 3
    rows = lines[start + 1:end + 1]
    assert any("= peak allocated" in r for r in rows) and any("= total" in r for r in rows)
    for row in rows:
        number = re.search(r"(\d+\.\d\d)(?=\s|$)", row)
        assert number and number.end() == gib_end, f"misaligned: {row!r}"
    bars = [r[gib_end + 2:] for r in rows if "█" in r]
    assert bars and all(b.startswith("█") or b.startswith("▏") or b[0] in "▎▍▌▋▊▉" for b in bars)
    scale = next(line for line in lines if line.strip().startswith("bars:"))
    total = float(re.search(r"= total\s+(\d+\.\d\d)", proc.stdout).group(1))
    assert f"= {total:.2f} GiB (the total)" in scale and "capacity" in scale


def test_bars_scaled_to_capacity_when_it_fits():
    proc = run("--model", "meta-llama/Llama-3.2-1B", "--gpu", "H100", "--seq-len", "1024", "--micro-batch", "1")
    assert proc.returncode == 0, proc.stderr
    assert "(the GPU's capacity)" in proc.stdout
    assert "changes that fit" not in proc.stdout


def test_flags_alone_default_to_bf16_mixed_where_the_gpu_has_it():
    proc = run(*FLAGS)
    assert "bf16 autocast over fp32 weights" in proc.stdout
    assert "precision: bf16 mixed precision (autocast over fp32 weights) assumed" in proc.stdout


def test_flags_alone_default_to_fp16_mixed_without_bf16():
    proc = run("--model", "meta-llama/Llama-3.2-1B", "--gpu", "V100", "--seq-len", "1024", "--output-format", "json")
    data = json.loads(proc.stdout)
    assert any(a.startswith("precision: fp16 mixed precision") and "no bf16" in a for a in data["assumptions"])


def test_explicit_precision_wins():
    proc = run(*FLAGS, "--precision", "fp32")
    assert "; fp32;" in proc.stdout and "mixed precision" not in proc.stdout


def test_suggestions_when_it_does_not_fit_text_and_json():
    proc = run(*FLAGS)
    assert "changes that fit (cheapest first, each re-estimated):" in proc.stdout
    first = proc.stdout.split("changes that fit")[1].splitlines()[1]
    assert "GiB of 79 GiB" in first and "[--" in first  # the flags that ask for it
    flags = first.rsplit("[", 1)[1].rstrip("]").split()
    again = run(*FLAGS, *flags, "--output-format", "json")
    assert json.loads(again.stdout)["fits"] is True, first
    data = json.loads(run(*FLAGS, "--output-format", "json").stdout)
    assert data["fits"] is False and data["suggestions"]
    top = data["suggestions"][0]
    assert top["total_bytes"] <= 0.9 * data["target"]["memory_bytes"]
    assert top["flags"] and top["applicability"] in ("safe", "unsafe") and "title" in top


def test_advice_when_nothing_fits():
    proc = run("--model", "meta-llama/Llama-3.1-70B", "--gpu", "RTX-4090", "--num-gpus", "2", "--seq-len", "4096",
               "--output-format", "json")
    data = json.loads(proc.stdout)
    assert data["suggestions"] == []
    counts = [int(n) for n in re.findall(r"at least (\d+) x", data["advice"] or "")]
    assert data["advice"] and all(n >= 2 for n in counts)


def test_config_file_suggestions_are_edits_it_can_take(tmp_path):
    (tmp_path / "train.yaml").write_text("model_name_or_path: meta-llama/Llama-3.2-1B\noutput_dir: out\n"
                                         "per_device_train_batch_size: 16\nmax_length: 4096\nbf16: true\n"
                                         "gradient_checkpointing: false\n")
    proc = run("train.yaml", "--gpu", "A100-40GB", "--isolated", cwd=tmp_path)
    assert proc.returncode == 1
    assert "changes that fit" in proc.stdout and "micro-batch 16 ->" in proc.stdout
    assert "[--" not in proc.stdout


def test_the_core_report_is_what_the_command_prints():
    """trainlint.estimating makes the estimate; the command only renders it."""
    from trainlint import estimating
    from trainlint.cli import _cli_overrides, build_parser

    args = build_parser("estimate").parse_args(["estimate", *FLAGS, "--zero", "3", "--num-gpus", "2"])
    report = estimating.estimate(estimating.flags_plan(_cli_overrides(args)))
    assert report.document is None and report.fits is False and report.offers
    printed = json.loads(run(*FLAGS, "--zero", "3", "--num-gpus", "2", "--output-format", "json").stdout)
    assert report.to_json() == printed


def test_what_if_values_read_the_flags_words():
    from trainlint import estimating
    from trainlint.plan import AMP_FP16, Peft

    values = estimating.what_if_values(precision="fp16-mixed", fsdp="no_shard", offload_optimizer="none",
                                       offload_params="cpu", qlora=True, lora_targets="q_proj,v_proj", zero=0)
    assert values == {"precision": AMP_FP16, "fsdp": None, "offload_optimizer": None, "offload_params": "cpu",
                      "peft": Peft("lora", 16, ["q_proj", "v_proj"], 4), "zero_stage": 0}
    assert estimating.what_if_values() == {}


def test_no_estimate_is_an_estimate_error(tmp_path):
    from trainlint import estimating
    from trainlint.context.settings import Overrides

    (tmp_path / "ds.json").write_text('{"train_micro_batch_size_per_gpu": 1}\n')
    plan, document, linked = estimating.file_plan(str(tmp_path / "ds.json"), Overrides(), use_project_config=False)
    with pytest.raises(estimating.EstimateError, match="does not name a model"):
        estimating.estimate(plan, document, linked)
    (tmp_path / "notes.yaml").write_text("a: [1, 2\n")
    with pytest.raises(estimating.EstimateError, match="notes.yaml"):
        estimating.file_plan(str(tmp_path / "notes.yaml"), Overrides(), use_project_config=False)
