"""schemas/dialects.json and its reader, trainlint.catalog.dialects."""

import json

from trainlint.catalog import dialects


def test_file_format_and_names():
    data = dialects.load()
    assert data["format"] == dialects.FORMAT
    assert tuple(data["dialects"]) == dialects.DIALECT_NAMES
    for name, entry in data["dialects"].items():
        assert entry["unknown_keys"]["action"] in ("error", "ignored", "launcher"), name
        assert entry["parser"]["source"] and entry["flavor"], name
        for key, info in entry["keys"].items():
            assert info["classes"], (name, key)
            assert info["in"] == "all" or set(info["in"]) <= set(dialects.versions(name)), (name, key)
    assert {"gpt-neox", "megatron-lm", "nemo"} <= set(dialects.not_training_configs())


def test_llamafactory_keys_and_typos():
    keys = dialects.accepted_keys("llamafactory", "0.9.5")
    assert {"lora_target", "template", "cutoff_len", "stage", "finetuning_type", "overwrite_output_dir",
            "learning_rate", "num_train_epochs", "predict_with_generate"} <= keys
    assert not {"Lora_target", "Learning_rate", "num train epochs"} & keys
    assert dialects.unknown_keys_action("llamafactory") == "error"
    assert "Some keys are not used by the HfArgumentParser" in dialects.dialect("llamafactory")["unknown_keys"]["message"]


def test_version_sampling():
    # LLaMA-Factory re-declares overwrite_output_dir from 0.9.4 on (transformers 5 removed it)
    assert "overwrite_output_dir" not in dialects.extra_keys("llamafactory", "0.9.3")
    assert "overwrite_output_dir" in dialects.extra_keys("llamafactory", "0.9.4")
    assert "overwrite_output_dir" in dialects.extra_keys("llamafactory", "0.9.6")  # the 0.9.6.dev0 sample
    assert dialects.extra_keys("llamafactory", "0.1") == dialects.extra_keys("llamafactory", "0.9.2")
    assert dialects.extra_keys("llamafactory") >= dialects.extra_keys("llamafactory", "0.9.3")


def test_other_dialects():
    assert {"hub_model_revision", "dataset_mixture", "reward_funcs"} <= dialects.extra_keys("open-r1")
    assert dialects.unknown_keys_action("open-r1") == "ignored"  # pinned TRL 0.18 drops unknown keys
    assert "max_seq_length" in dialects.accepted_keys("open-instruct")
    assert dialects.base_keys("open-instruct") == frozenset()
    assert {"train_type", "ENV"} <= dialects.extra_keys("ms-swift", "3.9")
    new = dialects.extra_keys("ms-swift", "4.5.2")  # 4.0 renamed train_type to tuner_type
    assert "tuner_type" in new and "train_type" not in new
    assert {"base_model", "model_config", "overrides_of_model_config"} <= dialects.accepted_keys("axolotl")
    assert dialects.unknown_keys_action("axolotl") == "ignored"
    assert {"env", "datasets"} <= dialects.extra_keys("trl") and dialects.accepted_keys("trl") is None
    assert "num_processes" in dialects.dialect("trl")["accelerate_launch_options"]
    assert dialects.accepted_keys("nope") is None and dialects.dialect("nope") is None


def test_each_part_read_alone_is_the_whole_files():
    full = dialects.load()
    assert dialects._dialects_span() is not None  # the shipped file has the layout the sectioned reading expects
    for name in full["dialects"]:
        assert dialects.dialect(name) == full["dialects"][name], name
    assert dialects.not_training_configs() == full["not_training_configs"]
    start, end = dialects._dialects_span()
    assert json.loads(dialects._data()[start:end]) == full["dialects"]  # the span is the whole object
    assert dialects.dialect("nope") is None


def test_a_dialect_is_read_without_decoding_the_whole_file():
    dialects.load.cache_clear()
    dialects._part.cache_clear()
    assert dialects.dialect("trl")["unknown_keys"] and dialects.not_training_configs()
    assert dialects.load.cache_info().currsize == 0


def test_another_layout_is_read_whole(monkeypatch):
    import json

    text = json.dumps(dialects.load())  # one line: no section starts a line
    monkeypatch.setattr(dialects, "_data", lambda: text.encode())
    for cached in (dialects._dialects_span, dialects._part, dialects.load):
        cached.cache_clear()
    try:
        assert dialects._dialects_span() is None
        assert dialects.dialect("trl") == json.loads(text)["dialects"]["trl"]
    finally:
        for cached in (dialects._dialects_span, dialects._part, dialects.load):
            cached.cache_clear()
