"""The repository's own argument classes as part of the dialect (context/argclasses.py), and the parser package's
era that a launched script's imports pin (alignment-handbook's H4ArgumentParser)."""

from __future__ import annotations

from trainlint import engine
from trainlint.context import argclasses
from trainlint.context.settings import Settings

from ctxrepo import make_repo


def codes(result, code):
    return [d for d in result.diagnostics if d.code == code]


LIGHTNING = "trainer:\n  max_epochs: 3\n  target_batch_size: 64\n  max_epoch: 3\nmodel:\n  lr: 0.001\n"
TRAINER = ("from lightning.pytorch import Trainer\n\n\nclass BigTrainer(Trainer):\n"
           "    def __init__(self, *args, target_batch_size=-1, microbatch_size=1, **kwargs):\n"
           "        super().__init__(*args, **kwargs)\n")


def _cli(trainer_import: str, trainer_class: str = ", trainer_class=BigTrainer") -> str:
    return (f"from lightning.pytorch.cli import LightningCLI\n{trainer_import}\nfrom src.model import Model\n\n"
            f"LightningCLI(Model{trainer_class})\n")


def test_lightning_trainer_class_declares_trainer_keys(tmp_path):
    repo = make_repo(tmp_path, {"config.yaml": LIGHTNING, "src/trainer.py": TRAINER,
                                "src/model.py": "class Model:\n    pass\n",
                                "train.py": _cli("from src.trainer import BigTrainer")})
    result = engine.check_path(repo / "config.yaml")
    assert result.dialect.own == {"target_batch_size", "microbatch_size"}
    assert "src/trainer.py: BigTrainer" in result.dialect.own_note
    (d,) = codes(result, "TL526")  # the misspelt Trainer argument is still an error; the subclass's key is known
    assert "max_epoch`" in d.message and d.severity.value == "error" and not d.assumptions


def test_lightning_without_trainer_class_keeps_the_error(tmp_path):
    repo = make_repo(tmp_path, {"config.yaml": LIGHTNING, "src/trainer.py": TRAINER,
                                "src/model.py": "class Model:\n    pass\n",
                                "train.py": _cli("from src.trainer import BigTrainer", trainer_class="")})
    found = {d.message.split("`")[1]: d.severity.value for d in codes(engine.check_path(repo / "config.yaml"), "TL526")}
    assert found == {"trainer.target_batch_size": "error", "trainer.max_epoch": "error"}


def test_unreadable_trainer_class_makes_a_warning_that_says_so(tmp_path):
    repo = make_repo(tmp_path, {"config.yaml": LIGHTNING, "src/model.py": "class Model:\n    pass\n",
                                "train.py": _cli("from othertool.trainers import BigTrainer")})
    result = engine.check_path(repo / "config.yaml")
    assert result.dialect.own_unresolved == ("BigTrainer",)
    found = {d.message.split("`")[1]: d for d in codes(result, "TL526")}
    # a key BigTrainer may declare is a warning that says what it assumed; `max_epoch`, a near miss of `max_epochs`,
    # is a misspelling whichever trainer_class reads it
    assert found["trainer.target_batch_size"].severity.value == "warning"
    assert any("BigTrainer" in a for a in found["trainer.target_batch_size"].assumptions)
    assert found["trainer.max_epoch"].severity.value == "error"


def test_a_cut_file_is_still_read(tmp_path):
    """A module that does not parse to the end (a syntax error further down) still declares its classes."""
    cut = TRAINER.split("super()")[0].replace("**kwargs):\n", "**kwargs,\n")  # the signature left open
    path = make_repo(tmp_path, {"src/trainer.py": cut, "train.py": _cli("from src.trainer import BigTrainer")})
    found = argclasses.parser_classes(str(path / "train.py"), str(path), "lightning")
    assert found.fields == {"target_batch_size", "microbatch_size"} and not found.unresolved


DPO = ("model_name_or_path: Qwen/Qwen2.5-0.5B\nbeta: 0.1\nmax_prompt_length: 512\nmax_length: 1024\n"
       "learning_rate: 5.0e-7\nper_device_train_batch_size: 2\noutput_dir: out\n")


def _trl_repo(tmp_path, fields: str):
    args = ("from dataclasses import dataclass\nfrom trl import DPOConfig\n\n\n@dataclass\n"
            f"class MyDPOConfig(DPOConfig):\n{fields}")
    script = ("from trl import TrlParser, ModelConfig\nfrom myproj.args import MyDPOConfig\n\n"
              "parser = TrlParser((MyDPOConfig, ModelConfig))\n")
    return make_repo(tmp_path, {"dpo.yaml": DPO, "src/myproj/args.py": args, "scripts/dpo.py": script,
                                "run.sh": "accelerate launch scripts/dpo.py --config dpo.yaml\n"})


def test_a_key_of_the_repository_dataclass_is_known(tmp_path):
    result = engine.check_path(_trl_repo(tmp_path, "    max_prompt_length: int = 512\n") / "dpo.yaml")
    assert result.dialect.name == "trl" and "max_prompt_length" in (result.dialect.own or ())
    assert not [d for d in codes(result, "TL524") if "max_prompt_length" in d.message]


def test_without_it_the_removed_key_is_reported(tmp_path):
    result = engine.check_path(_trl_repo(tmp_path, "    ref_note: str = ''\n") / "dpo.yaml")
    assert result.dialect.own == {"ref_note"}
    assert [d for d in codes(result, "TL524") if "max_prompt_length" in d.message]


FORK = ("model_name_or_path: x\nstage: dpo\nfinetuning_type: lora\ntemplate: llama3\ncutof_len: 1024\n"
        "is_caldpo: true\nlearning_rate: 1.0e-5\noutput_dir: out\nnum_train_epochs: 1\n")
FINETUNING = ("from dataclasses import dataclass, field\n\n\n@dataclass\nclass RLHFArguments:\n"
              "    is_caldpo: bool = field(default=False)\n    pref_beta: float = 0.1\n")


def test_a_forked_framework_package_declares_its_keys(tmp_path):
    repo = make_repo(tmp_path, {"examples/a.yaml": FORK, "src/llamafactory/hparams/finetuning_args.py": FINETUNING,
                                "examples/run.sh": "llamafactory-cli train examples/a.yaml\n"})
    result = engine.check_path(repo / "examples/a.yaml")
    assert result.dialect.name == "llamafactory" and "is_caldpo" in (result.dialect.own or ())
    found = codes(result, "TL523")
    assert [d.message.split("`")[1] for d in found] == ["cutof_len"]  # the fork's key is known, the typo is not


def test_upstream_llamafactory_still_rejects_the_fork_key(tmp_path):
    repo = make_repo(tmp_path, {"examples/a.yaml": FORK, "examples/run.sh": "llamafactory-cli train examples/a.yaml\n"})
    found = codes(engine.check_path(repo / "examples/a.yaml"), "TL523")
    assert sorted(d.message.split("`")[1] for d in found) == ["cutof_len", "is_caldpo"]


def test_a_missing_launched_script_takes_its_folder_parser(tmp_path):
    beside = ("from transformers import HfArgumentParser\nfrom mylib.args import ModelArguments\n\n"
              "parser = HfArgumentParser((ModelArguments,))\nparser.parse_yaml_file('x')\n")
    repo = make_repo(tmp_path, {"configs/dpo.yaml": DPO, "examples/finetune.py": beside,
                                "run.sh": "python examples/iterative_dpo.py configs/dpo.yaml\n"})
    result = engine.check_path(repo / "configs/dpo.yaml")
    assert result.dialect.name == "hf" and "finetune.py beside it" in result.dialect.origin.note
    assert not codes(result, "TL524")  # max_prompt_length is TRL's: HfArgumentParser over other classes


H4_SCRIPT = ("from alignment import DataArguments, DPOConfig, H4ArgumentParser, ModelArguments\n\n\n"
             "def main():\n    parser = H4ArgumentParser((ModelArguments, DataArguments, DPOConfig))\n"
             "    model_args, data_args, training_args = parser.parse()\n")
OLD_RECIPE = DPO + "evaluation_strategy: steps\nwarmup_ratio: 0.1\ntorch_dtype: bfloat16\n"


def test_an_old_parser_import_dates_the_recipe(tmp_path):
    repo = make_repo(tmp_path, {"c.yaml": OLD_RECIPE, "run_dpo.py": H4_SCRIPT,
                                "README.md": "```\naccelerate launch run_dpo.py c.yaml\n```\n"})
    result = engine.check_path(repo / "c.yaml")
    ((package, below, reason),) = result.dialect.era
    assert package == "alignment-handbook" and below == "0.4.0.dev0" and "run_dpo.py imports" in reason
    assert not codes(result, "TL524")


def test_no_launch_uses_every_script_of_the_parser(tmp_path):
    repo = make_repo(tmp_path, {"c.yaml": OLD_RECIPE, "run_dpo.py": H4_SCRIPT, "run_sft.py": H4_SCRIPT})
    result = engine.check_path(repo / "c.yaml")
    assert result.dialect.era and not codes(result, "TL524")


def test_todays_parser_keeps_the_removed_keys(tmp_path):
    script = "from trl import TrlParser, DPOConfig, ModelConfig\nparser = TrlParser((DPOConfig, ModelConfig))\n"
    repo = make_repo(tmp_path, {"c.yaml": OLD_RECIPE, "run_dpo.py": script,
                                "README.md": "```\naccelerate launch run_dpo.py --config c.yaml\n```\n"})
    result = engine.check_path(repo / "c.yaml")
    assert not result.dialect.era
    assert {d.message.split("`")[1] for d in codes(result, "TL524")} >= {"evaluation_strategy", "warmup_ratio"}


def test_a_repository_that_ships_the_package_has_no_era(tmp_path):
    repo = make_repo(tmp_path, {"c.yaml": OLD_RECIPE, "scripts/run_dpo.py": H4_SCRIPT,
                                "src/alignment/__init__.py": "from .configs import H4ArgumentParser\n",
                                "src/alignment/configs.py": "class H4ArgumentParser:\n    pass\n",
                                "README.md": "```\naccelerate launch scripts/run_dpo.py c.yaml\n```\n"})
    assert not engine.check_path(repo / "c.yaml").dialect.era


def test_a_documented_run_of_a_cloned_old_script_dates_the_recipe(tmp_path):
    readme = ("```bash\ngit clone https://github.com/huggingface/alignment-handbook.git\ncd alignment-handbook\n"
              "python -m pip install .\n```\n\n```\naccelerate launch --num_processes 4 scripts/run_dpo.py "
              "your_config_name.yaml\n```\n")
    repo = make_repo(tmp_path, {"recipes/c.yaml": OLD_RECIPE, "recipes/README.md": readme})
    result = engine.check_path(repo / "recipes/c.yaml")
    ((package, below, reason),) = result.dialect.era
    assert (package, below) == ("alignment-handbook", "0.4.0.dev0") and reason.startswith("recipes/README.md:8 runs")
    assert not codes(result, "TL524")


def test_todays_cloned_script_dates_nothing(tmp_path):
    readme = ("git clone https://github.com/huggingface/alignment-handbook.git\ncd alignment-handbook\n"
              "accelerate launch scripts/dpo.py --config your_config_name.yaml\n")
    repo = make_repo(tmp_path, {"recipes/c.yaml": OLD_RECIPE, "recipes/README.md": readme})
    result = engine.check_path(repo / "recipes/c.yaml")
    assert not result.dialect.era and codes(result, "TL524")


def test_an_unpinned_install_of_the_old_framework_is_one_warning(tmp_path):
    readme = ("```\npip install git+https://github.com/huggingface/alignment-handbook.git\n```\n\n"
              "```\naccelerate launch run_dpo.py a.yaml\naccelerate launch run_dpo.py b.yaml\n```\n")
    repo = make_repo(tmp_path, {"a.yaml": OLD_RECIPE, "b.yaml": OLD_RECIPE, "run_dpo.py": H4_SCRIPT,
                                "README.md": readme})
    results = [engine.check_path(repo / name) for name in ("a.yaml", "b.yaml")]
    found = {(d.path, d.span.start.line, d.severity.value) for r in results for d in codes(r, "TL532")}
    assert found == {(str(repo / "README.md"), 1, "warning")}  # the install line, the same finding from both
    (d,) = codes(results[0], "TL532")
    assert "without a ref" in d.message and "0.4.0.dev0" in d.message and len(d.message) <= 120
    assert "cannot import name 'DataArguments' from 'alignment'" in d.detail


def test_a_pinned_install_is_not_reported(tmp_path):
    readme = ("pip install git+https://github.com/huggingface/alignment-handbook.git@v0.3.0\n"
              "accelerate launch run_dpo.py a.yaml\n")
    repo = make_repo(tmp_path, {"a.yaml": OLD_RECIPE, "run_dpo.py": H4_SCRIPT, "README.md": readme})
    result = engine.check_path(repo / "a.yaml")
    assert result.dialect.era and not codes(result, "TL532") and not codes(result, "TL524")


def test_a_clone_checked_out_at_a_ref_is_not_reported(tmp_path):
    readme = ("git clone https://github.com/huggingface/alignment-handbook.git\ncd alignment-handbook\n"
              "git checkout 6da26f5\naccelerate launch scripts/run_dpo.py your_config.yaml\n")
    repo = make_repo(tmp_path, {"recipes/c.yaml": OLD_RECIPE, "recipes/README.md": readme})
    result = engine.check_path(repo / "recipes/c.yaml")
    assert result.dialect.era and not codes(result, "TL532")


def test_lightning_file_without_its_script_is_certain_only_for_a_near_miss(tmp_path):
    # linted alone (RWKV's config-example.yaml without the repository): the LightningCLI that reads it may pass a
    # trainer_class with more arguments, so `target_batch_size` is a warning; `max_epoch` misspells `max_epochs`
    # whichever trainer_class reads it: an error
    (tmp_path / ".git").mkdir()
    (tmp_path / "config.yaml").write_text("trainer:\n  max_epoch: 3\n  target_batch_size: 32\nmodel:\n  lr: 0.1\n")
    found = {d.message.split("`")[1]: d for d in engine.check_path(str(tmp_path / "config.yaml"), Settings()).diagnostics
             if d.code == "TL526"}
    assert found["trainer.max_epoch"].severity.value == "error"
    assert found["trainer.target_batch_size"].severity.value == "warning"
    assert "no LightningCLI( script" in " ".join(found["trainer.target_batch_size"].assumptions)
