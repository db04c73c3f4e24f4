"""Training arguments a launched script builds in its own code (context.codeargs): never the library's default for
a field the script sets."""

from __future__ import annotations

import json

from trainlint import engine
from trainlint.context import codeargs
from trainlint.context import dialect as D
from trainlint.context import launch as L

from ctxrepo import make_repo

SCRIPT = '''from dataclasses import dataclass, field
from typing import Optional
from transformers import HfArgumentParser, TrainingArguments, Trainer


@dataclass
class ScriptArguments:
    model_name: Optional[str] = field(default="gpt2")
    bf16: Optional[bool] = field(default={bf16})
    gradient_accumulation_steps: Optional[int] = field(default=4)
    deepspeed: Optional[str] = field(default=None)


parser = HfArgumentParser(ScriptArguments)
script_args = parser.parse_args_into_dataclasses()[0]
training_args = TrainingArguments(output_dir="out", bf16=script_args.bf16, deepspeed=script_args.deepspeed,
                                  gradient_accumulation_steps=script_args.gradient_accumulation_steps,
                                  per_device_train_batch_size={micro})
Trainer(args=training_args).train()
'''
DS = json.dumps({"bf16": {"enabled": True}, "zero_optimization": {"stage": 2}, "gradient_accumulation_steps": 4,
                 "train_micro_batch_size_per_gpu": 2})


def _repo(tmp_path, bf16="True", micro="2"):
    L.clear_cache()
    D.clear_cache()
    codeargs.clear_cache()
    return make_repo(tmp_path, {"train.py": SCRIPT.format(bf16=bf16, micro=micro), "ds.json": DS,
                                "run.sh": "deepspeed --num_gpus 8 train.py --deepspeed ds.json --model_name gpt2\n"})


def _tl600(repo):
    return [d for d in engine.check_path(repo / "ds.json").diagnostics if d.code == "TL600"]


def test_values_the_script_sets_in_code_are_not_library_defaults(tmp_path):
    """`TrainingArguments(bf16=script_args.bf16, ...)` with the script's `bf16 = True`: bf16 is true, not
    TrainingArguments' false; accumulation 4 from the script's default, the batch 2 a constant (it used to report
    three mismatches against TrainingArguments' defaults)."""
    assert _tl600(_repo(tmp_path)) == []


def test_a_script_default_that_differs_is_reported_with_its_line(tmp_path):
    found = _tl600(_repo(tmp_path, bf16="False", micro="8"))
    assert len(found) == 2 and all(d.severity.value == "error" for d in found)
    said = " ".join(f"{d.message} {d.detail}" for d in found)
    assert "train.py:16: TrainingArguments(bf16=script_args.bf16)" in said and "ScriptArguments.bf16" in said
    assert "TrainingArguments(per_device_train_batch_size=8)" in said


def test_a_value_computed_in_code_makes_no_claim(tmp_path):
    assert _tl600(_repo(tmp_path, bf16="True", micro="compute_batch()")) == []


def test_code_value_reading(tmp_path):
    path = tmp_path / "t.py"
    path.write_text("import argparse\nfrom trl import SFTConfig\np = argparse.ArgumentParser()\n"
                    "p.add_argument('--lr', type=float, default=2e-5)\np.add_argument('--bf16', action='store_true')\n"
                    "a = p.parse_args()\ncfg = SFTConfig(learning_rate=a.lr, bf16=a.bf16, **extra)\n")
    assert codeargs.code_value(str(path), "learning_rate").value == 2e-5
    assert codeargs.code_value(str(path), "bf16").value is False
    assert not codeargs.code_value(str(path), "max_grad_norm").known  # **extra may set it
    path.write_text("import transformers\nclass TrainingArguments(transformers.TrainingArguments):\n"
                    "    gradient_checkpointing: bool = True\n")
    assert codeargs.code_value(str(path), "gradient_checkpointing").value is True
    assert codeargs.code_value(str(path), "bf16") is None  # the library's default applies


POST_PARSE = '''from alignment import H4ArgumentParser, ModelArguments, DataArguments
from trl import DPOConfig


def main():
    parser = H4ArgumentParser((ModelArguments, DataArguments, DPOConfig))
    model_args, data_args, training_args = parser.parse()
    training_args.do_eval = False
    training_args.do_eval = True
    other.bf16 = True
'''


def test_an_assignment_after_parsing_is_the_value_the_run_uses(tmp_path):
    script = tmp_path / "run_sppo.py"
    script.write_text(POST_PARSE)
    code = codeargs.code_value(str(script), "do_eval")
    assert code is not None and code.value is True and "run_sppo.py:9" in code.where  # the last assignment wins
    assert codeargs.code_value(str(script), "bf16") is None  # `other` is not what the parser returned


def test_a_string_the_script_overwrites_after_parsing_is_not_an_invalid_value(tmp_path):
    # angelahzyuan/SPPO: `do_eval: "no"` in the recipe, `training_args.do_eval = False` in run_sppo.py after parse()
    recipe = 'model_name_or_path: m\nbeta: 0.1\ndo_eval: "no"\noutput_dir: out\n'
    repo = make_repo(tmp_path, {"recipes/sppo.yaml": recipe, "sppo/run_sppo.py": POST_PARSE.replace(
        "    training_args.do_eval = True\n", "")})
    result = engine.check_path(repo / "recipes/sppo.yaml")
    assert result.dialect.known and result.dialect.script.endswith("run_sppo.py")
    assert not [d for d in result.diagnostics if d.code == "TL520"]
    codeargs.clear_cache()
    (repo / "sppo/run_sppo.py").write_text(POST_PARSE.replace("    training_args.do_eval = False\n", "").replace(
        "    training_args.do_eval = True\n", ""))
    result = engine.check_path(repo / "recipes/sppo.yaml")
    assert [d.code for d in result.diagnostics if d.code == "TL520"] == ["TL520"]  # nothing overwrites it
