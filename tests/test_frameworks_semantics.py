"""Each framework's own semantics as docs/frameworks/ writes them down and trainlint/catalog/data/framework_semantics.json
holds them: every row the estimator or a reader uses, with its arithmetic (axolotl's load dtype and fp32 upcasts,
LitGPT's loss path, Fabric's fp32 logits, K/V expansion, LoRA switches per architecture, checkpoint_dir)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from trainlint.catalog import semantics
from trainlint.catalog.files import read_data
from trainlint.catalog.models import find_model
from trainlint.document.reading import parse_document
from trainlint.flavors import axolotl, huggingface, litgpt
from trainlint.memory.estimate import build_run, estimate_plan
from trainlint.memory.model import Run, activations, model_states, optimizer_spec
from trainlint.plan import AMP_BF16, FP32, PURE_BF16, Origin, Precision, Setting

ROOT = Path(__file__).resolve().parents[1]
LLAMA31_8B = find_model("meta-llama/Llama-3.1-8B")
LLAMA32_1B = find_model("meta-llama/Llama-3.2-1B")
PYTHIA_1B = find_model("EleutherAI/pythia-1b")
PHI2 = find_model("microsoft/phi-2")


def component(breakdown, key: str) -> int:
    return sum(c.bytes for c in breakdown.components if c.key == key)


def axolotl_plan(text: str, name: str = "a.yaml"):
    return axolotl.read(parse_document(text, name)).plan


AXOLOTL_FULL = ("base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 1\nsequence_len: 4096\nbf16: true\n"
                "gradient_checkpointing: true\noptimizer: adamw_torch_fused\n")


# ---- axolotl ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("flags, expected", [
    ({"bf16": True}, ("bf16", "bf16")),
    ({"bfloat16": True}, ("bf16", "bfloat16")),
    ({"load_in_8bit": True}, ("fp16", "load_in_8bit")),
    ({"load_in_8bit": True, "bf16": True}, ("bf16", "bf16")),
    ({"fp16": True}, ("fp16", "fp16")),
    ({}, ("fp32", "")),
])
def test_axolotl_load_dtype_follows_resolve_dtype(flags, expected):
    """utils/config/__init__.py resolve_dtype: bf16 or bfloat16 -> bfloat16; elif load_in_8bit, fp16 or float16 ->
    float16; else float32."""
    assert semantics.axolotl_load_dtype(flags) == expected


def test_axolotl_full_fine_tune_with_flash_attention_is_pure_bf16():
    """Llama-3.1-8B (8,030,261,248 params), bf16: true, flash_attention: true, adamw_torch_fused, one GPU: axolotl
    loads in bf16, casts the embeddings and norms back to bf16 for flash-attn, the HF Trainer keeps no master copy:
    2 B weights + 2 B gradients + 2 x 2 B AdamW states = 8 B/param (trainlint modelled 4 + 4 + 8 + a 2 B autocast
    cache before: 18 B/param)."""
    plan = axolotl_plan(AXOLOTL_FULL + "flash_attention: true\n")
    assert plan.precision.value == PURE_BF16
    est = estimate_plan(plan, LLAMA31_8B)
    n = LLAMA31_8B.total_params
    assert component(est, "weights") == n * 2
    assert component(est, "optimizer_states") == n * 4
    assert "bf16 autocast over fp32" not in plan.precision.value.label


def test_axolotl_full_fine_tune_with_sdpa_keeps_embeddings_head_and_norms_in_fp32():
    """No flash attention (transformers' SDPA), no adapter, no FSDP: _configure_embedding_dtypes upcasts embed_tokens,
    lm_head and the norms to fp32 and nothing casts them back. Llama-3.1-8B: layer linears L = 6,979,321,856 params in
    bf16, the rest (embeddings 525,336,576 + head 525,336,576 + norms 266,240 = 1,050,939,392) in fp32: weights
    = 2 L + 4 (N - L); AdamW states twice that; the autocast cache holds only the fp32 head's bf16 copy."""
    plan = axolotl_plan(AXOLOTL_FULL)
    prec = plan.precision.value
    assert (prec.param_dtype, prec.autocast, prec.linears) == ("fp32", "bf16", "bf16")
    arch = LLAMA31_8B
    n, linear = arch.total_params, arch.linear_params(None)
    assert n - linear == 1_050_939_392
    states = model_states(build_run(plan, arch, []))
    assert states.weights == 2 * linear + 4 * (n - linear)
    assert states.grads == states.weights
    assert states.optimizer == pytest.approx(2 * states.weights)
    assert states.master == 0
    assert states.amp_weight_cache == arch.vocab_size * arch.hidden_size * 2


def test_axolotl_lora_base_is_bf16_not_fp32():
    """adapter: lora -> needs_fa2_dtype: the embeddings and norms go back to bf16; the frozen base stays as loaded
    (bf16: 2 B/param), PEFT's adapters in fp32 (4 B per adapter parameter)."""
    plan = axolotl_plan(AXOLOTL_FULL + "adapter: lora\nlora_r: 16\nlora_target_linear: true\n")
    assert plan.precision.value == PURE_BF16
    states = model_states(build_run(plan, LLAMA31_8B, []))
    lora = LLAMA31_8B.lora_params(16, "all-linear")
    assert states.weights == LLAMA31_8B.total_params * 2 + lora * 4


def test_axolotl_fsdp_params_are_upcast_to_fp32_by_accelerate():
    """fsdp: [full_shard, auto_wrap]: axolotl skips its own upcast, loads in bf16; accelerate's prepare_model upcasts
    the flat parameters to fp32 under mixed precision: fp32 sharded weights under bf16 autocast."""
    plan = axolotl_plan(AXOLOTL_FULL + "fsdp:\n  - full_shard\n  - auto_wrap\n")
    assert plan.precision.value == AMP_BF16
    launched = plan.with_(precision=type(plan.precision)(PURE_BF16, plan.precision.origin))
    run = build_run(launched, LLAMA31_8B, notes := [])
    assert run.precision == AMP_BF16 and any("accelerate upcasts" in n for n in notes)


def test_axolotl_without_half_precision_trains_fp32():
    plan = axolotl_plan("base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 1\nbf16: false\n")
    assert plan.precision.value == FP32


def test_axolotl_held_conditions():
    """cast back to the load dtype for an adapter, Cut Cross-Entropy, any attention but eager/SDPA; FSDP skips it."""
    kw = dict(adapter=False, fsdp=False, attention=None, cut_cross_entropy=False)
    assert semantics.axolotl_held("bf16", **kw).fp32_rest
    assert semantics.axolotl_held("bf16", **{**kw, "attention": "eager"}).fp32_rest
    for change in ({"adapter": True}, {"fsdp": True}, {"cut_cross_entropy": True},
                   {"attention": "flash_attention_2"}, {"attention": "flex_attention"}):
        assert not semantics.axolotl_held("bf16", **{**kw, **change}).fp32_rest, change
    assert not semantics.axolotl_held("fp32", **kw).fp32_rest

def test_axolotl_deepspeed_keeps_bf16_weights_with_an_fp32_master(tmp_path):
    """axolotl's `deepspeed:` JSON (normalize_config loads it): the DeepSpeed engine casts the module to bf16 and its
    ZeRO optimizer keeps an fp32 master partition and fp32 states (docs/frameworks/deepspeed.md)."""
    (tmp_path / "ds.json").write_text('{"zero_optimization": {"stage": 2}, "bf16": {"enabled": "auto"}}')
    config = tmp_path / "a.yaml"
    config.write_text(AXOLOTL_FULL + "flash_attention: true\ndeepspeed: ds.json\n")
    result = axolotl.read(parse_document(config.read_text(), str(config)))
    precision = result.plan.precision.value
    assert (precision.param_dtype, precision.master_weights) == ("bf16", True)
    assert result.plan.zero_stage.value == 2 and [d.path for d in result.linked] == [str(tmp_path / "ds.json")]


def test_axolotl_liger_plugin_fuses_the_head_and_the_loss():
    """LigerPlugin.pre_model_load applies the model's Liger patch with fused_linear_cross_entropy when
    `liger_fused_linear_cross_entropy: true`: no [tokens, vocab] logits (loss kernel `liger`)."""
    plan = axolotl_plan(AXOLOTL_FULL + "plugins:\n  - axolotl.integrations.liger.LigerPlugin\n"
                        "liger_fused_linear_cross_entropy: true\n")
    assert plan.loss_kernel.value == "liger" and plan.fused_loss.value is True
    assert axolotl_plan(AXOLOTL_FULL).loss_kernel.value != "liger"


def _at(plan, release: str):
    return plan.with_(trainer_version=Setting(release, Origin("inferred", note=f"axolotl {release}")))


CCE_PLUGIN = "plugins:\n  - axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin\n"


def test_axolotl_plugin_keys_do_nothing_without_their_plugin():
    """merge_input_args adds a plugin's arguments to the schema only for the plugins listed; without LigerPlugin or
    CutCrossEntropyPlugin nothing patches the model: the HF loss over full logits."""
    for key in ("cut_cross_entropy", "liger_fused_linear_cross_entropy"):
        plan = axolotl_plan(AXOLOTL_FULL + f"{key}: true\n")
        assert plan.loss_kernel.value is None and not plan.fused_loss.value
        assert build_run(plan, LLAMA32_1B, []).loss_kernel is None


def test_axolotl_cut_cross_entropy_plugin_follows_its_key_and_release():
    """CutCrossEntropyPlugin.pre_model_load patches when cfg.cut_cross_entropy: `false` turns it off; unset, its
    CutCrossEntropyArgs default is None in v0.8.0-v0.8.1 (nothing patched) and True from v0.9.0."""
    off = axolotl_plan(AXOLOTL_FULL + CCE_PLUGIN + "cut_cross_entropy: false\n")
    assert off.loss_kernel.value is None and not off.fused_loss.value
    on = axolotl_plan(AXOLOTL_FULL + CCE_PLUGIN + "cut_cross_entropy: true\n")
    assert build_run(_at(on, "0.8.0"), LLAMA32_1B, []).loss_kernel == "cce"
    alone = axolotl_plan(AXOLOTL_FULL + CCE_PLUGIN)
    assert alone.loss_kernel.value == "cce"
    assert build_run(alone, LLAMA32_1B, []).loss_kernel == "cce"  # the newest release
    assert build_run(_at(alone, "0.9.0"), LLAMA32_1B, []).loss_kernel == "cce"
    old = build_run(_at(alone, "0.8.1"), LLAMA32_1B, [])
    assert old.loss_kernel is None and not old.fused_loss
    # without Cut Cross-Entropy the full fine-tune keeps its embeddings, head and norms in fp32 (should_convert)
    assert old.precision.param_dtype == "fp32"
    assert build_run(_at(on, "0.7.1"), LLAMA32_1B, []).loss_kernel is None  # no plugin before 0.8.0


def test_axolotl_chunked_cross_entropy_chunks_the_logits_from_0_11():
    """`chunked_cross_entropy: true`: _apply_chunked_cross_entropy_patch replaces ForCausalLMLoss with
    CEWithChunkedOutputLoss over logits.chunk(n) (n = chunked_cross_entropy_num_chunks, else 8), each chunk's
    .float() and cross-entropy compiled: the 16-bit logits and per-row statistics, no full fp32 copy (T x V x 4 x 2
    less than the HF loss). Absent before v0.11.0."""
    text = ("base_model: meta-llama/Llama-3.2-1B\nmicro_batch_size: 1\nsequence_len: 2048\nbf16: true\n"
            "adapter: lora\nlora_r: 8\nlora_target_linear: true\nflash_attention: true\n")
    plan = axolotl_plan(text + "chunked_cross_entropy: true\n")
    assert plan.loss_kernel.value == "axolotl_chunked" and plan.loss_chunks.value == 8
    assert axolotl_plan(text + "chunked_cross_entropy: true\nchunked_cross_entropy_num_chunks: 4\n"
                        ).loss_chunks.value == 4
    T, V = 2048, LLAMA32_1B.vocab_size
    act = activations(build_run(plan, LLAMA32_1B, []))
    assert act.logits_forward == T * V * 2 + T * 4 * 2
    plain = activations(build_run(axolotl_plan(text), LLAMA32_1B, []))
    assert plain.logits_forward == T * V * 2 + T * V * 4 + T * V * 4
    old = build_run(_at(plan, "0.10.1"), LLAMA32_1B, [])
    assert old.loss_kernel is None and activations(old).logits_forward == plain.logits_forward
    # Cut Cross-Entropy replaces the forward: the chunked loss is never called
    assert axolotl_plan(text + CCE_PLUGIN + "chunked_cross_entropy: true\n").loss_kernel.value == "cce"



# ---- LitGPT ----------------------------------------------------------------------------------------------------


def litgpt_plan(text: str, name: str = "lora.yaml"):
    return litgpt.read(parse_document(text, name)).plan


def test_litgpt_lora_switch_defaults_are_query_and_value():
    """litgpt/finetune/lora.py setup(): lora_query=True, lora_value=True, the others False, lora_dropout 0.05."""
    plan = litgpt_plan("checkpoint_dir: checkpoints/meta-llama/Llama-3.2-1B\nlora_r: 8\n")
    peft = plan.peft.value
    assert peft.switches == ("lora_query", "lora_value") and peft.dropout == 0.05
    run = build_run(plan, LLAMA32_1B, [])
    assert run.peft.target_modules == ["self_attn.q_proj", "self_attn.v_proj"]


@pytest.mark.parametrize("arch, expected", [
    (PYTHIA_1B, ["attention.query_key_value", "attention.dense", "mlp.dense_h_to_4h", "mlp.dense_4h_to_h"]),
    (PHI2, ["self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.dense", "mlp.fc1", "mlp.fc2"]),
    (LLAMA32_1B, ["self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj",
                  "mlp.up_proj", "mlp.down_proj"]),
])
def test_litgpt_lora_switches_map_to_each_architectures_modules(arch, expected):
    """Every switch on: q/k/v (GPT-NeoX's fused query_key_value), the attention output projection (GPT-NeoX and
    Phi `dense`, Llama `o_proj`), every MLP linear (Phi's fc1 reads the attention input: its parent decides)."""
    on = {name: True for name in semantics.litgpt_lora_switches()}
    assert semantics.litgpt_lora_targets(arch, on) == expected
    assert arch.lora_params(8, expected) > 0


def test_litgpt_pythia_lora_gets_adapters():
    """Before, the switches became Llama names (q_proj, ...) and Pythia got no adapter parameters at all."""
    plan = litgpt_plan("checkpoint_dir: checkpoints/EleutherAI/pythia-1b\nlora_r: 8\nlora_query: true\n"
                       "lora_value: true\nprecision: bf16-true\n")
    states = model_states(build_run(plan, PYTHIA_1B, []))
    # the fused query_key_value: r x (h + 3h) per layer, 16 layers, h = 2048
    assert states.trainable == 16 * 8 * (2048 + 3 * 2048)


def test_litgpt_adapters_follow_fabrics_true_precision():
    """bf16-true: HalfPrecision.convert_module casts the whole model, adapters included: 2 B adapter parameters."""
    plan = litgpt_plan("checkpoint_dir: checkpoints/meta-llama/Llama-3.2-1B\nlora_r: 8\nprecision: bf16-true\n")
    assert plan.peft.value.adapter_dtype == "bf16"


def test_litgpt_default_precision_is_bf16_mixed():
    """get_default_supported_precision(training=True) -> bf16-mixed on a bf16 GPU."""
    plan = litgpt_plan("checkpoint_dir: checkpoints/meta-llama/Llama-3.2-1B\n")
    assert plan.precision.value == AMP_BF16


def test_litgpt_loss_paths_and_fp32_logits():
    """LoRA script: the head in 128-token chunks; full script: full logits, cross-entropy in 128-row chunks. With
    bf16-true Fabric hands the logits back in fp32 (4 B each), and fit() keeps the last step's logits referenced:
    T x V x 4 in every phase. Llama-3.2-1B, micro-batch 1 x 512: 512 x 128,256 x 4 = 262,668,288 bytes."""
    lora = litgpt_plan("checkpoint_dir: checkpoints/meta-llama/Llama-3.2-1B\nlora_r: 8\nprecision: bf16-true\n"
                       "train:\n  micro_batch_size: 1\n  max_seq_length: 512\n")
    full = litgpt_plan("checkpoint_dir: checkpoints/meta-llama/Llama-3.2-1B\nprecision: bf16-true\n"
                       "train:\n  micro_batch_size: 1\n  max_seq_length: 512\n", "full.yaml")
    assert lora.loss_kernel.value == "litgpt_head_chunks" and full.loss_kernel.value == "litgpt_ce_chunks"
    T, V = 512, LLAMA32_1B.vocab_size
    for plan in (lora, full):
        run = build_run(plan, LLAMA32_1B, [])
        assert run.logits_out_bytes == 4 and run.keeps_logits
        act = activations(run)
        assert act.kept_logits == T * V * 4
        # forward: the bf16 head output and its fp32 conversion while the last step's logits are still referenced
        assert act.logits_forward == T * V * (2 + 4)
    assert activations(build_run(lora, LLAMA32_1B, [])).logits_backward == T * V * 4 + 2 * 128 * V * 4
    assert activations(build_run(full, LLAMA32_1B, [])).logits_backward == 2 * T * V * 4
    est = estimate_plan(lora, LLAMA32_1B)
    assert component(est, "logits") >= T * V * 4


def test_litgpt_mixed_precision_hands_the_loss_fp32_logits():
    """bf16-mixed (LitGPT's default): MixedPrecision.convert_output casts the bf16 head output to
    torch.get_default_dtype() as the true precisions do, so the loss and fit()'s kept logits are fp32: Llama-3.2-1B
    LoRA, 1 x 512: 512 x 128,256 x 4 = 262,668,288 bytes kept (not 131,334,144)."""
    plan = litgpt_plan("checkpoint_dir: checkpoints/meta-llama/Llama-3.2-1B\nlora_r: 8\nprecision: bf16-mixed\n"
                       "train:\n  micro_batch_size: 1\n  max_seq_length: 512\n")
    run = build_run(plan, LLAMA32_1B, [])
    assert run.precision.autocast == "bf16" and run.logits_out_bytes == 4
    T, V = 512, LLAMA32_1B.vocab_size
    act = activations(run)
    assert act.kept_logits == T * V * 4 == 262_668_288
    assert act.logits_forward == T * V * (2 + 4)  # the bf16 head output and its fp32 conversion


def test_litgpt_lora_head_adapts_the_head():
    """`lora_head: true`: GPT.__init__ builds lm_head with create_lora_linear(use_r=lora_head): A [r, n_embd] and
    B [vocab, r] trained: Llama-3.2-1B, r 8: 8 x (2,048 + 128,256) = 1,042,432 more trainable parameters, with their
    gradients and two AdamW states, and the head adapter's saved input (lora_dropout 0.05: a 1-byte mask and the
    dropped 16-bit input) and its [T, r] product."""
    text = ("checkpoint_dir: checkpoints/meta-llama/Llama-3.2-1B\nlora_r: 8\nprecision: bf16-true\n"
            "train:\n  micro_batch_size: 1\n  max_seq_length: 512\n")
    base = build_run(litgpt_plan(text), LLAMA32_1B, [])
    head = build_run(litgpt_plan(text + "lora_head: true\n"), LLAMA32_1B, [])
    assert head.peft.head_rank == 8 and base.peft.head_rank == 0
    extra = 8 * (LLAMA32_1B.hidden_size + LLAMA32_1B.vocab_size)
    assert extra == 1_042_432
    s0, s1 = model_states(base), model_states(head)
    assert s1.trainable - s0.trainable == extra
    assert s1.grads - s0.grads == extra * 2  # bf16-true casts the adapters too (HalfPrecision.convert_module)
    T, h = 512, LLAMA32_1B.hidden_size
    assert activations(head).outside - activations(base).outside == T * h * (2 + 1) + T * 8 * 2


def test_litgpt_adapter_scripts_train_only_their_adapters(tmp_path):
    """`litgpt finetune_adapter` / `finetune_adapter_v2` read a config with the full script's keys but train only
    the adapter (mark_only_adapter(_v2)_as_trainable) and call model(input_ids, lm_head_chunk_size=128).
    Llama-3.2-1B (16 layers, hidden 2,048, 32 heads): v1 adapts layers 2-15 with adapter_wte [10, 2,048] and
    gating_factor [32]: 14 x 20,512 = 287,168 parameters; v2 adds adapter_bias and adapter_scale on every linear
    (16 x 2 x 23,552 + 2 x 128,256) and trains the norms (33 x 2,048): 1,364,928."""
    text = ("checkpoint_dir: checkpoints/meta-llama/Llama-3.2-1B\nprecision: bf16-true\n"
            "train:\n  micro_batch_size: 1\n  max_seq_length: 512\n")
    full = litgpt.read(parse_document(text, "a.yaml")).plan
    assert full.peft.value is None and full.loss_kernel.value == "litgpt_ce_chunks"
    v1 = litgpt.read(parse_document(text, "a.yaml"), script="finetune_adapter").plan
    v2 = litgpt.read(parse_document(text, "a.yaml"), script="litgpt/finetune/adapter_v2.py").plan
    assert v1.peft.value.method == "adapter" and v2.peft.value.method == "adapter_v2"
    assert v1.loss_kernel.value == v2.loss_kernel.value == "litgpt_head_chunks"
    s1, s2 = model_states(build_run(v1, LLAMA32_1B, [])), model_states(build_run(v2, LLAMA32_1B, []))
    assert s1.trainable == 287_168 and s2.trainable == 1_364_928
    assert s1.grads == 287_168 * 2  # bf16-true: the adapters in bf16
    T, V = 512, LLAMA32_1B.vocab_size
    # v2's head keeps lm_head(x) + adapter_bias of every 128-token chunk for adapter_scale's gradient
    a1, a2 = activations(build_run(v1, LLAMA32_1B, [])), activations(build_run(v2, LLAMA32_1B, []))
    assert a2.outside - a1.outside == T * V * 2
    # the launch names the script: the engine hands it to the reader
    (tmp_path / "adapter.yaml").write_text(text)
    (tmp_path / "run.sh").write_text("litgpt finetune_adapter --config adapter.yaml\n")
    from trainlint.engine import check_path
    result = check_path(tmp_path / "adapter.yaml")
    assert result.plan.peft.value is not None and result.plan.peft.value.method == "adapter"


def test_litgpt_expands_kv_heads_before_sdpa():
    """CausalSelfAttention.forward repeats k and v to all 32 query heads of Llama-3.2-1B (8 KV heads): SDPA saves
    k and v at 32 heads: 2 x T x (32 - 8) x 64 x 2 B more per layer."""
    base = Run(arch=LLAMA32_1B, micro_batch=1, seq_len=1024, precision=PURE_BF16,
               optimizer=optimizer_spec("adamw_torch_fused"))

    plain, expanded = activations(base), activations(base._replace(kv_expanded=True))
    assert expanded.per_layer - plain.per_layer == 2 * 1024 * (32 - 8) * 64 * 2


def test_litgpt_checkpoint_dir_keeps_its_folder(tmp_path):
    """A checkpoint_dir that exists with a config.json (LitGPT's download layout checkpoints/<org>/<name>, relative
    to the folder litgpt runs in) is the model; otherwise <org>/<name>."""
    folder = tmp_path / "checkpoints" / "acme" / "tiny"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    config = tmp_path / "config_hub" / "finetune" / "lora.yaml"
    config.parent.mkdir(parents=True)
    text = "checkpoint_dir: checkpoints/acme/tiny\nlora_r: 8\n"
    assert litgpt.read(parse_document(text, str(config))).plan.model.value == str(folder)
    other = litgpt.read(parse_document("checkpoint_dir: checkpoints/meta-llama/Llama-3.2-1B\n",
                                       str(config))).plan
    assert other.model.value == "meta-llama/Llama-3.2-1B"


# ---- the script families (open-r1, alignment-handbook, open-instruct) -----------------------------------------


def hf_plan(text: str, name: str = "config.yaml"):
    return huggingface.read(parse_document(text, name)).plan


@pytest.mark.parametrize("dtype, weights", [("bfloat16", "bf16"), ("null", "fp32")])
def test_script_family_recipes_load_in_their_torch_dtype(dtype, weights):
    """open-r1 and alignment-handbook get_model(): from_pretrained(torch_dtype=ModelConfig.torch_dtype), None ->
    transformers 4.x's fp32; the recipes write bf16: true with torch_dtype bfloat16 (bf16 weights) or null (fp32
    weights under the bf16 autocast)."""
    plan = hf_plan(f"model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct\ntorch_dtype: {dtype}\nbf16: true\n"
                   "dataset_name: open-r1/OpenR1-Math-220k\nmax_length: 4096\ngradient_checkpointing: true\n")
    assert plan.trainer.value == "trl"
    assert plan.precision.value.param_dtype == weights
    assert plan.precision.value.master_weights is False
    if weights == "fp32":
        assert plan.precision.value.autocast == "bf16"


def test_open_instruct_liger_and_cached_reference():
    """open-instruct use_liger_kernel: AutoLigerKernelForCausalLM(fused_linear_cross_entropy=True); its DPO scripts
    cache the reference log-probs before training (dpo_utils.build_reference_logprobs_cache): no reference model."""
    plan = hf_plan("model_name_or_path: allenai/OLMo-2-1124-7B\nuse_flash_attn: true\nuse_liger_kernel: true\n"
                   "beta: 5\ndpo_loss_type: dpo_norm\nmax_seq_length: 2048\n")
    assert plan.trainer.value == "open-instruct" and plan.task.value == "dpo"
    assert plan.fused_loss.value is True and plan.ref_logps_precomputed.value is True


def test_ms_swift_deepspeed_names_and_unknown_keys():
    """ms-swift SftArguments._init_deepspeed maps `deepspeed: zero0 ... zero3_offload` to its bundled
    swift/config/<name>.json (zero3_offload: stage 3, optimizer and parameters offloaded to the CPU; zero2: stage 2,
    no offload); SwiftPipeline._parse_args raises 'remaining_argv: [...]' on a key no dataclass has."""
    from trainlint.catalog import dialects

    names = dialects.builtin_deepspeed("ms-swift", "4.5.2")
    assert {"zero0", "zero1", "zero2", "zero2_offload", "zero3", "zero3_offload"} <= set(names)
    assert (names["zero3_offload"]["stage"], names["zero3_offload"]["offload_optimizer"],
            names["zero3_offload"]["offload_param"]) == (3, "cpu", "cpu")
    assert names["zero2"]["stage"] == 2 and not names["zero2"].get("offload_optimizer")
    assert dialects.unknown_keys_action("ms-swift") == "error"


# ---- the data file and the pages -------------------------------------------------------------------------------


def test_every_semantics_entry_names_its_code_and_versions():
    data = json.loads(read_data("framework_semantics.json"))
    for framework, body in data.items():
        if framework.startswith("_"):
            continue
        for name, entry in body.items():
            assert isinstance(entry, dict) and entry.get("_evidence") and entry.get("_versions"), (framework, name)
            assert re.search(r"\.py\b", entry["_evidence"]), (framework, name)


FRAMEWORKS = ("hf-trainer", "trl", "accelerate", "deepspeed", "peft", "axolotl", "llama-factory", "ms-swift",
              "torchtune", "litgpt", "lightning", "open-instruct", "open-r1", "alignment-handbook")


def test_every_framework_has_a_page_in_the_index():
    index = (ROOT / "docs" / "frameworks" / "README.md").read_text()
    for name in FRAMEWORKS:
        page = ROOT / "docs" / "frameworks" / f"{name}.md"
        assert page.is_file(), name
        assert f"({name}.md)" in index, name
        text = page.read_text()
        for heading in ("Precision", "Loss", "Launch", "Parser"):
            assert f"## {heading}" in text, (name, heading)


def test_litgpt_model_keeps_its_own_head():
    """LitGPT's GPT holds lm_head and wte as two parameters: Llama-3.2-1B (tied in the HF checkpoint, 1,235,814,400
    params) has 1,235,814,400 + 128,256 x 2,048 = 1,498,482,688 parameters in LitGPT."""
    plan = litgpt_plan("checkpoint_dir: checkpoints/meta-llama/Llama-3.2-1B\nlora_r: 8\nprecision: bf16-true\n")
    run = build_run(plan, LLAMA32_1B, notes := [])
    assert LLAMA32_1B.total_params == 1_235_814_400
    assert run.arch.total_params == 1_498_482_688 and not run.arch.tie_word_embeddings
    assert any("own lm_head" in n for n in notes)
    assert build_run(plan, LLAMA32_1B, []).arch is run.arch  # one object per architecture (estimate caches)


@pytest.mark.parametrize("model, padded", [
    (PHI2, 51_200),  # litgpt/config.py phi-2: vocab_size 50,257, padded_vocab_size 51,200
    (PYTHIA_1B, 50_304),  # pythia-1b: find_multiple(50,254, padding_multiple 128)
    (LLAMA32_1B, 128_256),  # Llama-3.2-1B: vocab_size 128,000, padded_vocab_size 128,256
])
def test_litgpt_padded_vocabulary_is_the_hf_vocab_size_for_phi2_pythia_and_llama(model, padded):
    """LitGPT sizes wte, lm_head and the logits by Config.padded_vocab_size; trainlint sizes them by the HF config's
    vocab_size, through LitGPT's own architecture (semantics.litgpt_arch), which is the same number for these."""
    plan = litgpt_plan(f"checkpoint_dir: checkpoints/{model.name}\nprecision: bf16-true\n"
                       "train:\n  micro_batch_size: 1\n  max_seq_length: 256\n", "full.yaml")
    run = build_run(plan, model, [])
    assert model.vocab_size == padded and run.arch.vocab_size == padded
    assert activations(run).kept_logits == 256 * padded * 4


def test_litgpt_phi_blocks_have_no_dropout_and_one_gelu():
    """Phi-2 as LitGPT builds it: no dropout (HF's config trains with resid_pdrop 0.1: two 1-byte [T, h] masks per
    layer) and one F.gelu(approximate="tanh") saving its input (HF's gelu_new saves four [T, f] tensors): per layer
    3 x T x f x 2 B + 2 x T x h fewer bytes, T = 1,024, f = 10,240, h = 2,560."""
    plan = litgpt_plan("checkpoint_dir: checkpoints/microsoft/phi-2\nprecision: bf16-true\n"
                       "train:\n  micro_batch_size: 1\n  max_seq_length: 1024\n", "full.yaml")
    run = build_run(plan, PHI2, [])
    assert run.fused_activation and dict(run.arch.dropout)["resid"] == 0.0
    hf = Run(arch=PHI2, micro_batch=1, seq_len=1024, precision=PURE_BF16, optimizer=run.optimizer)

    litgpt_layer = activations(hf._replace(arch=run.arch, fused_activation=True)).per_layer
    assert activations(hf).per_layer - litgpt_layer == 3 * 1024 * 10240 * 2 + 2 * 1024 * 2560


# ---- torchtune -------------------------------------------------------------------------------------------------


TORCHTUNE = ("model:\n  _component_: torchtune.models.llama3_2.llama3_2_1b\ntokenizer:\n  max_seq_len: 2048\n"
             "batch_size: 2\ndtype: bf16\noptimizer:\n  _component_: torch.optim.AdamW\n")


def test_torchtune_chunked_output_loss():
    """CEWithChunkedOutputLoss (8 chunks): the model's chunked bf16 logits (T·V·2) until `del outputs`, every chunk's
    fp32 log-softmax (T·V·4) and one chunk's fp32 upcast in forward; backward: the log-softmax plus one chunk's
    gradient (fp32 twice and the bf16 cast) beside the head's gradient summed so far, or the chunk's bf16 gradient
    while the next chunk's [V, h] head gradient is summed into the buffer (TransformerDecoder.chunked_output applies
    the head once per chunk). T = 2 x 2,048, V = 128,256."""
    from trainlint.flavors import torchtune

    text = TORCHTUNE + "loss:\n  _component_: torchtune.modules.loss.CEWithChunkedOutputLoss\n"
    plan = torchtune.read(parse_document(text, "t.yaml")).plan
    assert plan.loss_kernel.value == "torchtune_chunked" and plan.precision.value == PURE_BF16
    act = activations(build_run(plan, LLAMA32_1B, []))
    T, V, rows = 4096, LLAMA32_1B.vocab_size, 4096 / 8
    assert act.logits_forward == T * V * 2 + T * V * 4 + rows * V * 4
    head = V * LLAMA32_1B.hidden_size * 2  # the tied head's bf16 [V, h] gradient, summed over the 8 chunks
    assert act.logits_backward == max(T * V * 4 + rows * V * (8 + 2) + head, T * V * 4 + rows * V * 2 + 2 * head)
    four = torchtune.read(parse_document(text + "  num_output_chunks: 4\n", "t.yaml")).plan
    assert build_run(four, LLAMA32_1B, []).loss_chunks == 4


def test_torchtune_compiled_chunked_loss_keeps_no_fp32_chunks():
    """compile: true: training.compile_loss compiles CEWithChunkedOutputLoss.compute_cross_entropy, one inductor graph
    that keeps the bf16 chunks and per-row statistics, no fp32 copy or log-softmax: forward T·V·2 + 2 fp32 per row;
    backward the chunks still saved plus one chunk's bf16 gradient and the trainable head's [V, h] gradient, or two of
    those while a chunk's is summed into the buffer (none for a frozen head). compile: false keeps the eager path."""
    from trainlint.flavors import torchtune

    text = TORCHTUNE + "loss:\n  _component_: torchtune.modules.loss.CEWithChunkedOutputLoss\n"
    plan = torchtune.read(parse_document(text + "compile: true\n", "t.yaml")).plan
    assert plan.loss_kernel.value == "torchtune_chunked_compiled" and plan.torch_compile.value is True
    act = activations(build_run(plan, LLAMA32_1B, []))
    T, V, rows = 4096, LLAMA32_1B.vocab_size, 4096 / 8
    assert act.logits_forward == T * V * 2 + T * 8
    head = V * LLAMA32_1B.hidden_size * 2
    assert act.logits_backward == T * V * 2 + max(rows * V * 2 + head, 2 * head) + T * 8
    lora = TORCHTUNE.replace("llama3_2.llama3_2_1b\n", "llama3_2.lora_llama3_2_1b\n  lora_rank: 8\n")
    frozen = activations(build_run(torchtune.read(parse_document(lora + text[len(TORCHTUNE):] + "compile: true\n",
                                                                 "t.yaml")).plan, LLAMA32_1B, []))
    assert frozen.logits_backward == T * V * 2 + rows * V * 2 + T * 8  # a frozen head: no head gradient
    eager = torchtune.read(parse_document(text + "compile: false\n", "t.yaml")).plan
    assert eager.loss_kernel.value == "torchtune_chunked"


def test_torchtune_lora_adapters_are_in_the_recipe_dtype():
    """lora_finetune_single_device._setup_model: the model (adapters included) is built under set_default_dtype(dtype)
    and validate_expected_param_dtype checks the adapters are in it: bf16 adapters, not PEFT's fp32."""
    from trainlint.flavors import torchtune

    lora = TORCHTUNE.replace("llama3_2.llama3_2_1b\n", "llama3_2.lora_llama3_2_1b\n  lora_rank: 64\n"
                                                         "  lora_dropout: 0.1\n")
    peft = torchtune.read(parse_document(lora, "t.yaml")).plan.peft.value
    assert peft.adapter_dtype == "bf16" and peft.rank == 64 and peft.dropout == 0.1
    fp32 = torchtune.read(parse_document(lora.replace("dtype: bf16", "dtype: fp32"), "t.yaml")).plan.peft.value
    assert fp32.adapter_dtype is None


def test_torchtune_linear_cross_entropy_projects_per_chunk():
    """LinearCrossEntropyLoss: the head runs inside the loss per chunk: one chunk's bf16 logits at a time."""
    from trainlint.flavors import torchtune

    text = TORCHTUNE + "loss:\n  _component_: torchtune.modules.loss.LinearCrossEntropyLoss\n"
    plan = torchtune.read(parse_document(text, "t.yaml")).plan
    act = activations(build_run(plan, LLAMA32_1B, []))
    T, V, rows = 4096, LLAMA32_1B.vocab_size, 4096 / 8
    assert act.logits_forward == rows * V * 2 + T * V * 4 + rows * V * 4


# ---- LLaMA-Factory ---------------------------------------------------------------------------------------------


def test_llama_factory_pure_bf16_keeps_trainables_in_bf16():
    """LLaMA-Factory's init_adapter casts the trainable parameters to fp32 unless pure_bf16 (or BAdam, or ZeRO-3
    without quantization): pure_bf16 trains bf16 weights and states; bf16 alone fp32 weights under bf16 autocast."""
    from trainlint.flavors import huggingface

    base = ("model_name_or_path: Qwen/Qwen2.5-1.5B\nstage: sft\nfinetuning_type: full\ntemplate: qwen\n"
            "cutoff_len: 1024\nbf16: true\n")
    pure = huggingface.read(parse_document(base + "pure_bf16: true\n", "lf.yaml")).plan.precision.value
    mixed = huggingface.read(parse_document(base, "lf.yaml")).plan.precision.value
    assert pure == PURE_BF16
    assert (mixed.param_dtype, mixed.autocast) == ("fp32", "bf16")


def test_llama_factory_liger_is_fused_only_for_pt_and_sft():
    """apply_liger_kernel(require_logits=stage not in [pt, sft]): a DPO stage gets Liger without its fused linear
    cross-entropy, so the full logits are built."""
    from trainlint.flavors import huggingface

    base = ("model_name_or_path: meta-llama/Llama-3.2-1B\nstage: {}\nfinetuning_type: lora\ntemplate: llama3\n"
            "enable_liger_kernel: true\ncutoff_len: 1024\n")
    sft = huggingface.read(parse_document(base.format("sft"), "s.yaml")).plan
    dpo = huggingface.read(parse_document(base.format("dpo"), "d.yaml")).plan
    assert sft.fused_loss.value is True
    assert dpo.fused_loss.value is False and "stage dpo" in dpo.fused_loss.origin.note


def test_axolotl_precision_follows_the_run_as_planned():
    """The fix planner re-estimates with FSDP or an adapter added: axolotl's loader would then leave no fp32
    embeddings (adapter: cast back to bf16; FSDP: accelerate's fp32 upcast of everything)."""
    from trainlint.plan import Origin, Peft, Setting

    plan = axolotl_plan(AXOLOTL_FULL)
    assert plan.precision.value.linears == "bf16"
    lora = plan.with_(peft=Setting(Peft("lora", 16, "all-linear"), Origin("cli")))
    assert build_run(lora, LLAMA31_8B, []).precision == PURE_BF16
    sharded = plan.with_(fsdp=Setting("full_shard", Origin("cli")))
    assert build_run(sharded, LLAMA31_8B, []).precision == AMP_BF16


# ---- against LitGPT's published peaks ----------------------------------------------------------------------------

# Lightning-AI/litgpt config_hub/finetune/README.md (last changed in 00af8b0d, 2024-09-27): "Peak memory" of each
# config on 1xA10G, bfloat-16, Alpaca2k, max seq length 512; litgpt/finetune/lora.py of that time prints it as
# torch.cuda.max_memory_allocated() / 1e9 ("Memory used: ... GB"). The LoRA settings are the configs' own.
LITGPT_PUBLISHED = [
    ("checkpoint_dir: checkpoints/meta-llama/Llama-3.2-1B\nprecision: bf16-true\nlora_r: 32\nlora_alpha: 16\n"
     "lora_dropout: 0.05\nlora_query: true\nlora_key: false\nlora_value: true\nlora_projection: false\n"
     "lora_mlp: false\nlora_head: false\ntrain:\n  global_batch_size: 8\n  micro_batch_size: 1\n"
     "  max_seq_length: 512\n", 4.49),
    ("checkpoint_dir: checkpoints/microsoft/phi-2\nprecision: bf16-true\nlora_r: 8\nlora_alpha: 16\n"
     "lora_dropout: 0.05\nlora_query: true\nlora_key: true\nlora_value: true\nlora_projection: true\n"
     "lora_mlp: true\nlora_head: true\ntrain:\n  global_batch_size: 8\n  micro_batch_size: 4\n"
     "  max_seq_length: 512\n", 13.98),
]


@pytest.mark.parametrize("text, published_gb", LITGPT_PUBLISHED)
def test_litgpt_lora_peaks_match_litgpts_published_numbers(text, published_gb):
    """Llama-3.2-1B LoRA (4.49 GB) needs LitGPT's own lm_head (+263M frozen parameters) and its chunked loss; Phi-2
    LoRA with every switch (13.98 GB) needs the switches on Phi's own modules, no dropout and one GELU (read as HF
    it was 17% over, and 33% with the adapters mapped but HF's dropout and gelu_new)."""
    plan = litgpt_plan(text)
    arch = find_model(plan.model.value)
    estimate = estimate_plan(plan, arch)
    assert estimate.peak_allocated / 1e9 == pytest.approx(published_gb, rel=0.05)


def test_axolotl_qlora_kbit_upcast_is_skipped_under_zero3_and_fsdp():
    """_prepare_model_for_quantization: prepare_model_for_kbit_training (norms and embeddings to fp32) for QLoRA,
    skipped under FSDP and DeepSpeed ZeRO-3."""
    from trainlint.plan import Origin, Setting

    plan = axolotl_plan(AXOLOTL_FULL + "adapter: qlora\nload_in_4bit: true\nlora_r: 16\n")
    assert build_run(plan, LLAMA31_8B, []).kbit_fp32_upcast
    zero3 = plan.with_(zero_stage=Setting(3, Origin("cli")))
    assert not build_run(zero3, LLAMA31_8B, []).kbit_fp32_upcast
    sharded = plan.with_(fsdp=Setting("full_shard", Origin("cli")))
    assert not build_run(sharded, LLAMA31_8B, []).kbit_fp32_upcast


def test_torchtune_on_several_gpus_is_fsdp_sharded():
    """torchtune has no DDP recipe: several GPUs mean the distributed recipes' FSDP2 sharding."""
    from trainlint.flavors import torchtune
    from trainlint.plan import Origin, Setting

    plan = torchtune.read(parse_document(TORCHTUNE, "t.yaml")).plan.with_(num_gpus=Setting(4, Origin("cli")))
    assert build_run(plan, LLAMA32_1B, notes := []).fsdp == "full_shard"
    assert any("torchtune has no DDP" in n for n in notes)


@pytest.mark.parametrize("version, kernel", [("1.16.0", "trl"), ("1.10.0", "trl_chunked"), ("1.5.0", None)])
def test_trl_loss_path_by_release(version, kernel):
    """TRL SFT: the fused LM head from 1.15, chunked_nll from 1.7, the full logits before (data "trl" loss)."""
    from trainlint.flavors import huggingface
    from trainlint.plan import Origin, Setting

    text = "model_name_or_path: meta-llama/Llama-3.2-1B\nmax_length: 1024\ndataset_name: x\nbf16: true\n"
    plan = huggingface.read(parse_document(text, "trl.yaml")).plan
    assert plan.trainer.value == "trl"
    plan = plan.with_(trainer_version=Setting(version, Origin("cli")))
    assert build_run(plan, LLAMA32_1B, []).loss_kernel == kernel


def test_litgpt_pretrain_has_no_shift_copy():
    """pretrain.py: chunked_cross_entropy(logits, targets) on the contiguous logits; full.py slices
    logits[..., :-1, :] first, which reshape copies for a micro-batch of 2 (T x V x 4 more in forward): forward
    max(T·V·(2 + 4), T·V·4 + copy) = 6 vs 8 T·V with bf16-true."""
    body = "precision: bf16-true\ntrain:\n  micro_batch_size: 2\n  max_seq_length: 512\n"
    pretrain = litgpt_plan("model_name: Llama-3.2-1B\n" + body, "pretrain.yaml")
    full = litgpt_plan("checkpoint_dir: checkpoints/meta-llama/Llama-3.2-1B\n" + body, "full.yaml")
    assert pretrain.loss_kernel.value == "litgpt_pretrain_ce" and full.loss_kernel.value == "litgpt_ce_chunks"
    T, V = 1024, LLAMA32_1B.vocab_size
    assert activations(build_run(pretrain, LLAMA32_1B, [])).logits_forward == 6 * T * V
    assert activations(build_run(full, LLAMA32_1B, [])).logits_forward == 8 * T * V


LITGPT_QLORA = ("checkpoint_dir: checkpoints/meta-llama/Llama-3.2-1B\nprecision: bf16-true\nquantize: bnb.nf4\n"
                "lora_r: 8\nlora_query: true\nlora_value: true\ntrain:\n  micro_batch_size: 1\n  max_seq_length: 512\n")


def test_litgpt_qlora_follows_the_bitsandbytes_its_release_pins():
    """litgpt <=0.5.4 pins bitsandbytes==0.42.0, whose MatMul4Bit keeps each 4-bit linear's input (until 0.43.2):
    per layer the attention input (the q/v adapters save their dropped copies, not it), the MLP input and the MLP
    product, T·(2h + f)·2 bytes; litgpt 0.5.5 pins bitsandbytes 0.44. bnb.nf4 is not double-quantized."""
    from trainlint.plan import Origin, Setting

    plan = litgpt_plan(LITGPT_QLORA)
    assert plan.peft.value.double_quant is False
    assert litgpt_plan(LITGPT_QLORA.replace("bnb.nf4", "bnb.nf4-dq")).peft.value.double_quant is True
    said: list[str] = []
    old = build_run(plan.with_(trainer_version=Setting("0.4.13", Origin("cli"))), LLAMA32_1B, said)
    new = build_run(plan.with_(trainer_version=Setting("0.5.13", Origin("cli"))), LLAMA32_1B, [])
    assert old.bnb_saves_input and not new.bnb_saves_input
    assert any("bitsandbytes 0.42.0" in note for note in said)
    T, h, f = 512, LLAMA32_1B.hidden_size, LLAMA32_1B.intermediate_size
    assert activations(old).per_layer - activations(new).per_layer == T * (2 * h + f) * 2


def test_litgpt_qlora_quantizes_the_head_and_dequantizes_it_twice():
    """Fabric's BitsandbytesPrecision replaces every nn.Linear (the head too) and quantizes from fp16
    (_Linear4bit.quantize: weight.to(torch.half)); MatMul4Bit dequantizes to the state's fp16 and .to(bf16): the
    [vocab, hidden] head weight twice in 16 bits at the end of the forward. HF QLoRA keeps its head 16-bit."""
    from trainlint.memory.model import _dequant_bytes

    run = build_run(litgpt_plan(LITGPT_QLORA), LLAMA32_1B, [])
    assert run.quantized_head and run.dequant_copies == 2
    assert _dequant_bytes(run) == LLAMA32_1B.vocab_size * LLAMA32_1B.hidden_size * 2 * 2
    head_4bit = model_states(run).weights
    assert model_states(run._replace(quantized_head=False)).weights - head_4bit == pytest.approx(
        LLAMA32_1B.vocab_size * LLAMA32_1B.hidden_size * (2 - 0.5625))


def test_litgpt_qlora_keeps_the_previous_steps_4bit_inputs_through_the_next_forward():
    """bitsandbytes 0.42.0 (pinned by litgpt <=0.5.4) keeps MatMul4Bit's input as `ctx.tensors`, which backward does not
    release, and LitGPT's fit() keeps the last step's logits (and so its graph) until the next forward returns: one
    16-bit tensor per distinct 4-bit linear input per layer (attention input, attention output, MLP input, MLP
    product: T·(3h + f)·2) plus the head's input, in the forward only; the first layer's attention input needs no grad
    (a frozen embedding, a frozen norm), so MatMul4Bit keeps nothing for it. Not with bitsandbytes 0.44 (litgpt 0.5.5+),
    nor where the loop drops its graph (the HF Trainer)."""
    from trainlint.memory.model import estimate_run
    from trainlint.plan import Origin, Setting

    plan = litgpt_plan(LITGPT_QLORA)
    old = build_run(plan.with_(trainer_version=Setting("0.4.13", Origin("cli"))), LLAMA32_1B, [])
    new = build_run(plan.with_(trainer_version=Setting("0.5.13", Origin("cli"))), LLAMA32_1B, [])
    T, h, f, L = 512, LLAMA32_1B.hidden_size, LLAMA32_1B.intermediate_size, LLAMA32_1B.num_layers
    assert old.keeps_logits and old.quantized_head
    first_input, head_input = T * h * 2, T * h * 2  # the first layer's attention input (no grad), the head's input
    assert activations(old).kept_4bit_inputs == L * T * (3 * h + f) * 2 - first_input + head_input
    assert activations(new).kept_4bit_inputs == 0
    dropped = old._replace(keeps_logits=False)
    assert activations(dropped).kept_4bit_inputs == 0
    est = estimate_run(old)
    assert est.peak_phase == "forward"
    kept = [t for t in est.terms if t.label == "4-bit linear inputs of the step before"]
    assert kept and kept[0].bytes == activations(old).kept_4bit_inputs
    assert est.phases["forward"] == pytest.approx(sum(t.bytes for t in est.terms), abs=1)


def test_litgpt_qlora_head_dequantizes_beside_the_chunks_not_beside_the_fp32_logits():
    """The 4-bit head is multiplied chunk by chunk (lm_head_chunk_size=128): its fp16 dequantized weight and the bf16
    cast (MatMul4Bit.forward) live beside the earlier chunks' bf16 logits; Fabric's fp32 conversion of the logits
    (convert_output) comes after the loop, when the weight copies are gone. The forward's end is the larger moment."""
    from trainlint.memory.model import _dequant_moment, estimate_run

    gemma = find_model("google/gemma-2b")
    run = build_run(litgpt_plan(LITGPT_QLORA.replace("meta-llama/Llama-3.2-1B", "google/gemma-2b")
                                .replace("micro_batch_size: 1", "micro_batch_size: 2")), gemma, [])
    T, V, h = 1024, gemma.vocab_size, gemma.hidden_size
    earlier, weight = _dequant_moment(run)
    assert (earlier, weight) == ((T - 256) * V * 2, V * h * 2 * 2)  # the .to(bf16) moment of the last chunk
    act = activations(run)
    est = estimate_run(run)
    terms = {t.label: t.bytes for t in est.terms}
    assert est.peak_phase == "forward"
    assert terms["logits and loss"] == earlier and terms["dequantized 4-bit weight"] == weight
    assert earlier + weight > act.logits_forward  # here the head's moment decides, not the fp32 conversion


def test_litgpt_qlora_trains_with_paged_adamw_whose_small_tensors_stay_on_the_device():
    """Under BitsandbytesPrecision lora.py builds bitsandbytes' PagedAdamW (utils.instantiate_bnb_optimizer), whose
    32-bit states are fp32 (8 B/param over bf16 adapters) and paged only for tensors of at least 1e5 elements
    (Optimizer8bit.get_state_buffer): at r=8 the fused q/v LoRAQKVLinear's A (16 x 2048) and B (2560 x 8) are
    ordinary device buffers; at r=64 (A 128 x 2048, B 2560 x 64) they are paged, outside the allocator."""
    from trainlint.memory.model import _params_in_small_tensors

    said: list[str] = []
    run = build_run(litgpt_plan(LITGPT_QLORA), LLAMA32_1B, said)
    assert run.optimizer.name == "paged_adamw_32bit" and any("instantiate_bnb_optimizer" in s for s in said)
    st = model_states(run)
    L = LLAMA32_1B.num_layers
    assert _params_in_small_tensors(run, run.optimizer.paged_from) == st.trainable == L * (16 * 2048 + 2560 * 8)
    assert st.optimizer == st.trainable * 8 and st.paged == 0
    wide = build_run(litgpt_plan(LITGPT_QLORA.replace("lora_r: 8", "lora_r: 64")), LLAMA32_1B, [])
    wide_states = model_states(wide)
    assert wide_states.optimizer == 0 and wide_states.paged == wide_states.trainable * 8
    plain = build_run(litgpt_plan(LITGPT_QLORA.replace("quantize: bnb.nf4\n", "")), LLAMA32_1B, [])
    assert plain.optimizer.name != "paged_adamw_32bit"


@pytest.mark.parametrize("keyword, name, temp_params", [
    ("", "adamw", "all"), ("  fused: True\n", "adamw_fused", None), ("  foreach: false\n", "adamw_loop", None),
    ("  fused: false\n", "adamw", "all")])
def test_torchtune_optimizer_keywords_pick_the_torch_step(keyword, name, temp_params):
    """_setup_optimizer passes every `optimizer:` key to the component: torch.optim.AdamW(fused=True) steps with
    torch._fused_adamw_ (no temporary), foreach=False one parameter at a time; unset, foreach on CUDA allocates
    torch._foreach_sqrt of every exp_avg_sq (a bf16 copy of the parameters, 2 B each)."""
    from trainlint.flavors import torchtune

    plan = torchtune.read(parse_document(TORCHTUNE + keyword, "t.yaml")).plan
    run = build_run(plan, LLAMA32_1B, [])
    assert run.optimizer.name == name
    assert model_states(run).step_temp == (LLAMA32_1B.total_params * 2 if temp_params else 0)


def test_torchtune_optimizer_in_backward_steps_one_parameter_at_a_time():
    """optimizer_in_bwd: one optimizer per parameter (`config.instantiate(cfg_optimizer, [p])`), stepped in its
    post-accumulate-grad hook: a foreach AdamW's temporary is one parameter's, the largest (the tied embedding,
    V x h in bf16) at most, beside that parameter's gradient; fused keeps none."""
    from trainlint.flavors import torchtune

    text = TORCHTUNE + "optimizer_in_bwd: True\n"
    st = model_states(build_run(torchtune.read(parse_document(text, "t.yaml")).plan, LLAMA32_1B, []))
    largest = LLAMA32_1B.largest_module_params * 2
    assert st.step_temp == largest and st.grads == largest
    fused = text.replace("torch.optim.AdamW\n", "torch.optim.AdamW\n  fused: True\n")
    assert model_states(build_run(torchtune.read(parse_document(fused, "t.yaml")).plan, LLAMA32_1B, [])).step_temp == 0


def test_torchtune_torchao_8bit_adamw_keeps_uint8_codes_and_a_scale_per_256():
    """torchao AdamW8bit (tutorials/memory_optimizations.rst's `optimizer=torchao.prototype.low_bit_optim.AdamW8bit`):
    _AdamBase._new_buffer makes each state an OptimState8bit.zeros -- uint8 codes plus an fp32 scale per 256-element
    block -- 2 x (1 + 4/256) B per parameter, not bitsandbytes' 2048-element absmax layout."""
    from trainlint.flavors import torchtune

    text = TORCHTUNE.replace("torch.optim.AdamW\n", "torchao.prototype.low_bit_optim.AdamW8bit\n")
    run = build_run(torchtune.read(parse_document(text, "t.yaml")).plan, LLAMA32_1B, [])
    assert run.optimizer.name == "adamw_8bit_torchao"
    assert model_states(run).optimizer == pytest.approx(LLAMA32_1B.total_params * 2 * (1 + 4 / 256))
    assert model_states(run).step_temp == 0


# ---- the load dtype and the bf16 default by parser and release (context/precision.py) ---------------------------

R1_QWEN = "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B"  # catalog config.json: torch_dtype bfloat16


def checked_run(text: str, tmp_path, name: str = "train.yaml"):
    """The Run the estimate builds for `text` after the context (versions, dialect) has decided the precision."""
    from trainlint.engine import check_text

    result = check_text(text, str(tmp_path / name))
    notes: list[str] = []
    arch = find_model(result.plan.model.value, base_dir=tmp_path)
    return build_run(result.plan, arch, notes), notes


def local_checkpoint(tmp_path, dtype: str) -> str:
    """A local checkpoint folder: the catalog's R1-Distill-Qwen-1.5B config.json with `torch_dtype: dtype`."""
    entry = next(m for m in json.loads(read_data("models.json"))["models"] if R1_QWEN in m.get("hf_ids", ()))
    folder = tmp_path / f"ckpt-{dtype}"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({**entry["config"], "torch_dtype": dtype}))
    return str(folder)


HF_BASE = "per_device_train_batch_size: 1\noutput_dir: out\nlearning_rate: 1.0e-5\n"


def test_hf_torch_dtype_auto_loads_the_checkpoints_dtype(tmp_path):
    """transformers modeling_utils.py _get_torch_dtype: `auto` -> config.torch_dtype (4.x and 5.x): a bf16 checkpoint
    trains bf16 weights (bf16 autocast over them is pure bf16, AdamW states in bf16); an fp32 one stays fp32 under the
    autocast; a checkpoint whose dtype is not known is assumed bf16, and that is said."""
    run, notes = checked_run(f"model_name_or_path: {R1_QWEN}\ntorch_dtype: auto\nbf16: true\n" + HF_BASE, tmp_path)
    assert run.precision == PURE_BF16
    assert any("checkpoint's dtype, bf16 (torch_dtype: auto)" in n for n in notes)
    fp32 = local_checkpoint(tmp_path, "float32")
    run, _ = checked_run(f"model_name_or_path: {fp32}\ntorch_dtype: auto\nbf16: true\n" + HF_BASE, tmp_path)
    assert run.precision == AMP_BF16
    run, notes = checked_run("model_name_or_path: meta-llama/Llama-3.2-1B\ntorch_dtype: auto\nbf16: true\n" + HF_BASE,
                             tmp_path)
    assert run.precision == PURE_BF16 and any("bf16 assumed" in n for n in notes)
    fp16 = local_checkpoint(tmp_path, "float16")
    run, notes = checked_run(f"model_name_or_path: {fp16}\ntorch_dtype: auto\nfp16: true\n" + HF_BASE, tmp_path)
    assert run.precision == Precision("fp16")
    assert any("Attempting to unscale FP16 gradients." in n for n in notes)


def test_hf_no_torch_dtype_loads_the_checkpoints_dtype_from_transformers_5(tmp_path):
    """PreTrainedModel.from_pretrained 5.x: `if dtype is None: dtype = "auto"`; 4.x: torch.get_default_dtype() (fp32).
    With transformers' release unknown, fp32 is assumed and said."""
    text = f"model_name_or_path: {R1_QWEN}\nbf16: true\n" + HF_BASE
    run, notes = checked_run("# trainlint: transformers=5.0.0\n" + text, tmp_path)
    assert run.precision == PURE_BF16
    run, notes = checked_run("# trainlint: transformers=4.52.3\n" + text, tmp_path)
    assert run.precision == AMP_BF16 and not any("fp32 weights assumed" in n for n in notes)
    run, notes = checked_run(text, tmp_path)
    assert run.precision == AMP_BF16 and any("fp32 weights assumed, as transformers < 5.0" in n for n in notes)


def test_trl_bf16_default_only_from_0_19(tmp_path):
    """TRL's configs set `bf16 = not fp16` when bf16 is unset from 0.19.0 (sft_config.py __post_init__; absent in
    0.18.0: TrainingArguments' bf16=False); with TRL's release unknown the default is assumed and the range said."""
    text = "model_name_or_path: meta-llama/Llama-3.2-1B\nmax_length: 1024\ndataset_name: x\n# trainlint: transformers=4.52.3\n"
    run, _ = checked_run("# trainlint: trl=0.18.0\n" + text, tmp_path)
    assert run.precision == FP32
    run, _ = checked_run("# trainlint: trl=0.19.0\n" + text, tmp_path)
    assert run.precision == AMP_BF16
    from trainlint.engine import check_text

    plan = check_text(text, str(tmp_path / "t.yaml")).plan
    assert plan.precision.value == AMP_BF16 and "assumed: TRL >= 0.19.0" in plan.precision.origin.note


@pytest.mark.parametrize("version, kernel", [("1.16.0", "trl"), ("1.15.0", "trl"), ("1.14.0", "liger")])
def test_trl_dpo_with_liger_takes_trls_fused_head_from_1_15(version, kernel):
    """DPOTrainer.__init__ from 1.15.0 patches the model with add_fused_lm_head and turns Liger's
    fused_linear_cross_entropy off: a DPO run with use_liger_kernel has TRL's fused head, not Liger's loss."""
    from trainlint.plan import Origin, Setting

    text = ("model_name_or_path: meta-llama/Llama-3.2-1B\nbeta: 0.1\nmax_prompt_length: 512\nmax_length: 1024\n"
            "bf16: true\nuse_liger_kernel: true\n")
    plan = huggingface.read(parse_document(text, "dpo.yaml")).plan
    assert plan.task.value == "dpo" and plan.trainer.value == "trl"
    plan = plan.with_(trainer_version=Setting(version, Origin("cli")))
    assert build_run(plan, LLAMA32_1B, []).loss_kernel == kernel


def test_open_instruct_scripts_train_bf16_weights(tmp_path):
    """open_instruct/finetune.py, dpo_tune_cache.py: from_pretrained(..., dtype=torch.bfloat16) on every path but
    use_liger_kernel (no dtype: transformers' default, the checkpoint's from 5.0): the files have no dtype key."""
    text = ("model_name_or_path: meta-llama/Llama-3.2-1B\nuse_flash_attn: true\nmax_seq_length: 2048\n"
            "with_tracking: true\nper_device_train_batch_size: 1\nlearning_rate: 2.0e-5\n")
    run, _ = checked_run(text, tmp_path)
    assert run.precision == PURE_BF16
    run, notes = checked_run("# trainlint: transformers=4.52.3\n" + text + "use_liger_kernel: true\n", tmp_path)
    assert run.precision == FP32
    fp32 = local_checkpoint(tmp_path, "float32")
    run, _ = checked_run(f"# trainlint: transformers=5.4.0\n{text.replace('meta-llama/Llama-3.2-1B', fp32)}"
                         "use_liger_kernel: true\n", tmp_path)
    assert run.precision == FP32
    run, _ = checked_run(f"# trainlint: transformers=5.4.0\n{text.replace('meta-llama/Llama-3.2-1B', R1_QWEN)}"
                         "use_liger_kernel: true\n", tmp_path)
    assert run.precision == PURE_BF16


def test_ms_swift_loads_the_checkpoints_dtype_and_sets_bf16_from_it(tmp_path):
    """ms-swift ModelArguments._init_torch_dtype: torch_dtype unset -> the checkpoint's config.json dtype;
    _init_mixed_precision: bf16 / fp16 unset -> bf16 for bfloat16, fp16 for float16 / float32."""
    text = ("# trainlint: dialect=ms-swift\nper_device_train_batch_size: 1\nlearning_rate: 1.0e-5\n"
            "max_length: 2048\noutput_dir: out\n")
    run, notes = checked_run(f"model_name_or_path: {R1_QWEN}\n" + text, tmp_path)
    assert run.precision == PURE_BF16
    fp32 = local_checkpoint(tmp_path, "float32")
    run, notes = checked_run(f"model_name_or_path: {fp32}\n" + text, tmp_path)
    assert run.precision == Precision("fp32", autocast="fp16")
    run, _ = checked_run(f"model_name_or_path: {R1_QWEN}\ntorch_dtype: float32\n" + text, tmp_path)
    assert run.precision == Precision("fp32", autocast="fp16")
    run, _ = checked_run(f"model_name_or_path: {R1_QWEN}\ntorch_dtype: float32\nbf16: true\n" + text, tmp_path)
    assert run.precision == AMP_BF16


def test_dpo_script_reference_model_with_peft_by_trl_release(tmp_path):
    """alignment-handbook main's dpo.py passes `ref_model = get_model(...)` with `peft_config=`: TRL 0.19.1-0.27's
    DPOTrainer._prepare_peft_model raises 'You passed both a ref_model and a peft_config. ...' (TL660: an error for a
    release in that range, a warning for a pin that straddles it); from 0.28 the second model is kept and counted."""
    import shutil

    from trainlint.engine import check_path, check_text

    folder = tmp_path / "handbook"
    shutil.copytree(ROOT / "tests" / "fixtures" / "TL660", folder)
    body = (folder / "bad.yaml").read_text().replace("# trainlint: trl=0.20.0\n", "")

    def findings(pin: str):
        path = folder / "recipe.yaml"
        path.write_text(body.replace("bad.yaml", "recipe.yaml") + pin)
        result = check_path(path)
        return result, [d for d in result.diagnostics if d.code == "TL660"]

    result, found = findings("# trainlint: trl=0.27.0\n")
    assert [d.severity.value for d in found] == ["error"] and "0.19.1-0.27" in found[0].message
    result, found = findings("# trainlint: trl=>=0.19.1\n")
    assert [d.severity.value for d in found] == ["warning"]
    kept, found = findings("# trainlint: trl=0.28.0\n")
    assert not found
    alone = check_text(body.replace("# accelerate launch scripts/dpo.py --config bad.yaml\n", "")
                       + "# trainlint: trl=0.28.0\n", str(tmp_path / "alone.yaml"))
    assert alone.plan.ref_model_with_peft.value is False and kept.plan.ref_model_with_peft.value is True
    base = model_states(build_run(alone.plan, LLAMA32_1B, [])).weights
    assert component(kept.estimate, "weights") - component(alone.estimate, "weights") == pytest.approx(base, rel=0.02)
    assert any("reference model beside the adapter" in a for a in kept.estimate.assumptions)
