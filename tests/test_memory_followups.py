"""Follow-ups to the memory model: DeepSpeed Ulysses sequence parallelism, per-model dropout, state-space
(Mamba / Mamba-2) activations, vision-tower activations."""

from __future__ import annotations

import json

from trainlint import engine
from trainlint.context.settings import Settings
from trainlint.document.reading import parse_document


def lint(tmp_path, text, name="train.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return engine.check_path(path, Settings(use_project_config=False))


# ---- DeepSpeed sequence_parallel_size (Ulysses) ------------------------------------------------------------


def test_deepspeed_sequence_parallel_size_splits_the_sequence():
    from trainlint.flavors import deepspeed

    doc = parse_document(json.dumps({"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1,
                                     "zero_optimization": {"stage": 3}, "bf16": {"enabled": True},
                                     "sequence_parallel_size": 4}), "ds.json")
    plan = deepspeed.read(doc).plan
    assert plan.context_parallel.value == 4


def test_linked_deepspeed_sequence_parallel_size_lowers_the_activations(tmp_path):
    ds = {"zero_optimization": {"stage": 3}, "bf16": {"enabled": "auto"}, "train_micro_batch_size_per_gpu": "auto"}
    base = ("# trainlint: gpu=H100-80GB num-gpus=8\nmodel_name_or_path: meta-llama/Llama-3.1-8B\nbf16: true\n"
            "per_device_train_batch_size: 1\nmax_seq_length: 32768\ngradient_checkpointing: true\n")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "ds.json").write_text(json.dumps(ds))
    (tmp_path / "b" / "ds.json").write_text(json.dumps({**ds, "sequence_parallel_size": 4}))
    plain = lint(tmp_path / "a", base + "deepspeed: ds.json\n")
    split = lint(tmp_path / "b", base + "deepspeed: ds.json\n")
    plain_acts, split_acts = (next(c.bytes for c in r.estimate.components if c.key == "activations")
                              for r in (plain, split))
    assert split_acts < plain_acts / 3


# ---- state-space layers ------------------------------------------------------------------------------------

from trainlint.catalog.models import find_model  # noqa: E402
from trainlint.memory.model import Run, _layer_saved, optimizer_spec  # noqa: E402
from trainlint.plan import PURE_BF16  # noqa: E402


def _ssm_run(arch, **kw):
    base = dict(arch=arch, micro_batch=1, seq_len=2048, precision=PURE_BF16,
                optimizer=optimizer_spec("adamw_torch_fused"))
    base.update(kw)
    return Run(**base)


def test_mamba_fused_layer_saves_what_mamba_inner_fn_saves():
    arch = find_model("state-spaces/mamba-2.8b-hf")
    (stack,) = arch.stacks
    assert stack.mixer == "ssm" and stack.ssm.kind == "mamba"
    D, N, R, h, T = stack.ssm.d_inner, stack.ssm.d_state, stack.ssm.dt_rank, arch.hidden_size, 2048
    assert (D, N, R, h) == (5120, 16, 160, 2560)
    # one RMSNorm from a 16-bit residual (fp32 upcast + 16-bit normalized), the in_proj input, then MambaInnerFn:
    # xz, x_dbl, B, C, out in bf16 and the fp32 chunk states of the 2048-token scan chunks
    expected = T * h * 6 + T * h * 2 + (2 * T * D + T * (R + 2 * N) + 2 * T * N + T * D) * 2 + D * 1 * 2 * N * 4
    assert _layer_saved(_ssm_run(arch), stack, T) == expected


def test_mamba2_fused_saves_only_zxbcdt_and_out_x():
    arch = find_model("mistralai/Mamba-Codestral-7B-v0.1")
    (stack,) = arch.stacks
    ssm = stack.ssm
    assert ssm.kind == "mamba2" and ssm.heads and ssm.n_groups >= 1
    T, h = 2048, arch.hidden_size
    D, N, G, H = ssm.d_inner, ssm.d_state, ssm.n_groups, ssm.heads
    expected = T * h * 6 + T * h * 2 + T * (2 * D + 2 * G * N + H) * 2 + T * D * 2 + T * G * 4
    assert _layer_saved(_ssm_run(arch), stack, T) == expected


def test_torch_slow_path_saves_the_state_sized_tensors():
    arch = find_model("state-spaces/mamba-2.8b-hf")
    (stack,) = arch.stacks
    fused = _layer_saved(_ssm_run(arch), stack, 2048)
    slow = _layer_saved(_ssm_run(arch, ssm_path="torch"), stack, 2048)
    assert slow > 2048 * stack.ssm.d_inner * stack.ssm.d_state * 12 > 10 * fused


def test_jamba_mamba_layers_no_longer_count_attention_heads():
    arch = find_model("ai21labs/AI21-Jamba-Mini-1.5")
    ssm_stacks = [st for st in arch.stacks if st.mixer == "ssm"]
    assert ssm_stacks and all(st.ssm.kind == "mamba_split" for st in ssm_stacks)
    run = _ssm_run(arch)
    T = run.tokens
    attn = next(st for st in arch.stacks if st.mixer == "attention")
    heads_sdpa = T * arch.num_attention_heads * arch.head_dim * 2 * 2  # q and the output: not in a Mamba layer
    dense = min(ssm_stacks, key=lambda st: st.num_experts)
    without = _layer_saved(run, dense, T)
    # the Mamba layer's mixer is more than attention's q/k/v/o and independent of the heads
    assert without > _layer_saved(run, attn, T) and heads_sdpa > 0


def test_estimate_states_the_mamba_path(tmp_path):
    result = lint(tmp_path, "# trainlint: gpu=H100-80GB num-gpus=1\nmodel_name_or_path: state-spaces/mamba-2.8b-hf\n"
                            "bf16: true\nper_device_train_batch_size: 1\nmax_seq_length: 2048\n")
    assert any("Mamba layers: the fused CUDA kernels" in a for a in result.estimate.assumptions)


# ---- per-model dropout from config.json --------------------------------------------------------------------


def test_phi2_resid_pdrop_from_its_config_adds_two_masks_per_layer():
    from dataclasses import replace

    from trainlint.memory.model import family, model_family

    arch = find_model("microsoft/phi-2")
    assert dict(arch.dropout)["resid"] == 0.1  # microsoft/phi-2 config.json; families.json (PhiConfig) says 0.0
    assert family("phi").dropout_resid == 0.0 and model_family(arch).dropout_resid == 0.1
    run = _ssm_run(arch, seq_len=1024)
    T, h = run.tokens, arch.hidden_size
    (stack,) = arch.stacks
    with_dropout = _layer_saved(run, stack, T)
    without = _layer_saved(_ssm_run(replace(arch, dropout=()), seq_len=1024), stack, T)
    # PhiDecoderLayer: resid_dropout on the attention output and on the MLP output, a 1-byte mask each
    assert with_dropout - without == 2 * T * h


def test_config_without_dropout_keys_keeps_the_family_default():
    from trainlint.catalog.hf_config import from_hf_config
    from trainlint.memory.model import model_family

    gpt2 = from_hf_config({"model_type": "gpt2", "n_embd": 768, "n_layer": 2, "n_head": 12, "vocab_size": 50257,
                           "n_positions": 1024}, "tiny-gpt2")
    assert gpt2.dropout == () and model_family(gpt2).dropout_resid == 0.1
    quiet = from_hf_config({"model_type": "gpt2", "n_embd": 768, "n_layer": 2, "n_head": 12, "vocab_size": 50257,
                            "n_positions": 1024, "resid_pdrop": 0.0, "attn_pdrop": 0.0}, "tiny-gpt2")
    assert model_family(quiet).dropout_resid == 0.0 and model_family(quiet).dropout_attn == 0.0


# ---- vision-tower activations ------------------------------------------------------------------------------

LLAVA = ("model_name_or_path: llava-hf/llava-1.5-7b-hf\nbf16: true\nper_device_train_batch_size: 1\n"
         "max_seq_length: 2048\n")


def _acts(result):
    return next(c.bytes for c in result.estimate.components if c.key == "activations")


def test_vision_tower_without_an_image_count_stays_an_assumption(tmp_path):
    result = lint(tmp_path, "# trainlint: gpu=H100-80GB num-gpus=1\n" + LLAVA)
    assert any("image tokens) are not modelled" in a for a in result.estimate.assumptions)
    assert not any(a.startswith("vision tower:") for a in result.estimate.assumptions)


def test_images_per_sample_models_the_tower_like_an_encoder_stack(tmp_path):
    from trainlint.memory.model import _tower_saved

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    plain = lint(tmp_path / "a", "# trainlint: gpu=H100-80GB num-gpus=1\n" + LLAVA)
    imaged = lint(tmp_path / "b", "# trainlint: gpu=H100-80GB num-gpus=1 images-per-sample=2\n" + LLAVA)
    notes = imaged.estimate.assumptions
    assert any("2 image(s) x (336 // 14)^2 patches = 1,152 image tokens" in a for a in notes), notes
    assert not any("are not modelled" in a for a in notes)
    arch = find_model("llava-hf/llava-1.5-7b-hf")
    from trainlint.plan import AMP_BF16

    run = Run(arch=arch, micro_batch=1, seq_len=2048, precision=AMP_BF16,
              optimizer=optimizer_spec("adamw_torch_fused"), image_tokens=1152)
    Ti, h, f = 1152, 1024, 4096  # CLIP ViT-L/14-336: 24 layers
    per_layer = Ti * (2 * h * 4 + 3 * h * 2 + h * 2 + 4 * h * 2 + 2 * f * 2) + 16 * Ti * 4
    assert _tower_saved(run) == 24 * per_layer
    assert _acts(imaged) > _acts(plain)


def test_image_size_from_llamafactory_and_a_frozen_tower(tmp_path):
    from trainlint.flavors import huggingface

    doc = parse_document("model_name_or_path: Qwen/Qwen2-VL-7B-Instruct\nstage: sft\nfinetuning_type: full\n"
                         "template: qwen2_vl\ncutoff_len: 2048\nimage_max_pixels: 262144\n", "lf.yaml")
    plan = huggingface.read(doc).plan
    assert plan.image_size.value == 512 and plan.vision_frozen.value is True
    thawed = huggingface.read(parse_document(doc.text + "freeze_vision_tower: false\n", "lf.yaml")).plan
    assert thawed.vision_frozen.value is False


def test_frozen_tower_saves_no_image_activations(tmp_path):
    text = ("# trainlint: gpu=H100-80GB num-gpus=1 images-per-sample=1\nmodel_name_or_path: Qwen/Qwen2-VL-7B-Instruct\n"
            "stage: sft\nfinetuning_type: full\ntemplate: qwen2_vl\ncutoff_len: 2048\nimage_max_pixels: 262144\n"
            "bf16: true\nper_device_train_batch_size: 1\n")
    frozen = lint(tmp_path, text)
    assert any(a.startswith("vision tower frozen") for a in frozen.estimate.assumptions), frozen.estimate.assumptions
    (tmp_path / "t").mkdir()
    thawed = lint(tmp_path / "t", text + "freeze_vision_tower: false\n")
    assert any("(512 // 14)^2 patches = 1,296 image tokens" in a for a in thawed.estimate.assumptions)
    assert _acts(thawed) > _acts(frozen)
