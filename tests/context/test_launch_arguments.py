"""The arguments a launch passes to the script, per parser, and the rules that take the run's values from them."""

from __future__ import annotations

import json

from trainlint import engine
from trainlint.context import dialect as D
from trainlint.context import launch as L
from trainlint.context import pins

from ctxrepo import make_repo



def _said(d) -> str:
    """A finding's headline and its detail (the explanation and the figures behind it)."""
    return f"{d.message} {d.detail}"

def _fresh():
    """Forget what the run read (launch index, scripts): the test edits the repository."""
    L.clear_cache()
    D.clear_cache()


def args(text: str) -> tuple[dict, str, str]:
    launch = L.from_command_line(text, L.Origin("launch", "t.sh"), [])
    return {k: s.value for k, s in launch.arguments}, launch.script_config, launch.parser_reads


# ---- parsing, per parser ----------------------------------------------------------------------------------------

def test_hf_command_line_only():
    found, config, reads = args("deepspeed --num_nodes=1 run_glue.py --deepspeed ds.json --do_train "
                                "--per_device_train_batch_size 64 --learning-rate=2e-5")
    assert reads == "command-line" and config == ""
    assert found == {"deepspeed": "ds.json", "do_train": "true", "per_device_train_batch_size": "64",
                     "learning_rate": "2e-5"}


def test_trl_parser_config_then_overrides():
    found, config, reads = args("accelerate launch --num_processes 8 sft.py --config recipes/sft.yaml "
                                "--gradient_accumulation_steps 4")
    assert (config, reads) == ("recipes/sft.yaml", "override") and found == {"gradient_accumulation_steps": "4"}
    found, config, reads = args("trl sft --config sft.yaml --num_processes 2 --learning_rate 1e-5")
    assert (config, reads) == ("sft.yaml", "override") and found == {"learning_rate": "1e-5"}  # --num_processes: accelerate's


def test_hf_yaml_file_alone():
    assert args("python train.py cfg.yaml") == ({}, "cfg.yaml", "file")
    assert args("python train.py cfg.yaml --bf16 true")[2] == ""  # what the script does with the rest: unknown


def test_ms_swift_and_megatron():
    found, config, reads = args("NPROC_PER_NODE=2 swift sft examples/sft.yaml --gradient_accumulation_steps 16")
    assert (config, reads) == ("examples/sft.yaml", "override") and found == {"gradient_accumulation_steps": "16"}
    launch = L.from_command_line("megatron sft examples/megatron/sft.yaml --micro_batch_size 2", L.Origin("launch", "t.sh"), [])
    assert launch.launcher == "swift" and launch.script == "megatron sft"
    assert launch.argument("micro_batch_size").value == "2" and launch.parser_reads == "override"


def test_llamafactory_dotlist_overrides():
    found, config, reads = args("llamafactory-cli train examples/lora.yaml gradient_accumulation_steps=8 "
                                "learning_rate=1e-5")
    assert (config, reads) == ("examples/lora.yaml", "override")
    assert found == {"gradient_accumulation_steps": "8", "learning_rate": "1e-5"}
    assert args("llamafactory-cli train --stage sft --gradient_accumulation_steps 2")[2] == "command-line"


def test_axolotl_click_options():
    found, config, reads = args("axolotl train cfg.yml --learning-rate=1e-4 --micro-batch-size 2 --no-bf16")
    assert (config, reads) == ("cfg.yml", "override")
    assert found == {"learning_rate": "1e-4", "micro_batch_size": "2", "bf16": "false"}


def test_torchtune_and_litgpt():
    found, config, reads = args("tune run --nproc_per_node 2 full_finetune_distributed --config llama3/8B_full.yaml "
                                "batch_size=4 gradient_accumulation_steps=2 ~compile")
    assert (config, reads) == ("llama3/8B_full.yaml", "override")
    assert found == {"batch_size": "4", "gradient_accumulation_steps": "2", "compile": None}
    found, config, reads = args("litgpt finetune_lora --config cfg.yaml --train.micro_batch_size 4 "
                                "--train.global_batch_size=16")
    assert (config, reads) == ("cfg.yaml", "override")
    assert found == {"train.micro_batch_size": "4", "train.global_batch_size": "16"}


def test_unresolved_variable_is_unknown_and_autotuning():
    found, _, _ = args("deepspeed t.py --deepspeed ds.json --gradient_accumulation_steps $GAS")
    assert "gradient_accumulation_steps" in found and found["gradient_accumulation_steps"] is None
    launch = L.from_command_line("deepspeed --autotuning run --num_nodes=1 t.py --deepspeed ds.json",
                                 L.Origin("launch", "t.sh"), [])
    assert launch.autotuning == "run" and launch.script == "t.py"


def test_each_argument_names_its_line(tmp_path):
    repo = make_repo(tmp_path, {
        "acc/multi.yaml": "distributed_type: DEEPSPEED\ndeepspeed_config:\n  gradient_accumulation_steps: 16\n"
                          "  zero_stage: 3\nnum_processes: 8\n",
        "run.sh": "#!/bin/bash\nGAS=16\naccelerate launch --config_file acc/multi.yaml \\\n    swift/cli/sft.py \\\n"
                  "    --model Qwen/Qwen2.5-7B \\\n    --gradient_accumulation_steps $GAS\n"})
    launch = L.find(str(repo / "acc/multi.yaml"), root=str(repo))
    assert launch.found and launch.role == "accelerate" and launch.parser_reads == "command-line"
    arg = launch.argument("gradient_accumulation_steps")
    assert arg.value == "16" and arg.origin.span.start.line == 5 and arg.origin.path.endswith("run.sh")
    assert "`--gradient_accumulation_steps 16` passed to swift/cli/sft.py" in arg.origin.note


# ---- rules that compare values across files ----------------------------------------------------------------------

ACC = "distributed_type: DEEPSPEED\ndeepspeed_config:\n  gradient_accumulation_steps: 16\n  zero_stage: 3\nnum_processes: 8\n"


def _codes(result, code):
    return [d for d in result.diagnostics if d.code == code]


def test_tl224_uses_the_script_argument(tmp_path):
    run = "accelerate launch --config_file multi.yaml swift/cli/sft.py --model m --gradient_accumulation_steps {}\n"
    repo = make_repo(tmp_path, {"multi.yaml": ACC, "run.sh": run.format(16)})
    assert not _codes(engine.check_path(repo / "multi.yaml"), "TL224")  # the same 16: they cannot differ
    _fresh()
    (repo / "run.sh").write_text(run.format(8))
    found = _codes(engine.check_path(repo / "multi.yaml"), "TL224")
    assert len(found) == 1 and found[0].severity.value == "error"
    assert "gradient_accumulation_steps 8" in _said(found[0]) and "run.sh:1" in _said(found[0])
    _fresh()
    (repo / "run.sh").unlink()
    found = _codes(engine.check_path(repo / "multi.yaml"), "TL224")  # no launch, no script: nothing says HF Trainer
    assert len(found) == 1 and found[0].severity.value == "info" and "If an HF Trainer script runs" in _said(found[0])


DS_AUTO = json.dumps({"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}})
GLUE = "$HF/transformers/examples/pytorch/text-classification/run_glue.py"


def test_tl202_accumulation_from_the_launch(tmp_path):
    repo = make_repo(tmp_path, {"ds/z2.json": DS_AUTO,
                                "run.sh": f"deepspeed --num_gpus 8 {GLUE} --deepspeed ds/z2.json --do_train\n"})
    result = engine.check_path(repo / "ds/z2.json")
    assert result.dialect.name == "hf" and not _codes(result, "TL202")  # HF's default accumulation 1 is the run's
    _fresh()
    (repo / "run.sh").write_text(f"deepspeed --num_gpus 8 {GLUE} --deepspeed ds/z2.json \\\n"
                                 "  --gradient_accumulation_steps 4\n")
    found = _codes(engine.check_path(repo / "ds/z2.json"), "TL202")
    assert len(found) == 1 and "gradient_accumulation_steps is 4" in _said(found[0])
    assert "run.sh:2" in _said(found[0])


def test_trl_override_decides_the_host_value(tmp_path):
    ds = json.dumps({"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": 4,
                     "zero_optimization": {"stage": 2}})
    cfg = "model_name_or_path: m\ndeepspeed: ds.json\ngradient_accumulation_steps: 2\nper_device_train_batch_size: 1\n"
    run = "accelerate launch sft.py --config cfg.yaml --gradient_accumulation_steps {}\n"
    repo = make_repo(tmp_path, {"ds.json": ds, "cfg.yaml": cfg, "run.sh": run.format(4)})
    assert not _codes(engine.check_path(repo / "cfg.yaml"), "TL600")  # the command line's 4 wins over the file's 2
    _fresh()
    (repo / "run.sh").write_text(run.format(8))
    found = _codes(engine.check_path(repo / "cfg.yaml"), "TL600")
    assert len(found) == 1 and "`--gradient_accumulation_steps 8` passed to sft.py" in _said(found[0])


def test_autotuning_templates(tmp_path):
    tune = json.dumps({"train_micro_batch_size_per_gpu": "auto", "autotuning": {"enabled": True}})
    repo = make_repo(tmp_path, {"tune.json": tune,
                                "run.sh": f"deepspeed --autotuning run --num_nodes=1 {GLUE} --deepspeed tune.json\n"})
    result = engine.check_path(repo / "tune.json")
    assert not _codes(result, "TL603") and not _codes(result, "TL202")  # the autotuner writes both per experiment
    _fresh()
    (repo / "run.sh").write_text(f"deepspeed --num_nodes=1 {GLUE} --deepspeed tune.json\n")
    result = engine.check_path(repo / "tune.json")
    assert [d.severity.value for d in _codes(result, "TL603")] == ["error"]  # HF Trainer reads it as it is
    _fresh()
    (repo / "run.sh").unlink()
    assert not _codes(engine.check_path(repo / "tune.json"), "TL603")  # no launch: its autotuning block says it


SWIFT = ("model: Qwen/Qwen2.5-7B-Instruct\ntuner_type: lora\nmodel_author: swift\nmodel_name: bot\n"
         "per_device_train_batch_size: 1\nlearning_rate: 1e-4\nnum_train_epochs: 1\noutput_dir: output\ndeepspeed: {}\n")


def test_ms_swift_builtin_deepspeed_names(tmp_path):
    repo = make_repo(tmp_path, {"sft.yaml": SWIFT.format("zero3_offload"), "run.sh": "swift sft sft.yaml\n"})
    result = engine.check_path(repo / "sft.yaml")
    assert result.dialect.name == "ms-swift" and not _codes(result, "TL007")
    (repo / "sft.yaml").write_text(SWIFT.format("zero9"))
    assert _codes(engine.check_path(repo / "sft.yaml"), "TL007")
    hf = make_repo(tmp_path / "hf", {"c.yaml": "model_name_or_path: m\ndeepspeed: zero2\n",
                                     "run.sh": f"python {GLUE} c.yaml\n"})
    assert _codes(engine.check_path(hf / "c.yaml"), "TL007")  # HF reads `zero2` as a path


def test_megatron_sft_dialect(tmp_path):
    cfg = ("model: Qwen/Qwen3-8B\ntuner_type: lora\ntarget_modules: all-linear\ndataset:\n  - 'swift/self-cognition#500'\n"
           "split_dataset_ratio: 0.01\nmax_length: 2048\nmodel_author: swift\nmodel_name: bot\nsave_safetensors: true\n"
           "micro_batch_size: 1\nglobal_batch_size: 16\nlr: 1e-4\nrecompute_granularity: full\noutput_dir: out\n")
    repo = make_repo(tmp_path, {"sft.yaml": cfg, "sft.sh": "NPROC_PER_NODE=4 \\\nmegatron sft \\\n    sft.yaml\n",
                                "requirements.txt": "transformers==5.2.0\n"})
    result = engine.check_path(repo / "sft.yaml")
    assert result.dialect.name == "ms-swift-megatron" and result.launch.num_processes.value == 4
    assert result.dialect.accepts("micro_batch_size") and result.dialect.accepts("save_safetensors")
    assert not _codes(result, "TL524") and not _codes(result, "TL523")


def test_tl600_deepspeed_file_against_the_command_line(tmp_path):
    ds = json.dumps({"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": "auto",
                     "zero_optimization": {"stage": 2}})
    run = f"deepspeed --num_gpus 2 {GLUE} --deepspeed ds.json{{}}\n"
    repo = make_repo(tmp_path, {"ds.json": ds, "run.sh": run.format(" --per_device_train_batch_size 4")})
    assert not _codes(engine.check_path(repo / "ds.json"), "TL600")
    _fresh()
    (repo / "run.sh").write_text(run.format(" --per_device_train_batch_size 64"))
    found = _codes(engine.check_path(repo / "ds.json"), "TL600")
    assert len(found) == 1 and found[0].severity.value == "error"
    assert "per_device_train_batch_size is 64 (`--per_device_train_batch_size 64` passed to" in _said(found[0])
    _fresh()
    (repo / "run.sh").write_text(run.format(""))
    found = _codes(engine.check_path(repo / "ds.json"), "TL600")  # HF's default 8: the launch passes none
    assert len(found) == 1 and "does not pass --per_device_train_batch_size" in _said(found[0])


def test_training_arguments_on_the_command_line_name_the_parser(tmp_path):
    ds = json.dumps({"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}})
    run = ("deepspeed --num_gpus=4 main.py --deepspeed deepspeed.json --do_train --per_device_train_batch_size 4 "
           "--gradient_accumulation_steps {}\n")
    repo = make_repo(tmp_path, {"deepspeed.json": ds, "run.sh": run.format(1)})
    result = engine.check_path(repo / "deepspeed.json")  # main.py is not there: its arguments say HfArgumentParser
    assert result.dialect.name == "hf" and result.dialect.origin.kind == "inferred"
    assert not _codes(result, "TL202")
    _fresh()
    (repo / "run.sh").write_text(run.format(2))
    assert _codes(engine.check_path(repo / "deepspeed.json"), "TL202")
    _fresh()
    (repo / "run.sh").write_text("deepspeed main.py --deepspeed --deepspeed_config deepspeed.json\n")
    assert engine.check_path(repo / "deepspeed.json").dialect.name == "unknown"  # raw DeepSpeed's own flags


def test_plan_takes_the_launch_batch_over_the_config(tmp_path):
    cfg = "model_name_or_path: meta-llama/Llama-3.1-8B\nper_device_train_batch_size: 2\ngradient_accumulation_steps: 2\n"
    repo = make_repo(tmp_path, {"c.yaml": cfg, "run.sh": "accelerate launch sft.py --config c.yaml \\\n"
                                                           "  --per_device_train_batch_size 8\n"})
    plan = engine.check_path(repo / "c.yaml").plan
    assert plan.micro_batch.value == 8 and plan.micro_batch.origin.kind == "launch"
    assert plan.micro_batch.origin.span.start.line == 1 and plan.grad_accum.value == 2
    _fresh()
    (repo / "run.sh").write_text("python train.py c.yaml\n")  # parse_yaml_file: the file alone
    assert engine.check_path(repo / "c.yaml").plan.micro_batch.value == 2


def test_autotuned_batch_keys_are_not_checked(tmp_path):
    tune = json.dumps({"train_batch_size": 64, "train_micro_batch_size_per_gpu": 3, "zero_optimization": {"stage": 1},
                       "autotuning": {"enabled": True}})
    repo = make_repo(tmp_path, {"tune.json": tune, "run.sh": "deepspeed --autotuning tune --num_gpus 8 train.py "
                                                             "--deepspeed_config tune.json\n"})
    result = engine.check_path(repo / "tune.json")
    assert result.launch.autotuning == "tune" and result.launch.role == "deepspeed"
    assert not [d for d in result.diagnostics if d.code in ("TL200", "TL201")]
    _fresh()
    (repo / "run.sh").write_text("deepspeed --num_gpus 8 train.py --deepspeed_config tune.json\n")
    assert [d for d in engine.check_path(repo / "tune.json").diagnostics if d.code == "TL200"]  # 64 != 3 x 1 x 8


def test_ms_swift_bundled_deepspeed_sets_the_plan(tmp_path):
    repo = make_repo(tmp_path, {"sft.yaml": SWIFT.format("zero3_offload"), "run.sh": "swift sft sft.yaml\n"})
    plan = engine.check_path(repo / "sft.yaml").plan
    assert plan.zero_stage.value == 3 and "bundled zero3_offload.json" in plan.zero_stage.origin.note
    assert plan.offload_params.value == "cpu"
    assert plan.offload_optimizer.origin.kind == "default"  # 3.0.1-3.0.2 offloaded the parameters only
    from trainlint.catalog import dialects

    assert dialects.builtin_deepspeed("ms-swift", "4.1.0")["zero3_offload"]["offload_optimizer"] == "cpu"
    assert "offload_optimizer" not in dialects.builtin_deepspeed("ms-swift", "3.0.2")["zero3_offload"]
    assert set(dialects.builtin_deepspeed("ms-swift", "2.6.1")) == {"default-zero2", "default-zero3", "zero2-offload",
                                                                   "zero3-offload"}


def test_generic_launcher_reads_arguments_as_the_scripts_parser(tmp_path):
    found, config, reads = args("accelerate launch -m axolotl.cli.train cfg.yml --micro-batch-size=2")
    assert (config, reads) == ("cfg.yml", "override") and found == {"micro_batch_size": "2"}
    cfg = ("model_name_or_path: meta-llama/Llama-3.1-8B\nstage: sft\nfinetuning_type: lora\ntemplate: llama3\n"
           "cutoff_len: 2048\nper_device_train_batch_size: 1\ngradient_accumulation_steps: 8\noutput_dir: out\n")
    repo = make_repo(tmp_path, {"examples/lora.yaml": cfg,
                                "src/train.py": "from llamafactory.train.tuner import run_exp\nrun_exp()\n",
                                "run.sh": "torchrun --nproc_per_node 2 src/train.py examples/lora.yaml \\\n"
                                          "    per_device_train_batch_size=4\n"})
    result = engine.check_path(repo / "examples/lora.yaml")
    assert result.dialect.name == "llamafactory" and result.launch.parser_reads == "override"
    assert result.plan.micro_batch.value == 4 and result.plan.micro_batch.origin.span.start.line == 1
    assert result.plan.grad_accum.value == 8


def test_tl224_reads_the_config_the_launch_passes_the_script(tmp_path):
    acc = ACC.replace("gradient_accumulation_steps: 16", "gradient_accumulation_steps: 4")
    run = "accelerate launch --config_file acc.yaml scripts/run_sft.py recipes/sft.yaml\n"
    sft = "model_name_or_path: m\nper_device_train_batch_size: 2\n"
    repo = make_repo(tmp_path, {"acc.yaml": acc, "run.sh": run, "recipes/sft.yaml": sft + "gradient_accumulation_steps: 4\n"})
    assert not _codes(engine.check_path(repo / "acc.yaml"), "TL224")  # the recipe's 4 = the accelerate config's 4
    _fresh()
    (repo / "recipes/sft.yaml").write_text(sft + "gradient_accumulation_steps: 8\n")
    found = _codes(engine.check_path(repo / "acc.yaml"), "TL224")
    assert len(found) == 1 and "gradient_accumulation_steps is 8 (gradient_accumulation_steps in" in _said(found[0])
    _fresh()
    (repo / "scripts").mkdir()
    (repo / "scripts/run_sft.py").write_text("from transformers import HfArgumentParser\nparser.parse_yaml_file(p)\n")
    (repo / "recipes/sft.yaml").write_text(sft)  # HfArgumentParser: the default 1 differs from 4
    found = _codes(engine.check_path(repo / "acc.yaml"), "TL224")
    assert len(found) == 1 and found[0].severity.value == "error" and "TrainingArguments default" in _said(found[0])


def test_tl224_not_for_a_script_with_its_own_accelerator_loop(tmp_path):
    acc = ACC.replace("gradient_accumulation_steps: 16", "gradient_accumulation_steps: 1")
    loop = "from accelerate import Accelerator\naccelerator = Accelerator()\nfor b in dl:\n    accelerator.backward(loss)\n"
    repo = make_repo(tmp_path, {"acc.yaml": acc, "train.py": loop,
                                "run.sh": "accelerate launch --config_file acc.yaml train.py --lr 1e-4\n"})
    assert not _codes(engine.check_path(repo / "acc.yaml"), "TL224")  # no TrainingArguments compare it
    _fresh()
    (repo / "train.py").write_text("from transformers import Trainer, TrainingArguments\n" + loop)
    assert _codes(engine.check_path(repo / "acc.yaml"), "TL224")
    other = make_repo(tmp_path / "trlx", {"configs/zero3.yaml": acc,
                                          "setup.cfg": "[metadata]\nname = trlx\nversion = 0.7.0\n"})
    from trainlint.context import pins

    assert pins.pins_for(str(other / "configs/zero3.yaml"))[1] == ("trlx",)
    assert not _codes(engine.check_path(other / "configs/zero3.yaml"), "TL224")  # trlx trains with its own loops


def test_a_script_in_scripts_runs_from_the_folder_above(tmp_path):
    ds = json.dumps({"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",
                     "zero_optimization": {"stage": 3}})
    repo = make_repo(tmp_path, {"train/configs/ds.json": ds,
                                "train/scripts/run.sh": "torchrun --nproc_per_node 8 src/entry_point/infer.py "
                                                        "--deepspeed configs/ds.json --ddp_timeout 36000 "
                                                        "--per_device_eval_batch_size 1\n"})
    assert [str(b.relative_to(repo)) for b in L.bases_for(str(repo / "train/scripts/run.sh"), repo)] == \
        [".", "train/scripts", "train"]
    result = engine.check_path(repo / "train/configs/ds.json")  # `bash scripts/run.sh` from train/
    assert result.launch.found and result.launch.role == "hf-deepspeed" and result.dialect.name == "hf"
    assert not _codes(result, "TL202")  # no --gradient_accumulation_steps: HF's 1 is the run's


def test_h4_argument_parser_reads_key_equals_value_only(tmp_path):
    script = ("from alignment import H4ArgumentParser\nparser = H4ArgumentParser((ModelArguments, SFTConfig))\n"
              "model_args, training_args = parser.parse_yaml_and_args(os.path.abspath(sys.argv[1]), sys.argv[2:])\n")
    cfg = "model_name_or_path: meta-llama/Llama-3.1-8B\nper_device_train_batch_size: 2\ngradient_accumulation_steps: 2\n"
    repo = make_repo(tmp_path, {"recipes/sft.yaml": cfg, "scripts/run_sft.py": script,
                                "run.sh": "accelerate launch scripts/run_sft.py recipes/sft.yaml "
                                          "--per_device_train_batch_size=8\n"})
    result = engine.check_path(repo / "recipes/sft.yaml")
    assert result.launch.parser_reads == "override" and result.launch.script_config == "recipes/sft.yaml"
    assert result.plan.micro_batch.value == 8 and result.plan.micro_batch.origin.kind == "launch"
    assert result.plan.grad_accum.value == 2


def test_launches_that_disagree_decide_nothing(tmp_path):
    repo = make_repo(tmp_path, {"ds/z2.json": DS_AUTO,
                                "a.sh": f"deepspeed {GLUE} --deepspeed ds/z2.json --do_train\n",
                                "b.sh": f"deepspeed {GLUE} --deepspeed ds/z2.json --gradient_accumulation_steps 8\n"})
    result = engine.check_path(repo / "ds/z2.json")
    assert result.launch.others == 1 and not result.launch.agreed("gradient_accumulation_steps")
    assert _codes(result, "TL202")  # one launch accumulates: Accelerate's inserted 1 is not the run's there


def test_the_reader_takes_every_argument_over_the_file(tmp_path):
    cfg = ("model_name_or_path: meta-llama/Llama-3.1-8B\nbf16: true\ngradient_checkpointing: false\n"
           "per_device_train_batch_size: 2\nmax_length: 1024\n")
    run = "accelerate launch sft.py --config c.yaml --bf16 false --fp16 --gradient_checkpointing --max_length 4096\n"
    repo = make_repo(tmp_path, {"c.yaml": cfg, "run.sh": run})
    plan = engine.check_path(repo / "c.yaml").plan
    from trainlint.plan import AMP_FP16

    assert plan.precision.value == AMP_FP16  # --bf16 false --fp16 over the file's bf16: true
    assert plan.precision.origin.kind == "launch" and "--fp16" in plan.precision.origin.note
    assert plan.grad_ckpt.value == "full" and plan.seq_len.value == 4096 and plan.seq_len.origin.kind == "launch"
    assert plan.micro_batch.value == 2 and plan.micro_batch.origin.kind == "config"
    from trainlint.fixes import knobs

    class Ctx:  # the planner's view of the lint
        pass

    ctx = Ctx()
    ctx.plan, ctx.document, ctx.linked, ctx.flavor = plan, None, [], "huggingface"
    assert knobs.setting_edits(ctx, "seq_len", 2048) is None  # a script argument: no config edit


def test_prose_in_a_comment_is_no_usage_line():
    comments = [(3, 2, "# set your absolute deepspeed path here")]
    assert not L.find_in_comments("/nonexistent/sft.yaml", comments, []).found
    usage = [(1, 0, "#   tune run --nproc_per_node 2 full_finetune_distributed --config llama3_1/8B_full")]
    assert L.find_in_comments("/nonexistent/8B_full.yaml", usage, []).launcher == "tune"


def test_tl224_without_a_launch_reads_the_scripts_near_the_config(tmp_path):
    # huggingface/peft examples/causal_language_modeling: the accelerate config beside a plain Accelerator loop
    loop = ("from accelerate import Accelerator\naccelerator = Accelerator()\nfor b in dl:\n"
            "    accelerator.backward(loss)\n")
    repo = make_repo(tmp_path, {"examples/clm/acc.yaml": ACC, "examples/clm/peft_lora_clm.py": loop})
    assert not _codes(engine.check_path(repo / "examples/clm/acc.yaml"), "TL224")  # no TrainingArguments there
    _fresh()
    (repo / "examples/clm/peft_lora_clm.py").unlink()  # no script at all: information, no claim
    found = _codes(engine.check_path(repo / "examples/clm/acc.yaml"), "TL224")
    assert [d.severity.value for d in found] == ["info"] and "no launch names this file" in _said(found[0])
    _fresh()
    (repo / "examples/train_sft.py").write_text("from trl import SFTConfig, SFTTrainer\ntrainer = SFTTrainer()\n")
    found = _codes(engine.check_path(repo / "examples/clm/acc.yaml"), "TL224")  # the folder above: an HF Trainer
    assert [d.severity.value for d in found] == ["warning"] and "examples/train_sft.py" in _said(found[0])
    _fresh()
    (repo / "examples/train_sft.py").unlink()
    (repo / "tools").mkdir()
    (repo / "tools/run.py").write_text("from transformers import Trainer, TrainingArguments\n"
                                       "CONFIG = 'examples/clm/acc.yaml'\n")  # far away, but it names the file
    found = _codes(engine.check_path(repo / "examples/clm/acc.yaml"), "TL224")
    assert [d.severity.value for d in found] == ["warning"] and "tools/run.py" in _said(found[0])


def test_tl224_a_project_trainer_class_is_no_hf_trainer(tmp_path):
    # huggingface/smollm vision: m4/training/main.py builds m4.training.trainer.Trainer, an accelerator.backward loop
    main = "from m4.training.trainer import Trainer\ntrainer = Trainer(accelerator=accelerator)\n"
    repo = make_repo(tmp_path, {"cfg/acc.yaml": ACC, "cfg/main.py": main + "accelerator.backward(loss)\n"})
    assert not _codes(engine.check_path(repo / "cfg/acc.yaml"), "TL224")


NULL_ACC = ("compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmachine_rank: 0\nmixed_precision: 'no'\n"
            "num_machines: null\nnum_processes: 1\nuse_cpu: false\n")


def test_accelerate_options_the_launch_gives_override_the_config(tmp_path):
    # huggingface/smollm vloom: train.slurm passes --num_machines $SLURM_NNODES --num_processes $NUM_GPUS
    run = ("NUM_GPUS=$((G*N))\nsrun accelerate launch --config_file acc.yaml --num_machines $SLURM_NNODES \\\n"
           "    --num_processes $NUM_GPUS --machine_rank $SLURM_PROCID train.py --lr 1e-4\n")
    repo = make_repo(tmp_path, {"acc.yaml": NULL_ACC, "train.slurm": run})
    launch = L.find(str(repo / "acc.yaml"), root=str(repo))
    assert launch.role == "accelerate" and set(launch.overrides) == {"machine_rank", "num_machines", "num_processes"}
    assert launch.num_processes.value is None  # given by a shell variable: unknown, not the file's 1
    assert not _codes(engine.check_path(repo / "acc.yaml"), "TL520")  # the file's null is never read
    _fresh()
    (repo / "other.sh").write_text("accelerate launch --config_file acc.yaml train.py\n")  # this one reads the null
    found = _codes(engine.check_path(repo / "acc.yaml"), "TL520")
    assert [(d.span.start.line, d.severity.value) for d in found] == [(4, "error")]
    _fresh()
    (repo / "other.sh").unlink()
    (repo / "train.slurm").unlink()
    # no launch known: the null is an error only if no launch gives --num_machines, which is an assumption
    found = _codes(engine.check_path(repo / "acc.yaml"), "TL520")
    assert [d.severity.value for d in found] == ["warning"]
    assert "--num_machines" in found[0].assumptions[0] and "launch=" in found[0].assumptions[0]


def test_the_world_size_the_launch_gives_wins_over_the_accelerate_config(tmp_path):
    acc = ("compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n"
           "mixed_precision: bf16\nnum_machines: 1\nnum_processes: 1\n")
    repo = make_repo(tmp_path, {"acc.yaml": acc, "run.sh": "accelerate launch --config_file acc.yaml --num_processes 8 t.py\n"})
    result = engine.check_path(repo / "acc.yaml")
    assert result.plan.num_gpus.value == 8 and result.plan.num_gpus.origin.kind == "launch"
    assert not _codes(result, "TL426")  # ZeRO-3 over 8 processes, not the file's 1
    _fresh()
    (repo / "run.sh").write_text("accelerate launch --config_file acc.yaml --num_processes $N t.py\n")
    result = engine.check_path(repo / "acc.yaml")
    assert result.plan.num_gpus.is_default and not _codes(result, "TL426")  # unknown, not the file's 1
    _fresh()
    (repo / "run.sh").write_text("accelerate launch --config_file acc.yaml t.py\n")
    assert _codes(engine.check_path(repo / "acc.yaml"), "TL426")  # the file's 1 is the run's


def test_tl224_not_for_a_key_the_launch_gives(tmp_path):
    run = ("accelerate launch --config_file acc.yaml --gradient_accumulation_steps 2 train.py "
           "--gradient_accumulation_steps 2\n")
    trainer = "from transformers import Trainer, TrainingArguments\n"
    repo = make_repo(tmp_path, {"acc.yaml": ACC, "train.py": trainer, "run.sh": run})
    assert not _codes(engine.check_path(repo / "acc.yaml"), "TL224")  # the file's 16 is never used
    _fresh()
    (repo / "run.sh").write_text(run.replace("--gradient_accumulation_steps 2 train.py", "train.py"))
    found = _codes(engine.check_path(repo / "acc.yaml"), "TL224")
    assert len(found) == 1 and "gradient_accumulation_steps 2" in _said(found[0])  # 16 in the file, 2 for the script


def test_tl224_equal_values_when_the_parser_combination_is_unknown(tmp_path):
    """`train.py cfg.yaml --gradient_accumulation_steps 16`: the script's value is the argument's or its file's; when
    both are this file's 16 nothing can differ (it used to warn); a different one in either still warns."""
    run = "accelerate launch --config_file multi.yaml train.py sft.yaml --gradient_accumulation_steps {}\n"
    repo = make_repo(tmp_path, {"multi.yaml": ACC, "train.py": "from trl import TrlParser, SFTConfig\n",
                                "sft.yaml": "model_name_or_path: x\ngradient_accumulation_steps: 16\n",
                                "run.sh": run.format(16)})
    launch = L.find(str(repo / "multi.yaml"), root=str(repo))
    assert launch.parser_reads == "" and launch.script_config == "sft.yaml"
    assert not _codes(engine.check_path(repo / "multi.yaml"), "TL224")
    _fresh()
    (repo / "run.sh").write_text(run.format(8))
    assert [d.severity.value for d in _codes(engine.check_path(repo / "multi.yaml"), "TL224")] == ["warning"]
    _fresh()
    (repo / "run.sh").write_text(run.format(16))
    (repo / "sft.yaml").write_text("model_name_or_path: x\ngradient_accumulation_steps: 4\n")
    assert [d.severity.value for d in _codes(engine.check_path(repo / "multi.yaml"), "TL224")] == ["warning"]


def _tl524(result):
    return [d for d in result.diagnostics if d.code == "TL524"]


def test_launch_arguments_are_linted_like_keys_at_the_script_line(tmp_path):
    """`--evaluation_strategy` passed by run.sh to a TrlParser script, the repository pinning transformers 4.52.3:
    HfArgumentParser's command line stops (an error at run.sh:3); 4.45 still has it; `--eval_strategy` on 4.36 does
    not exist yet."""
    repo = make_repo(tmp_path, {"sft.yaml": "model_name_or_path: gpt2\nper_device_train_batch_size: 2\n",
                                "train.py": "from trl import TrlParser, SFTConfig\n",
                                "requirements.txt": "transformers==4.52.3\ntrl==0.18.0\n",
                                "run.sh": "#!/bin/bash\naccelerate launch --num_processes 2 train.py --config sft.yaml \\\n"
                                          "  --evaluation_strategy steps\n"})
    found = _tl524(engine.check_path(repo / "sft.yaml"))
    assert len(found) == 1 and found[0].severity.value == "error" and found[0].path.endswith("run.sh")
    assert found[0].span.start.line == 2 and "`--evaluation_strategy` was removed in transformers 4.51" in found[0].message
    assert "Some specified arguments are not used by the HfArgumentParser" in found[0].detail
    _fresh()
    pins.clear_cache()
    (repo / "requirements.txt").write_text("transformers==4.45.2\n")
    assert not _tl524(engine.check_path(repo / "sft.yaml"))
    _fresh()
    pins.clear_cache()
    (repo / "requirements.txt").write_text("transformers==4.36.2\n")
    (repo / "run.sh").write_text("accelerate launch train.py --config sft.yaml --eval_strategy steps\n")
    found = _tl524(engine.check_path(repo / "sft.yaml"))
    assert len(found) == 1 and "pass `--evaluation_strategy`" in found[0].message and found[0].path.endswith("run.sh")
    _fresh()
    pins.clear_cache()
    (repo / "requirements.txt").unlink()  # the release unknown: a warning that says what it assumed
    (repo / "run.sh").write_text("accelerate launch train.py --config sft.yaml --evaluation_strategy steps\n")
    found = _tl524(engine.check_path(repo / "sft.yaml"))
    assert len(found) == 1 and found[0].severity.value == "warning"


def test_launch_arguments_of_a_deepspeed_file_launch(tmp_path):
    """`deepspeed run_glue.py --deepspeed ds.json --evaluation_strategy epoch`: the DeepSpeed file's lint reports the
    script argument once; a field the script's own dataclass declares is not reported."""
    repo = make_repo(tmp_path, {"ds.json": DS_AUTO, "requirements.txt": "transformers==4.52.3\n",
                                "run_glue.py": "from transformers import HfArgumentParser, TrainingArguments\n",
                                "run.sh": "deepspeed --num_gpus 8 run_glue.py --deepspeed ds.json --evaluation_strategy epoch\n"})
    found = _tl524(engine.check_path(repo / "ds.json"))
    assert len(found) == 1 and found[0].path.endswith("run.sh") and found[0].severity.value == "error"
    _fresh()
    # BELLE's sft_train.py: its own TrainingArguments subclass redeclares evaluation_strategy
    (repo / "run_glue.py").write_text("import transformers\nfrom dataclasses import dataclass, field\n"
                                      "from transformers import HfArgumentParser\n@dataclass\n"
                                      "class TrainingArguments(transformers.TrainingArguments):\n"
                                      "    evaluation_strategy: str = field(default='steps')\n")
    assert not _tl524(engine.check_path(repo / "ds.json"))
    _fresh()
    (repo / "run_glue.py").unlink()  # the script is not in the repository: its own classes may declare anything
    assert not _tl524(engine.check_path(repo / "ds.json"))


def test_misspelt_launch_argument_at_the_script_line(tmp_path):
    """`--gradient_acumulation_steps 4` passed to a TrlParser script stops its command line: reported at run.sh:2;
    `--num_train_epoch` is argparse's abbreviation of `--num_train_epochs`; a field the script declares is fine."""
    script = ("from dataclasses import dataclass\nfrom trl import TrlParser, SFTConfig\n@dataclass\n"
              "class ScriptArguments:\n    dataset_nam: str = 'x'\n")
    repo = make_repo(tmp_path, {"sft.yaml": "model_name_or_path: gpt2\n", "train.py": script,
                                "run.sh": "#!/bin/bash\naccelerate launch train.py --config sft.yaml "
                                          "--gradient_acumulation_steps 4 --num_train_epoch 3 --dataset_nam y\n"})
    found = [d for d in engine.check_path(repo / "sft.yaml").diagnostics if d.code == "TL523"]
    assert len(found) == 1 and found[0].path.endswith("run.sh") and found[0].span.start.line == 1
    assert "`--gradient_acumulation_steps`" in found[0].message and "`--gradient_accumulation_steps`" in found[0].message
    assert "Some specified arguments are not used by the HfArgumentParser" in found[0].detail


def test_tl224_value_is_decided_when_file_and_default_agree_whatever_the_script_reads(tmp_path):
    # uclaml/SPIN: `accelerate launch --config_file acc.yaml spin/run_spin.py config.yaml --num_train_epochs=5`;
    # how run_spin.py combines its config file with the command line is not known, but no `--gradient_accumulation_
    # steps` is passed: the script's value is the file's or TrainingArguments' default, here both 1 = the plugin's 1
    acc = ACC.replace("gradient_accumulation_steps: 16", "gradient_accumulation_steps: 1")
    run = "accelerate launch --config_file acc.yaml spin/run_spin.py recipes/config.yaml --num_train_epochs=5\n"
    script = ("from transformers import HfArgumentParser, TrainingArguments\n"
              "parser = HfArgumentParser((TrainingArguments,))\nargs = parser.parse()\n")
    sft = "model_name_or_path: m\nper_device_train_batch_size: 2\n"
    repo = make_repo(tmp_path, {"acc.yaml": acc, "run.sh": run, "spin/run_spin.py": script,
                                "recipes/config.yaml": sft + "gradient_accumulation_steps: 1\n"})
    result = engine.check_path(repo / "acc.yaml")
    assert result.launch.parser_reads == ""
    assert not _codes(result, "TL224")  # file 1 = default 1 = plugin 1: the two cannot differ
    _fresh()
    (repo / "recipes/config.yaml").write_text(sft + "gradient_accumulation_steps: 4\n")
    # the file's 4 or the default 1, whichever the script reads: one of them differs from the plugin's 1
    assert _codes(engine.check_path(repo / "acc.yaml"), "TL224")
