"""The rule registry: one module per rule, registered here by code. Codes are stable forever.

Families: TL0xx files and syntax · TL1xx memory · TL2xx batch consistency · TL3xx precision and
hardware · TL4xx sharding and offload · TL5xx keys and values · TL6xx format-specific.
"""

from __future__ import annotations

from types import ModuleType

from trainlint.rules import (
    tl001_syntax_error,
    tl002_duplicate_key,
    tl003_yaml_number_string,
    tl004_yaml_boolean_trap,
    tl005_unknown_format,
    tl006_relaxed_json,
    tl007_missing_linked_file,
    tl009_unused_suppression,
    tl224_accelerate_deepspeed_trainer_overrides,
    tl426_sharding_on_one_device,
    tl427_fsdp2_forward_prefetch,
    tl428_parallelism_size_mismatch,
    tl525_accelerate_unknown_key,
    tl620_lightning_removed_trainer_arg,
    tl622_accelerate_ignored_plugin_key,
    tl623_accelerate_deepspeed_file_with_plugin_keys,
    tl524_hf_removed_argument,
    tl523_hf_unknown_key,
    tl310_fp16_and_bf16,
    tl311_bf16_unsupported_gpu,
    tl312_legacy_precision_alias,
    tl313_invalid_precision,
    tl314_torchtune_fp16_dtype,
    tl420_deepspeed_and_fsdp,
    tl421_fsdp_offload_alone,
    tl422_fsdp_conflicting_modes,
    tl423_fsdp_config_without_fsdp,
    tl424_fsdp_wrap_policy_conflict,
    tl425_gradient_checkpointing_with_fsdp,
    tl527_quantization_4bit_and_8bit,
    tl528_prefetch_factor_without_workers,
    tl529_load_best_model_strategy_mismatch,
    tl530_gradient_checkpointing_use_cache,
    tl220_grpo_batch_divisibility,
    tl621_lightning_unknown_strategy,
    tl526_lightning_unknown_trainer_arg,
    tl223_litgpt_global_batch_divisibility,
    tl520_invalid_value_type,
    tl521_invalid_enum_value,
    tl522_value_out_of_range,
)

REGISTRY: dict[str, ModuleType] = {m.RULE.code: m for m in (
    tl001_syntax_error,
    tl002_duplicate_key,
    tl003_yaml_number_string,
    tl004_yaml_boolean_trap,
    tl005_unknown_format,
    tl006_relaxed_json,
    tl007_missing_linked_file,
    tl009_unused_suppression,
    tl224_accelerate_deepspeed_trainer_overrides,
    tl426_sharding_on_one_device,
    tl427_fsdp2_forward_prefetch,
    tl428_parallelism_size_mismatch,
    tl525_accelerate_unknown_key,
    tl620_lightning_removed_trainer_arg,
    tl622_accelerate_ignored_plugin_key,
    tl623_accelerate_deepspeed_file_with_plugin_keys,
    tl524_hf_removed_argument,
    tl523_hf_unknown_key,
    tl310_fp16_and_bf16,
    tl311_bf16_unsupported_gpu,
    tl312_legacy_precision_alias,
    tl313_invalid_precision,
    tl314_torchtune_fp16_dtype,
    tl420_deepspeed_and_fsdp,
    tl421_fsdp_offload_alone,
    tl422_fsdp_conflicting_modes,
    tl423_fsdp_config_without_fsdp,
    tl424_fsdp_wrap_policy_conflict,
    tl425_gradient_checkpointing_with_fsdp,
    tl527_quantization_4bit_and_8bit,
    tl528_prefetch_factor_without_workers,
    tl529_load_best_model_strategy_mismatch,
    tl530_gradient_checkpointing_use_cache,
    tl220_grpo_batch_divisibility,
    tl621_lightning_unknown_strategy,
    tl526_lightning_unknown_trainer_arg,
    tl223_litgpt_global_batch_divisibility,
    tl520_invalid_value_type,
    tl521_invalid_enum_value,
    tl522_value_out_of_range,
)}


def get(code: str) -> ModuleType | None:
    return REGISTRY.get(code.upper())


def all_rules() -> list[ModuleType]:
    return [REGISTRY[code] for code in sorted(REGISTRY)]
