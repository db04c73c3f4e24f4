"""The parser that reads the file, and formats trainlint recognises but does not read."""

from __future__ import annotations

from trainlint import engine

from ctxrepo import make_repo

TYPO = "model_name_or_path: Qwen/Qwen2.5-0.5B\nlerning_rate: 1.0e-5\nper_device_train_batch_size: 2\n"


def codes(result, code):
    return [d for d in result.diagnostics if d.code == code]


def test_unknown_parser_keeps_a_misspelling_at_warning(tmp_path):
    """A key one typo away from a known field is a defect whichever parser reads it (it stops or drops the key):
    a warning that says the parser is unknown, not info (issue 21, item 3)."""
    repo = make_repo(tmp_path, {"c.yaml": TYPO})
    result = engine.check_path(repo / "c.yaml")
    assert not result.dialect.known
    (d,) = codes(result, "TL523")
    assert d.severity.value == "warning" and "parser that reads this file is unknown" in d.assumptions[0]
    assert "stops or trains without it" in d.message


def test_script_imports_decide_the_parser(tmp_path):
    script = "from trl import TrlParser, SFTConfig\nparser = TrlParser((SFTConfig,))\n"
    repo = make_repo(tmp_path, {"c.yaml": TYPO, "scripts/sft.py": script,
                                "run.sh": "accelerate launch scripts/sft.py --config c.yaml\n"})
    result = engine.check_path(repo / "c.yaml")
    assert result.dialect.name == "trl" and result.dialect.script.endswith("sft.py")
    (d,) = codes(result, "TL523")
    assert d.severity.value == "warning" and not any("parser" in a for a in d.assumptions)


def test_launcher_and_package_decide_the_parser(tmp_path):
    lf = "model_name_or_path: x\nstage: sft\nfinetuning_type: lora\ntemplate: llama3\ncutoff_len: 1024\n"
    repo = make_repo(tmp_path, {"examples/a.yaml": lf, "examples/run.sh": "llamafactory-cli train examples/a.yaml\n"})
    assert engine.check_path(repo / "examples/a.yaml").dialect.name == "llamafactory"
    repo2 = make_repo(tmp_path / "r2", {"pyproject.toml": '[project]\nname = "open-instruct"\n', "c.yaml": TYPO})
    assert engine.check_path(repo2 / "c.yaml").dialect.name == "open-instruct"


def test_declared_dialect(tmp_path):
    repo = make_repo(tmp_path, {"c.yaml": "# trainlint: dialect=hf\n" + TYPO})
    result = engine.check_path(repo / "c.yaml")
    assert result.dialect.name == "hf" and result.dialect.origin.kind == "directive"


def test_llamafactory_fields(tmp_path):
    lf = "model_name_or_path: x\nstage: sft\nfinetuning_type: lora\ntemplate: llama3\ncutof_len: 1024\n"
    repo = make_repo(tmp_path, {"a.yaml": lf, "run.sh": "llamafactory-cli train a.yaml\n"})
    result = engine.check_path(repo / "a.yaml")
    (d,) = codes(result, "TL523")
    assert "cutoff_len" in d.message and "LLaMA-Factory" in d.message


def test_gpt_neox_is_not_a_deepspeed_file(tmp_path):
    neox = ('{"pipe_parallel_size": 1, "model_parallel_size": 1, "num_layers": 12, "hidden_size": 768,\n'
            ' "optimizer": {"type": "Adam", "params": {"lr": 0.0006}}, "zero_optimization": {"stage": 1},\n'
            ' "train_micro_batch_size_per_gpu": 4, "fp16": {"enabled": true}, "train_iters": 10, "norm": "layernorm"}\n')
    repo = make_repo(tmp_path, {"configs/125M.yml": neox})
    result = engine.check_path(repo / "configs/125M.yml")
    assert result.flavor == "unknown"
    assert [d.code for d in result.diagnostics] == ["TL005"] and "GPT-NeoX" in result.diagnostics[0].message


def test_workflow_is_not_a_training_config(tmp_path):
    repo = make_repo(tmp_path, {".github/workflows/ci.yml": "on: [push]\njobs:\n  t:\n    runs-on: ubuntu-latest\n"})
    result = engine.check_path(repo / ".github/workflows/ci.yml")
    assert result.flavor == "unknown" and "CI" in result.diagnostics[0].message
