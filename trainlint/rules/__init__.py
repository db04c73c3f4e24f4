"""Stage 6, rules: one module per rule, registered here by name. Codes are stable forever.
May import: `document`, `flavors`, `plan`, `context`, `catalog`, `memory`, `fixes`, `diagnostics`.

Families: TL0xx files and syntax · TL1xx memory · TL2xx batch consistency · TL3xx precision and
hardware · TL4xx sharding and offload · TL5xx keys and values · TL6xx format-specific.
Adding a rule: its module, its tests/fixtures/<CODE>/ folder, and one line below.
"""

from __future__ import annotations

import importlib
from types import ModuleType

RULE_MODULES = (
    "tl001_syntax_error",
    "tl002_duplicate_key",
    "tl003_yaml_number_string",
    "tl004_yaml_boolean_trap",
    "tl005_unknown_format",
    "tl006_relaxed_json",
    "tl007_missing_linked_file",
    "tl009_unused_suppression",
    "tl010_invalid_settings",
    "tl100_out_of_memory",
    "tl101_near_capacity",
    "tl102_memory_not_checked",
    "tl103_offload_host_memory",
    "tl104_memory_headroom",
    "tl200_deepspeed_batch_mismatch",
    "tl201_deepspeed_batch_tied_to_world_size",
    "tl202_deepspeed_missing_gradient_accumulation",
    "tl220_grpo_batch_divisibility",
    "tl223_litgpt_global_batch_divisibility",
    "tl224_accelerate_deepspeed_trainer_overrides",
    "tl300_deepspeed_fp16_and_bf16",
    "tl301_deepspeed_precision_conflicts_with_accelerate",
    "tl310_fp16_and_bf16",
    "tl311_bf16_unsupported_gpu",
    "tl312_legacy_precision_alias",
    "tl313_invalid_precision",
    "tl314_torchtune_fp16_dtype",
    "tl317_torchtune_unknown_dtype",
    "tl315_tf32_unsupported_gpu",
    "tl316_fp8_unsupported_gpu",
    "tl400_deepspeed_offload_param_without_stage3",
    "tl401_deepspeed_offload_optimizer_without_zero",
    "tl402_deepspeed_stage3_key_below_stage3",
    "tl403_deepspeed_partial_offload_needs_stage3",
    "tl404_deepspeed_nvme_without_path",
    "tl405_deepspeed_tiny_bucket",
    "tl406_deepspeed_activation_checkpointing_hf",
    "tl407_deepspeed_nvme_optimizer_offload_below_stage3",
    "tl420_deepspeed_and_fsdp",
    "tl421_fsdp_offload_alone",
    "tl422_fsdp_conflicting_modes",
    "tl423_fsdp_config_without_fsdp",
    "tl424_fsdp_wrap_policy_conflict",
    "tl425_gradient_checkpointing_with_fsdp",
    "tl426_sharding_on_one_device",
    "tl427_fsdp2_forward_prefetch",
    "tl428_parallelism_size_mismatch",
    "tl429_fsdp_ram_efficient_loading_without_sync",
    "tl430_fsdp_wrap_class_not_in_model",
    "tl431_zero3_init_flag_below_stage3",
    "tl500_deepspeed_unknown_section_key",
    "tl501_deepspeed_unknown_top_level_key",
    "tl502_deepspeed_deprecated_key",
    "tl503_deepspeed_unfilled_auto",
    "tl504_deepspeed_string_typed_value",
    "tl505_deepspeed_torch_scheduler",
    "tl520_invalid_value_type",
    "tl521_invalid_enum_value",
    "tl522_value_out_of_range",
    "tl523_hf_unknown_key",
    "tl524_hf_removed_argument",
    "tl525_accelerate_unknown_key",
    "tl526_lightning_unknown_trainer_arg",
    "tl527_quantization_4bit_and_8bit",
    "tl528_prefetch_factor_without_workers",
    "tl529_load_best_model_strategy_mismatch",
    "tl530_gradient_checkpointing_use_cache",
    "tl531_reduce_on_plateau_without_eval",
    "tl600_hf_deepspeed_mismatch",
    "tl601_hf_optimizer_replaced_by_offload",
    "tl602_hf_optim_ignored_by_deepspeed",
    "tl603_deepspeed_zero_section_missing",
    "tl604_lightning_deepspeed_gradient_accumulation",
    "tl620_lightning_removed_trainer_arg",
    "tl621_lightning_unknown_strategy",
    "tl622_accelerate_ignored_plugin_key",
    "tl623_accelerate_deepspeed_file_with_plugin_keys",
    "tl624_lightning_strategy_accelerator_mismatch",
    "tl625_lightning_strategy_list",
    "tl630_axolotl_qlora_without_4bit",
    "tl631_axolotl_qlora_in_8bit",
    "tl632_axolotl_warmup_conflict",
    "tl633_axolotl_sample_packing_rlhf",
    "tl634_axolotl_fsdp_8bit_optimizer",
    "tl635_axolotl_batch_size_and_accumulation",
    "tl636_axolotl_activation_offloading_without_checkpointing",
    "tl637_axolotl_fsdp_prefixed_keys",
    "tl638_axolotl_model_quantization_conflict",
    "tl639_axolotl_muon_sharding",
    "tl640_torchtune_optimizer_in_bwd_conflict",
    "tl641_torchtune_activation_offloading_without_checkpointing",
    "tl642_axolotl_lora_load_in_4bit",
)

REGISTRY: dict[str, ModuleType] = {}
for _name in RULE_MODULES:
    _module = importlib.import_module(f"trainlint.rules.{_name}")
    REGISTRY[_module.RULE.code] = _module


def get(code: str) -> ModuleType | None:
    return REGISTRY.get(code.upper())


def all_rules() -> list[ModuleType]:
    return [REGISTRY[code] for code in sorted(REGISTRY)]
