"""The DeepSpeed configs in the corpus's issues/ folder get the findings that would have prevented the
problem each issue reports (see the corpus's SOURCES.md), on their own and, where the issue
came from HF Trainer, when linked from a training config like the one the reporter ran."""

from __future__ import annotations

import pytest

from trainlint import engine
from trainlint.context.settings import Overrides, Settings
from shared_corpus import CORPUS as SHARED_CORPUS, MISSING

CORPUS = SHARED_CORPUS / "issues"

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=MISSING)

ALONE = {
    # trlx#376: apex opt_level in fp16, offload_param at stage 2, hard-coded train_batch_size.
    "CarperAI__trlx__examples__summarize_rlhf__reward_model__ds_config_gpt_j.json": {"TL500", "TL400", "TL201"},
    # Lightning#18134: top-level cpu_offload, offload_param and stage3_* keys at stage 2.
    "Lightning-AI__pytorch-lightning__issues__18134__ds_config.json": {"TL501", "TL400", "TL402"},
    # hendrycks/apps#9: hard-coded train_batch_size, deprecated zero_optimization.cpu_offload.
    "hendrycks__apps__train__deepspeed_config.json": {"TL201", "TL502"},
    # LLaMA-Factory#3493: "true"/"false" strings in bf16/fp16.enabled.
    "hiyouga__LlamaFactory__issues__3493__ds_config3.json": {"TL504"},
    # codealpaca#14: "auto" batch keys without gradient_accumulation_steps; 0/100-element buckets.
    "sahil280114__codealpaca__ds_config.json": {"TL202", "TL405", "TL503"},
}


def _codes(result, path=None):
    return {d.code for d in result.diagnostics if path is None or d.path == str(path)}


@pytest.mark.parametrize("name,codes", sorted(ALONE.items()))
def test_issue_config_alone(name, codes):
    result = engine.check_path(CORPUS / name, Settings(use_project_config=False))
    assert not result.internal_error, result.diagnostics
    assert result.flavor == "deepspeed"
    found = _codes(result)
    assert codes <= found, (codes - found, [d.message for d in result.diagnostics])


def _hf(tmp_path, name: str, text: str, num_gpus: int | None = None):
    config = tmp_path / "train.yaml"
    config.write_text(text + f"deepspeed: {CORPUS / name}\n")
    settings = Settings(cli=Overrides({"num_gpus": num_gpus} if num_gpus else {}), use_project_config=False)
    return engine.check_path(config, settings)


def test_hendrycks_with_hf_defaults(tmp_path):
    # The reporter ran HF Trainer with default lr and warmup on 16 GPUs ("hf train_batch_size (calculated)=128").
    name = "hendrycks__apps__train__deepspeed_config.json"
    result = _hf(tmp_path, name, "model_name_or_path: gpt2\noutput_dir: out\nper_device_train_batch_size: 8\n",
                 num_gpus=16)
    assert not result.internal_error, result.diagnostics
    mismatches = [d for d in result.diagnostics if d.code == "TL600" and d.path == str(CORPUS / name)]
    lines = " ".join(d.detail for d in mismatches)
    assert "- ds train_batch_size=8 vs hf train_batch_size (calculated)=128" in lines
    assert "- ds optimizer.params.lr=0.0001 vs hf learning_rate=5e-05" in lines
    assert "- ds scheduler.params.warmup_max_lr=0.0001 vs hf learning_rate=5e-05" in lines
    assert "- ds scheduler.params.warmup_num_steps=500 vs hf warmup_steps=0" in lines
    assert all(f.safe and f.edits[0].new_text == '"auto"' for d in mismatches for f in d.fixes[:1])


def test_trlx_with_hf_on_one_gpu(tmp_path):
    # trlx#376: "- ds train_batch_size=32 vs hf train_batch_size (calculated)=4".
    name = "CarperAI__trlx__examples__summarize_rlhf__reward_model__ds_config_gpt_j.json"
    result = _hf(tmp_path, name, "model_name_or_path: EleutherAI/gpt-j-6b\noutput_dir: out\n"
                                 "per_device_train_batch_size: 4\nlearning_rate: 1.0e-5\nfp16: true\n", num_gpus=1)
    details = [d.detail for d in result.diagnostics if d.code == "TL600"]
    assert any("- ds train_batch_size=32 vs hf train_batch_size (calculated)=4" in m for m in details), details


def test_codealpaca_with_accumulation_is_an_error(tmp_path):
    # README command: --per_device_train_batch_size 8 --gradient_accumulation_steps 4 on 8 GPUs.
    name = "sahil280114__codealpaca__ds_config.json"
    result = _hf(tmp_path, name, "model_name_or_path: facebook/opt-6.7b\noutput_dir: out\n"
                                 "per_device_train_batch_size: 8\ngradient_accumulation_steps: 4\nfp16: true\n")
    found = [d for d in result.diagnostics if d.code == "TL202" and d.path == str(CORPUS / name)]
    assert found and found[0].severity.value == "error", [d.message for d in result.diagnostics]


def test_llamafactory_string_booleans_under_hf(tmp_path):
    name = "hiyouga__LlamaFactory__issues__3493__ds_config3.json"
    result = _hf(tmp_path, name, "model_name_or_path: meta-llama/Meta-Llama-3-70B\noutput_dir: out\nbf16: true\n"
                                 "stage: sft\nfinetuning_type: lora\n")
    found = [d for d in result.diagnostics if d.code == "TL504" and d.path == str(CORPUS / name)]
    assert len(found) == 2 and all(d.severity.value == "error" for d in found)
    assert all(d.fixes and d.fixes[0].safe for d in found)
