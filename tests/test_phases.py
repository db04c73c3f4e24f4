"""The phases around the training step (trainlint/memory/phases.py, docs/memory-model.md §9): each against what the
framework code does, with the figures computed by hand in each docstring; the CLI's text and JSON, TL100's message
and the planner's fixes for them.

Llama-3.1-8B (catalog): hidden 4,096, 32 layers, MLP 14,336, 8 KV heads of 128, vocabulary 128,256, untied head;
its largest linear is an MLP projection, 4,096 x 14,336 = 58,720,256 parameters; one layer holds 218,112,000
parameters (q/o 2 x 16,777,216, k/v 2 x 4,194,304, MLP 3 x 58,720,256, two norms 2 x 4,096); outside the layers:
embedding and head 2 x 525,336,576 plus the final norm 4,096 = 1,050,677,248.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from trainlint import estimating
from trainlint.catalog.models import find_model
from trainlint.context.settings import Overrides
from trainlint.memory.estimate import estimate_plan
from trainlint.plan import AMP_BF16, PURE_BF16, Origin, Peft, Setting, TrainingPlan

ARCH = find_model("meta-llama/Llama-3.1-8B")
V, S = 128256, 4096
LOGITS_ROW = S * V * 2  # one row of bf16 logits: 1,050,673,152 B


def plan(**fields) -> TrainingPlan:
    base = TrainingPlan(flavor="huggingface", path=str(Path.cwd() / "train.yaml"))
    values = {"model": "meta-llama/Llama-3.1-8B", "seq_len": S, "precision": PURE_BF16, "grad_ckpt": "full",
              "micro_batch": 1, "peft": Peft("lora", 16, "all-linear"), **fields}
    return base.with_(**{k: Setting(v, Origin("config")) for k, v in values.items()})


def phase(est, name):
    return next(p for p in est.run_phases if p.name == name)


def component(ph, label):
    return next(c.bytes for c in ph.components if c.label == label)


def test_evaluation_keeps_every_samples_logits_without_eval_accumulation_steps():
    """Trainer.evaluation_loop concatenates each batch's gathered logits on the GPU (EvalLoopContainer.add) until the
    loop ends when eval_accumulation_steps is unset: 100 samples x 4,096 tokens x 128,256 x 2 B (bf16 logits) =
    105,067,315,200 B, twice during the last concatenation (the kept tensor and its new copy): 210,134,630,400 B."""
    est = estimate_plan(plan(evaluation=True, eval_batch=4, eval_predictions="logits", eval_samples=100), ARCH)
    ev = phase(est, "evaluation")
    assert component(ev, "evaluation predictions kept") == 100 * LOGITS_ROW * 2 == 210_134_630_400
    assert est.deciding_phase == "evaluation" and est.peak_phase == "evaluation"
    assert est.total == ev.total and est.peak_allocated == ev.peak_allocated


def test_eval_accumulation_steps_bounds_the_kept_predictions():
    """With eval_accumulation_steps k the containers move to the host every k steps (to_cpu_and_numpy): at most
    k x eval batch x ranks rows stay; k = 2, batch 4, one GPU: 8 rows, concatenated once more (x 2) =
    16 x 1,050,673,152 B; k = 1: the batch alone, 4 x 1,050,673,152 B, no concatenation."""
    two = phase(estimate_plan(plan(evaluation=True, eval_batch=4, eval_predictions="logits", eval_accumulation=2,
                                   eval_samples=100), ARCH), "evaluation")
    one = phase(estimate_plan(plan(evaluation=True, eval_batch=4, eval_predictions="logits", eval_accumulation=1,
                                   eval_samples=100), ARCH), "evaluation")
    assert component(two, "evaluation predictions kept") == 16 * LOGITS_ROW
    assert component(one, "evaluation predictions kept") == 4 * LOGITS_ROW


def test_without_compute_metrics_evaluation_keeps_only_the_loss():
    """Trainer.evaluate passes prediction_loss_only=True without a compute_metrics: prediction_step returns
    (loss, None, None), nothing is kept; the assumption says how to declare a compute_metrics."""
    est = estimate_plan(plan(evaluation=True, eval_batch=4), ARCH)
    ev = phase(est, "evaluation")
    assert not any(c.label == "evaluation predictions kept" for c in ev.components)
    assert any("eval-predictions=logits" in a for a in est.assumptions)


def test_evaluation_forward_at_the_default_eval_batch_of_8():
    """per_device_eval_batch_size defaults to 8: the no-grad forward holds the logits of 8 x 4,096 tokens; with HF's
    loss (bf16 logits, their fp32 upcast and fp32 log-softmax: 2 + 4 + 4 B per element) that is
    32,768 x 128,256 x 10 = 42,026,926,080 B, more than the training step of micro-batch 1 needs."""
    est = estimate_plan(plan(evaluation=True), ARCH)
    ev, step = phase(est, "evaluation"), phase(est, "training step")
    assert component(ev, "evaluation forward (no grad)") == 8 * S * V * 10
    assert ev.peak_allocated > step.peak_allocated and est.deciding_phase == "evaluation"


def test_no_evaluation_phase_without_eval_strategy():
    est = estimate_plan(plan(), ARCH)
    assert [p.name for p in est.run_phases] == ["loading", "training step", "saving"]
    assert est.deciding_phase == "training step"


def test_predict_with_generate_holds_the_kv_cache_of_every_beam():
    """Seq2SeqTrainer.prediction_step calls model.generate with generation_max_length / generation_num_beams: a KV
    cache of 2 x 4 beams = 8 rows x 8,192 tokens x 32 layers x 2 (k, v) x 8 heads x 128 x 2 B = 8,589,934,592 B, plus
    the last position's fp32 scores twice, 8 x 128,256 x 4 x 2 = 8,208,384 B."""
    est = estimate_plan(plan(evaluation=True, eval_batch=2, predict_with_generate=True, generation_max_length=8192,
                             generation_num_beams=4, seq_len=1024), ARCH)
    ev = phase(est, "evaluation")
    assert component(ev, "generation KV cache") == 8 * 8192 * 32 * 2 * 8 * 128 * 2 + 8 * V * 8


def test_quantized_loading_quantizes_one_tensor_at_a_time():
    """Bnb4BitHfQuantizer.create_quantized_param moves each 16-bit checkpoint tensor to the GPU and quantizes it
    (Params4bit.to): no full 16-bit copy, only the largest linear in 16-bit with its 4-bit output,
    58,720,256 x 2.5 = 146,800,640 B."""
    est = estimate_plan(plan(peft=Peft("lora", 16, "all-linear", 4)), ARCH)
    loading = phase(est, "loading")
    assert component(loading, "16-bit tensor being quantized") == 146_800_640
    assert loading.host_bytes == 0  # straight to the GPU through the device map


def test_low_cpu_mem_usage_off_doubles_the_host_copy_while_loading():
    """Without low_cpu_mem_usage every process builds a randomly initialised model on the host and copies the
    checkpoint in: 2 x 8,030,261,248 params x 2 B (bf16) on one GPU."""
    on = phase(estimate_plan(plan(), ARCH), "loading")
    off = phase(estimate_plan(plan(low_cpu_mem_usage=False), ARCH), "loading")
    assert on.host_bytes == ARCH.total_params * 2 and off.host_bytes == 2 * on.host_bytes


def test_trl_reference_precompute_runs_at_its_own_batch():
    """DPOTrainer._precompute_ref_logps runs a no-grad forward at precompute_ref_batch_size (chosen and rejected
    concatenated: 2 x 16 = 32 rows); DPO here builds the full logits (TRL 1.10), so at the head:
    32 x 1,024 x 128,256 x 10 B = 42,026,926,080 B on top of the weights (and no reference model: TRL sets
    ref_model None with precompute_ref_log_probs)."""
    est = estimate_plan(plan(task="dpo", trainer="trl", trainer_version="1.10.0", ref_logps_precomputed=True,
                             precompute_ref_batch=16, seq_len=1024, peft=None, micro_batch=1), ARCH)
    loading = phase(est, "loading")
    assert component(loading, "reference log-prob forward (no grad)") == 32 * 1024 * V * 10
    assert loading.peak_allocated == phase(est, "training step").components[0].bytes + 32 * 1024 * V * 10
    assert not any(c.label == "reference model" for c in loading.components)


def test_fsdp_full_state_dict_gathers_the_root_unit_and_its_optimizer_state():
    """accelerate's FULL_STATE_DICT (FSDP 1's default) unshards the root unit (embedding, head, final norm:
    1,050,677,248 params) while each layer's unit (218,112,000) is unsharded in turn, in the fp32 parameter dtype:
    (1,050,677,248 + 218,112,000) x 4 = 5,075,156,992 B; FSDP.optim_state_dict gathers the root unit's AdamW state:
    1,050,677,248 x 2 x 4 = 8,405,417,984 B, the larger. save_only_model leaves the first. Rank 0's host holds the
    whole state dict: 8,030,261,248 x 4 B (+ 2 x 4 B per parameter of optimizer state when it is saved)."""
    fields = dict(peft=None, precision=AMP_BF16, fsdp="full_shard", num_gpus=8, optimizer="adamw_torch")
    saving = phase(estimate_plan(plan(**fields), ARCH), "saving")
    model_only = phase(estimate_plan(plan(save_only_model=True, **fields), ARCH), "saving")
    label = "units unsharded for FULL_STATE_DICT"
    assert component(saving, label) == 8_405_417_984
    assert component(model_only, label) == 5_075_156_992
    assert saving.host_bytes == ARCH.total_params * 4 * 3 and model_only.host_bytes == ARCH.total_params * 4
    sharded = phase(estimate_plan(plan(fsdp_state_dict="SHARDED_STATE_DICT", **fields), ARCH), "saving")
    fsdp2 = phase(estimate_plan(plan(fsdp_version=2, **fields), ARCH), "saving")
    assert not any(c.label == label for c in sharded.components + fsdp2.components)  # FSDP 2: SHARDED by default


def test_zero3_16bit_save_gathers_one_module_and_fills_rank0_host():
    """DeepSpeedEngine._zero3_consolidated_16bit_state_dict gathers module by module (the embedding is the largest:
    525,336,576 x 2 B) and copies each to rank 0's host: 8,030,261,248 x 2 B there."""
    fields = dict(peft=None, precision=AMP_BF16, zero_stage=3, num_gpus=8)
    saving = phase(estimate_plan(plan(zero3_save_16bit=True, **fields), ARCH), "saving")
    assert component(saving, "module gathered for the 16-bit save") == 525_336_576 * 2
    assert saving.host_bytes == ARCH.total_params * 2
    shards = phase(estimate_plan(plan(**fields), ARCH), "saving")
    assert shards.host_bytes == 0


def test_config_keys_reach_the_plan(tmp_path):
    cfg = tmp_path / "train.yaml"
    cfg.write_text("model_name_or_path: meta-llama/Llama-3.1-8B\neval_strategy: steps\nper_device_eval_batch_size: 4\n"
                   "eval_accumulation_steps: 2\nsave_only_model: true\nprediction_loss_only: true\n")
    p, _doc, _linked = estimating.file_plan(str(cfg), Overrides())
    assert p.evaluation.value and p.eval_batch.value == 4 and p.eval_accumulation.value == 2
    assert p.save_only_model.value and p.eval_predictions.value == "none"
    ds = tmp_path / "ds.json"
    ds.write_text('{"zero_optimization": {"stage": 3, "stage3_gather_16bit_weights_on_model_save": true}}')
    p, _doc, _linked = estimating.file_plan(str(ds), Overrides())
    assert p.zero3_save_16bit.value is True
    acc = tmp_path / "fsdp.yaml"
    acc.write_text("distributed_type: FSDP\nnum_processes: 8\nfsdp_config:\n  fsdp_version: 2\n"
                   "  fsdp_state_dict_type: FULL_STATE_DICT\n")
    p, _doc, _linked = estimating.file_plan(str(acc), Overrides())
    assert p.fsdp_version.value == 2 and p.fsdp_state_dict.value == "FULL_STATE_DICT"


EVAL_CONFIG = """model_name_or_path: meta-llama/Llama-3.1-8B
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
gradient_checkpointing: true
bf16: true
torch_dtype: bfloat16
max_length: 8192
eval_strategy: steps
per_device_eval_batch_size: 24
# trainlint: gpu=H100-80GB eval-predictions=logits
use_peft: true
lora_r: 16
"""


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trainlint", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def test_estimate_text_and_json_show_every_phase_and_the_deciding_one(tmp_path):
    cfg = tmp_path / "train.yaml"
    cfg.write_text(EVAL_CONFIG)
    text = cli("estimate", str(cfg)).stdout
    rows = {line.split()[0]: line for line in text.splitlines() if line.startswith("  ") and line.split()
            and line.split()[0] in ("loading", "training", "evaluation", "saving")}
    assert set(rows) == {"loading", "training", "evaluation", "saving"}
    assert "<- decides" in rows["evaluation"] and "<- decides" not in rows["training"]
    data = json.loads(cli("estimate", str(cfg), "--output-format", "json").stdout)
    assert data["deciding_phase"] == "evaluation" and data["peak_phase"] == "evaluation"
    names = [p["phase"] for p in data["phases"]]
    assert names == ["loading", "training step", "evaluation", "saving"]
    ev = data["phases"][2]
    assert ev["total"] == data["per_gpu_bytes"]["total"] and "per_device_eval_batch_size" in ev["knobs"]
    assert data["suggestions"][0]["changes"] == {"eval_batch": 12}


def test_out_of_memory_names_the_phase_and_the_fix_makes_it_fit(tmp_path):
    cfg = tmp_path / "train.yaml"
    cfg.write_text(EVAL_CONFIG)
    out = cli("check", str(cfg), "--select", "TL100").stdout
    assert "out of memory in evaluation" in out
    cli("check", str(cfg), "--select", "TL100", "--fix")
    fixed = cfg.read_text()
    assert "per_device_eval_batch_size: 12" in fixed and "# trainlint: gpu=H100-80GB" in fixed
    data = json.loads(cli("estimate", str(cfg), "--output-format", "json").stdout)
    assert data["fits"] is True


@pytest.mark.parametrize("fields", [dict(evaluation=True, eval_batch=2, eval_predictions="logits", eval_samples=50)])
def test_the_planner_offers_eval_accumulation_when_kept_predictions_decide(fields, tmp_path):
    """50 kept samples x 1,050,673,152 B x 2 = 105 GB > an 80 GB card; eval_accumulation_steps 1 keeps one batch."""
    from trainlint.fixes.planner import knob_list
    from trainlint.rules.base import LintContext
    from trainlint.memory.estimate import attach

    cfg = tmp_path / "train.yaml"
    cfg.write_text("model_name_or_path: meta-llama/Llama-3.1-8B\neval_strategy: steps\n")
    p, doc, linked = estimating.file_plan(str(cfg), Overrides())
    # the evaluation settings as the file's reader would infer them (a directive's value is not the planner's to edit)
    p = p.with_(**{k: Setting(v, Origin("inferred")) for k, v in fields.items()}, gpu=Setting("H100-80GB",
                                                                                             Origin("directive")))
    ctx = LintContext(document=doc, flavor=p.flavor, plan=p, linked=linked)
    attach(ctx)
    groups = {k.group for k in knob_list(ctx)}
    assert {"eval_batch", "eval_accum"} <= groups
    edits = next(k for k in knob_list(ctx) if k.group == "eval_accum").edits
    assert edits and "eval_accumulation_steps: 1" in edits[0].new_text


def test_axolotl_evaluates_with_val_set_size_at_the_micro_batch(tmp_path):
    """axolotl core/builders/base.py: eval_strategy "no" unless val_set_size > 0 or test_datasets; utils/config:
    eval_batch_size defaults to micro_batch_size; core/builders/causal.py: eval_accumulation_steps =
    gradient_accumulation_steps."""
    cfg = tmp_path / "ax.yaml"
    cfg.write_text("base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 2\ngradient_accumulation_steps: 4\n"
                   "sequence_len: 4096\nval_set_size: 0.05\n")
    p, _doc, _linked = estimating.file_plan(str(cfg), Overrides())
    assert p.evaluation.value and p.eval_batch.value is None and p.eval_accumulation.value is None
    ev = phase(estimating.estimate(p).estimate, "evaluation")
    assert "eval batch 2" in ev.note
    kept = p.with_(eval_predictions=Setting("logits", Origin("directive")), eval_samples=Setting(1000, Origin("directive")))
    ev = phase(estimating.estimate(kept).estimate, "evaluation")
    # fp32 logits (no bf16 in the file): 4 steps x batch 2 = 8 rows x 4,096 x 128,256 x 4 B, x 2 while concatenating
    assert component(ev, "evaluation predictions kept") == 8 * S * V * 4 * 2
    cfg.write_text("base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 2\nsequence_len: 4096\n")
    p, _doc, _linked = estimating.file_plan(str(cfg), Overrides())
    assert not p.evaluation.value


def test_the_launchs_accelerate_config_decides_how_fsdp_saves(tmp_path):
    """An HF config launched with an accelerate FSDP config takes its fsdp_version / fsdp_state_dict_type (accelerate
    FullyShardedDataParallelPlugin: FSDP 2 defaults to SHARDED_STATE_DICT)."""
    from trainlint import engine

    (tmp_path / ".git").mkdir()
    (tmp_path / "fsdp.yaml").write_text("distributed_type: FSDP\nnum_processes: 8\nfsdp_config:\n  fsdp_version: 2\n")
    (tmp_path / "c.yaml").write_text('# trainlint: launch="accelerate launch --config_file fsdp.yaml t.py c.yaml"\n'
                                     "model_name_or_path: meta-llama/Llama-3.1-8B\nbf16: true\n")
    result = engine.check_path(tmp_path / "c.yaml")
    assert result.plan.fsdp.value == "full_shard" and result.plan.fsdp_version.value == 2


def test_the_planner_offers_the_saving_knobs_under_fsdp_full_state_dict(tmp_path):
    """accelerate config FSDP 1 (FULL_STATE_DICT by default): save_only_model is an HF key, the state-dict type an
    accelerate one; the accelerate file gets `fsdp_state_dict_type: SHARDED_STATE_DICT`, inserted in fsdp_config."""
    from trainlint.fixes.planner import knob_list
    from trainlint.memory.estimate import attach
    from trainlint.rules.base import LintContext

    acc = tmp_path / "fsdp.yaml"
    acc.write_text("distributed_type: FSDP\nnum_processes: 8\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n")
    p, doc, linked = estimating.file_plan(str(acc), Overrides())
    p = p.with_(model=Setting("meta-llama/Llama-3.1-8B", Origin("directive")),
                gpu=Setting("H100-80GB", Origin("directive")))
    ctx = LintContext(document=doc, flavor=p.flavor, plan=p, linked=linked)
    attach(ctx)
    knob = next(k for k in knob_list(ctx) if k.group == "state_dict")
    assert not knob.safe and knob.changes == {"fsdp_state_dict": "SHARDED_STATE_DICT"}
    assert knob.edits and "fsdp_state_dict_type: SHARDED_STATE_DICT" in knob.edits[0].new_text
