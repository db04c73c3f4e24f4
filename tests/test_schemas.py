"""The committed JSON Schemas and the loader in trainlint/catalog/schemas.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from shared_corpus import corpus_path
from trainlint.catalog import schemas
from trainlint.catalog.schemas import KeyInfo, SchemaError, describe, known_keys, load_schema, property_schema, validation_errors

REPO = Path(__file__).resolve().parent.parent
SCHEMA_DIR = REPO / "schemas"


def errors_of(name, data):
    return [(e.kind, e.key_path) for e in validation_errors(name, data)]


# ---------------------------------------------------------------------------------------------
# the files


def test_every_schema_file_is_listed_and_valid_draft_2020_12():
    files = sorted(p.name for p in SCHEMA_DIR.glob("*.schema.json"))
    assert files == sorted(f"{n}.schema.json" for n in schemas.SCHEMA_NAMES)
    for name in schemas.SCHEMA_NAMES:
        schema = json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["title"]
        assert schema["x-trainlint-source"]["package"]
        assert schema["x-trainlint-source"]["version"]


def test_files_are_in_canonical_form():
    """The generator writes json.dumps(indent=2, sort_keys=True) + newline; hand edits must keep it."""
    for path in SCHEMA_DIR.glob("*.schema.json"):
        text = path.read_text(encoding="utf-8")
        assert text == json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n", path.name


def test_local_refs_resolve():
    for name in schemas.SCHEMA_NAMES:
        schema = load_schema(name)
        text = json.dumps(schema)
        for ref in set(re.findall(r'"\$ref": "([^"]+)"', text)):
            assert ref.startswith("#/$defs/"), ref
            assert ref.split("/")[-1] in schema["$defs"], ref


def test_source_versions():
    assert load_schema("deepspeed")["x-trainlint-source"]["package"] == "deepspeed"
    hf = load_schema("hf-training-args")["x-trainlint-source"]
    assert hf["package"] == "transformers" and hf["version"].startswith("5.")
    assert load_schema("lightning")["x-trainlint-source"]["package"] == "lightning"
    assert load_schema("accelerate")["x-trainlint-source"]["package"] == "accelerate"


def test_every_property_has_a_description_or_is_an_alias():
    """Descriptions come from the frameworks; report the share that lacks one, per schema."""
    for name in ("deepspeed", "hf-training-args", "lightning"):
        schema = load_schema(name)
        missing = [k for k, v in schema["properties"].items() if "description" not in v]
        assert len(missing) <= len(schema["properties"]) // 5, (name, missing)


# ---------------------------------------------------------------------------------------------
# loader


def test_load_schema_is_cached_and_accepts_file_names():
    assert load_schema("deepspeed") is load_schema("deepspeed.schema.json")
    with pytest.raises(KeyError):
        load_schema("axolotl")


def test_loader_finds_the_repo_schemas():
    path = schemas.schema_path("lightning")
    assert path.is_file()
    assert json.loads(path.read_text(encoding="utf-8"))["title"] == load_schema("lightning")["title"]


def test_known_keys_samples():
    assert "per_device_train_batch_size" in known_keys("hf-training-args")
    assert {"stage", "offload_param", "offload_optimizer", "stage3_max_live_parameters", "max_live_parameters"} <= known_keys(
        "deepspeed", ("zero_optimization",)
    )
    assert "accumulate_grad_batches" in known_keys("lightning", ("trainer",))
    assert "distributed_type" in known_keys("accelerate")
    assert {"train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "aio"} <= known_keys("deepspeed")
    assert {"device", "nvme_path", "pin_memory", "buffer_count"} <= known_keys("deepspeed", ("zero_optimization", "offload_param"))
    assert {"gpu", "num-gpus", "model", "seq-len", "fail-level"} <= known_keys("trainlint")


def test_known_keys_leaves_out_removed_and_is_none_where_unconstrained():
    top = known_keys("deepspeed")
    assert "sparse_attention" not in top and "amp" not in top
    assert known_keys("lightning", ("model",)) is None  # init args of the user's class
    assert known_keys("deepspeed", ("optimizer", "params")) is None
    assert known_keys("deepspeed", ("no_such_section",)) is None


def test_property_schema_follows_refs_items_and_alternatives():
    stage = property_schema("deepspeed", ("zero_optimization", "stage"))
    assert stage["default"] == 0
    device = property_schema("deepspeed", ("zero_optimization", "offload_optimizer", "device"))
    assert {"none", "cpu", "nvme"} <= set(device["enum"])
    cb = property_schema("lightning", ("trainer", "callbacks", 0))
    assert cb is not None
    assert property_schema("lightning", ("trainer", "callbacks", 0, "class_path"))["type"] == "string"
    assert property_schema("deepspeed", ("bf16", "enabled"))["default"] is False
    assert property_schema("hf-training-args", ("nope",)) is None


def test_describe_samples():
    info = describe("hf-training-args", ("optim",))
    assert isinstance(info, KeyInfo)
    assert info.description and info.types == ("string",)
    assert "adamw_torch" in info.enum and "paged_adamw_8bit" in info.enum
    assert info.has_default and info.default in info.enum
    assert "TrainingArguments" in info.classes and "SFTConfig" in info.classes

    mb = describe("deepspeed", ("train_micro_batch_size_per_gpu",))
    assert "integer" in mb.types and "string" in mb.types  # "auto"

    stage = describe("deepspeed", ("zero_optimization", "stage"))
    assert stage.enum == (0, 1, 2, 3, "auto") and stage.default == 0

    precision = describe("lightning", ("trainer", "precision"))
    assert "bf16-mixed" in precision.enum and 16 in precision.enum

    dt = describe("accelerate", ("distributed_type",))
    assert {"NO", "MULTI_GPU", "DEEPSPEED", "FSDP"} <= set(dt.enum)


def test_describe_deprecated_aliases_and_removed_keys():
    cpu = describe("deepspeed", ("zero_optimization", "cpu_offload"))
    assert cpu.deprecated and cpu.replacement == "offload_optimizer" and not cpu.removed
    alias = describe("deepspeed", ("zero_optimization", "stage3_max_live_parameters"))
    assert not alias.deprecated and alias.replacement == "max_live_parameters"

    gpus = describe("lightning", ("trainer", "gpus"))
    assert gpus.removed and gpus.deprecated and "devices" in gpus.replacement

    ev = describe("hf-training-args", ("evaluation_strategy",))
    assert ev.removed and ev.replacement == "eval_strategy"
    assert describe("hf-training-args", ("max_seq_length",)).replacement == "max_length"

    sa = describe("deepspeed", ("sparse_attention",))
    assert sa.removed and "removed" in sa.description.lower()

    assert describe("hf-training-args", ("no_such_key",)) is None


# ---------------------------------------------------------------------------------------------
# validation


def test_deepspeed_aio_inside_zero_is_an_unknown_key():
    errs = validation_errors("deepspeed", {"zero_optimization": {"stage": 2, "aio": {"block_size": 1048576}}})
    assert [(e.kind, e.key_path, e.at_key) for e in errs] == [("unknown-key", ("zero_optimization", "aio"), True)]
    assert isinstance(errs[0], SchemaError)
    assert "aio" in errs[0].message and errs[0].message.endswith((".", "?"))
    assert "stage" in errs[0].expected


def test_deepspeed_fp16_opt_level_and_bf16_loss_scale_are_unknown_keys():
    assert errors_of("deepspeed", {"fp16": {"enabled": True, "opt_level": "O2"}}) == [("unknown-key", ("fp16", "opt_level"))]
    assert errors_of("deepspeed", {"bf16": {"enabled": True, "loss_scale": 0}}) == [("unknown-key", ("bf16", "loss_scale"))]


def test_deepspeed_auto_values_and_aliases_are_valid():
    config = {
        "train_batch_size": "auto",
        "train_micro_batch_size_per_gpu": "auto",
        "gradient_accumulation_steps": "auto",
        "gradient_clipping": "auto",
        "fp16": {"enabled": "auto", "loss_scale": 0, "initial_scale_power": 16},
        "bf16": {"enabled": "auto"},
        "zero_optimization": {
            "stage": 3,
            "overlap_comm": True,
            "reduce_bucket_size": "auto",
            "stage3_prefetch_bucket_size": "auto",
            "max_live_parameters": 1e9,
            "stage3_max_reuse_distance": 1e9,
            "stage3_gather_16bit_weights_on_model_save": True,
            "offload_param": {"device": "cpu", "pin_memory": True},
            "offload_optimizer": {"device": "nvme", "nvme_path": "/local_nvme"},
        },
        "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto", "weight_decay": "auto"}},
        "scheduler": {"type": "WarmupLR", "params": {"warmup_min_lr": "auto"}},
        "steps_per_print": 10,
        "wall_clock_breakdown": False,
        "cuda_visible_devices": 0,  # unknown top-level keys are ignored by DeepSpeed
    }
    assert validation_errors("deepspeed", config) == []
    assert validation_errors("deepspeed", {"zero_optimization": True}) == []  # legacy form


def test_deepspeed_type_enum_range_errors():
    errs = {e.key_path: e for e in validation_errors("deepspeed", {
        "train_batch_size": 0,
        "gradient_clipping": "x",
        "zero_optimization": {"stage": 4, "offload_param": {"device": "gpu"}},
        "fp16": {"loss_scale": -1},
    })}
    assert errs[("train_batch_size",)].kind == "range"
    assert errs[("gradient_clipping",)].kind == "type" and '"auto"' in errs[("gradient_clipping",)].expected
    assert errs[("zero_optimization", "stage")].kind == "enum"
    assert errs[("zero_optimization", "offload_param", "device")].kind == "enum"
    assert errs[("fp16", "loss_scale")].kind == "range"
    assert all(not e.at_key for e in errs.values())


def test_deepspeed_removed_block_is_reported_at_the_key():
    errs = validation_errors("deepspeed", {"sparse_attention": {"mode": "fixed"}})
    assert [(e.kind, e.key_path, e.at_key) for e in errs] == [("other", ("sparse_attention",), True)]
    assert "removed" in errs[0].message


def test_hf_enum_type_and_unknown_keys():
    assert errors_of("hf-training-args", {"optim": "adamw_torchh"}) == [("enum", ("optim",))]
    msg = validation_errors("hf-training-args", {"optim": "adamw_torchh"})[0].message
    assert "adamw_torch" in msg
    assert errors_of("hf-training-args", {"lr_scheduler_type": "cosine_annealing"}) == [("enum", ("lr_scheduler_type",))]
    assert errors_of("hf-training-args", {"eval_strategy": "step"}) == [("enum", ("eval_strategy",))]
    # YAML 1.1 loads 2e-5 as a string; parse_yaml_file does not convert it
    assert errors_of("hf-training-args", {"learning_rate": "2e-5"}) == [("type", ("learning_rate",))]
    assert errors_of("hf-training-args", {"per_device_train_batch_sizes": 8}) == [("unknown-key", ("per_device_train_batch_sizes",))]
    typo = validation_errors("hf-training-args", {"per_device_train_batch_sizes": 8})[0]
    assert typo.at_key and "per_device_train_batch_size" in typo.message


def test_hf_negative_batch_size_is_not_a_range_error():
    """TrainingArguments does not check per_device_train_batch_size itself, so neither does the schema."""
    assert validation_errors("hf-training-args", {"per_device_train_batch_size": -1}) == []


def test_hf_removed_key_message_names_the_replacement():
    err = validation_errors("hf-training-args", {"evaluation_strategy": "steps"})[0]
    assert err.kind == "unknown-key" and err.key_path == ("evaluation_strategy",)
    assert "eval_strategy" in err.message


def test_hf_trl_and_model_config_keys_are_known():
    data = {
        "model_name_or_path": "Qwen/Qwen3-0.6B",
        "dtype": "bfloat16",
        "attn_implementation": "flash_attention_2",
        "use_peft": True,
        "lora_r": 16,
        "lora_alpha": 32,
        "lora_dropout": 0.05,
        "lora_target_modules": ["q_proj", "v_proj"],
        "load_in_4bit": True,
        "dataset_name": "trl-lib/Capybara",
        "max_length": 2048,
        "packing": True,
        "num_generations": 8,
        "beta": 0.1,
        "bf16": True,
        "gradient_checkpointing": True,
        "per_device_train_batch_size": 4,
        "predict_with_generate": True,
    }
    assert validation_errors("hf-training-args", data) == []


def test_lightning_removed_trainer_flag_and_valid_config():
    errs = validation_errors("lightning", {"trainer": {"gpus": 8, "strategy": "ddp"}})
    assert [(e.kind, e.key_path, e.at_key) for e in errs] == [("unknown-key", ("trainer", "gpus"), True)]
    assert "devices" in errs[0].message
    good = {
        "seed_everything": 42,
        "trainer": {
            "accelerator": "gpu",
            "devices": 8,
            "num_nodes": 1,
            "strategy": {"class_path": "lightning.pytorch.strategies.DeepSpeedStrategy", "init_args": {"stage": 3}},
            "precision": "bf16-mixed",
            "accumulate_grad_batches": 4,
            "callbacks": [{"class_path": "ModelCheckpoint", "init_args": {"save_top_k": 1}}],
            "logger": True,
        },
        "model": {"class_path": "my.Model", "init_args": {"hidden": 4096}},
        "data": {"batch_size": 8},
        "fit": {"ckpt_path": None, "trainer": {"max_epochs": 3}},
    }
    assert validation_errors("lightning", good) == []


def test_lightning_enums():
    assert errors_of("lightning", {"trainer": {"precision": "bf16-mix"}}) == [("enum", ("trainer", "precision"))]
    assert errors_of("lightning", {"trainer": {"strategy": "deepspeed_stage_4"}}) == [("enum", ("trainer", "strategy"))]
    assert errors_of("lightning", {"trainer": {"accumulate_grad_batches": 0}}) == [("range", ("trainer", "accumulate_grad_batches"))]
    assert errors_of("lightning", {"fit": {"trainer": {"gpus": 2}}}) == [("unknown-key", ("fit", "trainer", "gpus"))]


def test_accelerate():
    assert validation_errors("accelerate", {"distributed_type": "MULTI_GPU", "num_processes": 8, "mixed_precision": "bf16"}) == []
    assert errors_of("accelerate", {"distributed_type": "MULTI_GPU", "train_batch_size": 8}) == [("unknown-key", ("train_batch_size",))]
    assert errors_of("accelerate", {"num_processes": 2}) == [("other", ())]
    assert errors_of("accelerate", {"distributed_type": "MULTI_GPUS"}) == [("enum", ("distributed_type",))]
    # nested mappings are copied onto launch arguments without validation: unknown keys pass
    assert validation_errors("accelerate", {"distributed_type": "DEEPSPEED", "deepspeed_config": {"zero_stage": 3, "zero_optimization": {}}}) == []
    assert "fsdp_sharding_strategy" in known_keys("accelerate", ("fsdp_config",))
    assert "zero_stage" in known_keys("accelerate", ("deepspeed_config",))


def test_trainlint_settings():
    good = {
        "gpu": "H100-80GB",
        "num-gpus": 8,
        "seq_len": 4096,
        "select": ["TL1"],
        "ignore": "TL2, TL3",
        "fail-level": "error",
        "per-file-ignores": {"legacy/*.yaml": ["TL101"]},
        "per-file": {"*.json": {"gpu": "A100-80GB", "num_gpus": 4}},
        "output-format": "sarif",
    }
    assert validation_errors("trainlint", good) == []
    assert sorted(errors_of("trainlint", {"num-gpus": 0, "fail-level": "warn", "gpus": "x"})) == [
        ("enum", ("fail-level",)), ("range", ("num-gpus",)), ("unknown-key", ("gpus",))]


def test_validation_of_non_mapping_document():
    errs = validation_errors("deepspeed", ["not", "a", "mapping"])
    assert errs and errs[0].kind == "type" and errs[0].key_path == ()


def test_messages_are_single_sentences():
    data = {"zero_optimization": {"stage": 9, "aio": {}}, "gradient_clipping": "x", "fp16": {"opt_level": "O1"}}
    for err in validation_errors("deepspeed", data):
        assert "\n" not in err.message
        assert err.message[-1] in ".?"
        assert err.kind in ("type", "enum", "range", "unknown-key", "other")


# ---------------------------------------------------------------------------------------------
# the real-world corpus

# SOURCES.md says these use keys DeepSpeed rejects (compile.disable/backend on DeepSpeed >= 0.16.6);
# bing_bert's sparse_attention block was removed in DeepSpeed 0.19.
EXPECTED_DS_PROBLEMS = {
    "axolotl-ai-cloud__axolotl__deepspeed_configs__zero1_torch_compile.json": {("compile", "backend"), ("compile", "disable")},
    "deepspeedai__DeepSpeedExamples__training__bing_bert__deepspeed_bsz64k_lamb_config_seq128.json": {("sparse_attention",)},
}


def _corpus_files(flavor):
    return sorted(p for p in corpus_path(flavor).iterdir() if p.is_file())


def test_deepspeed_corpus_validates_except_known_bad_files():
    files = _corpus_files("deepspeed")
    assert len(files) >= 10
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        errs = validation_errors("deepspeed", data)
        got = {e.key_path for e in errs}
        assert got == EXPECTED_DS_PROBLEMS.get(path.name, set()), (path.name, errs)


def test_lightning_corpus_flags_exactly_the_removed_trainer_flags():
    yaml = pytest.importorskip("yaml")
    found = {}
    for path in _corpus_files("lightning"):
        errs = validation_errors("lightning", yaml.safe_load(path.read_text(encoding="utf-8")))
        if errs:
            found[path.name] = {e.key_path for e in errs}
    assert found == {
        "catalys1__mae-pytorch__config__multigpu.yaml": {("trainer", "gpus")},
        "kouyk__pytorch-lightning-slurm__config__fit.yaml": {("trainer", "auto_lr_find")},
    }


def test_accelerate_corpus_has_no_unknown_top_level_keys():
    yaml = pytest.importorskip("yaml")
    for path in _corpus_files("accelerate"):
        errs = validation_errors("accelerate", yaml.safe_load(path.read_text(encoding="utf-8")))
        assert errs == [], (path.name, errs)


# ---------------------------------------------------------------------------------------------
# the generator (runs without the frameworks for the handwritten part)


def _generator():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_schemas", REPO / "scripts" / "gen_schemas.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generator_imports_without_frameworks_and_reproduces_trainlint_schema():
    gen = _generator()
    assert set(gen.GENERATORS) == set(schemas.SCHEMA_NAMES)
    text = gen.render(gen.gen_trainlint())
    assert text == (SCHEMA_DIR / "trainlint.schema.json").read_text(encoding="utf-8")


def test_trainlint_schema_matches_the_settings_module():
    from trainlint.context import settings

    keys = known_keys("trainlint")
    for key in settings.OVERRIDABLE:
        assert key in keys and key.replace("-", "_") in keys
        assert key in known_keys("trainlint", ("per-file", "some/glob*.yaml"))
    for key in settings.LIST_KEYS:
        assert key in keys
    assert set(describe("trainlint", ("fail-level",)).enum) == set(settings.FAIL_LEVELS)


def test_bounds_the_frameworks_enforce():
    assert errors_of("hf-training-args", {"num_generations": 1}) == [("range", ("num_generations",))]
    assert errors_of("hf-training-args", {"torch_empty_cache_steps": 0}) == [("range", ("torch_empty_cache_steps",))]
    assert errors_of("hf-training-args", {"warmup_steps": -5}) == [("range", ("warmup_steps",))]
    assert validation_errors("hf-training-args", {"warmup_steps": 0.03, "torch_empty_cache_steps": None}) == []
    assert errors_of("lightning", {"trainer": {"num_nodes": 0, "max_epochs": -2, "max_steps": -1}}) == [
        ("range", ("trainer", "max_epochs")), ("range", ("trainer", "num_nodes"))]
    assert errors_of("accelerate", {"distributed_type": "FSDP", "parallelism_config": {"parallelism_config_tp_size": 0}}) == [
        ("range", ("parallelism_config", "parallelism_config_tp_size"))]
    assert errors_of("deepspeed", {"zero_optimization": {"reduce_bucket_size": 0}}) == [
        ("range", ("zero_optimization", "reduce_bucket_size"))]


def test_describe_enum_ignores_object_and_null_alternatives():
    strategy = describe("lightning", ("trainer", "strategy"))
    assert "ddp" in strategy.enum and "deepspeed_stage_3" in strategy.enum
    assert "object" in strategy.types and "string" in strategy.types
    assert describe("deepspeed", ("train_micro_batch_size_per_gpu",)).enum is None  # integer or "auto"
    assert describe("hf-training-args", ("dtype",)).enum == ("auto", "bfloat16", "float16", "float32")
    assert describe("hf-training-args", ("learning_rate",)).enum is None
