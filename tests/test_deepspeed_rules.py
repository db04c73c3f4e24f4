"""DeepSpeed rules across linked files: HF, Axolotl, Accelerate and Lightning configs that name a
DeepSpeed JSON file, findings pointing into that file, and fixes editing it."""

from __future__ import annotations

import json
from pathlib import Path

from trainlint import engine
from trainlint.document.reading import parse_document
from trainlint.fixes.apply import compute_fixes
from trainlint.rules import dscommon as ds
from trainlint.context.settings import Overrides, Settings

PLAIN = Settings(use_project_config=False)


def _write(tmp_path: Path, name: str, content) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(content, indent=2) + "\n" if isinstance(content, dict) else content)
    return path


def _found(result, code, path=None):
    return [d for d in result.diagnostics if d.code == code and (path is None or d.path == str(path))]


def test_hf_mismatch_points_into_the_linked_file_and_fixes_it(tmp_path):
    ds_file = _write(tmp_path, "ds.json", {"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": "auto",
                                           "gradient_clipping": 1.0, "zero_optimization": {"stage": 2}})
    hf = _write(tmp_path, "train.yaml", "model_name_or_path: gpt2\noutput_dir: out\ndeepspeed: ds.json\n")
    result = engine.check_path(hf, PLAIN)
    found = _found(result, "TL600", ds_file)
    assert len(found) == 1
    assert found[0].message == ("`train_micro_batch_size_per_gpu` is 4 but per_device_train_batch_size is 8: HF Trainer "
                                "stops; set it to \"auto\"")
    assert "- ds train_micro_batch_size_per_gpu=4 vs hf per_device_train_batch_size=8" in found[0].detail
    assert "the TrainingArguments default" in found[0].detail
    outcome = compute_fixes([str(hf)], lambda p: engine.check_path(p, PLAIN), unsafe=False)
    fixed = json.loads(outcome.fixed[str(ds_file)])
    assert fixed["train_micro_batch_size_per_gpu"] == "auto"
    # The DeepSpeed file on its own has nothing to compare with.
    assert _found(engine.check_path(ds_file, PLAIN), "TL600") == []


def test_trl_defaults_to_bf16_when_comparing(tmp_path):
    _write(tmp_path, "ds.json", {"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",
                                 "bf16": {"enabled": False}, "zero_optimization": {"stage": 2}})
    hf = _write(tmp_path, "sft.yaml", "model_name_or_path: gpt2\noutput_dir: out\nmax_length: 1024\npacking: true\n"
                                      "deepspeed: ds.json\n")
    details = [d.detail for d in _found(engine.check_path(hf, PLAIN), "TL600")]
    assert any("- ds bf16.enabled=False vs hf bf16|bf16_full_eval=True" in m for m in details), details


def test_axolotl_compares_micro_batch_size(tmp_path):
    ds_file = _write(tmp_path, "zero2.json", {"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": "auto",
                                              "zero_optimization": {"stage": 2}})
    cfg = _write(tmp_path, "axolotl.yaml", "base_model: NousResearch/Llama-2-7b-hf\nmicro_batch_size: 2\n"
                                           "datasets:\n  - path: mhenrichsen/alpaca_2k_test\n    type: alpaca\n"
                                           "deepspeed: zero2.json\n")
    result = engine.check_path(cfg, PLAIN)
    assert result.flavor == "axolotl"
    found = _found(result, "TL600", ds_file)
    assert found and "micro_batch_size is 2:" in found[0].message
    assert "micro_batch_size is 2" in found[0].detail


def test_accelerate_world_size_checks_the_batch(tmp_path):
    ds_file = _write(tmp_path, "ds.json", {"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4,
                                           "gradient_accumulation_steps": 1, "zero_optimization": {"stage": 2}})
    acc = _write(tmp_path, "accelerate.yaml", "compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\n"
                                              "num_processes: 8\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n")
    found = _found(engine.check_path(acc, PLAIN), "TL200", ds_file)
    assert len(found) == 1 and "64 != 4 * 1 * 8" in found[0].detail
    assert found[0].fixes[0].safe and found[0].fixes[0].edits[0].new_text == '"auto"'


def test_accelerate_mixed_precision_fills_auto(tmp_path):
    ds_file = _write(tmp_path, "ds.json", {"fp16": {"enabled": "auto"}, "bf16": {"enabled": True},
                                           "zero_optimization": {"stage": 2}})
    acc = _write(tmp_path, "accelerate.yaml", "distributed_type: DEEPSPEED\nmixed_precision: fp16\nnum_processes: 2\n"
                                              "deepspeed_config:\n  deepspeed_config_file: ds.json\n")
    found = _found(engine.check_path(acc, PLAIN), "TL300", ds_file)
    assert found and found[0].message == "fp16.enabled and bf16.enabled are both true: Accelerate stops"
    assert "mixed_precision: fp16" in found[0].detail


def test_lightning_linked_config(tmp_path):
    ds_file = _write(tmp_path, "ds.json", {"train_batch_size": 256, "gradient_accumulation_steps": 1,
                                           "train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}})
    cfg = _write(tmp_path, "fit.yaml", "trainer:\n  devices: 8\n  strategy:\n    class_path: "
                                       "lightning.pytorch.strategies.DeepSpeedStrategy\n    init_args:\n"
                                       "      config: ds.json\nmodel:\n  class_path: my.Model\n")
    result = engine.check_path(cfg, PLAIN)
    assert result.flavor == "lightning"
    assert _found(result, "TL604", ds_file)
    # Lightning fills no "auto": the micro-batch reaches DeepSpeed as a string.
    autos = _found(result, "TL503", ds_file)
    assert autos and autos[0].severity.value == "error"


def test_lightning_hard_coded_batch_against_devices(tmp_path):
    ds_file = _write(tmp_path, "ds.json", {"train_batch_size": 256, "train_micro_batch_size_per_gpu": 16,
                                           "zero_optimization": {"stage": 2}})
    cfg = _write(tmp_path, "fit.yaml", "trainer:\n  devices: 8\n  strategy:\n    class_path: "
                                       "lightning.pytorch.strategies.DeepSpeedStrategy\n    init_args:\n"
                                       "      config: ds.json\nmodel:\n  class_path: my.Model\n")
    found = _found(engine.check_path(cfg, PLAIN), "TL200", ds_file)
    assert found and "256 != 16 * 1 * 8" in found[0].detail  # Lightning#19891
    assert found[0].message == ("train_batch_size 256 is not micro-batch 16 × accumulation 1 × world size 8: DeepSpeed "
                                "stops at start-up")


def test_optimizer_swap_needs_offload_and_no_ds_optimizer(tmp_path):
    _write(tmp_path, "off.json", {"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}})
    _write(tmp_path, "keep.json", {"zero_force_ds_cpu_optimizer": False,
                                   "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}})
    base = "model_name_or_path: gpt2\noutput_dir: out\n"
    swapped = _write(tmp_path, "a.yaml", base + "optim: adamw_bnb_8bit\ndeepspeed: off.json\n")
    same = _write(tmp_path, "b.yaml", base + "optim: adamw_torch\ndeepspeed: off.json\n")
    kept = _write(tmp_path, "c.yaml", base + "optim: adamw_bnb_8bit\ndeepspeed: keep.json\n")
    assert _found(engine.check_path(swapped, PLAIN), "TL601")
    assert not _found(engine.check_path(same, PLAIN), "TL601")
    assert not _found(engine.check_path(kept, PLAIN), "TL601")


def test_standalone_auto_in_filled_keys_is_fine(tmp_path):
    ds_file = _write(tmp_path, "ds.json", {
        "train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",
        "gradient_clipping": "auto", "fp16": {"enabled": "auto"}, "bf16": {"enabled": "auto"},
        "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto", "weight_decay": "auto"}},
        "scheduler": {"type": "WarmupDecayLR", "params": {"warmup_min_lr": "auto", "warmup_max_lr": "auto",
                                                          "warmup_num_steps": "auto", "total_num_steps": "auto"}},
        "zero_optimization": {"stage": 3, "reduce_bucket_size": "auto", "stage3_prefetch_bucket_size": "auto",
                              "stage3_param_persistence_threshold": "auto",
                              "stage3_gather_16bit_weights_on_model_save": True}})
    result = engine.check_path(ds_file, PLAIN)
    ours = [d for d in result.diagnostics if d.code[:3] in ("TL2", "TL3", "TL4", "TL5", "TL6") and
            d.code not in ("TL426",)]
    assert [d for d in ours if d.code in ("TL200", "TL201", "TL202", "TL300", "TL503", "TL504", "TL603")] == []


def test_world_size_guessed_from_the_batch_keys_is_not_a_world_size(tmp_path):
    ds_file = _write(tmp_path, "ds.json", {"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4,
                                           "gradient_accumulation_steps": 2, "zero_optimization": {"stage": 1}})
    result = engine.check_path(ds_file, PLAIN)
    assert _found(result, "TL201") and not _found(result, "TL200")
    with_world = engine.check_path(ds_file, Settings(cli=Overrides({"num_gpus": 4}), use_project_config=False))
    assert not _found(with_world, "TL201") and not _found(with_world, "TL200")


def test_resolve_batch_matches_deepspeed_integer_divisions():
    # OpenRLHF#346: 256 on 7 GPUs with micro 2 -> accumulation 256 // 2 // 7 = 18, then 256 != 2 * 18 * 7.
    assert ds.resolve_batch(256, 2, None, 7) == (256, 2, 18, False)
    assert ds.resolve_batch(None, 4, 2, 8) == (64, 4, 2, True)
    assert ds.resolve_batch(32, None, None, 8) == (32, 4, 1, True)
    assert ds.valid_worlds(32, 4, 2) == [4]


def test_fixes_leave_the_files_parseable(tmp_path):
    ds_file = _write(tmp_path, "ds.json", {
        "cpu_offload": True, "gradient_clippng": 1.0, "train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",
        "fp16": {"enabled": "true", "opt_level": "O2", "auto_cast": "auto"},
        "zero_optimization": {"stage": 2, "cpu_offload": True, "offload_param": {"device": "cpu"},
                              "stage3_max_live_parameters": 1e9, "reduce_bucket_size": 100}})
    outcome = compute_fixes([str(ds_file)], lambda p: engine.check_path(p, PLAIN), unsafe=True)
    assert outcome.problems == []
    text = outcome.fixed[str(ds_file)]
    assert parse_document(text, str(ds_file)).syntax_error is None
    after = engine.check_text(text, str(ds_file), PLAIN)
    before = {d.code for d in engine.check_path(ds_file, PLAIN).diagnostics}
    assert {d.code for d in after.diagnostics} <= before


def test_accelerate_inserts_accumulation_one(tmp_path):
    # Raw DeepSpeed would derive accumulation 64 // 4 // 8 = 2; Accelerate's DeepSpeedPlugin inserts 1 first.
    ds_file = _write(tmp_path, "ds.json", {"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4,
                                           "zero_optimization": {"stage": 2}})
    acc = _write(tmp_path, "accelerate.yaml", "compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\n"
                                              "num_processes: 8\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n")
    found = _found(engine.check_path(acc, PLAIN), "TL200", ds_file)
    assert len(found) == 1 and "64 != 4 * 1 * 8" in found[0].detail
    alone = engine.check_path(ds_file, Settings(cli=Overrides({"num_gpus": 8}), use_project_config=False))
    assert not _found(alone, "TL200")


def test_first_stop_is_the_one_deepspeed_raises_first():
    # A derived 0 trips the "> 0" assertion before the equality check; a written 0 divisor a ZeroDivisionError.
    assert ds.deepspeed_batch(32, 4, None, 16)[3] == "Gradient accumulation steps: 0 has to be greater than 0"
    assert ds.deepspeed_batch(32, None, 0, 8)[3].startswith("ZeroDivisionError")
    assert ds.deepspeed_batch(None, 0, 2, 8)[3] == "Train batch size: 0 has to be greater than 0"
    # sequence_parallel_size divides the world size (a float, as DeepSpeed prints it).
    assert ds.deepspeed_batch(64, 4, 2, 8 / 2)[3].endswith("64 != 4 * 2 * 4.0")


def test_gpt_neox_config_is_not_a_deepspeed_file(tmp_path):
    neox = _write(tmp_path, "125M.yml", '{\n  "pipe_parallel_size": 1,\n  "model_parallel_size": 1,\n'
                                        '  "num_layers": 12,\n  "train_micro_batch_size_per_gpu": 4,\n'
                                        '  "train_batch_size": 31,\n  "checkpoint_activations": true,\n'
                                        '  "zero_optimization": {"stage": 1, "allgather_bucket_size": 500000000}\n}\n')
    result = engine.check_path(neox, PLAIN)
    assert not [d for d in result.diagnostics if d.code in ("TL200", "TL201", "TL500", "TL501")]


DEEPSPEED_FAMILY = ("TL200", "TL201", "TL202", "TL300", "TL301", "TL400", "TL401", "TL402", "TL403", "TL404", "TL405",
                    "TL406", "TL431", "TL500", "TL501", "TL502", "TL503", "TL504", "TL600", "TL601", "TL602", "TL603",
                    "TL604")


def test_deepspeed_family_names_its_evidence():
    from trainlint.rules import REGISTRY

    for code in DEEPSPEED_FAMILY:
        module = REGISTRY[code]
        rule = module.RULE
        assert rule.framework in ("deepspeed", "accelerate", "transformers", "lightning"), code
        assert rule.evidence and ".py" in rule.evidence, code
        doc = module.__doc__
        assert "**Evidence**:" in doc, code
        assert any(v in doc for v in ("0.19.8", "1.15", "5.24", "2.6.6")), f"{code}: no checked release named"
        if rule.raises:
            assert rule.raises.split(" ... ")[0][:40] in doc.replace("\n", " "), f"{code}: raises not quoted in the docs"


def test_optimizer_swap_keeps_32bit_bnb_algorithms(tmp_path):
    # HF builds paged_adamw_32bit / lion_32bit as bnb AdamW/Lion(optim_bits=32): Accelerate maps them to
    # DeepSpeedCPUAdam (AdamW mode) / DeepSpeedCPULion, the same algorithm; 8-bit ones become CPUAdam (Adam mode).
    _write(tmp_path, "off.json", {"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}})
    base = "model_name_or_path: gpt2\noutput_dir: out\ndeepspeed: off.json\n"
    for name, flagged in (("paged_adamw_32bit", False), ("lion_32bit", False), ("lion_8bit", True),
                          ("paged_adamw_8bit", True)):
        cfg = _write(tmp_path, f"{name}.yaml", base + f"optim: {name}\n")
        assert bool(_found(engine.check_path(cfg, PLAIN), "TL601")) is flagged, name


def test_accelerate_deepspeed_file_launched_with_an_hf_trainer_script_counts_hf_fills(tmp_path):
    # BELLE's reward model: accelerate launch --config_file acc.yaml rm_train.py (TRL RewardTrainer); HF Trainer's
    # propagate_args_to_deepspeed fills optimizer betas/eps, which plain Accelerate leaves as "auto"
    (tmp_path / ".git").mkdir()
    ds_file = _write(tmp_path, "ds.json", {"optimizer": {"type": "AdamW", "params": {
        "lr": "auto", "betas": "auto", "eps": "auto", "weight_decay": "auto"}},
        "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",
        "zero_optimization": {"stage": 2}})
    acc = _write(tmp_path, "acc.yaml", "compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\n"
                                       "num_processes: 8\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n")
    assert len(_found(engine.check_path(acc, Settings()), "TL503", ds_file)) == 2  # no launch: plain Accelerate
    _write(tmp_path, "train.py", "from transformers import HfArgumentParser, Trainer, TrainingArguments\n"
                                 "parser = HfArgumentParser(TrainingArguments)\nargs = parser.parse_args_into_dataclasses()\n")
    _write(tmp_path, "run.sh", "accelerate launch --config_file acc.yaml train.py --output_dir out "
                               "--per_device_train_batch_size 2\n")
    from trainlint.context import launch

    launch.clear_cache()
    assert _found(engine.check_path(acc, Settings()), "TL503", ds_file) == []


def test_tl201_names_the_data_parallel_size_under_tensor_and_pipeline_parallelism(tmp_path):
    (tmp_path / ".git").mkdir()
    ds_json = json.dumps({"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2})
    (tmp_path / "ds.json").write_text(ds_json)
    alone = [d for d in engine.check_path(tmp_path / "ds.json").diagnostics if d.code == "TL201"]
    assert alone and "data-parallel size (GPUs / tensor x pipeline parallel) of 8" in alone[0].detail
    assert "it works only on some data-parallel sizes" in alone[0].message
    from trainlint.context import launch as launch_context

    launch_context.clear_cache()
    (tmp_path / "run.sh").write_text("deepspeed pretrain_gpt.py --tensor-model-parallel-size 2 "
                                     "--pipeline-model-parallel-size 4 --deepspeed --deepspeed_config ds.json\n")
    found = [d for d in engine.check_path(tmp_path / "ds.json").diagnostics if d.code == "TL201"]
    assert found and "of 8, that is 64 GPUs with the launch's tensor parallel 2 x pipeline parallel 4" in found[0].detail
    assert "it works only on 64 GPUs" in found[0].message
    launch_context.clear_cache()
    (tmp_path / "run.sh").write_text("deepspeed pretrain_gpt.py --tensor-model-parallel-size $TP "
                                     "--deepspeed --deepspeed_config ds.json\n")
    found = [d for d in engine.check_path(tmp_path / "ds.json").diagnostics if d.code == "TL201"]
    assert found and "data-parallel size (GPUs / tensor x pipeline parallel) of 8" in found[0].detail
    assert "GPUs with the launch's" not in found[0].detail
    launch_context.clear_cache()
    (tmp_path / "run.sh").write_text("deepspeed train.py --deepspeed_config ds.json\n")  # no model parallelism
    found = [d for d in engine.check_path(tmp_path / "ds.json").diagnostics if d.code == "TL201"]
    assert found and "works only on 8 GPUs" in found[0].message
