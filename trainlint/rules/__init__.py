"""Stage 6, rules: one module per rule, registered here by name. Codes are stable forever.
May import: `document`, `flavors`, `plan`, `context`, `catalog`, `memory`, `fixes`, `diagnostics`.

Families: TL0xx files and syntax · TL1xx memory · TL2xx batch consistency · TL3xx precision and
hardware · TL4xx sharding and offload · TL5xx keys and values · TL6xx format-specific.
Adding a rule: its module, its tests/fixtures/<CODE>/ folder, and one line below.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Iterator, Mapping
from types import ModuleType

# One line per rule: its module, its code and the flavors it checks ("" = every flavor), as its `RULE` says
# (tests/test_rule_registry.py holds each line to its module). A module is imported only when a file of one of
# its flavors is checked (or a caller asks for it), so a check loads only the rules that can apply.
RULES: tuple[tuple[str, str, str], ...] = (
    ("tl001_syntax_error", "TL001", ""),
    ("tl002_duplicate_key", "TL002", ""),
    ("tl003_yaml_number_string", "TL003", "huggingface accelerate"),
    ("tl004_yaml_boolean_trap", "TL004", ""),
    ("tl005_unknown_format", "TL005", ""),
    ("tl006_relaxed_json", "TL006", ""),
    ("tl007_missing_linked_file", "TL007", ""),
    ("tl009_unused_suppression", "TL009", ""),
    ("tl010_invalid_settings", "TL010", ""),
    ("tl011_unusable_number", "TL011", ""),
    ("tl012_launch_line_cut", "TL012", ""),
    ("tl100_out_of_memory", "TL100", ""),
    ("tl101_near_capacity", "TL101", ""),
    ("tl102_memory_not_checked", "TL102", ""),
    ("tl103_offload_host_memory", "TL103", ""),
    ("tl104_memory_headroom", "TL104", ""),
    ("tl200_deepspeed_batch_mismatch", "TL200", "deepspeed accelerate lightning"),
    ("tl201_deepspeed_batch_tied_to_world_size", "TL201", "deepspeed huggingface axolotl accelerate lightning"),
    ("tl202_deepspeed_missing_gradient_accumulation", "TL202", "deepspeed huggingface axolotl accelerate"),
    ("tl220_grpo_batch_divisibility", "TL220", "huggingface"),
    ("tl223_litgpt_global_batch_divisibility", "TL223", "litgpt"),
    ("tl224_accelerate_deepspeed_trainer_overrides", "TL224", "accelerate"),
    ("tl300_deepspeed_fp16_and_bf16", "TL300", "deepspeed huggingface axolotl accelerate lightning"),
    ("tl301_deepspeed_precision_conflicts_with_accelerate", "TL301", "accelerate"),
    ("tl310_fp16_and_bf16", "TL310", "huggingface axolotl"),
    ("tl311_bf16_unsupported_gpu", "TL311", "huggingface lightning litgpt accelerate axolotl torchtune"),
    ("tl312_legacy_precision_alias", "TL312", "lightning litgpt"),
    ("tl313_invalid_precision", "TL313", "lightning litgpt"),
    ("tl314_torchtune_fp16_dtype", "TL314", "torchtune"),
    ("tl317_torchtune_unknown_dtype", "TL317", "torchtune"),
    ("tl315_tf32_unsupported_gpu", "TL315", "huggingface axolotl"),
    ("tl316_fp8_unsupported_gpu", "TL316", "accelerate lightning litgpt axolotl"),
    ("tl400_deepspeed_offload_param_without_stage3", "TL400", "deepspeed huggingface axolotl accelerate lightning"),
    ("tl401_deepspeed_offload_optimizer_without_zero", "TL401", "deepspeed huggingface axolotl accelerate lightning"),
    ("tl402_deepspeed_stage3_key_below_stage3", "TL402", "deepspeed huggingface axolotl accelerate lightning"),
    ("tl403_deepspeed_partial_offload_needs_stage3", "TL403", "deepspeed huggingface axolotl accelerate lightning"),
    ("tl404_deepspeed_nvme_without_path", "TL404", "deepspeed huggingface axolotl accelerate lightning"),
    ("tl405_deepspeed_tiny_bucket", "TL405", "deepspeed huggingface axolotl accelerate lightning"),
    ("tl406_deepspeed_activation_checkpointing_hf", "TL406", "deepspeed huggingface axolotl accelerate lightning"),
    ("tl407_deepspeed_nvme_optimizer_offload_below_stage3", "TL407",
     "deepspeed huggingface axolotl accelerate lightning"),
    ("tl420_deepspeed_and_fsdp", "TL420", "huggingface axolotl"),
    ("tl421_fsdp_offload_alone", "TL421", "huggingface"),
    ("tl422_fsdp_conflicting_modes", "TL422", "huggingface"),
    ("tl423_fsdp_config_without_fsdp", "TL423", "huggingface"),
    ("tl424_fsdp_wrap_policy_conflict", "TL424", "huggingface"),
    ("tl425_gradient_checkpointing_with_fsdp", "TL425", "huggingface"),
    ("tl426_sharding_on_one_device", "TL426", "accelerate lightning huggingface axolotl"),
    ("tl427_fsdp2_forward_prefetch", "TL427", "accelerate"),
    ("tl428_parallelism_size_mismatch", "TL428", "accelerate"),
    ("tl429_fsdp_ram_efficient_loading_without_sync", "TL429", "huggingface"),
    ("tl430_fsdp_wrap_class_not_in_model", "TL430", "huggingface accelerate axolotl"),
    ("tl431_zero3_init_flag_below_stage3", "TL431", "accelerate"),
    ("tl432_accelerate_processes_per_machine", "TL432", "accelerate"),
    ("tl433_accelerate_unknown_launch_option", "TL433", ""),
    ("tl500_deepspeed_unknown_section_key", "TL500", "deepspeed huggingface axolotl accelerate lightning"),
    ("tl501_deepspeed_unknown_top_level_key", "TL501", "deepspeed huggingface axolotl accelerate lightning"),
    ("tl502_deepspeed_deprecated_key", "TL502", "deepspeed huggingface axolotl accelerate lightning"),
    ("tl503_deepspeed_unfilled_auto", "TL503", "deepspeed huggingface axolotl accelerate lightning"),
    ("tl504_deepspeed_string_typed_value", "TL504", "deepspeed huggingface axolotl accelerate lightning"),
    ("tl505_deepspeed_torch_scheduler", "TL505", "deepspeed huggingface axolotl accelerate lightning"),
    ("tl520_invalid_value_type", "TL520", "huggingface lightning accelerate"),
    ("tl521_invalid_enum_value", "TL521", "huggingface lightning accelerate"),
    ("tl522_value_out_of_range", "TL522", "huggingface lightning accelerate"),
    ("tl523_hf_unknown_key", "TL523", "huggingface deepspeed"),
    ("tl524_hf_removed_argument", "TL524", "huggingface deepspeed"),
    ("tl525_accelerate_unknown_key", "TL525", "accelerate"),
    ("tl526_lightning_unknown_trainer_arg", "TL526", "lightning"),
    ("tl527_quantization_4bit_and_8bit", "TL527", "huggingface axolotl"),
    ("tl528_prefetch_factor_without_workers", "TL528", "huggingface"),
    ("tl529_load_best_model_strategy_mismatch", "TL529", "huggingface"),
    ("tl530_gradient_checkpointing_use_cache", "TL530", "huggingface"),
    ("tl531_reduce_on_plateau_without_eval", "TL531", "huggingface"),
    ("tl532_old_framework_unpinned", "TL532", "huggingface"),
    ("tl600_hf_deepspeed_mismatch", "TL600", "huggingface axolotl deepspeed"),
    ("tl601_hf_optimizer_replaced_by_offload", "TL601", "huggingface axolotl"),
    ("tl602_hf_optim_ignored_by_deepspeed", "TL602", "huggingface axolotl"),
    ("tl603_deepspeed_zero_section_missing", "TL603", "deepspeed huggingface axolotl accelerate"),
    ("tl604_lightning_deepspeed_gradient_accumulation", "TL604", "lightning"),
    ("tl605_hf_deepspeed_optimizer_without_scheduler", "TL605", "deepspeed huggingface axolotl"),
    ("tl620_lightning_removed_trainer_arg", "TL620", "lightning"),
    ("tl621_lightning_unknown_strategy", "TL621", "lightning"),
    ("tl622_accelerate_ignored_plugin_key", "TL622", "accelerate"),
    ("tl623_accelerate_deepspeed_file_with_plugin_keys", "TL623", "accelerate"),
    ("tl624_lightning_strategy_accelerator_mismatch", "TL624", "lightning"),
    ("tl625_lightning_strategy_list", "TL625", "lightning"),
    ("tl630_axolotl_qlora_without_4bit", "TL630", "axolotl"),
    ("tl631_axolotl_qlora_in_8bit", "TL631", "axolotl"),
    ("tl632_axolotl_warmup_conflict", "TL632", "axolotl"),
    ("tl633_axolotl_sample_packing_rlhf", "TL633", "axolotl"),
    ("tl634_axolotl_fsdp_8bit_optimizer", "TL634", "axolotl"),
    ("tl635_axolotl_batch_size_and_accumulation", "TL635", "axolotl"),
    ("tl636_axolotl_activation_offloading_without_checkpointing", "TL636", "axolotl"),
    ("tl637_axolotl_fsdp_prefixed_keys", "TL637", "axolotl"),
    ("tl638_axolotl_model_quantization_conflict", "TL638", "axolotl"),
    ("tl639_axolotl_muon_sharding", "TL639", "axolotl"),
    ("tl640_torchtune_optimizer_in_bwd_conflict", "TL640", "torchtune"),
    ("tl641_torchtune_activation_offloading_without_checkpointing", "TL641", "torchtune"),
    ("tl642_axolotl_lora_load_in_4bit", "TL642", "axolotl"),
    ("tl643_torchtune_moved_component", "TL643", "torchtune"),
    ("tl644_axolotl_batch_size_fields", "TL644", "axolotl"),
    ("tl645_axolotl_torch_compile_with_deepspeed", "TL645", "axolotl"),
    ("tl646_litgpt_logger_choice", "TL646", "litgpt"),
    ("tl647_axolotl_invalid_value", "TL647", "axolotl"),
    ("tl648_llamafactory_invalid_argument", "TL648", "huggingface"),
    ("tl649_torchtune_unknown_component", "TL649", "torchtune"),
    ("tl650_torchtune_lora_attn_modules", "TL650", "torchtune"),
    ("tl651_litgpt_unknown_key", "TL651", "litgpt"),
    ("tl652_ms_swift_invalid_choice", "TL652", "huggingface"),
    ("tl653_axolotl_fp16_full_finetune", "TL653", "axolotl"),
    ("tl660_trl_dpo_ref_model_with_peft", "TL660", "huggingface"),
)

# The rules whose check reads the run's DeepSpeed configs alone (guards, then one loop over dscommon.ds_configs):
# a file that has none (no DeepSpeed file, no `deepspeed:` link or section) does not import them.
# tests/test_rule_registry.py holds each to that shape.
DEEPSPEED_CONFIG_RULES = frozenset({
    "TL200", "TL201", "TL202", "TL300", "TL301", "TL400", "TL401", "TL402", "TL403", "TL404", "TL405", "TL406",
    "TL407", "TL500", "TL501", "TL502", "TL503", "TL504", "TL505", "TL600", "TL601", "TL602", "TL603", "TL604",
    "TL605",
})

# Rules that report only on keys at the top level of the file: not imported for a file whose top level has none of
# them (the key whose absence ends each check first). tests/test_rule_registry.py checks every test file both ways.
KEYED_RULES = {
    "TL310": ("fp16", "fp16_full_eval"),
    "TL420": ("fsdp",), "TL421": ("fsdp",), "TL422": ("fsdp",), "TL425": ("fsdp",),
    "TL423": ("fsdp_config",), "TL424": ("fsdp_config",), "TL429": ("fsdp_config",),
    "TL527": ("load_in_8bit",), "TL528": ("dataloader_prefetch_factor",), "TL529": ("load_best_model_at_end",),
    "TL530": ("use_cache", "model_init_kwargs"), "TL531": ("lr_scheduler_type",),
}

RULE_MODULES = tuple(module for module, _, _ in RULES)
_MODULE_OF = {code: module for module, code, _ in RULES}
_FLAVORS_OF = {code: tuple(flavors.split()) for _, code, flavors in RULES}
_CODES = tuple(sorted(_MODULE_OF))


_MODULE_NAMES = {code: f"trainlint.rules.{module}" for code, module in _MODULE_OF.items()}


def _load(code: str) -> ModuleType:
    name = _MODULE_NAMES[code]
    # an imported rule is taken from sys.modules: import_module's own lookup costs more, ~30 rules for every file
    return sys.modules.get(name) or importlib.import_module(name)


class _Registry(Mapping):
    """Rule code -> rule module; the codes are known without importing a module, each module is imported on
    first use."""

    def __getitem__(self, code: str) -> ModuleType:
        if code not in _MODULE_OF:
            raise KeyError(code)
        return _load(code)

    def __iter__(self) -> Iterator[str]:
        return iter(_MODULE_OF)

    def __len__(self) -> int:
        return len(_MODULE_OF)

    def __contains__(self, code: object) -> bool:
        return code in _MODULE_OF


REGISTRY: Mapping[str, ModuleType] = _Registry()


def codes() -> tuple[str, ...]:
    """Every rule code, sorted (nothing imported)."""
    return _CODES


def get(code: str) -> ModuleType | None:
    return REGISTRY.get(code.upper())


def _of_flavor(code: str, flavor: str | None) -> bool:
    return flavor is None or not _FLAVORS_OF[code] or flavor in _FLAVORS_OF[code]


def all_rules(flavor: str | None = None, deepspeed_configs: bool = True,
              top_keys: frozenset | None = None) -> list[ModuleType]:
    """The rule modules sorted by code: all of them, or those that check files of `flavor`; without
    `deepspeed_configs` (the file has none), not the DEEPSPEED_CONFIG_RULES; with `top_keys` (the keys at the file's
    top level), not the KEYED_RULES whose keys it lacks."""
    return [_load(code) for code in _codes_for(flavor, deepspeed_configs)
            if top_keys is None or code not in KEYED_RULES or not top_keys.isdisjoint(KEYED_RULES[code])]


@functools.lru_cache(maxsize=64)
def _codes_for(flavor: str | None, deepspeed_configs: bool) -> tuple[str, ...]:
    """The codes `all_rules` starts from: of `flavor`, without the DEEPSPEED_CONFIG_RULES when the file has none."""
    return tuple(code for code in _CODES
                 if _of_flavor(code, flavor) and (deepspeed_configs or code not in DEEPSPEED_CONFIG_RULES))


def reads_deepspeed_configs(flavor: str | None) -> bool:
    """Whether some rule of `flavor` reads DeepSpeed configs (whether the file has any decides if they run)."""
    return any(_of_flavor(code, flavor) for code in DEEPSPEED_CONFIG_RULES)
