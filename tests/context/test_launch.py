"""Launch context: the command that names the config decides world size, nodes, sharding, precision."""

from __future__ import annotations

from pathlib import Path

from trainlint import engine
from trainlint.context import launch as L

from ctxrepo import SFT, ZERO3, make_repo

CMD = "accelerate launch --config_file recipes/accelerate_configs/zero3.yaml scripts/run_sft.py recipes/m/sft/c.yaml"



def _said(d) -> str:
    """A finding's headline and its detail (the explanation and the figures behind it)."""
    return f"{d.message} {d.detail}"

def handbook(tmp_path, where: str, text: str):
    return make_repo(tmp_path, {"recipes/accelerate_configs/zero3.yaml": ZERO3,
                                "recipes/m/sft/c.yaml": "# trainlint: gpu=A100-80GB\n" + SFT, where: text})


def test_readme_code_block_with_accelerate_config(tmp_path):
    repo = handbook(tmp_path, "README.md", f"# x\n\n```shell\nACCELERATE_LOG_LEVEL=info " + CMD.replace(" scripts/", " \\\n  scripts/") + "\n```\n")
    result = engine.check_path(repo / "recipes/m/sft/c.yaml")
    launch = result.launch
    assert launch.launcher == "accelerate" and launch.origin.path.endswith("README.md")
    assert launch.num_processes.value == 8 and launch.sharding.value == "zero3"
    assert launch.mixed_precision.value == "bf16" and launch.accelerate_config.endswith("zero3.yaml")
    assert result.plan.num_gpus.value == 8 and result.plan.num_gpus.origin.kind == "launch"
    assert result.plan.zero_stage.value == 3


def test_cli_flags_override_the_accelerate_config(tmp_path):
    repo = handbook(tmp_path, "scripts/train.sh",
                    "#!/bin/bash\nN=4\n" + CMD.replace("launch ", "launch --num_processes $N --num_machines=2 "))
    launch = engine.check_path(repo / "recipes/m/sft/c.yaml").launch
    assert launch.num_processes.value == 4 and launch.num_machines.value == 2
    assert launch.origin.path.endswith("train.sh") and launch.origin.span.start.line == 2


def test_script_beats_readme_and_variables_in_paths(tmp_path):
    repo = handbook(tmp_path, "README.md", f"```\n{CMD}\n```\n")
    (repo / "slurm").mkdir()
    (repo / "slurm/train.slurm").write_text(
        "#SBATCH --nodes=2\nMODEL=m\nsrun torchrun --nproc_per_node 8 --nnodes 2 scripts/run_sft.py "
        "recipes/$MODEL/sft/c.yaml\n")
    launch = engine.check_path(repo / "recipes/m/sft/c.yaml").launch
    # the script comes first, but the README's 8 processes disagree with its 16: said, and neither taken as fact
    assert launch.launcher == "torchrun" and launch.others == 1 and launch.num_processes.value is None
    assert "disagree" in launch.assumed and "16 (slurm/train.slurm:3)" in launch.assumed and "8 (README.md:2)" in launch.assumed
    L.clear_cache()
    (repo / "slurm/train.slurm").write_text(
        "#SBATCH --nodes=2\nMODEL=m\nsrun torchrun --nproc_per_node 8 scripts/run_sft.py recipes/$MODEL/sft/c.yaml\n")
    launch = engine.check_path(repo / "recipes/m/sft/c.yaml").launch
    assert launch.launcher == "torchrun" and launch.num_processes.value == 8 and "disagree" not in launch.assumed


def test_no_launch_found(tmp_path):
    repo = make_repo(tmp_path, {"c.yaml": SFT, "run.sh": "accelerate launch other.py other.yaml\n"})
    result = engine.check_path(repo / "c.yaml")
    assert not result.launch.found and result.plan.num_gpus.origin.kind == "default"


def test_launchers():
    cases = {
        "torchrun --nproc_per_node=8 --nnodes 2 train.py x.yaml": ("torchrun", 16, None),
        "deepspeed --num_gpus 4 train.py --deepspeed ds.json": ("deepspeed", 4, "deepspeed"),
        "deepspeed --include localhost:0,1 train.py --deepspeed ds.json": ("deepspeed", 2, "deepspeed"),
        "tune run --nnodes 1 --nproc_per_node 2 full_finetune_distributed --config x": ("tune", 2, "fsdp"),
        "tune run lora_finetune_single_device --config x": ("tune", 1, "none"),
        "FORCE_TORCHRUN=1 NNODES=2 NPROC_PER_NODE=8 llamafactory-cli train x.yaml": ("llamafactory", 16, None),
        "accelerate launch --use_deepspeed --zero_stage 2 --num_processes 4 t.py x.yaml": ("accelerate", 4, "zero2"),
        "accelerate launch --use_fsdp --num_processes 2 t.py x.yaml": ("accelerate", 2, "fsdp"),
        "accelerate launch -m axolotl.cli.train x.yml": ("accelerate", None, None),
        "python -m torch.distributed.run --nproc_per_node 4 t.py": ("torchrun", 4, None),
        "CUDA_VISIBLE_DEVICES=0 python train.py x.yaml": ("python", 1, None),
    }
    for text, (launcher, procs, sharding) in cases.items():
        launch = L.from_command_line(text, L.Origin("launch", "t.sh"), [])
        assert (launch.launcher, launch.num_processes.value, launch.sharding.value) == (launcher, procs, sharding), text


def test_torchtune_usage_comment(tmp_path):
    config = ("# To launch on 2 devices, run the following command from root:\n"
              "#   tune run --nnodes 1 --nproc_per_node 2 full_finetune_distributed --config llama3_1/8B_full\n"
              "model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\nbatch_size: 2\n"
              "optimizer:\n  _component_: torch.optim.AdamW\n  lr: 2e-5\n")
    repo = make_repo(tmp_path, {"8B_full.yaml": config})
    result = engine.check_path(repo / "8B_full.yaml")
    assert result.launch.launcher == "tune" and result.launch.num_processes.value == 2
    assert result.plan.num_gpus.value == 2 and result.plan.fsdp.value == "full_shard"


def test_declared_launch(tmp_path):
    repo = make_repo(tmp_path, {"acc/zero3.yaml": ZERO3, "c.yaml": SFT,
                                "pyproject.toml": '[tool.trainlint.per-file."c.yaml"]\nlaunch = "acc/zero3.yaml"\n'})
    result = engine.check_path(repo / "c.yaml")
    assert result.launch.num_processes.value == 8 and result.plan.zero_stage.value == 3
    (repo / "c.yaml").write_text('# trainlint: launch="torchrun --nproc_per_node 4 t.py c.yaml"\n' + SFT)
    result = engine.check_path(repo / "c.yaml")
    assert result.launch.launcher == "torchrun" and result.plan.num_gpus.value == 4


def test_index_is_bounded_and_skips_venvs(tmp_path):
    repo = make_repo(tmp_path, {"c.yaml": SFT, ".venv/x.sh": "torchrun --nproc_per_node 8 t.py c.yaml\n",
                                "node_modules/y.sh": "torchrun --nproc_per_node 8 t.py c.yaml\n"})
    assert not engine.check_path(repo / "c.yaml").launch.found


def test_show_settings_cli(tmp_path, capsys):
    from trainlint import cli

    repo = handbook(tmp_path, "README.md", f"```\n{CMD}\n```\n")
    (repo / "setup.py").write_text('install_requires=["trl==0.18.0"]\n')
    code = cli.main(["check", "--show-settings", "--exit-zero", str(repo / "recipes/m/sft/c.yaml")])
    out = capsys.readouterr().out
    assert code == 0
    assert "num_gpus" in out and "zero3.yaml" in out and "README.md:1" in out.replace("README.md:2", "README.md:1")
    assert "trl                0.18.0  (pin:" in out or "0.18.0  (pin:" in out
    code = cli.main(["check", "--show-settings", "--exit-zero", "--versions", "trl=0.20.0", "--launch",
                     "torchrun --nproc_per_node 2 t.py", str(repo / "recipes/m/sft/c.yaml")])
    out = capsys.readouterr().out
    assert "0.20.0  (cli" in out and "torchrun, 2 processes" in out


def test_show_settings_paths_are_relative_to_the_working_directory(tmp_path, capsys, monkeypatch):
    from trainlint import cli

    repo = handbook(tmp_path, "README.md", f"```\n{CMD}\n```\n")
    monkeypatch.chdir(repo)
    cli.main(["check", "--show-settings", "--exit-zero", "recipes/m/sft/c.yaml"])
    out = capsys.readouterr().out
    assert "recipes/accelerate_configs/zero3.yaml" in out and "README.md:" in out
    assert str(repo) not in out


def test_brace_expansion_names_each_config(tmp_path):
    repo = make_repo(tmp_path, {"recipes/zero3.yaml": ZERO3, "recipes/sft/config_grok.yaml": SFT,
                                "recipes/sft/config_anthropic.yaml": SFT, "recipes/sft/config_other.yaml": SFT,
                                "README.md": "```shell\naccelerate launch --config_file recipes/zero3.yaml scripts/sft.py "
                                             "--config recipes/sft/config_{grok,anthropic}.yaml\n```\n"})
    assert L.brace_words("c_{a,b}_{x,y}.yaml") == ["c_a_x.yaml", "c_a_y.yaml", "c_b_x.yaml", "c_b_y.yaml"]
    assert L.brace_words("run_{task}.py") == ["run_{task}.py"]
    assert len(L.brace_words("{" + ",".join("abcdefgh") + "}" * 1 + "{" + ",".join("abcdefgh") + "}")) == \
        L.MAX_BRACE_WORDS
    for name in ("config_grok.yaml", "config_anthropic.yaml"):
        launch = L.find(str(repo / "recipes/sft" / name))
        assert launch.launcher == "accelerate" and launch.script == "scripts/sft.py", name
    assert not L.find(str(repo / "recipes/sft/config_other.yaml")).found


DS_AUTO = ('{"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",\n'
           ' "zero_optimization": {"stage": 2}}\n')
WIZARD_CMD = ("deepspeed train_wizardcoder.py --model_name_or_path bigcode/starcoder --output_dir out "
              "--gradient_accumulation_steps 4 --per_device_train_batch_size 2 --deepspeed configs/deepspeed_config.json")


CODER_SCRIPT = ("import transformers\nparser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))\n"
                "model_args, training_args = parser.parse_args_into_dataclasses()\n")


def _wizard(tmp_path, readme: str, coder_config: bool = True):
    files = {"WizardCoder/README.md": readme, "WizardCoder/train_wizardcoder.py": CODER_SCRIPT,
             "training/src/configs/deepspeed_config.json": DS_AUTO, "training/src/train_freeform.py": "import transformers\n"}
    if coder_config:
        files["WizardCoder/configs/deepspeed_config.json"] = DS_AUTO
    return make_repo(tmp_path, files)


def test_a_relative_path_never_names_another_projects_file(tmp_path):
    # WizardLM: WizardCoder/README.md's `--deepspeed configs/deepspeed_config.json` is not training/src/configs/'s
    repo = _wizard(tmp_path, f"```bash\n{WIZARD_CMD}\n```\n", coder_config=False)
    other = engine.check_path(repo / "training/src/configs/deepspeed_config.json")
    assert not other.launch.found
    assert all(d.severity.value != "error" for d in other.diagnostics)


def test_two_sub_projects_each_with_the_config_only_the_named_one_is_launched(tmp_path):
    repo = _wizard(tmp_path, f"```bash\n{WIZARD_CMD}\n```\n")
    other = engine.check_path(repo / "training/src/configs/deepspeed_config.json")
    assert not other.launch.found
    mine = engine.check_path(repo / "WizardCoder/configs/deepspeed_config.json")
    # a README's code block runs from the README's own folder (no `cd` says otherwise): its paths name the file
    # from there, so the launch is certain
    assert mine.launch.found and mine.launch.role == "hf-deepspeed" and not mine.launch.assumed
    assert mine.launch.cwd.endswith("WizardCoder")
    assert [d.severity.value for d in mine.diagnostics if d.code == "TL202"] == ["error"]


def test_a_cd_before_the_command_makes_its_folder_certain(tmp_path):
    readme = f"```bash\ncd WizardCoder\n{WIZARD_CMD}\n```\n"
    repo = _wizard(tmp_path, "")
    (repo / "README.md").write_text(readme)
    mine = engine.check_path(repo / "WizardCoder/configs/deepspeed_config.json")
    assert mine.launch.found and not mine.launch.assumed and mine.launch.cwd.endswith("WizardCoder")
    assert [d.severity.value for d in mine.diagnostics if d.code == "TL202"] == ["error"]
    assert not engine.check_path(repo / "training/src/configs/deepspeed_config.json").launch.found
    # `cd X && cmd` in a script, and a script that moves to its own folder
    (repo / "README.md").write_text("")
    L.clear_cache()
    (repo / "run.sh").write_text(f"cd WizardCoder && {WIZARD_CMD}\n")
    assert engine.check_path(repo / "WizardCoder/configs/deepspeed_config.json").launch.cwd.endswith("WizardCoder")
    (repo / "run.sh").unlink()
    (repo / "training/src/run.sh").write_text('cd "$(dirname "$0")"\n' + WIZARD_CMD + "\n")
    L.clear_cache()
    launch = engine.check_path(repo / "training/src/configs/deepspeed_config.json").launch
    assert launch.found and launch.cwd.endswith("src") and not launch.assumed
    assert not engine.check_path(repo / "WizardCoder/configs/deepspeed_config.json").launch.found


def test_working_dirs_of_each_kind(tmp_path):
    repo = make_repo(tmp_path, {"a/b/x.sh": "", "a/README.md": "", "a/c/.keep": ""})
    def dirs(path, rank, cd=()):
        found, certain = L.working_dirs(L.Command(str(repo / path), 0, "", rank, (), (), cd), repo)
        return [str(Path(d).relative_to(repo)) for d in found], certain
    assert dirs(".github/workflows/ci.yml", 2) == (["."], True)
    assert dirs("README.md", 3) == (["."], True)
    assert dirs("a/README.md", 3) == (["a", "."], False)
    assert dirs("a/README.md", 3, ("c",)) == (["a/c"], True)  # only a/ holds c/
    assert dirs("a/README.md", 3, ("c", "c")) == (["a/c"], True)  # the next block's `cd c`: a fresh shell
    assert dirs("a/Makefile", 1) == (["a"], True)
    assert dirs("a/b/x.sh", 0) == ([".", "a/b", "a"], False)
    assert dirs("a/b/x.sh", 0, ("\0self/..",)) == (["a"], True)
    assert dirs("a/b/x.sh", 0, ("\0",))[1] is False  # `cd $UNSET`
    commands = L.commands_in("cd a && torchrun t.py --deepspeed c/ds.json\npushd /tmp\npopd\ntorchrun t.py x.yaml\n",
                             str(repo / "run.sh"))
    assert [c.cd for c in commands] == [("a",), ("a", "/tmp", "\0popd")]
    make = L.commands_in("train:\n\tcd a && torchrun t.py x.yaml\n\tcd b\n\ttorchrun t.py y.yaml\n", str(repo / "Makefile"), 1)
    assert [c.cd for c in make] == [("a",), ()]  # a recipe line's cd ends with its shell
    ci = L.commands_in("jobs:\n  t:\n    steps:\n      - working-directory: sub\n        run: torchrun t.py c.yaml\n"
                       "      - run: torchrun t.py d.yaml\n", str(repo / ".github/workflows/ci.yml"), 2)
    assert [c.cd for c in ci] == [("sub",), ()]


def test_tl007_reads_an_hf_deepspeed_path_from_the_launch_folder(tmp_path):
    cfg = ("model_name_or_path: meta-llama/Llama-3.1-8B\nper_device_train_batch_size: 2\noutput_dir: out\n"
           "deepspeed: ds_zero_3.json\n")
    repo = make_repo(tmp_path, {"demo/configs/sft.yaml": cfg, "demo/configs/ds_zero_3.json": DS_AUTO,
                                "demo/train.py": CODER_SCRIPT,
                                "README.md": "```bash\ncd demo\naccelerate launch train.py configs/sft.yaml\n```\n"})
    result = engine.check_path(repo / "demo/configs/sft.yaml")
    assert result.launch.found and result.launch.cwd.endswith("demo")
    found = [d for d in result.diagnostics if d.code == "TL007"]
    assert found and "'configs/ds_zero_3.json'" in _said(found[0]) and "Expected a string path" in _said(found[0])
    (repo / "demo/configs/sft.yaml").write_text(cfg.replace("ds_zero_3.json", "configs/ds_zero_3.json"))
    L.clear_cache()
    assert not [d for d in engine.check_path(repo / "demo/configs/sft.yaml").diagnostics if d.code == "TL007"]
    # no certain launch folder: next to the file still counts, as before
    (repo / "demo/configs/sft.yaml").write_text(cfg)
    (repo / "README.md").write_text("")
    L.clear_cache()
    assert not [d for d in engine.check_path(repo / "demo/configs/sft.yaml").diagnostics if d.code == "TL007"]


def test_a_model_loaded_in_bf16_under_a_launched_deepspeed_keeps_fp32_masters(tmp_path):
    # torch_dtype: bfloat16 alone would be pure bf16 (bf16 Adam moments, no master copy); once the launch hands
    # the run to the DeepSpeed engine, its ZeRO optimizer keeps fp32 master weights and fp32 moments.
    repo = make_repo(tmp_path, {"recipes/accelerate_configs/zero3.yaml": ZERO3,
                                "recipes/m/sft/c.yaml": "# trainlint: gpu=A100-80GB\ntorch_dtype: bfloat16\n" + SFT,
                                "README.md": f"```\n{CMD}\n```\n"})
    plan = engine.check_path(repo / "recipes/m/sft/c.yaml").plan
    assert plan.zero_stage.value == 3
    assert plan.precision.value.param_dtype == "bf16" and plan.precision.value.master_weights
    alone = make_repo(tmp_path / "alone", {"c.yaml": "# trainlint: gpu=A100-80GB\ntorch_dtype: bfloat16\n" + SFT})
    assert not engine.check_path(alone / "c.yaml").plan.precision.value.master_weights


AXOLOTL = """base_model: meta-llama/Llama-3.1-8B
datasets:
  - path: x/y
    type: alpaca
sequence_len: 4096
micro_batch_size: 2
gradient_accumulation_steps: 4
num_epochs: 1
optimizer: adamw_torch
learning_rate: 1e-5
bf16: true
output_dir: ./out
"""
DS_ZERO3 = '{"zero_optimization": {"stage": 3}, "train_micro_batch_size_per_gpu": "auto"}\n'


def test_readme_module_launch_with_its_deepspeed_override(tmp_path):
    """A README beside the config runs it from its own folder: `torchrun -m axolotl.cli.train prm.yaml --deepspeed
    ../ds_configs/zero3.json` is ZeRO-3 over 8 GPUs, the DeepSpeed file read from the README's folder."""
    readme = "# PRM\n\n```bash\ntorchrun --nproc_per_node 8 -m axolotl.cli.train prm.yaml --deepspeed ../ds_configs/zero3.json\n```\n"
    repo = make_repo(tmp_path, {"examples/prm/prm.yaml": AXOLOTL, "examples/ds_configs/zero3.json": DS_ZERO3,
                                "examples/prm/README.md": readme})
    result = engine.check_path(repo / "examples/prm/prm.yaml")
    assert result.launch.launcher == "torchrun" and result.launch.script == "axolotl.cli.train"
    assert result.plan.num_gpus.value == 8 and result.plan.zero_stage.value == 3
    assert result.plan.zero_stage.origin.path.endswith("examples/ds_configs/zero3.json")
    assert not result.launch.assumed and result.launch.cwd == str(repo / "examples/prm")  # the README's own folder
    L.clear_cache()
    # the same file named from another folder than the README's: the command line still wins over the file's key
    (repo / "examples/prm/prm.yaml").write_text(AXOLOTL + "deepspeed: ../ds_configs/zero1.json\n")
    (repo / "examples/ds_configs/zero1.json").write_text('{"zero_optimization": {"stage": 1}}\n')
    assert engine.check_path(repo / "examples/prm/prm.yaml").plan.zero_stage.value == 3
    L.clear_cache()
    (repo / "examples/prm/README.md").write_text(readme.replace(" --deepspeed ../ds_configs/zero3.json", ""))
    assert engine.check_path(repo / "examples/prm/prm.yaml").plan.zero_stage.value == 1


def test_hf_script_deepspeed_argument_links_the_file(tmp_path):
    """`accelerate launch train.py --config sft.yaml --deepspeed ds/z3.json`: TrlParser's command line over the file."""
    repo = make_repo(tmp_path, {"sft.yaml": SFT, "ds/z3.json": DS_ZERO3, "train.py": "from trl import TrlParser\n",
                                "run.sh": "accelerate launch --num_processes 4 train.py --config sft.yaml "
                                          "--deepspeed ds/z3.json\n"})
    result = engine.check_path(repo / "sft.yaml")
    assert result.plan.zero_stage.value == 3 and result.plan.num_gpus.value == 4


SLURM = """#!/bin/bash
#SBATCH --gres=gpu:8
if [[ "$*" == *"--help"* ]]; then
  echo "Usage: sbatch slurm/train.slurm [options]"
  exit 0
fi
MODEL=""
TASK=""
CONFIG_SUFFIX=""
ACCELERATOR=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --model)
      MODEL="$2"
      shift 2
      ;;
    --task)
      TASK="$2"
      shift 2
      ;;
    --config)
      CONFIG_SUFFIX="$2"
      shift 2
      ;;
    --accelerator)
      ACCELERATOR="$2"
      shift 2
      ;;
    *)
      exit 1
      ;;
  esac
done
CONFIG_FILE=recipes/$MODEL/$TASK/config_$CONFIG_SUFFIX.yaml
NUM_NODES=$SLURM_NNODES
GPUS_PER_NODE=8
WORLD_SIZE=$(($NUM_NODES*$GPUS_PER_NODE))
export CMD=" \\
    scripts/run_$TASK.py $CONFIG_FILE
    "
export LAUNCHER="ACCELERATE_LOG_LEVEL=info accelerate launch \\
    --config_file recipes/accelerate_configs/$ACCELERATOR.yaml  \\
    --num_machines $NUM_NODES \\
    --num_processes $WORLD_SIZE \\
    --machine_rank $SLURM_PROCID \\
    "
SRUN_ARGS=" \\
    --wait=60 \\
    --nodes=$NUM_NODES
    "
srun $SRUN_ARGS bash -c "$LAUNCHER $CMD" 2>&1
"""
FSDP = "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\nnum_processes: 8\n"


def test_slurm_script_built_in_variables_from_its_invocation(tmp_path):
    """`sbatch --nodes=2 slurm/train.slurm --model m --task sft --config v1 --accelerator fsdp` in recipes/README.md:
    the script's case loop binds MODEL, TASK, ...; its command is `bash -c "$LAUNCHER $CMD"` under srun, both built
    in multi-line quoted variables; the world size is $((SLURM_NNODES*8)); the script runs from the root."""
    repo = make_repo(tmp_path, {
        "recipes/m/sft/config_v1.yaml": SFT, "recipes/m/sft/config_v2.yaml": SFT,
        "recipes/accelerate_configs/fsdp.yaml": FSDP, "recipes/accelerate_configs/zero3.yaml": ZERO3,
        "slurm/train.slurm": SLURM, "scripts/run_sft.py": "from trl import TrlParser\n",
        "recipes/README.md": "```shell\nsbatch --nodes=2 slurm/train.slurm --model m --task sft --config v1 "
                             "--accelerator fsdp\n```\n"})
    launch = L.find(str(repo / "recipes/m/sft/config_v1.yaml"), root=str(repo))
    assert launch.launcher == "accelerate" and launch.origin.path.endswith("slurm/train.slurm")
    assert launch.sharding.value == "fsdp" and launch.accelerate_config.endswith("accelerate_configs/fsdp.yaml")
    assert launch.num_processes.value == 16 and launch.num_machines.value == 2 and not launch.assumed
    assert "recipes/README.md:2: sbatch --nodes=2 slurm/train.slurm" in launch.origin.note
    assert launch.script == "scripts/run_sft.py" and launch.cwd == str(repo)
    # v2 is run by no invocation: the script's own text names no file
    assert not L.find(str(repo / "recipes/m/sft/config_v2.yaml"), root=str(repo)).found
    L.clear_cache()
    # a second invocation of the same config with ZeRO-3: the two disagree, neither is taken
    (repo / "recipes/README.md").write_text(
        "```shell\nsbatch --nodes=2 slurm/train.slurm --model m --task sft --config v1 --accelerator fsdp\n"
        "sbatch --nodes=2 slurm/train.slurm --model m --task sft --config v1 --accelerator zero3\n```\n")
    launch = L.find(str(repo / "recipes/m/sft/config_v1.yaml"), root=str(repo))
    assert launch.sharding.value is None and launch.num_processes.value == 16 and launch.others == 1
    assert "disagree" in launch.assumed and "fsdp (slurm/train.slurm:51 as recipes/README.md:2 runs it)" in launch.assumed
    assert "zero3 (slurm/train.slurm:51 as recipes/README.md:3 runs it)" in launch.assumed


def test_positional_script_arguments_from_another_script(tmp_path):
    """`bash scripts/launch.sh m 4` from run_all.sh: MODEL=$1, N=${2:-8}; a conditional reassignment is unknown."""
    repo = make_repo(tmp_path, {
        "recipes/m.yaml": SFT, "recipes/accelerate_configs/zero3.yaml": ZERO3, "train.py": "",
        "scripts/launch.sh": "MODEL=$1\nN=${2:-8}\nif [ -n \"$3\" ]; then\n  STAGE=zero3\nfi\n"
                             "accelerate launch --config_file recipes/accelerate_configs/zero3.yaml "
                             "--num_processes $N train.py recipes/$MODEL.yaml\n",
        "run_all.sh": "bash scripts/launch.sh m 4 > log.txt\n"})
    launch = L.find(str(repo / "recipes/m.yaml"), root=str(repo))
    assert launch.found and launch.num_processes.value == 4 and launch.sharding.value == "zero3"
    assert "run_all.sh:1: bash scripts/launch.sh m 4" in launch.origin.note
    L.clear_cache()
    (repo / "run_all.sh").write_text("bash scripts/launch.sh m\n")
    assert L.find(str(repo / "recipes/m.yaml"), root=str(repo)).num_processes.value == 8  # ${2:-8}


def test_shell_expansion_rules():
    """Assignments expand when made; arithmetic of known integers; command substitutions and conditional
    reassignments unknown; unquoted variables split into words; `bash -c` strings read as the command."""
    commands = L.commands_in("A=2\nB=$((A*4))\nC=$(nproc)\nif x; then\n  A=3\nfi\nD=\"--num_processes $B\"\n"
                             "accelerate launch $D --num_machines $A t.py c.yaml\n", "run.sh")
    env = dict(commands[0].env)
    assert env["B"] == "8" and env["C"] == "\0" and env["A"] == "\0"
    p = L.parse_command(commands[0].text, env)
    assert p.values["num_processes"] == "8" and p.script == "t.py" and "\0" in p.values["num_machines"]
    p = L.parse_command('srun --nodes=2 bash -c "torchrun --nproc_per_node 4 t.py c.yaml"', {})
    assert p.launcher == "torchrun" and p.values["num_processes"] == "4"


def test_usage_comment_of_another_config(tmp_path):
    """A usage line naming another config is that config's launch, not this file's; one naming this file (or its
    stem, torchtune's `--config llama3/8B_lora`) is."""
    body = "model:\n  _component_: torchtune.models.llama3.lora_llama3_8b\nbatch_size: 2\n"
    repo = make_repo(tmp_path, {
        "a/8B_lora.yaml": "# tune run --nproc_per_node 8 lora_finetune_distributed --config llama3/70B_lora\n" + body,
        "b/8B_lora.yaml": "# tune run --nproc_per_node 8 lora_finetune_distributed --config llama3/8B_lora\n" + body,
        "c/8B_lora.yaml": "# accelerate launch --config_file other.yaml train.py\n" + body})
    assert not engine.check_path(repo / "a/8B_lora.yaml").launch.found
    launch = engine.check_path(repo / "b/8B_lora.yaml").launch
    assert launch.launcher == "tune" and launch.num_processes.value == 8
    assert not engine.check_path(repo / "c/8B_lora.yaml").launch.found


def test_torchrun_options_from_the_environment(tmp_path):
    """torchrun reads an option not given from PET_<OPTION> (torch/distributed/argparse_util.py, `env`); an
    invocation's `NAME=value` prefix is the invoked script's environment."""
    repo = make_repo(tmp_path, {"c.yaml": SFT, "t.py": "",
                                "train.sh": "torchrun --nnodes 1 t.py c.yaml\n",
                                "run.sh": "PET_NPROC_PER_NODE=4 bash train.sh $1\n"})
    assert L.find(str(repo / "c.yaml"), root=str(repo)).num_processes.value == 4


def test_a_variable_file_name_names_no_file(tmp_path):
    """`configs/$1.yaml` (or `$CFG.json`) with nothing binding the variable could name any file: none is taken;
    `configs/sft_$1.yaml` keeps enough of the name to match."""
    repo = make_repo(tmp_path, {"configs/a.yaml": SFT, "configs/sft_b.yaml": SFT, "t.py": "",
                                "run.sh": "torchrun --nproc_per_node 4 t.py configs/$1.yaml\n"
                                          "torchrun --nproc_per_node 2 t.py configs/sft_$1.yaml\n"})
    assert not L.find(str(repo / "configs/a.yaml"), root=str(repo)).found
    assert L.find(str(repo / "configs/sft_b.yaml"), root=str(repo)).num_processes.value == 2


def test_sbatch_nodes_from_the_script_or_its_invocation(tmp_path):
    """SLURM_NNODES from the script's own `#SBATCH --nodes=2`, or from `sbatch --nodes=4 train.slurm` elsewhere."""
    slurm = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gres=gpu:8\n" \
            "srun torchrun --nnodes $SLURM_NNODES --nproc_per_node $SLURM_GPUS_ON_NODE t.py c.yaml\n"
    repo = make_repo(tmp_path, {"c.yaml": SFT, "t.py": "", "train.slurm": slurm})
    launch = L.find(str(repo / "c.yaml"), root=str(repo))
    assert launch.num_processes.value == 16 and launch.num_machines.value == 2
    L.clear_cache()
    (repo / "README.md").write_text("```\nsbatch --nodes=4 train.slurm\n```\n")
    launch = L.find(str(repo / "c.yaml"), root=str(repo))
    assert launch.num_processes.value == 32 and "README.md:2: sbatch --nodes=4 train.slurm" in launch.origin.note


def test_deepspeed_argument_through_an_unknown_variable(tmp_path):
    """`--deepspeed $DS` with DS unset: the config's own deepspeed key still links its file, and with none the
    sharding is unknown (not "no sharding")."""
    repo = make_repo(tmp_path, {"sft.yaml": SFT + "deepspeed: ds/z3.json\n", "ds/z3.json": DS_ZERO3,
                                "train.py": "from trl import TrlParser\n",
                                "run.sh": "torchrun --nproc_per_node 4 train.py --config sft.yaml --deepspeed $DS\n"})
    result = engine.check_path(repo / "sft.yaml")
    assert result.plan.zero_stage.value == 3
    L.clear_cache()
    (repo / "sft.yaml").write_text(SFT)
    result = engine.check_path(repo / "sft.yaml")
    assert not L.sharding_known(result.plan, result.launch, "huggingface")


def test_an_exported_variable_reaches_the_invoked_script(tmp_path):
    """bash hands exported variables to the processes it starts: `export N_GPUS=4` then `bash train.sh` gives the
    script $N_GPUS; a plain assignment stays in the invoking shell (the script's $N_GPUS is then empty); a prefix
    (`N_GPUS=8 bash train.sh`) is the script's environment too, and wins over an export."""
    train = "torchrun --nproc_per_node $N_GPUS t.py c.yaml\n"
    for run, expected in (("export N_GPUS=4\nbash train.sh\n", 4), ("N_GPUS=4\nexport N_GPUS\nbash train.sh\n", 4),
                          ("N_GPUS=4\nbash train.sh\n", None), ("export N_GPUS=4\nN_GPUS=8 bash train.sh\n", 8),
                          ("bash train.sh\nexport N_GPUS=4\n", None)):
        L.clear_cache()
        repo = make_repo(tmp_path / str(len(list(tmp_path.iterdir()))),
                         {"c.yaml": SFT, "t.py": "", "train.sh": train, "run.sh": run})
        assert L.find(str(repo / "c.yaml"), root=str(repo)).num_processes.value == expected, run


def test_a_copied_usage_header_of_a_recipe_is_not_this_files_launch(tmp_path):
    """SWE-Gym's policy configs keep torchtune's qwen2_5/7B_full header ("To launch on 2 devices ... --config
    qwen2_5/7B_full") in files of other names: that is the recipe's launch, not theirs (no world size of 2)."""
    header = ("# To launch on 2 devices, run the following command from root:\n"
              "#   tune run --nnodes 1 --nproc_per_node 2 full_finetune_distributed --config qwen2_5/7B_full\n")
    body = "model:\n  _component_: torchtune.models.qwen2_5.qwen2_5_7b_instruct\nbatch_size: 2\n"
    repo = make_repo(tmp_path, {"configs/policy/1116-qwen25_coder_32b_full-lr1e-4.yaml": header + body,
                                "configs/7B_full.yaml": header + body})
    assert not engine.check_path(repo / "configs/policy/1116-qwen25_coder_32b_full-lr1e-4.yaml").launch.found
    assert engine.check_path(repo / "configs/7B_full.yaml").launch.num_processes.value == 2


def test_ci_pipelines_are_named_as_ci_services_name_them(tmp_path):
    """A YAML counts as a CI pipeline (read for launch commands) by its folder or by "ci" as a word of its name,
    never for the letters inside another word: a recipe.yaml or precision.yaml is a training config."""
    from trainlint.context.launch import index

    for ci in (".github/workflows/train.yml", ".gitlab-ci.yml", "ci.yaml", "ci/nightly-ci.yml", ".circleci/config.yml",
               "azure-pipelines.yml", "tests/gpu_ci.yaml"):
        assert index.is_ci_file(ci) and index._kind(ci) == 2, ci
        assert L.is_launch_file(ci), ci
    for config in ("recipes/recipe.yaml", "configs/precision.yaml", "efficient_lora.yaml",
                   "pytorch__torchtune__recipes__configs__llama3_1__8B_full.yaml"):
        assert not index.is_ci_file(config) and index._kind(config) is None, config
        assert not L.is_launch_file(config), config
    # a repository whose recipe names another config in a usage comment: not a launch of that config
    (tmp_path / ".git").mkdir()
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "a_recipe.yaml").write_text("# accelerate launch --num_processes 8 train.py recipes/b.yaml\n"
                                                       "model_name_or_path: gpt2\n")
    (tmp_path / "recipes" / "b.yaml").write_text("model_name_or_path: gpt2\nper_device_train_batch_size: 4\n")
    assert not engine.check_path(tmp_path / "recipes" / "b.yaml").launch.found


def test_a_config_is_looked_up_once_per_index_and_again_after_a_file_appears(tmp_path):
    """`find` remembers what the index's commands give a config (its edits, the fix-settling stage's re-lints and
    the language server's keystrokes do not change that); a new index (a launch script changed) or a created file
    (the language server: `forget_lookups`) looks again. Here the script's relative path names
    scripts/configs/a.yaml from scripts/ until a configs/a.yaml at the root, tried first, takes the name."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "scripts" / "configs").mkdir(parents=True)
    config = tmp_path / "scripts" / "configs" / "a.yaml"
    config.write_text("model_name_or_path: gpt2\n")
    script = tmp_path / "scripts" / "run.sh"
    script.write_text("#!/bin/bash\npython train.py configs/a.yaml\n")
    L.clear_cache()
    assert L.find(str(config)).script == "train.py"
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "a.yaml").write_text("model_name_or_path: gpt2\n")
    assert L.find(str(config)).found  # remembered for this index
    L.forget_lookups()
    assert not L.find(str(config)).found  # configs/a.yaml from the root is the file the command names
    (tmp_path / "configs" / "a.yaml").unlink()
    script.write_text("#!/bin/bash\npython sft.py configs/a.yaml\n")
    L.clear_cache()  # what the language server does when a launch script changes
    assert L.find(str(config)).script == "sft.py"


def test_the_file_name_test_passes_every_command_that_names_the_config(tmp_path):
    """`finding._file_names` spares a config the commands none of whose tokens can name a file of its name; it must
    pass every command `_names_file` accepts (variables, brace expansions, `--opt=value`, quotes, launcher options)."""
    from trainlint.context.launch import finding

    (tmp_path / ".git").mkdir()
    configs = ["configs/sft_llama.yaml", "configs/a.yaml", "ds/zero3.json", "recipes/qwen/dpo.yml", "accel/fsdp.yaml"]
    for rel in configs:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x: 1\n")
    commands = [
        "python train.py configs/sft_llama.yaml",
        "python train.py --config=configs/a.yaml",
        'python train.py "configs/a.yaml"',
        "MODEL=llama\npython train.py configs/sft_$MODEL.yaml",
        "python train.py configs/sft_${UNSET}.yaml",
        "python train.py configs/{a,sft_llama}.yaml",
        "deepspeed train.py --deepspeed ds/zero3.json",
        "torchrun train.py --deepspeed=ds/zero${STAGE}.json",
        "python train.py recipes/$NAME/dpo.yml",
        "accelerate launch --config_file accel/fsdp.yaml train.py",
        "trl sft --config configs/a.yaml",
        "python train.py other/thing.yaml",
    ]
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\n" + "\n".join(commands) + "\n")
    L.clear_cache()
    repo_index = L.index_for(str(tmp_path))
    accepted = rejected = 0
    for rel in configs:
        config = tmp_path / rel
        named = False
        for command in repo_index.commands:
            parsed, bases, _certain = finding.parsed_command(command, tmp_path)
            if parsed is None:
                continue
            names = finding._file_names(parsed)
            if finding._names_file(parsed, config, bases, tmp_path):
                accepted += 1
                named = True
                assert finding._may_be_named(names, config.name), (command.text, rel, names)
            elif not finding._may_be_named(names, config.name):
                rejected += 1
        assert named, rel  # each config is named by some command: the test is exercised for each
    assert rejected > accepted, (accepted, rejected)


def test_an_index_command_is_parsed_once_for_the_configs_it_names_and_the_files_it_launches_with(tmp_path, monkeypatch):
    """A command is parsed once per index: for the config it names (`find`) and for the DeepSpeed or accelerate
    file it is launched with (`links.launched_with`, which a check of that file alone asks)."""
    from trainlint.context import links
    from trainlint.context.launch import finding

    (tmp_path / ".git").mkdir()
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "sft.yaml").write_text("model_name_or_path: gpt2\n")
    (tmp_path / "ds.json").write_text('{"zero_optimization": {"stage": 2}}\n')
    (tmp_path / "run.sh").write_text("#!/bin/bash\naccelerate launch --deepspeed_config_file ds.json train.py "
                                     "configs/sft.yaml\n")
    parses: list[str] = []
    real = finding.parse_command
    counted = lambda text, env: parses.append(text) or real(text, env)  # noqa: E731
    for module in (finding, L):  # where the lookups and links.launched_with take it from
        monkeypatch.setattr(module, "parse_command", counted)
    L.clear_cache()
    assert L.find(str(tmp_path / "configs" / "sft.yaml")).found
    assert links.launched_with(str(tmp_path / "ds.json")) == [str(tmp_path / "configs" / "sft.yaml")]
    assert len(parses) == 1, parses


def test_a_file_that_invokes_several_scripts_is_read_into_shell_lines_once(tmp_path, monkeypatch):
    """The invocations of each script are looked for in the files that name it; a README naming several scripts
    is read into its shell lines once for all of them, and each script still gets its own invocation."""
    from trainlint.context.launch import index

    (tmp_path / ".git").mkdir()
    for name in ("sft", "dpo"):
        (tmp_path / f"{name}.yaml").write_text("model_name_or_path: gpt2\n")
        (tmp_path / f"{name}.sh").write_text(f'#!/bin/bash\nNPROC=$1\ntorchrun --nproc_per_node $NPROC train.py {name}.yaml\n')
    (tmp_path / "README.md").write_text("```bash\nbash sft.sh 4\nbash dpo.sh 2\n```\n")
    read: list[str] = []
    real = index.shell_lines
    monkeypatch.setattr(index, "shell_lines", lambda text, path, *a, **k: read.append(path) or real(text, path, *a, **k))
    L.clear_cache()
    assert L.find(str(tmp_path / "sft.yaml")).num_processes.value == 4
    assert L.find(str(tmp_path / "dpo.yaml")).num_processes.value == 2
    assert read.count(str(tmp_path / "README.md")) == 1, read


def test_an_overlaid_script_stands_in_for_its_cut_commands_under_its_own_name_and_through_links(tmp_path):
    """The text that stands in for a script (an unsaved buffer, a fix being settled) gives the cut commands of every
    index entry that is that file: the script itself, a link to it, and all of them under a root reached through a
    linked folder."""
    from trainlint.document.reading import overlay

    repo = tmp_path.resolve() / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "train.yaml").write_text("model_name_or_path: gpt2\n")
    script = repo / "run.sh"
    script.write_text("#!/bin/bash\naccelerate launch train.py train.yaml\n")
    (repo / "tools").mkdir()
    (repo / "tools" / "launch.sh").symlink_to(script)
    cut = "#!/bin/bash\naccelerate launch train.py \\ \n  train.yaml\n"
    alias = tmp_path.resolve() / "alias"
    alias.symlink_to(repo)
    for root in (repo, alias):
        L.clear_cache()
        repo_index = L.index_for(str(root))
        assert repo_index.cuts() == ()
        with overlay({str(script): cut}):
            assert sorted(c.path for c in repo_index.cuts()) == [str(root / "run.sh"), str(root / "tools" / "launch.sh")]
        assert repo_index.cuts() == ()


def test_the_cuts_of_the_same_stand_in_texts_are_read_once_and_the_kept_sets_are_bounded(tmp_path, monkeypatch):
    """The fix-settling stage re-lints each config with the same script fix applied: its cut commands are read from
    that text once; another text gives its own cuts, and an index keeps at most MAX_OVERLAID_CUTS such sets."""
    from trainlint.context.launch import index
    from trainlint.document.reading import overlay

    repo = tmp_path.resolve()
    (repo / ".git").mkdir()
    script = repo / "run.sh"
    script.write_text("#!/bin/bash\naccelerate launch train.py train.yaml\n")
    reads: list[str] = []
    real = index.cuts_in
    monkeypatch.setattr(index, "cuts_in", lambda text, path: reads.append(text) or real(text, path))
    L.clear_cache()
    repo_index = L.index_for(str(repo))
    cut = "#!/bin/bash\naccelerate launch train.py \\ \n  train.yaml\n"
    for _ in range(3):
        with overlay({str(script): cut}):
            assert [c.line for c in repo_index.cuts()] == [1]
    assert reads.count(cut) == 1
    for n in range(index.MAX_OVERLAID_CUTS + 3):
        text = "#!/bin/bash\n" + "\n" * n + "accelerate launch train.py \\ \n  train.yaml\n"
        with overlay({str(script): text}):
            assert [c.line for c in repo_index.cuts()] == [n + 1]
        assert len(repo_index.overlaid_cuts) <= index.MAX_OVERLAID_CUTS
