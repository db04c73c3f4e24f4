"""Calibrated severity: TL100 is an error only when the GPU, the sharding and the world size are known."""

from __future__ import annotations

from trainlint import engine

from ctxrepo import ZERO3, make_repo

BIG = """# trainlint: gpu=A100-80GB
model_name_or_path: meta-llama/Llama-3.1-8B
bf16: true
per_device_train_batch_size: 4
max_length: 2048
"""


def tl100(result):
    return [d for d in result.diagnostics if d.code == "TL100"]


def test_no_launch_is_a_warning_that_says_what_it_assumed(tmp_path):
    repo = make_repo(tmp_path, {"c.yaml": BIG})
    (d,) = tl100(engine.check_path(repo / "c.yaml"))
    assert d.severity.value == "warning"
    assert d.assumptions and d.assumptions[0].startswith("assumed 1 GPU without sharding: no launch command")
    assert "launch=" in d.assumptions[0] and "ZeRO-3" in d.detail
    # which sharding over how many of the target GPUs fits the config as written, not "out of memory" alone
    assert "unsharded: out of memory; ZeRO-3 over 2 GPUs fits" in d.message and len(d.message) <= 120
    assert "with ZeRO-3 (or FSDP full_shard) over 2 x A100-80GB the config fits as written" in d.detail


def test_declared_gpu_count_with_unknown_sharding(tmp_path):
    """num-gpus declared, sharding not: the least sharding that fits over those GPUs."""
    repo = make_repo(tmp_path, {"c.yaml": BIG.replace("gpu=A100-80GB", "gpu=A100-40GB num-gpus=8")})
    (d,) = tl100(engine.check_path(repo / "c.yaml"))
    assert d.severity.value == "warning" and "over 8 GPUs fits" in d.message and "ZeRO-" in d.message


def test_torchrun_launch_makes_it_certain(tmp_path):
    repo = make_repo(tmp_path, {"c.yaml": BIG, "run.sh": "torchrun --nproc_per_node 8 train.py c.yaml\n"})
    (d,) = tl100(engine.check_path(repo / "c.yaml"))
    assert d.severity.value == "error" and not d.assumptions


def test_zero3_launch_on_8_gpus_fits(tmp_path):
    repo = make_repo(tmp_path, {"c.yaml": BIG, "acc/zero3.yaml": ZERO3,
                                "Makefile": "train:\n\taccelerate launch --config_file acc/zero3.yaml run.py c.yaml\n"})
    result = engine.check_path(repo / "c.yaml")
    assert result.plan.zero_stage.value == 3 and result.plan.num_gpus.value == 8
    assert not tl100(result)


def test_accelerate_without_config_file_is_unknown_sharding(tmp_path):
    repo = make_repo(tmp_path, {"c.yaml": BIG, "run.sh": "accelerate launch run.py c.yaml\n"})
    (d,) = tl100(engine.check_path(repo / "c.yaml"))
    assert d.severity.value == "warning" and "accelerate launch" in d.assumptions[0]


# ---- a quoted boolean word: TrlParser converts it (string_to_bool), HfArgumentParser.parse_yaml_file does not ----

PLAIN = "model_name_or_path: m\nper_device_train_batch_size: 2\ndo_eval: \"no\"\noutput_dir: out\n"


def tl520(result):
    return [d for d in result.diagnostics if d.code == "TL520"]


def test_a_quoted_bool_word_is_an_error_under_hfargumentparser_and_nothing_under_trlparser(tmp_path):
    hf = "from transformers import HfArgumentParser, TrainingArguments\np = HfArgumentParser((TrainingArguments,))\n" \
         "(args,) = p.parse_yaml_file('c.yaml')\n"
    repo = make_repo(tmp_path / "hf", {"c.yaml": PLAIN, "train.py": hf, "run.sh": "python train.py c.yaml\n"})
    (d,) = tl520(engine.check_path(repo / "c.yaml"))
    assert d.severity.value == "error" and not d.assumptions
    trl = "from trl import TrlParser, SFTConfig\np = TrlParser((SFTConfig,))\n(args,) = p.parse_args_and_config()\n"
    repo = make_repo(tmp_path / "trl", {"c.yaml": PLAIN, "train.py": trl,
                                        "run.sh": "python train.py --config c.yaml\n"})
    assert not tl520(engine.check_path(repo / "c.yaml"))  # string_to_bool("no") is False: what the file means


def test_a_quoted_bool_word_under_an_unknown_parser_says_what_it_assumed(tmp_path):
    repo = make_repo(tmp_path, {"c.yaml": PLAIN})
    (d,) = tl520(engine.check_path(repo / "c.yaml"))
    assert d.severity.value == "warning" and "unconverted" in " ".join(d.assumptions)
