"""Behaviour of the HF / TRL / Lightning / Accelerate / Axolotl / torchtune / LitGPT rules that the
per-rule fixtures do not show: findings inside linked files, what depends on the target GPU, and
what is left to other rules."""

from __future__ import annotations

import json

from trainlint import engine
from trainlint.cli import _cli_overrides, build_parser
from trainlint.rules._frameworks import suggest, words
from trainlint.context.settings import Settings
from trainlint.document.reading import parse_document


def settings(*flags: str) -> Settings:
    args = build_parser().parse_args(["check", "x", *flags])
    return Settings(cli=_cli_overrides(args), use_project_config=False)


def codes(result) -> list[str]:
    return sorted(d.code for d in result.diagnostics)


def lint(tmp_path, name: str, text: str, *flags: str):
    path = tmp_path / name
    path.write_text(text)
    return engine.check_path(path, settings(*flags), display_path=str(path))


def test_sharding_on_one_gpu_points_into_the_linked_deepspeed_file(tmp_path):
    (tmp_path / "ds.json").write_text(json.dumps({"zero_optimization": {"stage": 3},
                                                  "train_micro_batch_size_per_gpu": "auto",
                                                  "gradient_accumulation_steps": "auto"}, indent=2))
    result = lint(tmp_path, "train.yaml", "output_dir: out\nper_device_train_batch_size: 1\ndeepspeed: ds.json\n",
                  "--num-gpus", "1")
    found = [d for d in result.diagnostics if d.code == "TL426"]
    assert len(found) == 1 and found[0].path.endswith("ds.json")
    assert "ZeRO stage 3" in found[0].message
    # With more GPUs, or without a known world size, nothing to say.
    assert "TL426" not in codes(lint(tmp_path, "train.yaml", "output_dir: out\ndeepspeed: ds.json\n", "--num-gpus", "8"))
    assert "TL426" not in codes(lint(tmp_path, "train.yaml", "output_dir: out\ndeepspeed: ds.json\n"))


def test_bf16_rules_need_a_known_gpu(tmp_path):
    text = "output_dir: out\nper_device_train_batch_size: 1\nbf16: true\ntf32: true\n"
    assert "TL311" not in codes(lint(tmp_path, "a.yaml", text))
    assert "TL311" not in codes(lint(tmp_path, "a.yaml", text, "--gpu", "A100-80GB"))
    # a bare capacity says nothing about bf16 support
    assert "TL311" not in codes(lint(tmp_path, "a.yaml", text, "--gpu", "32GB"))
    found = codes(lint(tmp_path, "a.yaml", text, "--gpu", "V100"))
    assert "TL311" in found and "TL315" in found


def test_litgpt_bf16_on_t4(tmp_path):
    text = "checkpoint_dir: checkpoints/my-org/my-model\nprecision: bf16-true\ndevices: 1\ntrain:\n  micro_batch_size: 1\n"
    assert "TL311" in codes(lint(tmp_path, "litgpt.yaml", text, "--gpu", "T4"))


def test_schema_rules_leave_yaml_traps_to_tl003_and_tl004(tmp_path):
    hf = lint(tmp_path, "hf.yaml", "output_dir: out\nper_device_train_batch_size: 1\nlearning_rate: 2e-5\nsave_strategy: no\n")
    assert "TL003" in codes(hf) and "TL004" in codes(hf)
    assert not {"TL520", "TL521"} & set(codes(hf))
    acc = lint(tmp_path, "acc.yaml", "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\n"
                                     "downcast_bf16: no\nmixed_precision: no\nnum_processes: 2\n")
    assert "TL004" in codes(acc)
    assert not {"TL520", "TL521"} & set(codes(acc))


def test_llamafactory_and_open_instruct_keys_are_not_typos(tmp_path):
    lf = lint(tmp_path, "lf.yaml", "model_name_or_path: my-org/my-model\nstage: sft\nfinetuning_type: lora\n"
                                   "lora_rank: 8\ncutoff_len: 2048\noutput_dir: out\n")
    assert not {"TL523", "TL520", "TL521"} & set(codes(lf))
    oi = lint(tmp_path, "oi.yaml", "model_name_or_path: my-org/my-model\nwith_tracking: true\nmax_seq_length: 4096\n"
                                   "warmup_ratio: 0.03\nnum_train_epochs: 2\n")
    assert not {"TL523", "TL524"} & set(codes(oi))


def test_trl_only_removals_apply_to_trl_files_only(tmp_path):
    plain = lint(tmp_path, "plain.yaml", "output_dir: out\nper_device_train_batch_size: 1\ntorch_dtype: bfloat16\n")
    assert "TL524" not in codes(plain)  # run_clm's own ModelArguments field
    trl = lint(tmp_path, "trl.yaml", "output_dir: out\npacking: true\ntorch_dtype: bfloat16\nmax_seq_length: 512\n")
    assert [d.span.start.line for d in trl.diagnostics if d.code == "TL524"] == [2, 3]


def test_lightning_subcommand_and_hydra_layouts(tmp_path):
    fit = lint(tmp_path, "fit.yaml", "fit:\n  trainer:\n    gpus: 2\n    precision: 16\n  model:\n    class_path: m.M\n")
    assert {"TL620", "TL312"} <= set(codes(fit))
    hydra = lint(tmp_path, "hydra.yaml", "_target_: lightning.pytorch.Trainer\ngpus: 2\nstrategy: ddp_sharded\n")
    assert {"TL620", "TL621"} <= set(codes(hydra))


def test_helpers():
    assert suggest("lerning_rate", ["learning_rate", "seed"]) == "learning_rate"
    assert suggest("FULL_SHARDS", ["FULL_SHARD"]) == "FULL_SHARD"
    assert suggest("zzz", ["learning_rate"]) is None
    doc = parse_document("a: full_shard auto_wrap\nb: [offload, full_shard]\nc: true\n", "x.yaml")
    assert words(doc.find(("a",))) == ["full_shard", "auto_wrap"]
    assert words(doc.find(("b",))) == ["offload", "full_shard"]
    assert words(doc.find(("c",))) == ["full_shard"]
