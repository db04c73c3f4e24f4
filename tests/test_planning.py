"""The planning answers (`trainlint.planning`, `trainlint estimate --gpus / --max`): every answer, applied to the run
(as flags, and written into a config file), is re-estimated and fits, while the next value does not (one GPU count
fewer with any layout the framework offers; one more sample or token)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from trainlint import cli, estimating, planning
from trainlint.catalog.gpus import resolve_gpu
from trainlint.context.settings import Overrides
from trainlint.memory.estimate import estimate_total
from trainlint.plan import Origin, Setting, TrainingPlan

GIB = 2**30
FULL_8B = {"model": "meta-llama/Llama-3.1-8B", "seq_len": 2048, "micro_batch": 1, "grad_ckpt": "full"}


def flags_report(**values) -> estimating.EstimateReport:
    return estimating.estimate(estimating.flags_plan(Overrides(values, Origin("cli"))))


def flags_estimate(flags: str, **base) -> estimating.EstimateReport:
    """The estimate of `base` with the `trainlint estimate` flags `flags` on top, as the command line reads them."""
    words = ["estimate"]
    for name, value in base.items():
        words += [f"--{name.replace('_', '-')}", str(value)]
    args = cli.build_parser("estimate").parse_args(words + shlex.split(flags))
    return estimating.estimate(estimating.flags_plan(cli._cli_overrides(args)))


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trainlint", "estimate", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


# ---- the fit table -------------------------------------------------------------------------------

GPUS = ("L4", "RTX-4090", "A100-40GB", "A100-80GB", "H100", "H200", "V100-16GB")


def test_each_row_fits_as_its_flags_say_and_one_count_fewer_does_not():
    report = flags_report(**FULL_8B)
    rows = planning.fit_table(report.plan, report.architecture, [resolve_gpu(g) for g in GPUS])
    assert {r.gpu.name for r in rows} == {resolve_gpu(g).name for g in GPUS}
    fitting = [r for r in rows if r.fits]
    assert len(fitting) >= 4 and any(r.num_gpus > 1 for r in fitting) and any(r.num_gpus == 1 for r in fitting)
    for row in fitting:
        again = flags_estimate(row.flags, **FULL_8B)  # the row applied as the flags it prints
        assert again.fits is True and again.estimate.total == row.total, row
        assert again.estimate.gpu.name == row.gpu.name and again.estimate.gpu_count == row.num_gpus
        sizes = planning.counts(report.plan)
        fewer = sizes[sizes.index(row.num_gpus) - 1] if row.num_gpus > 1 else None
        if fewer is None:
            continue
        moved = planning.on_gpu(report.plan, row.gpu, fewer)
        for layout in planning.layouts(moved, fewer):  # no layout fits on one count fewer
            total, _ = estimate_total(planning.with_layout(moved, layout), report.architecture)
            assert total > row.gpu.memory_bytes, (row.gpu.name, fewer, layout.key)
        # and no cheaper layout fits on the row's own count
        here = planning.on_gpu(report.plan, row.gpu, row.num_gpus)
        for layout in planning.layouts(here, row.num_gpus):
            cost = planning.sharding_cost(planning._cost_ctx(here, report.architecture, row.gpu), layout.values())[0]
            if cost < row.cost:
                total, _ = estimate_total(planning.with_layout(here, layout), report.architecture)
                assert total > row.gpu.memory_bytes, (row.gpu.name, layout.key)


def test_rows_are_cheapest_first_and_a_card_that_never_fits_says_what_remains():
    report = flags_report(**FULL_8B)
    rows = planning.fit_table(report.plan, report.architecture, [resolve_gpu(g) for g in GPUS], max_gpus=64)
    fitting = [r for r in rows if r.fits]
    assert rows[:len(fitting)] == fitting  # the rows that fit come first
    keys = [(r.num_gpus, r.gpu.memory_bytes) for r in fitting]
    assert keys == sorted(keys)
    # micro-batch 64 of 8k tokens: the activations do not shrink with the GPU count
    big = flags_report(model="meta-llama/Llama-3.1-8B", seq_len=8192, micro_batch=64, grad_ckpt="none")
    (row,) = planning.fit_table(big.plan, big.architecture, [resolve_gpu("H100")], max_gpus=64)
    assert not row.fits and not row.memory_fits and row.num_gpus == 64
    assert row.note.startswith("does not fit on up to 64 x H100-80GB") and "activations" in row.note


def test_flags_alone_take_the_precision_each_card_runs_and_a_config_keeps_its_own(tmp_path):
    report = flags_report(**FULL_8B)
    (row,) = planning.fit_table(report.plan, report.architecture, [resolve_gpu("V100-32GB")])
    assert row.fits  # fp16 mixed precision on a card without bf16, as the flags-only estimate assumes
    config = tmp_path / "train.yaml"
    config.write_text("# trainlint: gpu=A100-80GB\nmodel_name_or_path: meta-llama/Llama-3.1-8B\nbf16: true\n"
                      "per_device_train_batch_size: 1\nmax_length: 2048\ngradient_checkpointing: true\n"
                      "output_dir: out\n")
    plan, doc, linked = estimating.file_plan(str(config), Overrides({}, Origin("cli")), use_project_config=False)
    report = estimating.estimate(plan, doc, linked)
    (row,) = planning.fit_table(report.plan, report.architecture, [resolve_gpu("V100-32GB")])
    assert not row.fits and row.memory_fits and "no bf16" in row.note


def test_an_fsdp_framework_gets_fsdp_layouts_and_shards_whenever_it_has_more_than_one_gpu():
    plan = TrainingPlan(flavor="torchtune", path="x.yaml")
    assert [layout.key for layout in planning.layouts(plan, 1)] == ["none", "fsdp_full_shard+offload"]
    assert [layout.key for layout in planning.layouts(plan, 8)] == ["fsdp_full_shard", "fsdp_full_shard+offload"]
    litgpt = TrainingPlan(flavor="litgpt", path="x.yaml")
    assert [layout.key for layout in planning.layouts(litgpt, 4)] == ["fsdp_full_shard"]  # cpu_offload=False
    hf = TrainingPlan(flavor="huggingface", path="x.yaml")
    assert [layout.key for layout in planning.layouts(hf, 1)] == [
        "none", "zero2+offload_optimizer", "zero3+offload_optimizer", "zero3+offload_optimizer+offload_params"]
    fsdp = hf.with_(fsdp=Setting("full_shard", Origin("config")))
    assert "fsdp_shard_grad_op" in [layout.key for layout in planning.layouts(fsdp, 2)]
    tp = hf.with_(tensor_parallel=Setting(8, Origin("config")))
    assert planning.counts(tp, 64) == [8, 16, 24, 32, 40, 48, 56, 64]


@pytest.mark.parametrize("size,linear", [(1, 1), (5, 4), (20, 4), (131, 4), (7, 0)])
def test_the_count_search_finds_the_first_count_that_fits(size, linear):
    for first in range(size):
        asked: list[int] = []

        def ok(i: int, first=first) -> bool:
            asked.append(i)
            return i >= first

        assert planning._first(ok, size, linear) == first
        assert len(asked) <= linear + 2 * size.bit_length() + 2
    assert planning._first(lambda i: False, size, linear) is None


# ---- the largest value that fits -----------------------------------------------------------------

@pytest.mark.parametrize("knob,field,start", [("micro-batch", "micro_batch", 1), ("seq-len", "seq_len", 1024)])
def test_the_largest_value_fits_and_the_next_does_not(knob, field, start):
    values = {**FULL_8B, "gpu": "A100-80GB", "num_gpus": 8, "zero_stage": 3, field: start}
    report = flags_report(**values)
    answers = planning.answer(report, None, (knob,))
    found = answers.largest[knob]
    assert found.value is not None and found.value > start and found.next_total is not None
    fits = flags_report(**{**values, field: found.value})
    beyond = flags_report(**{**values, field: found.value + 1})
    assert fits.fits is True and fits.estimate.total == found.total
    assert beyond.fits is False and beyond.estimate.total == found.next_total
    assert answers.to_json()["max"] == {field: found.value}


def test_the_sequence_length_stops_at_the_models_positions_and_nothing_fitting_says_so():
    small = flags_report(model="HuggingFaceTB/SmolLM2-135M", gpu="H200", micro_batch=1, grad_ckpt="full")
    found = planning.answer(small, None, ("seq-len",)).largest["seq-len"]
    assert found.value == found.bound == small.architecture.max_position_embeddings and found.next_total is None
    huge = flags_report(model="meta-llama/Llama-3.1-70B", gpu="RTX-4090", micro_batch=1, seq_len=2048)
    found = planning.answer(huge, None, ("micro-batch",)).largest["micro-batch"]
    assert found.value is None and found.next_total > resolve_gpu("RTX-4090").memory_bytes


def test_max_needs_a_target_gpu_and_a_known_knob():
    report = flags_report(**FULL_8B)
    with pytest.raises(planning.PlanningError, match="--gpu"):
        planning.answer(report, None, ("micro-batch",))
    with pytest.raises(planning.PlanningError, match="unknown knob"):
        planning.answer(flags_report(**FULL_8B, gpu="H100"), None, ("batch",))
    with pytest.raises(planning.PlanningError, match="unknown GPU"):
        planning.catalog_gpus("H100,H9000")
    assert len(planning.catalog_gpus("all")) == len(planning.gpu_catalog.catalog())
    assert [g.name for g in planning.catalog_gpus("h100, H100-80GB ,a100")] == ["H100-80GB", "A100-80GB"]


# ---- a config file: each answer written into it and checked again ---------------------------------

DS = {"train_micro_batch_size_per_gpu": "auto", "bf16": {"enabled": "auto"}, "zero_optimization": {"stage": 2}}
CONFIG = """\
# trainlint: gpu={gpu} num-gpus={count}
model_name_or_path: meta-llama/Llama-3.1-8B
output_dir: out
per_device_train_batch_size: {micro}
gradient_accumulation_steps: 4
max_length: {seq}
bf16: true
gradient_checkpointing: true
deepspeed: ds.json
"""


def write_config(folder: Path, gpu="A100-80GB", count=1, micro=2, seq=2048, zero=None) -> Path:
    ds = json.loads(json.dumps(DS))
    if zero is not None:
        ds["zero_optimization"] = zero
    (folder / "ds.json").write_text(json.dumps(ds))
    path = folder / "train.yaml"
    path.write_text(CONFIG.format(gpu=gpu, count=count, micro=micro, seq=seq))
    return path


def file_report(path: Path) -> estimating.EstimateReport:
    plan, doc, linked = estimating.file_plan(str(path), Overrides({}, Origin("cli")), use_project_config=False)
    return estimating.estimate(plan, doc, linked)


def zero_section(row: planning.FitRow) -> dict:
    section: dict = {"stage": row.layout.zero_stage or 0}
    if row.layout.offload_optimizer:
        section["offload_optimizer"] = {"device": row.layout.offload_optimizer}
    if row.layout.offload_params:
        section["offload_param"] = {"device": row.layout.offload_params}
    return section


def test_config_answers_written_into_the_config_fit_and_the_next_value_does_not(tmp_path):
    config = write_config(tmp_path, count=8)
    report = file_report(config)
    answers = planning.answer(report, [resolve_gpu(g) for g in ("RTX-4090", "A100-40GB", "H100")],
                              ("micro-batch", "seq-len"))
    for row in (r for r in answers.fit_table or [] if r.fits):
        assert row.layout.zero_stage is not None  # the run is DeepSpeed: ZeRO layouts
        again = file_report(write_config(tmp_path, gpu=row.gpu.name, count=row.num_gpus, zero=zero_section(row)))
        assert again.fits is True and again.estimate.total == row.total, row
        sizes = planning.counts(report.plan)
        if row.num_gpus > 1:
            fewer = sizes[sizes.index(row.num_gpus) - 1]
            for layout in planning.layouts(planning.on_gpu(report.plan, row.gpu, fewer), fewer):
                probe = planning.FitRow(row.gpu, fewer, layout, 0, 0, 0.0, "", "", False)
                less = file_report(write_config(tmp_path, gpu=row.gpu.name, count=fewer, zero=zero_section(probe)))
                assert less.fits is False, (row.gpu.name, fewer, layout.key)
    micro, seq = answers.largest["micro-batch"], answers.largest["seq-len"]
    assert micro.value and seq.value
    assert micro.num_gpus == seq.num_gpus == 8 and micro.gpu.name == "A100-80GB"
    assert file_report(write_config(tmp_path, count=8, micro=micro.value)).fits is True
    assert file_report(write_config(tmp_path, count=8, micro=micro.value + 1)).fits is False
    assert file_report(write_config(tmp_path, count=8, seq=seq.value)).fits is True
    assert file_report(write_config(tmp_path, count=8, seq=seq.value + 1)).fits is False


# ---- the command line ----------------------------------------------------------------------------

def test_cli_text_from_flags_alone():
    proc = run("--model", "meta-llama/Llama-3.1-8B", "--seq-len", "2048", "--grad-ckpt", "full", "--gpu", "H100",
               "--num-gpus", "8", "--zero", "3", "--gpus", "all", "--max", "micro-batch", "--max", "seq-len", "--max-gpus", "64")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "fewest GPUs of each kind on which the run fits (cheapest first" in out
    table = out.split("each re-estimated):\n", 1)[1].split("\n\n")[0].splitlines()
    header = table[0]
    for word in ("GPU", "GPUs", "sharding / offload", "peak/GPU", "headroom"):
        assert word in header
    assert any(line.split()[0] == "H200" for line in table[1:]) and any("T4" in line for line in table[1:])
    assert "largest that fits on 8 x H100-80GB" in out
    assert "micro-batch: " in out and "sequence length: " in out and "needs" in out
    assert "per GPU                                  GiB" not in out  # the answers instead of the breakdown table


def test_cli_json_from_a_config(tmp_path):
    config = write_config(tmp_path, gpu="H100", count=8)
    proc = run(str(config), "--gpus", "A100-40GB,H100,RTX-4090", "--max", "micro-batch,seq-len",
               "--output-format", "json", "--isolated")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert "per_gpu_bytes" in data  # the estimate's JSON, with the answers added
    rows = data["fit_table"]
    assert [r["gpu"] for r in rows if r["fits"]][0] in ("A100-40GB", "RTX-4090", "H100-80GB")
    for r in rows:
        assert {"gpu", "num_gpus", "sharding", "peak_gib", "fits", "headroom_gib"} <= set(r)
        if r["fits"]:
            assert r["headroom_gib"] >= 0 and r["peak_gib"] + r["headroom_gib"] == pytest.approx(r["memory_gib"],
                                                                                              abs=0.02)
    assert set(data["max"]) == {"micro_batch", "seq_len"} and all(isinstance(v, int) for v in data["max"].values())
    detail = data["max_detail"]["micro_batch"]
    assert detail["gpu"] == "H100-80GB" and detail["num_gpus"] == 8
    assert detail["peak_gib"] <= detail["capacity_gib"] < detail["next_peak_gib"]


def test_cli_usage_errors_and_help():
    proc = run("--model", "meta-llama/Llama-3.1-8B", "--max", "micro-batch")
    assert proc.returncode == 2 and "--max needs the run's target GPU" in proc.stderr
    proc = run("--model", "meta-llama/Llama-3.1-8B", "--gpus", "H100,H9000")
    assert proc.returncode == 2 and "unknown GPU 'H9000'" in proc.stderr
    proc = run("--model", "meta-llama/Llama-3.1-8B", "--gpu", "H100", "--max", "lr")
    assert proc.returncode == 2 and "unknown knob 'lr'" in proc.stderr
    text = run("--help").stdout
    assert "--gpus all|GPU,..." in text and "--max micro-batch|seq-len" in text and "cheapest first" in text
    assert f"(default {planning.MAX_GPUS}:" in text


def test_a_plain_check_does_not_import_planning():
    code = "import sys, trainlint.cli; print('trainlint.planning' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "False", proc.stderr


def test_a_quantized_base_sharded_by_zero3_says_what_it_needs():
    report = flags_report(model="meta-llama/Llama-3.1-70B", seq_len=2048, micro_batch=1, grad_ckpt="full",
                          **estimating.what_if_values(lora_r=16, qlora=True))
    rows = planning.fit_table(report.plan, report.architecture, [resolve_gpu("RTX-4090"), resolve_gpu("H200")])
    for row in rows:
        assert row.fits
        sharded = row.layout.zero_stage == 3 or row.layout.fsdp == "full_shard"
        assert (row.note is not None and "bnb_4bit_quant_storage" in row.note) == sharded, row
    assert any(r.layout.zero_stage == 3 for r in rows)
