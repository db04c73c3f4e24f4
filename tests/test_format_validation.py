"""Each format's own validation at the version in play (TL647-TL651, TL432, TL002 for OmegaConf readers), the
severity of certain defects (TL523), the parser's real conversions (TL520) and the version ranges of TL520 (Lightning)
and TL622 (accelerate): each version-dependent claim at the oldest and newest known release inside its range and one
outside it."""

from __future__ import annotations

import pytest

from trainlint import engine
from trainlint.context.settings import Settings
from trainlint.diagnostics import Severity

SETTINGS = Settings(use_project_config=False)


def lint(text: str, tmp_path, name: str = "config.yaml", pins: str = ""):
    path = tmp_path / name
    path.write_text(text)
    if pins:  # the repository's pins: read like a user's checkout (a .git root, project settings on)
        (tmp_path / "requirements.txt").write_text(pins)
        (tmp_path / ".git").mkdir(exist_ok=True)
        return engine.check_path(path, Settings())
    return engine.check_path(path, SETTINGS)


def found(result, code: str) -> list[tuple[int, str]]:
    return sorted((d.span.start.line + 1, d.severity.value) for d in result.diagnostics if d.code == code)


# ---- TL523: a misspelt known field is at least a warning whatever the parser ---------------------------------

HF_TYPOS = """output_dir: out
learning_rate: 2.0e-5
num_train_epoch: 3
per_device_train_batch_size: 8
gradient_acumulation_steps: 4
"""


def test_misspelt_field_is_a_warning_when_the_parser_is_unknown(tmp_path):
    result = lint(HF_TYPOS, tmp_path)
    assert found(result, "TL523") == [(3, "warning"), (5, "warning")]
    diag = next(d for d in result.diagnostics if d.code == "TL523")
    assert "did you mean `num_train_epochs`" in diag.message and diag.assumptions


def test_misspelt_field_is_an_error_for_a_complete_parser_that_stops(tmp_path):
    text = "# trainlint: dialect=llamafactory\nstage: sft\nfinetuning_type: lora\ntemplate: llama3\n" + HF_TYPOS
    assert found(lint(text, tmp_path), "TL523") == [(7, "error"), (9, "error")]


# ---- TL520: values as the parser hands them over ----------------------------------------------------------------

def test_lora_target_modules_string_is_valid(tmp_path):
    text = ("model_name_or_path: Qwen/Qwen2.5-0.5B\ndataset_name: trl-lib/Capybara\noutput_dir: out\nuse_peft: true\n"
            "lora_target_modules: all-linear\n")
    assert found(lint(text, tmp_path), "TL520") == []


def test_a_list_field_whose_consumer_takes_no_string_is_still_checked(tmp_path):
    text = "# trainlint: dialect=hf\noutput_dir: out\nlabel_names: labels\n"
    assert found(lint(text, tmp_path), "TL520") == [(3, "error")]


LIGHTNING = """trainer:
  accelerator: null
  devices: 2
  max_epochs: 10
model:
  lr: 0.001
"""


@pytest.mark.parametrize("version,reported", [("2.0.9", True), ("2.6.6", True), ("1.9.5", False)])
def test_lightning_schema_applies_to_2x_only(tmp_path, version, reported):
    result = lint(LIGHTNING, tmp_path, pins=f"lightning=={version}\n")
    assert bool(found(result, "TL520")) is reported


# ---- TL622: an FSDP key the pinned accelerate still maps ---------------------------------------------------------

ACCELERATE = """compute_environment: LOCAL_MACHINE
distributed_type: FSDP
fsdp_config:
  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
  fsdp_backward_prefetch_policy: BACKWARD_PRE
  fsdp_sharding_strategy: 1
machine_rank: 0
mixed_precision: bf16
num_machines: 1
num_processes: 8
"""


@pytest.mark.parametrize("version,reported", [("0.26.1", False), ("0.34.2", False), ("1.0.1", True)])
def test_accelerate_key_judged_at_the_pinned_release(tmp_path, version, reported):
    result = lint(ACCELERATE, tmp_path, pins=f"accelerate=={version}\n")
    assert bool(found(result, "TL622")) is reported


def test_accelerate_key_unpinned_names_the_releases_that_read_it(tmp_path):
    result = lint(ACCELERATE, tmp_path)
    (diag,) = [d for d in result.diagnostics if d.code == "TL622"]
    assert diag.severity is Severity.WARNING and "<1.0.0" in diag.message


# ---- TL002: OmegaConf readers refuse duplicate keys ---------------------------------------------------------------

TORCHTUNE_DUP = """model:
  _component_: torchtune.models.llama3_1.lora_llama3_1_8b
  lora_attn_modules: ['q_proj', 'v_proj']
batch_size: 2
batch_size: 4
epochs: 1
dtype: bf16
"""


def test_torchtune_duplicate_key_is_an_error(tmp_path):
    assert found(lint(TORCHTUNE_DUP, tmp_path), "TL002") == [(5, "error")]


LF_DUP = """# trainlint: llamafactory={v}
model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct
stage: sft
do_train: true
finetuning_type: lora
finetuning_type: lora
template: llama3
output_dir: out
"""


@pytest.mark.parametrize("version,severity", [("0.9.4", "error"), ("0.9.5", "error"), ("0.9.3", "warning")])
def test_llamafactory_duplicate_key_by_release(tmp_path, version, severity):
    result = lint(LF_DUP.format(v=version), tmp_path)
    assert found(result, "TL002") == [(6, severity)]
    (diag,) = [d for d in result.diagnostics if d.code == "TL002"]
    assert ("OmegaConf" in diag.message) is (severity == "error")


# ---- TL648 and the memory verdict of a file its reader refuses ---------------------------------------------------

LF_QLORA = """model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct
stage: sft
do_train: true
finetuning_type: qlora
lora_target: all
dataset: identity
template: llama3
cutoff_len: 2048
per_device_train_batch_size: 1
output_dir: out
bf16: true
"""


def test_refused_finetuning_type_gets_no_memory_verdict(tmp_path):
    path = tmp_path / "lf.yaml"
    path.write_text("# trainlint: dialect=llamafactory\n" + LF_QLORA)
    result = engine.check_path(path, Settings(use_project_config=False, cli=_gpu("A100-80GB")))
    assert found(result, "TL648") == [(5, "error")]
    assert not {"TL100", "TL101", "TL104"} & {d.code for d in result.diagnostics}
    assert result.estimate is None


def test_refused_value_on_a_parser_guessed_from_the_keys_is_a_warning(tmp_path):
    """Only the keys say LLaMA-Factory (a fork such as Javkonline/AMoPO adds stages): the verdict rests on the guess."""
    result = lint(LF_QLORA.replace("finetuning_type: qlora", "finetuning_type: lora").replace("stage: sft",
                                                                                           "stage: modpo"), tmp_path)
    (diag,) = [d for d in result.diagnostics if d.code == "TL648"]
    assert diag.severity is Severity.WARNING and "upstream LLaMA-Factory" in diag.message
    assert any("dialect=llamafactory" in a for a in diag.assumptions)


@pytest.mark.parametrize("how", ["launch", "pin", "version"])
def test_refused_value_is_an_error_where_the_context_names_llamafactory(tmp_path, how):
    text = LF_QLORA.replace("finetuning_type: qlora", "finetuning_type: lora").replace("stage: sft", "stage: modpo")
    if how == "launch":
        (tmp_path / ".git").mkdir()
        (tmp_path / "train.sh").write_text("llamafactory-cli train lf.yaml\n")
        path = tmp_path / "lf.yaml"
        path.write_text(text)
        result = engine.check_path(path, Settings())
    elif how == "pin":
        result = lint(text, tmp_path, name="lf.yaml", pins="llamafactory==0.9.3\n")
    else:
        result = lint("# trainlint: llamafactory=0.9.3\n" + text, tmp_path)
    (diag,) = [d for d in result.diagnostics if d.code == "TL648"]
    assert diag.severity is Severity.ERROR and "upstream" not in diag.message and not diag.assumptions


def _gpu(name: str):
    from trainlint.cli import _cli_overrides, build_parser

    return _cli_overrides(build_parser().parse_args(["check", "x", "--gpu", name]))


@pytest.mark.parametrize("version,reported", [("0.9.2", True), ("0.9.3", True), ("0.9.4", False), ("0.9.5", False)])
def test_llamafactory_oft_by_release(tmp_path, version, reported):
    text = f"# trainlint: llamafactory={version}\nstage: sft\nfinetuning_type: oft\ntemplate: qwen\noutput_dir: o\n"
    assert bool(found(lint(text, tmp_path), "TL648")) is reported


# ---- TL647: axolotl closed sets per release ------------------------------------------------------------------------

AXOLOTL = """# trainlint: axolotl={v}
base_model: NousResearch/Meta-Llama-3-8B
datasets:
  - path: tatsu-lab/alpaca
    type: alpaca
micro_batch_size: 2
gradient_accumulation_steps: 4
sequence_len: 2048
{line}
"""


@pytest.mark.parametrize("line,version,reported", [
    ("tf32: auto", "0.6.0", True), ("tf32: auto", "0.15.0", True), ("tf32: auto", "0.16.1", False),
    ("rl: grpo", "0.6.0", True), ("rl: grpo", "0.7.1", False), ("rl: ebft", "0.15.0", True),
    ("rl: ebft", "0.16.1", False), ("gradient_checkpointing: unsloth", "0.8.1", False),
    ("gradient_checkpointing: unsloth", "0.9.2", True), ("gradient_checkpointing: unsloth", "0.18.0", True),
    ("adapter: dora", "0.6.0", True), ("adapter: dora", "0.18.0", True), ("adapter: llama-adapter", "0.18.0", False),
])
def test_axolotl_values_by_release(tmp_path, line, version, reported):
    assert bool(found(lint(AXOLOTL.format(v=version, line=line), tmp_path), "TL647")) is reported


def test_axolotl_adapter_with_plugins_is_not_judged_from_0_17(tmp_path):
    text = AXOLOTL.format(v="0.17.0", line="adapter: mora\nplugins:\n  - axolotl.integrations.mora.MoRAPlugin")
    assert found(lint(text, tmp_path), "TL647") == []
    text = AXOLOTL.format(v="0.16.1", line="adapter: mora\nplugins:\n  - axolotl.integrations.mora.MoRAPlugin")
    assert found(lint(text, tmp_path), "TL647") == [(9, "error")]


# ---- TL650: the builder named by model._component_ reads lora_attn_modules ------------------------------------------

TORCHTUNE_LORA = """model:
  _component_: {builder}
  lora_attn_modules: ['q_proj', 'v_proj', 'o_proj']
  lora_rank: 8
optimizer:
  _component_: torch.optim.AdamW
  lr: 3.0e-4
batch_size: 2
epochs: 1
dtype: bf16
"""


@pytest.mark.parametrize("builder,severity", [("torchtune.models.llama3.lora_llama3_8b", "error"),
                                              ("my_project.models.lora_llama3_8b", "warning")])
def test_torchtune_lora_names_by_builder(tmp_path, builder, severity):
    assert [s for _, s in found(lint(TORCHTUNE_LORA.format(builder=builder), tmp_path), "TL650")] == [severity]


# ---- TL649 / TL651: paths and keys per release ----------------------------------------------------------------------

TORCHTUNE = """# trainlint: torchtune={v}
lr_scheduler:
  _component_: torchtune.training.lr_schedulers.get_cosine_schedule_with_warmup
  num_warmup_steps: 100
batch_size: 2
epochs: 1
dtype: bf16
"""


@pytest.mark.parametrize("version,reported", [("0.1.1", True), ("0.3.1", True), ("0.4.0", False), ("0.6.1", False)])
def test_torchtune_component_by_release(tmp_path, version, reported):
    assert bool(found(lint(TORCHTUNE.format(v=version), tmp_path), "TL649")) is reported


def test_torchtune_component_in_own_checkout_is_not_judged(tmp_path):
    (tmp_path / "torchtune").mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "torchtune"\n')
    (tmp_path / ".git").mkdir()
    text = TORCHTUNE.format(v="0.3.1").replace("lr_schedulers.get_cosine", "lr_schedulers.get_cosin")
    assert found(lint(text, tmp_path), "TL649") == []


LITGPT = """# trainlint: litgpt={v}
checkpoint_dir: checkpoints/meta-llama/Llama-2-7b-hf
out_dir: out/finetune/full
precision: bf16-true
devices: 4
train:
  global_batch_size: 16
  micro_batch_size: 1
  epochs: 1
log:
  project: llama
logger_name: wandb
"""


@pytest.mark.parametrize("version,reported", [("0.4.0", True), ("0.5.8", True), ("0.5.9", False), ("0.5.13", False)])
def test_litgpt_group_by_release(tmp_path, version, reported):
    assert bool(found(lint(LITGPT.format(v=version), tmp_path), "TL651")) is reported


def test_litgpt_unknown_nested_key_in_every_release(tmp_path):
    text = LITGPT.format(v="0.5.13").replace("  epochs: 1", "  epoch: 1")
    result = lint(text, tmp_path)
    (diag,) = [d for d in result.diagnostics if d.code == "TL651"]
    assert diag.severity is Severity.ERROR and "train.epoch" in diag.message and "epochs" in diag.message


@pytest.mark.parametrize("declared,severity", [("", "warning"), ("# trainlint: litgpt=0.5.13\n", "error"),
                                               ("# trainlint: dialect=litgpt\n", "error")])
def test_litgpt_key_with_no_close_spelling_rests_on_the_reader(tmp_path, declared, severity):
    """A fork's setup() may take a key upstream lacks (calvintwr/litgpt's `pad_id`): only a guessed reader says no."""
    text = declared + LITGPT.split("\n", 1)[1] + "pad_id: 0\n"
    result = lint(text, tmp_path)
    assert [s for _, s in found(result, "TL651")] == [severity]
    (diag,) = [d for d in result.diagnostics if d.code == "TL651"]
    assert bool(diag.assumptions) is (severity == "warning")


def test_litgpt_misspelt_key_is_an_error_on_a_guessed_reader(tmp_path):
    text = LITGPT.split("\n", 1)[1].replace("  epochs: 1", "  epoch: 1")
    assert [s for _, s in found(lint(text, tmp_path), "TL651")] == ["error"]


# ---- TL432 ----------------------------------------------------------------------------------------------------------

def test_processes_not_a_multiple_of_machines(tmp_path):
    text = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 9\n"
    result = lint(text, tmp_path)
    (diag,) = [d for d in result.diagnostics if d.code == "TL432"]
    assert "8 in all" in diag.message


# ---- TL652 -----------------------------------------------------------------------------------------------------------

SWIFT = """# trainlint: dialect=ms-swift
model: Qwen/Qwen2.5-7B-Instruct
rlhf_type: ipo
tuner_type: lora
dataset: hjh0119/shareAI-Llama3-DPO-zh-en-emoji
per_device_train_batch_size: 1
num_train_epochs: 1
output_dir: output
"""


@pytest.mark.parametrize("version,reported", [("3.12.0", True), ("4.5.2", True), ("3.9.3", False)])
def test_ms_swift_rlhf_type_by_release(tmp_path, version, reported):
    result = lint(SWIFT, tmp_path, pins=f"ms-swift=={version}\n")
    assert [s for _, s in found(result, "TL652")] == (["error"] if reported else [])


def test_ms_swift_choice_on_a_parser_guessed_from_the_keys(tmp_path):
    result = lint(SWIFT.split("\n", 1)[1], tmp_path)
    diags = [d for d in result.diagnostics if d.code == "TL652"]
    assert diags and all(d.severity is Severity.WARNING and d.assumptions for d in diags)


@pytest.mark.parametrize("version,reported", [("0.8.3", True), ("0.9.5", True), ("0.8.2", False)])
def test_llamafactory_cross_check_by_release(tmp_path, version, reported):
    text = (f"# trainlint: llamafactory={version}\nstage: sft\nfinetuning_type: full\nuse_dora: true\n"
            "template: llama3\noutput_dir: o\n")
    assert found(lint(text, tmp_path), "TL648") == ([(4, "error")] if reported else [])


def test_llamafactory_fork_is_judged_by_its_own_literals(tmp_path):
    """A repository that vendors LLaMA-Factory (Javkonline/AMoPO) declares stages of its own."""
    hparams = tmp_path / "src" / "llamafactory" / "hparams"
    hparams.mkdir(parents=True)
    (hparams / "finetuning_args.py").write_text(
        "from typing import Literal\nclass FinetuningArguments:\n"
        "    stage: Literal['pt', 'sft', 'rm', 'ppo', 'dpo', 'kto', 'amopo', 'modpo'] = 'sft'\n"
        "    finetuning_type: Literal['lora', 'freeze', 'full'] = 'lora'\n")
    (tmp_path / ".git").mkdir()
    base = "# trainlint: dialect=llamafactory\nstage: {}\nfinetuning_type: full\ntemplate: llama3\noutput_dir: o\n"
    assert found(lint(base.format("modpo"), tmp_path), "TL648") == []
    assert found(lint(base.format("rmopo"), tmp_path), "TL648") == [(2, "error")]


@pytest.mark.parametrize("version,reported", [("0.9.3", True), ("0.9.4", False), ("0.9.5", False)])
def test_llamafactory_oft_with_quantization_by_release(tmp_path, version, reported):
    """OFT takes quantization from 0.9.4, the release that added it; before it `oft` itself is refused."""
    text = (f"# trainlint: llamafactory={version}\nstage: sft\nfinetuning_type: oft\nquantization_bit: 4\n"
            "template: qwen\noutput_dir: o\n")
    assert [line for line, _ in found(lint(text, tmp_path), "TL648")] == ([3] if reported else [])


def test_lora_fix_is_not_offered_where_llamafactory_refuses_lora(tmp_path):
    """The planner's LoRA edit would make `use_badam: true` + `finetuning_type: lora`, which LLaMA-Factory refuses."""
    from trainlint.fixes.knobs import lora_edits

    path = tmp_path / "lf.yaml"
    path.write_text("model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\nstage: sft\nfinetuning_type: full\n"
                    "use_badam: true\ntemplate: llama3\noutput_dir: o\n")
    result = engine.check_path(path, SETTINGS)
    ctx = type("Ctx", (), {"flavor": result.flavor, "plan": result.plan, "document": result.document})()
    assert lora_edits(ctx, qlora=False) is None and lora_edits(ctx, qlora=True) is None


# ---- TL433: accelerate launch's own options, at the launch line ------------------------------------------------------

ACCELERATE_FILE = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_machines: 1\nnum_processes: 8\n"


@pytest.mark.parametrize("option,expected", [
    ("--num_process 8", [(3, "error")]),  # in no release (allow_abbrev=False: no prefix either)
    ("--num-processes 8", []),  # the hyphen spelling CustomArgumentParser reads (0.28+; the newest is assumed)
    ("--use_xpu", [(3, "warning")]),  # dropped in 1.13: the release assumed lacks it
    ("--fsdp_version 2", []),
])
def test_accelerate_launch_options(tmp_path, option, expected):
    (tmp_path / ".git").mkdir()
    (tmp_path / "acc.yaml").write_text(ACCELERATE_FILE)
    (tmp_path / "run.sh").write_text(f"#!/bin/bash\naccelerate launch --config_file acc.yaml \\\n  {option} \\\n"
                                     "  train.py --lr 1\n")
    result = engine.check_path(tmp_path / "acc.yaml", Settings())
    got = sorted((d.span.start.line + 1, d.severity.value) for d in result.diagnostics if d.code == "TL433")
    assert got == expected
    assert all(d.path.endswith("run.sh") for d in result.diagnostics if d.code == "TL433")
