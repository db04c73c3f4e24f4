"""Launch targets (context/launch/targets.py): a launch command that carries its whole configuration as script
arguments is linted on its own, each finding at the script's line and column of the argument.

The repository below has princeton-nlp/LESS's shape (HELDOUT.md class J): `torchrun ... -m less.train.train` with
only flags, an HfArgumentParser over the repository's own ModelArguments and a TrainingArguments subclass, and no
YAML/JSON config at all."""

from __future__ import annotations

import json
import subprocess
import sys

from trainlint import engine
from trainlint.context.launch import targets as T
from trainlint.context.settings import Settings

from ctxrepo import make_repo

TRAIN_PY = """import sys
from transformers import HfArgumentParser, Trainer
from less.train.model_arguments import ModelArguments
from less.train.training_arguments import TrainingArguments


def main():
    parser = HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    Trainer(args=training_args).train()
"""
MODEL_ARGS = """from dataclasses import dataclass, field
from typing import Optional


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default=None)
    lora: bool = field(default=False)
    lora_r: int = field(default=8)
"""
TRAINING_ARGS = """from dataclasses import dataclass, field

from transformers import TrainingArguments as TA


@dataclass
class TrainingArguments(TA):
    percentage: float = field(default=1.0)
"""
TRAIN_SH = """#!/bin/bash
# fine-tune
torchrun --nproc_per_node 8 --nnodes 1 -m less.train.train \\
    --model_name_or_path meta-llama/Llama-2-7b-hf \\
    --do_train True \\
    --max_seq_length 2048 \\
    --evaluation_strategy no \\
    --gradient_acumulation_steps 32 \\
    --lr_scheduler_type linear \\
    --per_device_train_batch_size 1 \\
    --bf16 True \\
    --lora True --lora_r 128 \\
    --percentage 1.0 \\
    --output_dir out
"""
README = """# LESS-like

Train:

```bash
MODEL=gpt2
python -m less.train.train --model_name_or_path $MODEL --per_device_train_batch_size=4 --num_train_epoch 3 --lr_scheduler_type cosin --output_dir out
```
"""


def less_like(tmp_path, **more: str):
    files = {"requirements.txt": "transformers==4.52.0\ntorch==2.3.0\n", "less/__init__.py": "",
             "less/train/__init__.py": "", "less/train/train.py": TRAIN_PY,
             "less/train/model_arguments.py": MODEL_ARGS, "less/train/training_arguments.py": TRAINING_ARGS,
             "scripts/train.sh": TRAIN_SH, "README.md": README}
    files.update(more)
    return make_repo(tmp_path, files)


def found(result) -> list[tuple[str, str, int, int]]:
    """(code, severity, 0-based line, 0-based column) of each finding."""
    return [(d.code, d.severity.value, d.span.start.line, d.span.start.column) for d in result.diagnostics]


def test_a_launch_of_flags_only_is_linted_at_each_argument(tmp_path):
    repo = less_like(tmp_path)
    result = engine.check_path(repo / "scripts/train.sh", Settings())
    assert result.flavor == "launch"
    assert found(result) == [("TL524", "error", 6, 4), ("TL523", "warning", 7, 4)]
    removed, unknown = result.diagnostics
    assert removed.message == ("`--evaluation_strategy` was removed in transformers 4.51: HfArgumentParser stops; use "
                               "`--eval_strategy`")
    assert "Some specified arguments are not used by the HfArgumentParser: ['--evaluation_strategy', ...]" in \
        removed.detail
    assert removed.span.end.column == 4 + len("--evaluation_strategy")
    assert unknown.message.endswith("did you mean `--gradient_accumulation_steps`?")
    assert "Some specified arguments are not used by the HfArgumentParser" in unknown.detail
    # the fix renames the option in the script line, dashes kept; nothing else is edited
    (fix,) = removed.fixes
    (edit,) = fix.edits
    assert fix.title == "rename to `--eval_strategy`" and edit.new_text == "--eval_strategy"
    assert (edit.span.start.line, edit.span.start.column, edit.span.end.column) == (6, 4, 25)


def test_the_launch_decides_the_plan_and_the_estimate(tmp_path):
    repo = less_like(tmp_path)
    result = engine.check_path(repo / "scripts/train.sh", Settings())
    plan = result.plan
    assert plan.num_gpus.value == 8 and plan.micro_batch.value == 1 and plan.seq_len.value == 2048
    assert plan.precision.value.autocast == "bf16" and "Llama-2-7b" in str(plan.model.value)
    assert (plan.precision.origin.span.start.line, plan.precision.origin.span.start.column) == (10, 11)  # `True`
    assert plan.grad_accum.value == 1  # the misspelled option sets nothing: HfArgumentParser's default
    assert result.estimate is not None


def test_a_readme_block_is_linted_at_its_own_lines(tmp_path):
    repo = less_like(tmp_path)
    result = engine.check_path(repo / "README.md", Settings())
    line = README.splitlines()[6]
    # `--num_train_epoch` is argparse's abbreviation of --num_train_epochs (allow_abbrev): not reported
    assert found(result) == [("TL521", "error", 6, line.index("cosin"))]
    assert result.diagnostics[0].message.startswith("`--lr_scheduler_type` has no value \"cosin\"")
    assert result.plan.model.value == "gpt2"  # the shell variable the block sets
    assert result.plan.micro_batch.value == 4  # `--key=value`


def test_what_is_not_a_launch_target(tmp_path):
    repo = less_like(tmp_path, **{
        "ds.json": '{"train_micro_batch_size_per_gpu": "auto"}',
        "a.sh": "deepspeed -m less.train.train --deepspeed ds.json --do_train True --bf16 True --output_dir o --foo 1\n",
        "b.sh": "python -m less.train.train --config sft.yaml --do_train True --bf16 True --output_dir o\n",
        "c.sh": "accelerate launch --config_file acc.yaml -m less.train.train --do_train True --bf16 True "
                "--output_dir o\n",
        "d.sh": "python -m less.train.train --do_train True --output_dir o\n",  # two training arguments
        "e.sh": "python other/train.py --do_train True --bf16 True --output_dir o --gradient_acumulation_steps 2\n",
        "f.sh": "python -m less.train.train cfg.yaml --do_train True --bf16 True --output_dir o\n",
        ".github/workflows/t.yml": "jobs:\n  t:\n    steps:\n      - run: python -m less.train.train --do_train True "
                                  "--bf16 True --output_dir o --gradient_acumulation_steps 2\n",
    })
    for name in ("a.sh", "b.sh", "c.sh", "d.sh", "f.sh"):
        assert not T.targets_in((repo / name).read_text(), str(repo / name)), name
    # e.sh is a target by its command, but its script is not in the repository: nothing is claimed
    assert T.targets_in((repo / "e.sh").read_text(), str(repo / "e.sh"))
    assert engine.check_launch_path(repo / "e.sh", Settings()).flavor == "unknown"
    assert not T.is_target_file(str(repo / ".github/workflows/t.yml"))


def test_a_config_passed_by_the_launch_is_linted_with_it_and_the_script_is_not(tmp_path):
    repo = less_like(tmp_path, **{
        "scripts/train.sh": "python -m less.train.train sft.yaml\n",
        "scripts/sft.sh": "torchrun --nproc_per_node 2 -m less.train.train --config sft.yaml "
                          "--gradient_acumulation_steps 4\n",
        "sft.yaml": "model_name_or_path: gpt2\nper_device_train_batch_size: 2\noutput_dir: out\nbf16: true\n"})
    assert engine.check_launch_path(repo / "scripts/sft.sh", Settings()).diagnostics == []
    assert engine.check_launch_path(repo / "scripts/sft.sh", Settings()).flavor == "unknown"


def test_a_suppression_in_the_script_applies(tmp_path):
    repo = less_like(tmp_path, **{"scripts/train.sh": TRAIN_SH.replace("# fine-tune", "# trainlint: disable-file=TL524")})
    assert [d.code for d in engine.check_path(repo / "scripts/train.sh", Settings()).diagnostics] == ["TL523"]


def test_a_cut_line_of_the_target_is_reported_once(tmp_path):
    cut = TRAIN_SH.replace("--lr_scheduler_type linear \\\n", "--lr_scheduler_type linear \\  \n")
    assert cut != TRAIN_SH
    repo = less_like(tmp_path, **{"scripts/train.sh": cut})
    result = engine.check_path(repo / "scripts/train.sh", Settings())
    # the launch ends at the cut: the arguments after it are not its own (bash runs them as a command)
    assert [(d.code, d.span.start.line) for d in result.diagnostics] == [("TL524", 6), ("TL523", 7), ("TL012", 8)]
    assert result.plan.micro_batch.origin.kind == "default"


def test_values_as_hf_argparser_converts_them():
    schema = {"properties": {"bf16": {"type": ["boolean", "null"]}, "max_steps": {"type": "integer"},
                             "learning_rate": {"type": "number"}, "optim": {"enum": ["adamw_torch"]}}}
    assert T.converted("bf16", "True", False, schema) is True and T.converted("bf16", "no", False, schema) is False
    assert T.converted("bf16", "true", True, schema) is True  # a bare `--bf16`
    assert T.converted("max_steps", "-1", False, schema) == -1
    assert T.converted("max_steps", "x", False, schema) == "x"  # argparse stops on it; kept as written
    assert T.converted("learning_rate", "2e-5", False, schema) == 2e-5
    assert T.converted("optim", "adamw_torch", False, schema) == "adamw_torch"
    assert T.converted("lora_r", "128", False, schema) == 128  # a script's own field: read as it looks


def test_the_cli_walks_scripts_and_readmes_and_fixes_the_script(tmp_path):
    repo = less_like(tmp_path)

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "trainlint", *args], capture_output=True, text=True, cwd=repo,
                              timeout=120)

    proc = run("check", "--output-format", "json", ".")
    assert proc.returncode == 1, proc.stderr
    files = {f["path"]: [(d["code"], d["range"]["start"]["line"]) for d in f["diagnostics"]]
             for f in json.loads(proc.stdout)["files"]}
    assert files == {"scripts/train.sh": [("TL524", 7), ("TL523", 8)], "README.md": [("TL521", 7)]}
    assert "no config files found" not in proc.stderr
    proc = run("check", "--output-format", "json", "scripts/train.sh")
    assert [d["code"] for f in json.loads(proc.stdout)["files"] for d in f["diagnostics"]] == ["TL524", "TL523"]
    run("check", "--fix", "scripts/train.sh")  # the safe fix: the removed option renamed
    assert (repo / "scripts/train.sh").read_text() == TRAIN_SH.replace("--evaluation_strategy", "--eval_strategy")


def _on(gpu: str) -> Settings:
    from trainlint.context.settings import Overrides
    from trainlint.plan import Origin
    return Settings(cli=Overrides({"gpu": gpu}, Origin("cli")))


def test_memory_verdicts_of_a_launch_as_far_as_its_arguments_make_them(tmp_path):
    unknown = TRAIN_SH.replace("--per_device_train_batch_size 1", "--per_device_train_batch_size $BS")
    repo = less_like(tmp_path, **{"scripts/var.sh": unknown,
                                  "scripts/out.sh": TRAIN_SH.replace("--output_dir out", "--output_dir $OUT")})
    # the plan would price HfArgumentParser's default batch of 8 for `$BS`: no estimate, no verdict
    result = engine.check_path(repo / "scripts/var.sh", _on("H100"))
    assert result.estimate is None and not [d for d in result.diagnostics if d.code.startswith("TL10")]
    # an unknown output folder changes nothing; `--lora True` (the script's own field) may: at most a warning
    result = engine.check_path(repo / "scripts/out.sh", _on("H100"))
    (oom,) = [d for d in result.diagnostics if d.code == "TL100"]
    assert oom.severity.value == "warning" and "--lora" in oom.assumptions[-1]
    assert (oom.span.start.line, oom.span.start.column) == (3, 25)  # the model's value word
    assert "No change this launch can make fits" in oom.detail and "pass `--deepspeed`" in oom.detail
