"""Framework semantics of the memory model beyond the plain HF Trainer: TRL's fused LM head, autocast's weight
cache, QLoRA loading, Liger's head gradient, parallel blocks, LoRA dropout, Gemma-2 softcapping, the end of
backward, optimizer arguments, classification heads, GaLore, optimizer-in-backward, precomputed reference
log-probs, and the readers that set them (docs/memory-model.md)."""

from __future__ import annotations


import pytest

from trainlint import engine
from trainlint.catalog.models import find_model
from trainlint.context.settings import Settings
from trainlint.memory.model import Run, activations, estimate_run, model_states, optimizer_spec
from trainlint.plan import AMP_BF16, PURE_BF16, Peft

GIB = 2**30
LLAMA3_8B = find_model("meta-llama/Llama-3.1-8B")
LLAMA32_1B = find_model("meta-llama/Llama-3.2-1B")


def run(**kw) -> Run:
    base = dict(arch=LLAMA3_8B, micro_batch=1, seq_len=4096, precision=PURE_BF16,
                optimizer=optimizer_spec("adamw_torch_fused"), grad_ckpt="full")
    base.update(kw)
    return Run(**base)


def lint(tmp_path, text, name="train.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return engine.check_path(path, Settings(use_project_config=False))


# ---- the loss -------------------------------------------------------------------------------------------


def test_trl_fused_head_never_builds_the_vocabulary_logits():
    full = activations(run())
    fused = activations(run(loss_kernel="trl"))
    T, V, h = 4096, LLAMA3_8B.vocab_size, LLAMA3_8B.hidden_size
    assert full.logits_backward == 12 * T * V  # HF: fp32 log-softmax, its gradient, the logits' gradient
    # TRL: the gathered hidden rows, one [4096, 32768] bf16 tile, fp32 grad_hidden and fp32 grad_weight + its cast
    assert fused.logits_backward == pytest.approx(T * h * 2 * 2 + T * h * 4 + V * h * (4 + 2) + 4096 * 32768 * 2)
    assert fused.logits_backward < full.logits_backward
    long = dict(seq_len=32768)
    assert activations(run(loss_kernel="trl", **long)).logits_backward < activations(run(**long)).logits_backward / 8


def test_trl_configs_get_the_fused_head_and_say_so(tmp_path):
    text = ("# trainlint: gpu=H100-80GB num-gpus=1\nmodel_name_or_path: meta-llama/Llama-3.1-8B\n"
            "max_length: 8192\nper_device_train_batch_size: 1\ndataset_name: x\nbf16: true\n")
    result = lint(tmp_path, text)
    assert any("fused LM head" in a for a in result.estimate.assumptions)
    plain = lint(tmp_path, text.replace("max_length", "model_max_length").replace("dataset_name: x\n", ""), "p.yaml")
    assert result.estimate.peak_allocated < plain.estimate.peak_allocated


def test_liger_head_gradient_only_for_a_trainable_head():
    full = activations(run(fused_loss=True)).logits_backward
    lora = activations(run(fused_loss=True, peft=Peft("lora", 16, "all-linear"))).logits_backward
    V, h = LLAMA3_8B.vocab_size, LLAMA3_8B.hidden_size
    assert full - lora == V * h * 2  # grad_weight = zeros_like(weight): bf16 like the weight
    accum = activations(run(fused_loss=True, liger_accum_fp32=True)).logits_backward
    assert accum - full == V * h * 2  # accum_dtype=float32


def test_gemma2_final_logit_softcapping_saves_one_more_logits_tensor():
    gemma = find_model("google/gemma-2-2b")
    r = run(arch=gemma, loss_kernel=None, grad_ckpt="full")
    T, V = 4096, gemma.vocab_size
    forward, backward = activations(r).logits_forward, activations(r).logits_backward
    assert backward == 12 * T * V + 2 * T * V  # + the tanh output (bf16)
    assert forward == T * V * (2 + 4 + 4) + 2 * T * V


def test_classification_heads_have_no_vocabulary_logits():
    lm = activations(run(arch=LLAMA32_1B, grad_ckpt="none"))
    cls = activations(run(arch=LLAMA32_1B, grad_ckpt="none", head="seq_cls"))
    assert cls.logits_backward < 1 * 2**20 < lm.logits_backward


# ---- weights, casts, adapters ---------------------------------------------------------------------------


def test_autocast_does_not_cache_frozen_or_fsdp_gathered_weights():
    amp = dict(precision=AMP_BF16)
    full = model_states(run(**amp))
    assert full.amp_weight_cache > 0 and not full.amp_frozen
    lora = model_states(run(**amp, peft=Peft("lora", 16, "all-linear")))
    assert lora.amp_frozen  # cast per call (ATen cached_cast caches only leaves that require grad)
    assert model_states(run(**amp, fsdp="full_shard", world=8)).amp_weight_cache == 0
    # With checkpointing the frozen casts are freed layer by layer: the forward does not hold the whole model's.
    frozen = estimate_run(run(**amp, peft=Peft("lora", 16, "all-linear")))
    assert frozen.phases["forward"] < frozen.phases["backward"] + lora.amp_weight_cache / 2


def test_qlora_keeps_the_rest_in_the_load_dtype_and_trl_adapters_are_bf16():
    qlora = Peft("lora", 16, "all-linear", base_bits=4)
    upcast = model_states(run(peft=qlora, kbit_fp32_upcast=True))
    load = model_states(run(peft=qlora))
    rest = LLAMA3_8B.total_params - LLAMA3_8B.linear_params(None)
    assert upcast.weights - load.weights == pytest.approx(rest * 2)
    trl = model_states(run(peft=qlora._replace(adapter_dtype="bf16")))
    assert trl.grads * 2 == load.grads and trl.optimizer * 2 == load.optimizer


def test_qlora_upcast_follows_the_framework(tmp_path):
    base = ("# trainlint: gpu=A100-80GB num-gpus=1\nmodel_name_or_path: meta-llama/Llama-3.1-8B\n"
            "per_device_train_batch_size: 1\nbf16: true\nload_in_4bit: true\n")
    trl = lint(tmp_path, base + "use_peft: true\nmax_length: 2048\ndataset_name: x\n", "trl.yaml")
    hf = lint(tmp_path, base + "model_max_length: 2048\n", "hf.yaml")
    w = {r: next(c for c in res.estimate.components if c.key == "weights") for r, res in (("trl", trl), ("hf", hf))}
    assert "load dtype" in w["trl"].assumption and "upcast" in w["hf"].assumption
    assert any("prepare_model_for_kbit_training" in a for a in hf.estimate.assumptions)


def test_lora_dropout_adds_a_mask_per_adapted_input():
    lora = Peft("lora", 16, "all-linear")
    plain = activations(run(arch=LLAMA32_1B, grad_ckpt="none", peft=lora)).per_layer
    dropped = activations(run(arch=LLAMA32_1B, grad_ckpt="none", peft=lora._replace(dropout=0.05))).per_layer
    T, h, f = 4096, LLAMA32_1B.hidden_size, LLAMA32_1B.intermediate_size
    # q, k, v, o, gate, up read h-wide inputs, down reads f: one 1-byte mask each (fp32 adapters cast per linear)
    assert dropped - plain == T * (6 * h + f)


def test_parallel_blocks_count_the_mlp():
    phi = find_model("microsoft/phi-2")
    r = run(arch=phi, grad_ckpt="none", seq_len=2048)
    T, f = 2048, phi.intermediate_size
    # gelu_new in Python saves 4 [T, f] tensors, plus the fc2 input
    assert activations(r).per_layer > 5 * T * f * 2


# ---- the step -------------------------------------------------------------------------------------------


def test_end_of_backward_peak_with_a_fused_optimizer_and_tied_embeddings():
    est = estimate_run(run(arch=LLAMA32_1B, seq_len=256, grad_ckpt="none"))
    V, h = LLAMA32_1B.vocab_size, LLAMA32_1B.hidden_size
    assert est.peak_phase == "backward"
    assert est.phases["backward"] - est.phases["optimizer step"] == pytest.approx(2 * V * h * 2, rel=1e-6)


def test_optim_args_momentum_and_low_rank_optimizers():
    sgd = optimizer_spec("sgd")
    assert model_states(run(optimizer=sgd)).optimizer == 0
    assert model_states(run(optimizer=sgd, momentum=0.9)).optimizer == LLAMA3_8B.total_params * 2
    adam = model_states(run()).optimizer
    galore = model_states(run(lowrank=("galore", 128, ["attn", "mlp", "q_proj", "k_proj", "v_proj", "o_proj",
                                                        "gate_proj", "up_proj", "down_proj"])))
    assert galore.optimizer < adam / 3


def test_optimizer_in_backward_frees_gradients_per_parameter():
    normal = model_states(run())
    in_bwd = model_states(run(optimizer_in_bwd=True))
    assert in_bwd.grads == LLAMA3_8B.largest_module_params * 2 < normal.grads / 10


def test_precomputed_reference_log_probs_drop_the_reference_model():
    dpo = estimate_run(run(task="dpo"))
    cached = estimate_run(run(task="dpo", ref_logps_precomputed=True))
    assert dpo.peak_allocated - cached.peak_allocated == pytest.approx(LLAMA3_8B.total_params * 2, rel=1e-3)


# ---- readers --------------------------------------------------------------------------------------------


def test_axolotl_reads_cut_cross_entropy_context_parallel_and_lora_dropout():
    from trainlint.document.reading import parse_document as parse_text
    from trainlint.flavors import axolotl

    doc = parse_text("base_model: meta-llama/Llama-3.1-8B\nsequence_len: 8192\nadapter: lora\nlora_dropout: 0.05\n"
                     "plugins:\n  - axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin\n"
                     "context_parallel_size: 4\n", "a.yaml")
    plan = axolotl.read(doc).plan
    assert plan.loss_kernel.value == "cce" and plan.fused_loss.value
    assert plan.context_parallel.value == 4
    assert plan.peft.value.dropout == 0.05


def test_hf_reader_extras():
    from trainlint.document.reading import parse_document as parse_text
    from trainlint.flavors import huggingface

    doc = parse_text("model_name_or_path: m\nmax_length: 1024\nbeta: 0.1\nloss_type: sigmoid\nuse_peft: true\n"
                     "precompute_ref_log_probs: true\noptim: sgd\noptim_args: momentum=0.9,nesterov=True\n"
                     "torch_compile: true\n", "t.yaml")
    plan = huggingface.read(doc).plan
    assert plan.trainer.value == "trl" and plan.task.value == "dpo"
    assert plan.ref_logps_precomputed.value and plan.torch_compile.value
    assert dict(plan.optim_args.value) == {"momentum": "0.9", "nesterov": "True"}
    assert plan.peft.value.dropout == 0.05  # TRL ModelConfig's default
    oi = huggingface.read(parse_text("model_name_or_path: m\nwith_tracking: true\nuse_qlora: true\n"
                                     "lora_rank: 32\n", "o.yaml")).plan
    assert oi.peft.value.base_bits == 4 and oi.peft.value.rank == 32


def test_torchtune_optimizer_in_bwd():
    from trainlint.document.reading import parse_document as parse_text
    from trainlint.flavors import torchtune

    doc = parse_text("model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\noptimizer:\n"
                     "  _component_: torch.optim.AdamW\noptimizer_in_bwd: true\nbatch_size: 2\n", "t.yaml")
    assert torchtune.read(doc).plan.optimizer_in_bwd.value


def test_trl_version_decides_the_loss(tmp_path):
    from trainlint.context.versions import FrameworkVersion, Versions
    from trainlint.memory.estimate import estimate_plan, resolve_architecture, with_versions

    text = ("# trainlint: gpu=H100-80GB num-gpus=1\nmodel_name_or_path: meta-llama/Llama-3.1-8B\n"
            "max_length: 8192\nper_device_train_batch_size: 1\ndataset_name: x\nbf16: true\n")
    result = lint(tmp_path, text)
    # no pin: the newest TRL trainlint knows, said as an assumption
    assert any("fused LM head" in a and ("not known" in a or "newest release trainlint knows" in a)
               for a in result.estimate.assumptions)
    plan = result.plan
    arch, _ = resolve_architecture(plan)
    peaks = {}
    for version in ("1.16.0", "1.10.0", "1.3.0"):
        versions = Versions({"trl": FrameworkVersion("trl", version, "pin", "requirements.txt")})
        est = estimate_plan(with_versions(plan, versions), arch)
        peaks[version] = est.phases["forward"]
        assert any(f"trl {version}" in a for a in est.assumptions), est.assumptions
    # the fused head (>= 1.15) and chunked_nll (1.7-1.14) hold a few hundred MiB, the full logits (< 1.7) ~10 GiB
    assert abs(peaks["1.16.0"] - peaks["1.10.0"]) < GIB < peaks["1.3.0"] - peaks["1.10.0"]


def test_llamafactory_lora_keeps_the_frozen_base_in_the_checkpoint_dtype(tmp_path):
    text = ("# trainlint: gpu=A100-80GB num-gpus=1\nmodel_name_or_path: meta-llama/Llama-3.1-8B\nstage: sft\n"
            "finetuning_type: lora\nlora_target: all\ncutoff_len: 2048\nper_device_train_batch_size: 1\nbf16: true\n")
    result = lint(tmp_path, text)
    weights = next(c for c in result.estimate.components if c.key == "weights")
    assert weights.bytes < LLAMA3_8B.total_params * 2.1  # bf16 base + fp32 adapters, not an fp32 base
    assert any("LLaMA-Factory LoRA" in a for a in result.estimate.assumptions)


def test_accelerate_parallelism_config_splits_the_sequence():
    from trainlint.document.reading import parse_document
    from trainlint.flavors import accelerate

    doc = parse_document("compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nnum_processes: 8\n"
                         "mixed_precision: bf16\nparallelism_config:\n  parallelism_config_dp_shard_size: 4\n"
                         "  parallelism_config_cp_size: 2\n", "acc.yaml")
    plan = accelerate.read(doc).plan
    assert plan.context_parallel.value == 2 and plan.data_parallel == 4
    half = run(seq_len=8192, cp=2, world=2)
    assert half.tokens == 4096


def test_open_instruct_dpo_caches_the_reference_log_probs():
    from trainlint.document.reading import parse_document
    from trainlint.flavors import huggingface

    doc = parse_document("model_name_or_path: m\nwith_tracking: true\nbeta: 5.0\nloss_type: dpo_norm\n"
                         "use_lora: true\n", "oi.yaml")
    plan = huggingface.read(doc).plan
    assert plan.task.value == "dpo" and plan.ref_logps_precomputed.value
    assert plan.peft.value.dropout == 0.1 and plan.peft.value.rank == 64  # open-instruct LoRAConfig defaults


def test_torchtune_on_several_gpus_is_fsdp_not_ddp(tmp_path):
    text = ("# trainlint: gpu=H100-80GB num-gpus=8\nmodel:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\n"
            "optimizer:\n  _component_: torch.optim.AdamW\n  fused: true\nbatch_size: 1\ndtype: bf16\n"
            "tokenizer:\n  _component_: torchtune.models.llama3.llama3_tokenizer\n  max_seq_len: 2048\n")
    result = lint(tmp_path, text)
    assert any("FSDP2-sharded" in a for a in result.estimate.assumptions)
    assert not any("DDP" in c.label or "DDP" in c.assumption for c in result.estimate.components)
