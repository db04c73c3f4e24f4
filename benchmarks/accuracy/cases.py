"""Benchmark cases for the memory model, in a tool-independent format.

Each case is a plain dict:

    {"id", "model_name", "model_config" (the released config.json dict, possibly
     with num_hidden_layers reduced -- see "notes"), "micro_batch", "seq_len",
     "precision": fp32 | amp_bf16 | amp_fp16 | bf16,
     "optimizer": adamw | adamw_fused | adamw_foreach | sgd | sgd_momentum | adafactor,
     "grad_ckpt": bool, "attn_implementation": eager | sdpa,
     "lora": null | {"r", "alpha", "dropout", "target_modules"}, "notes"}

Meaning of the fields (how trace.py / measure_gpu.py run them, see harness.py):
  precision  fp32      fp32 weights, no autocast
             amp_bf16  fp32 weights + torch.autocast(bf16)  (HF Trainer ``bf16=True``)
             amp_fp16  fp32 weights + torch.autocast(fp16) + GradScaler (``fp16=True``)
             bf16      model.to(bfloat16), no autocast (``torch_dtype=bfloat16``, no AMP flag)
  optimizer  adamw / adamw_foreach = torch.optim.AdamW, foreach (Trainer ``adamw_torch`` on CUDA)
             adamw_fused = AdamW(fused=True) (Trainer ``adamw_torch_fused``, its default for torch>=2.8)
             sgd = SGD(lr) ; sgd_momentum = SGD(lr, momentum=0.9)
             adafactor = transformers Adafactor(scale_parameter=False, relative_step=False)
  lora       peft LoRA; base frozen in the base dtype, adapters fp32 (peft autocast_adapter_dtype)
  inputs     input_ids (b, s) int64, labels = input_ids, no attention_mask (== all-ones mask)

``python cases.py`` writes cases.json next to this file.
"""

from __future__ import annotations

import copy
import json
import os

# ----------------------------------------------------------------------------- released configs
GPT2 = {
    "activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
    "bos_token_id": 50256, "embd_pdrop": 0.1, "eos_token_id": 50256, "initializer_range": 0.02,
    "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": 1024, "n_embd": 768, "n_head": 12,
    "n_layer": 12, "n_positions": 1024, "resid_pdrop": 0.1, "summary_activation": None,
    "summary_first_dropout": 0.1, "summary_proj_to_labels": True, "summary_type": "cls_index",
    "summary_use_proj": True, "vocab_size": 50257,
}  # openai-community/gpt2

LLAMA32_1B = {
    "architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 128000, "eos_token_id": 128001, "head_dim": 64, "hidden_act": "silu",
    "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 8192,
    "max_position_embeddings": 131072, "mlp_bias": False, "model_type": "llama",
    "num_attention_heads": 32, "num_hidden_layers": 16, "num_key_value_heads": 8,
    "pretraining_tp": 1, "rms_norm_eps": 1e-05,
    "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "rope_theta": 500000.0, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
    "use_cache": True, "vocab_size": 128256,
}  # meta-llama/Llama-3.2-1B

LLAMA31_8B = {
    "architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 128000, "eos_token_id": 128001, "head_dim": 128, "hidden_act": "silu",
    "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 14336,
    "max_position_embeddings": 131072, "mlp_bias": False, "model_type": "llama",
    "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "pretraining_tp": 1, "rms_norm_eps": 1e-05,
    "rope_scaling": {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "rope_theta": 500000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    "use_cache": True, "vocab_size": 128256,
}  # meta-llama/Llama-3.1-8B

TINYLLAMA = {
    "architectures": ["LlamaForCausalLM"], "attention_bias": False, "bos_token_id": 1,
    "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 2048, "initializer_range": 0.02,
    "intermediate_size": 5632, "max_position_embeddings": 2048, "model_type": "llama",
    "num_attention_heads": 32, "num_hidden_layers": 22, "num_key_value_heads": 4,
    "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": None, "rope_theta": 10000.0,
    "tie_word_embeddings": False, "torch_dtype": "bfloat16", "use_cache": True, "vocab_size": 32000,
}  # TinyLlama/TinyLlama-1.1B-Chat-v1.0

SMOLLM2_135M = {
    "architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 0, "eos_token_id": 0, "hidden_act": "silu", "hidden_size": 576,
    "initializer_range": 0.041666666666666664, "intermediate_size": 1536,
    "max_position_embeddings": 8192, "model_type": "llama", "num_attention_heads": 9,
    "num_hidden_layers": 30, "num_key_value_heads": 3, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
    "rope_scaling": None, "rope_theta": 100000, "tie_word_embeddings": True,
    "torch_dtype": "bfloat16", "use_cache": True, "vocab_size": 49152,
}  # HuggingFaceTB/SmolLM2-135M

SMOLLM2_360M = {
    **SMOLLM2_135M, "hidden_size": 960, "initializer_range": 0.02, "intermediate_size": 2560,
    "num_attention_heads": 15, "num_hidden_layers": 32, "num_key_value_heads": 5,
}  # HuggingFaceTB/SmolLM2-360M

QWEN25_05B = {
    "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
    "eos_token_id": 151643, "hidden_act": "silu", "hidden_size": 896, "initializer_range": 0.02,
    "intermediate_size": 4864, "max_position_embeddings": 32768, "max_window_layers": 24,
    "model_type": "qwen2", "num_attention_heads": 14, "num_hidden_layers": 24,
    "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
    "sliding_window": 32768, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
    "use_cache": True, "use_sliding_window": False, "vocab_size": 151936,
}  # Qwen/Qwen2.5-0.5B

OLMOE_1B_7B = {
    "architectures": ["OlmoeForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "clip_qkv": None, "eos_token_id": 50279, "hidden_act": "silu", "hidden_size": 2048,
    "initializer_range": 0.02, "intermediate_size": 1024, "max_position_embeddings": 4096,
    "model_type": "olmoe", "norm_topk_prob": False, "num_attention_heads": 16, "num_experts": 64,
    "num_experts_per_tok": 8, "num_hidden_layers": 16, "num_key_value_heads": 16,
    "output_router_logits": False, "pad_token_id": 1, "rms_norm_eps": 1e-05, "rope_scaling": None,
    "rope_theta": 10000.0, "router_aux_loss_coef": 0.01, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16", "use_cache": True, "vocab_size": 50304,
}  # allenai/OLMoE-1B-7B-0924

QWEN15_MOE = {
    "architectures": ["Qwen2MoeForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
    "decoder_sparse_step": 1, "eos_token_id": 151643, "hidden_act": "silu", "hidden_size": 2048,
    "initializer_range": 0.02, "intermediate_size": 5632, "max_position_embeddings": 8192,
    "max_window_layers": 21, "model_type": "qwen2_moe", "moe_intermediate_size": 1408,
    "norm_topk_prob": False, "num_attention_heads": 16, "num_experts": 60,
    "num_experts_per_tok": 4, "num_hidden_layers": 24, "num_key_value_heads": 16,
    "output_router_logits": False, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
    "router_aux_loss_coef": 0.001, "shared_expert_intermediate_size": 5632,
    "sliding_window": 32768, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    "use_cache": True, "use_sliding_window": False, "vocab_size": 151936,
}  # Qwen/Qwen1.5-MoE-A2.7B

BERT_BASE = {
    "architectures": ["BertForMaskedLM"], "attention_probs_dropout_prob": 0.1,
    "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 768,
    "initializer_range": 0.02, "intermediate_size": 3072, "layer_norm_eps": 1e-12,
    "max_position_embeddings": 512, "model_type": "bert", "num_attention_heads": 12,
    "num_hidden_layers": 12, "pad_token_id": 0, "position_embedding_type": "absolute",
    "type_vocab_size": 2, "use_cache": True, "vocab_size": 30522,
}  # google-bert/bert-base-uncased

PHI2 = {
    "architectures": ["PhiForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 50256,
    "embd_pdrop": 0.0, "eos_token_id": 50256, "hidden_act": "gelu_new", "hidden_size": 2560,
    "initializer_range": 0.02, "intermediate_size": 10240, "layer_norm_eps": 1e-05,
    "max_position_embeddings": 2048, "model_type": "phi", "num_attention_heads": 32,
    "num_hidden_layers": 32, "num_key_value_heads": 32, "partial_rotary_factor": 0.4,
    "qk_layernorm": False, "resid_pdrop": 0.1, "rope_scaling": None, "rope_theta": 10000.0,
    "tie_word_embeddings": False, "torch_dtype": "float16", "use_cache": True, "vocab_size": 51200,
}  # microsoft/phi-2

PHI15 = {
    "architectures": ["PhiForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 50256,
    "embd_pdrop": 0.0, "eos_token_id": 50256, "hidden_act": "gelu_new", "hidden_size": 2048,
    "initializer_range": 0.02, "intermediate_size": 8192, "layer_norm_eps": 1e-05,
    "max_position_embeddings": 2048, "model_type": "phi", "num_attention_heads": 32,
    "num_hidden_layers": 24, "num_key_value_heads": None, "partial_rotary_factor": 0.5,
    "qk_layernorm": False, "resid_pdrop": 0.0, "rope_scaling": None, "rope_theta": 10000.0,
    "tie_word_embeddings": False, "torch_dtype": "float16", "use_cache": True, "vocab_size": 51200,
}  # microsoft/phi-1_5

MAMBA_130M = {
    "architectures": ["MambaForCausalLM"], "bos_token_id": 0, "conv_kernel": 4, "eos_token_id": 0,
    "expand": 2, "hidden_act": "silu", "hidden_size": 768, "intermediate_size": 1536, "layer_norm_epsilon": 1e-05,
    "model_type": "mamba", "num_hidden_layers": 24, "pad_token_id": 0, "residual_in_fp32": True,
    "state_size": 16, "tie_word_embeddings": True, "time_step_rank": 48, "use_bias": False, "use_conv_bias": True,
    "use_mambapy": False, "vocab_size": 50280,
}  # state-spaces/mamba-130m-hf

FALCON_7B = {
    "alibi": False, "apply_residual_connection_post_layernorm": False,
    "architectures": ["FalconForCausalLM"], "attention_dropout": 0.0, "bias": False,
    "bos_token_id": 11, "eos_token_id": 11, "hidden_dropout": 0.0, "hidden_size": 4544,
    "initializer_range": 0.02, "layer_norm_epsilon": 1e-05, "model_type": "falcon",
    "multi_query": True, "new_decoder_architecture": False, "num_attention_heads": 71,
    "num_hidden_layers": 32, "parallel_attn": True, "torch_dtype": "bfloat16", "use_cache": True,
    "vocab_size": 65024,
}  # tiiuae/falcon-7b

GEMMA2_2B = {
    "architectures": ["Gemma2ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "attn_logit_softcapping": 50.0, "bos_token_id": 2, "cache_implementation": "hybrid",
    "eos_token_id": 1, "final_logit_softcapping": 30.0, "head_dim": 256,
    "hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 2304,
    "initializer_range": 0.02, "intermediate_size": 9216, "max_position_embeddings": 8192,
    "model_type": "gemma2", "num_attention_heads": 8, "num_hidden_layers": 26,
    "num_key_value_heads": 4, "pad_token_id": 0, "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06,
    "rope_theta": 10000.0, "sliding_window": 4096, "torch_dtype": "float32", "use_cache": True,
    "vocab_size": 256000,
}  # google/gemma-2-2b

MODELS = {
    "gpt2": ("openai-community/gpt2", GPT2),
    "smollm2-135m": ("HuggingFaceTB/SmolLM2-135M", SMOLLM2_135M),
    "smollm2-360m": ("HuggingFaceTB/SmolLM2-360M", SMOLLM2_360M),
    "tinyllama-1.1b": ("TinyLlama/TinyLlama-1.1B-Chat-v1.0", TINYLLAMA),
    "llama32-1b": ("meta-llama/Llama-3.2-1B", LLAMA32_1B),
    "llama31-8b": ("meta-llama/Llama-3.1-8B", LLAMA31_8B),
    "qwen25-0.5b": ("Qwen/Qwen2.5-0.5B", QWEN25_05B),
    "olmoe-1b7b": ("allenai/OLMoE-1B-7B-0924", OLMOE_1B_7B),
    "qwen15-moe-a2.7b": ("Qwen/Qwen1.5-MoE-A2.7B", QWEN15_MOE),
    "bert-base": ("google-bert/bert-base-uncased", BERT_BASE),
    "phi2": ("microsoft/phi-2", PHI2),
    "phi15": ("microsoft/phi-1_5", PHI15),
    "falcon-7b": ("tiiuae/falcon-7b", FALCON_7B),
    "mamba-130m": ("state-spaces/mamba-130m-hf", MAMBA_130M),
    "gemma2-2b": ("google/gemma-2-2b", GEMMA2_2B),
}

_PREC_TAG = {"fp32": "fp32", "amp_bf16": "ampbf16", "amp_fp16": "ampfp16", "bf16": "bf16"}
_OPT_TAG = {"adamw": "adamw", "adamw_fused": "adamwfused", "adamw_foreach": "adamwforeach",
            "sgd": "sgd", "sgd_momentum": "sgdmom", "adafactor": "adafactor"}


def case(model, precision, optimizer, attn, b, s, gc=False, lora=None, layers=None, notes="", head=None,
         loss_kernel=None, ssm_path=None, eval_batch=None, dpo=None):
    name, cfg = MODELS[model]
    cfg = copy.deepcopy(cfg)
    tag = model
    if head is not None:
        # A classification head instead of the LM head (AutoModelFor{Sequence,Token}Classification, 2 labels).
        suffix = {"seq_cls": "ForSequenceClassification", "token_cls": "ForTokenClassification"}[head]
        cfg["architectures"] = [cfg["architectures"][0].replace("ForCausalLM", suffix)]
        cfg["num_labels"] = 2
        if cfg.get("pad_token_id") is None:
            cfg["pad_token_id"] = cfg.get("eos_token_id") if isinstance(cfg.get("eos_token_id"), int) else 0
        tag += "-" + head.replace("_", "")
    if layers is not None:
        key = "n_layer" if "n_layer" in cfg else "num_hidden_layers"
        notes = (notes + " " if notes else "") + f"{name} with {key} {cfg[key]} -> {layers}."
        cfg[key] = layers
        tag += f"-{layers}l"
    parts = [tag]
    if lora:
        tm = lora["target_modules"]
        parts.append("lora" + str(lora["r"]) + ("all" if tm == "all-linear" else "".join(m[0] for m in tm))
                     + (f"d{int(lora['dropout'] * 100)}" if lora.get("dropout") and lora is not LORA_GPT2 else "")
                     + ("bf16ad" if lora.get("adapter_dtype") == "bf16" else ""))
    parts += [_PREC_TAG[precision], _OPT_TAG[optimizer], attn]
    if gc:
        parts.append("gc")
    if loss_kernel:
        parts.append(loss_kernel)
    if dpo is not None:
        parts.append("dpo" + ("-precompute" if dpo.get("precompute_ref_log_probs") else ""))
    parts += [f"b{b}", f"s{s}"]
    if eval_batch:
        parts.append(f"eval{eval_batch}")
    return {
        "id": "-".join(parts),
        "model_name": name,
        "model_config": cfg,
        "micro_batch": b,
        "seq_len": s,
        "precision": precision,
        "optimizer": optimizer,
        "grad_ckpt": gc,
        "attn_implementation": attn,
        "lora": lora,
        "notes": notes,
        **({"loss_kernel": loss_kernel} if loss_kernel else {}),
        **({"ssm_path": ssm_path} if ssm_path else {}),
        **({"eval_batch": eval_batch} if eval_batch else {}),
        **({"dpo": dpo} if dpo is not None else {}),
    }


LORA_QV = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}
LORA_ALL = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": "all-linear"}
LORA_GPT2 = {"r": 16, "alpha": 32, "dropout": 0.05, "target_modules": ["c_attn"]}
# TRL's ModelConfig default lora_dropout is 0.05 (trl/trainer/model_config.py).
LORA_ALL_D5 = {"r": 16, "alpha": 32, "dropout": 0.05, "target_modules": "all-linear"}
# TRL 1.x casts the adapters of a quantized base to bf16 (sft_trainer.py); the non-quantized analogue:
# a bf16 base with bf16 adapters (4-bit storage has no CPU path; the estimate models it separately).
LORA_ALL_D5_BF16 = {"r": 16, "alpha": 32, "dropout": 0.05, "target_modules": "all-linear", "adapter_dtype": "bf16"}

CASES = [
    # GPT-2 small: learned positions, tied, GeLU(tanh), dropout 0.1, Conv1D
    case("gpt2", "fp32", "adamw", "eager", 4, 512),
    case("gpt2", "fp32", "adamw", "sdpa", 4, 512),
    case("gpt2", "amp_bf16", "adamw", "eager", 8, 1024),
    case("gpt2", "amp_bf16", "adamw", "sdpa", 8, 1024),
    case("gpt2", "amp_bf16", "adamw_fused", "sdpa", 8, 1024),
    case("gpt2", "amp_bf16", "sgd", "sdpa", 8, 1024),
    case("gpt2", "amp_bf16", "sgd_momentum", "sdpa", 8, 1024),
    case("gpt2", "amp_bf16", "adafactor", "sdpa", 8, 1024),
    case("gpt2", "amp_bf16", "adamw", "sdpa", 8, 1024, gc=True),
    case("gpt2", "amp_fp16", "adamw", "sdpa", 8, 1024),
    case("gpt2", "bf16", "adamw", "sdpa", 4, 1024),
    case("gpt2", "fp32", "adamw", "eager", 2, 1024, gc=True),
    case("gpt2", "amp_bf16", "adamw", "sdpa", 8, 1024, lora=LORA_GPT2),
    # SmolLM2: Llama-style, GQA, SwiGLU, tied
    case("smollm2-135m", "amp_bf16", "adamw", "sdpa", 4, 2048),
    case("smollm2-135m", "amp_bf16", "adamw", "eager", 4, 2048),
    case("smollm2-135m", "fp32", "adamw", "sdpa", 2, 1024),
    case("smollm2-135m", "bf16", "adamw", "eager", 8, 256),
    case("smollm2-360m", "amp_bf16", "adamw", "sdpa", 8, 2048, gc=True),
    # TinyLlama 1.1B: untied, GQA 32/4
    case("tinyllama-1.1b", "amp_bf16", "adamw", "sdpa", 2, 1024),
    case("tinyllama-1.1b", "bf16", "adamw", "sdpa", 4, 2048),
    case("tinyllama-1.1b", "amp_bf16", "adamw_fused", "sdpa", 4, 2048, gc=True),
    case("tinyllama-1.1b", "bf16", "adamw", "sdpa", 4, 2048, lora=LORA_ALL),
    # Llama-3.2-1B: tied, vocab 128256, GQA 32/8
    case("llama32-1b", "amp_bf16", "adamw", "sdpa", 2, 1024),
    case("llama32-1b", "amp_bf16", "adamw", "sdpa", 4, 2048, gc=True),
    case("llama32-1b", "bf16", "adamw", "sdpa", 1, 4096),
    case("llama32-1b", "bf16", "adafactor", "sdpa", 8, 1024, gc=True),
    case("llama32-1b", "amp_bf16", "adamw", "eager", 1, 1024),
    case("llama32-1b", "bf16", "adamw", "sdpa", 2, 2048, lora=LORA_QV),
    case("llama32-1b", "bf16", "adamw", "sdpa", 4, 4096, gc=True, lora=LORA_ALL),
    case("llama32-1b", "fp32", "adamw", "sdpa", 1, 1024),
    case("llama32-1b", "amp_bf16", "sgd", "sdpa", 2, 1024),
    case("llama32-1b", "amp_fp16", "adamw", "sdpa", 2, 1024),
    case("llama32-1b", "amp_bf16", "adamw_fused", "sdpa", 8, 512),
    # Qwen2.5-0.5B: tied, vocab 151936, GQA 14/2, qkv bias
    case("qwen25-0.5b", "amp_bf16", "adamw", "sdpa", 4, 1024),
    case("qwen25-0.5b", "amp_bf16", "adamw", "sdpa", 8, 2048, gc=True),
    case("qwen25-0.5b", "bf16", "adamw_fused", "sdpa", 4, 2048),
    case("qwen25-0.5b", "fp32", "adamw", "eager", 1, 512),
    case("qwen25-0.5b", "amp_bf16", "adamw", "sdpa", 4, 1024, lora=LORA_ALL),
    case("qwen25-0.5b", "bf16", "sgd_momentum", "sdpa", 2, 4096),
    case("qwen25-0.5b", "amp_bf16", "adafactor", "sdpa", 4, 1024),
    # MoE
    case("olmoe-1b7b", "amp_bf16", "adamw", "sdpa", 2, 1024, layers=4),
    case("olmoe-1b7b", "bf16", "adamw", "sdpa", 1, 2048, gc=True),
    case("olmoe-1b7b", "bf16", "adamw", "sdpa", 4, 1024, layers=4, lora=LORA_QV),
    case("qwen15-moe-a2.7b", "amp_bf16", "adamw", "sdpa", 2, 1024, layers=4),
    case("qwen15-moe-a2.7b", "bf16", "adafactor", "sdpa", 2, 2048, layers=8, gc=True),
    # Encoder: BERT-base MLM head (tied decoder)
    case("bert-base", "amp_bf16", "adamw", "sdpa", 8, 512),
    case("bert-base", "fp32", "adamw", "eager", 8, 512),
    case("bert-base", "amp_bf16", "adamw_fused", "eager", 8, 512, gc=True),
    # Parallel attention/MLP blocks with one shared LayerNorm (Phi-2, Falcon-7B)
    case("phi2", "amp_bf16", "adamw_fused", "sdpa", 2, 1024, layers=8),
    case("phi2", "bf16", "adamw_fused", "sdpa", 4, 2048, layers=8),
    # phi-1.5: no residual dropout (resid_pdrop 0.0), gelu_new (NewGELUActivation's tanh formula), parallel block
    case("phi15", "amp_bf16", "adamw_fused", "sdpa", 4, 2048, layers=8),
    case("phi15", "bf16", "adamw", "sdpa", 4, 2048, layers=8, lora=LORA_ALL),
    # Adafactor on the Llama-3.1-8B shapes (the [128256, 4096] embedding and head are the largest parameters)
    case("llama31-8b", "bf16", "adafactor", "sdpa", 1, 1024, layers=2),
    case("llama31-8b", "fp32", "adafactor", "sdpa", 1, 512, layers=2),
    # an evaluation step after the two training steps (Trainer.prediction_step without compute_metrics) at the
    # default per_device_eval_batch_size 8 or another: compared with the estimate's evaluation phase
    case("tinyllama-1.1b", "amp_bf16", "adamw_fused", "sdpa", 1, 1024, gc=True, eval_batch=8),
    case("llama32-1b", "bf16", "adamw_fused", "sdpa", 1, 1024, gc=True, eval_batch=8),
    case("qwen25-0.5b", "amp_bf16", "adamw", "sdpa", 2, 1024, lora=LORA_ALL, eval_batch=8),
    case("smollm2-135m", "fp32", "adamw_fused", "eager", 2, 1024, eval_batch=4),
    # eager attention on TinyLlama (grouped-query: repeat_kv expands K/V to every head)
    case("tinyllama-1.1b", "amp_bf16", "adamw", "eager", 2, 1024),
    case("tinyllama-1.1b", "bf16", "adamw_fused", "eager", 4, 2048, layers=8),
    case("falcon-7b", "bf16", "adamw_fused", "sdpa", 2, 2048, layers=4),
    # Mamba: traced on CPU without mamba_ssm / causal_conv1d, so transformers runs its PyTorch path (the reference
    # fallbacks of mamba_inner_fn / selective_scan_fn): the estimate's ssm_path "torch". No SDPA path: eager.
    case("mamba-130m", "bf16", "adamw_fused", "eager", 1, 1024, layers=4, ssm_path="torch",
         notes="transformers' PyTorch Mamba path (no mamba_ssm kernels on the tracer)."),
    case("mamba-130m", "amp_bf16", "adamw_fused", "eager", 2, 512, layers=4, ssm_path="torch",
         notes="transformers' PyTorch Mamba path (no mamba_ssm kernels on the tracer)."),
    # Gemma-2: final-logit softcapping; attention softcapping in eager
    # (transformers 5 refuses SDPA for Gemma-2: `_supports_sdpa = False`, softcapping needs eager or flash)
    case("gemma2-2b", "bf16", "adamw_fused", "eager", 1, 2048, layers=6),
    case("gemma2-2b", "bf16", "adamw_fused", "eager", 2, 1024, layers=6, gc=True),
    case("gemma2-2b", "amp_bf16", "adamw_fused", "eager", 1, 1024, layers=6),
    # Short sequences: the peak is at the end of backward (all gradients, plus the embedding gradient of a tied
    # head being accumulated) when the fused optimizer step adds nothing
    case("llama32-1b", "bf16", "adamw_fused", "sdpa", 1, 256),
    case("llama32-1b", "amp_bf16", "adamw_fused", "sdpa", 1, 256),
    case("tinyllama-1.1b", "amp_bf16", "adamw_fused", "sdpa", 1, 256),
    # TRL 1.x SFT/DPO: the fused, tiled LM head (trl.trainer.utils.add_fused_lm_head, TRL 1.16.0)
    case("llama32-1b", "bf16", "adamw_fused", "sdpa", 4, 2048, loss_kernel="trl"),
    case("llama32-1b", "amp_bf16", "adamw_fused", "sdpa", 4, 2048, gc=True, loss_kernel="trl"),
    case("qwen25-0.5b", "bf16", "adamw_fused", "sdpa", 4, 2048, gc=True, lora=LORA_ALL_D5_BF16, loss_kernel="trl"),
    # Classification heads: no vocabulary logits
    case("qwen25-0.5b", "amp_bf16", "adamw_fused", "sdpa", 4, 1024, head="seq_cls"),
    case("llama32-1b", "bf16", "adamw_fused", "sdpa", 4, 2048, head="token_cls"),
    # LoRA with dropout (PEFT nn.Dropout per adapted input), and bf16 adapters as TRL casts them for QLoRA
    case("llama32-1b", "bf16", "adamw_fused", "sdpa", 2, 2048, lora=LORA_ALL_D5),
    case("qwen25-0.5b", "amp_bf16", "adamw_fused", "sdpa", 4, 1024, gc=True, lora=LORA_ALL_D5),
    case("llama32-1b", "bf16", "adamw_fused", "sdpa", 4, 2048, gc=True, lora=LORA_ALL_D5_BF16),
    case("qwen25-0.5b", "amp_bf16", "adamw_fused", "sdpa", 4, 2048, gc=True, lora=LORA_ALL),
    # TRL 1.16 DPOTrainer: its own _compute_loss (harness.dpo_trainer) on the concatenated chosen + rejected batch
    # (2 x micro_batch rows) through the fused LM head; the reference forward under no_grad.
    # A separate bf16 reference model (full fine-tuning):
    case("smollm2-135m", "bf16", "adamw_fused", "sdpa", 4, 1024, loss_kernel="trl", dpo={"precompute_ref_log_probs": False}),
    case("qwen25-0.5b", "bf16", "adamw_fused", "sdpa", 2, 2048, gc=True, loss_kernel="trl", dpo={"precompute_ref_log_probs": False}),
    # LoRA: the reference is the adapter-disabled policy (peft disable_adapter), no second model
    case("qwen25-0.5b", "bf16", "adamw_fused", "sdpa", 4, 1024, lora=LORA_ALL, loss_kernel="trl", dpo={"precompute_ref_log_probs": False}),
    # AMP: fp32 policy and reference model under the Trainer's autocast (the reference forward included)
    case("smollm2-135m", "amp_bf16", "adamw_fused", "sdpa", 4, 1024, loss_kernel="trl",
         dpo={"precompute_ref_log_probs": False}),
    # precompute_ref_log_probs: no reference model in training (ref_chosen_logps / ref_rejected_logps in the batch)
    case("smollm2-135m", "bf16", "adamw_fused", "sdpa", 4, 2048, loss_kernel="trl",
         dpo={"precompute_ref_log_probs": True}),
]


def by_id() -> dict:
    return {c["id"]: c for c in CASES}


assert len(by_id()) == len(CASES), "duplicate case ids"


def write_json(path: str | None = None) -> str:
    path = path or os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases.json")
    with open(path, "w") as f:
        json.dump({"cases": CASES}, f, indent=1)
        f.write("\n")
    return path


if __name__ == "__main__":
    p = write_json()
    print(f"{len(CASES)} cases -> {p}")
