"""Model catalog, architectures and exact parameter counts."""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path

import pytest

from dataclasses import replace as trainlint_replace
from trainlint.catalog.architecture import UnsupportedArchitecture
from trainlint.catalog.hf_config import from_hf_config, supported_model_types
from trainlint.catalog.models import ModelLookupError, catalog, closest_models, find_model
from trainlint.catalog import models
from trainlint.catalog.files import ENTRY_START
from trainlint.catalog.naming import normalize as normalize_name

CATALOG = catalog()


def _arch(name: str):
    arch = find_model(name)
    assert arch is not None, name
    return arch


# ---------------------------------------------------------------- exact parameter counts


@pytest.mark.parametrize("entry", CATALOG, ids=[e.name for e in CATALOG])
def test_catalog_param_count_is_exact(entry):
    assert from_hf_config(entry.config, entry.name).total_params == entry.published_params


def test_catalog_is_large_and_consistent():
    assert len(CATALOG) >= 55
    names = [e.name for e in CATALOG]
    assert len(names) == len(set(names))
    for entry in CATALOG:
        assert entry.params_source and entry.config.get("model_type") in supported_model_types()


def test_multimodal_catalog_entries_count_their_vision_towers():
    # google/gemma-3-4b-it is the multimodal checkpoint: its vision tower is part of what trains.
    full, text = _arch("google/gemma-3-4b-it"), _arch("Gemma-3-4B-text")
    assert full.total_params == 4_300_079_472 and full.total_params - full.tower_params == text.total_params
    assert _arch("Qwen/Qwen2.5-VL-7B-Instruct").total_params == 8_292_166_656


def test_catalog_names_do_not_collide():
    from trainlint.catalog.naming import normalize

    owner: dict[str, str] = {}
    short_owner: dict[str, str] = {}
    for entry in CATALOG:
        for name in entry.all_names():
            key = normalize(name)
            assert owner.setdefault(key, entry.name) == entry.name, f"{name!r} names two entries"
            short = normalize(name.rsplit("/", 1)[-1])
            assert short_owner.setdefault(short, entry.name) == entry.name, f"{name!r}'s name part names two entries"


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("Llama-2-7B", 6_738_415_616),
        ("Llama-3.1-8B", 8_030_261_248),
        ("GPT-2", 124_439_808),
        ("BERT-base-uncased", 109_482_240),
        ("T5-small", 60_506_624),
        ("Mixtral-8x7B", 46_702_792_704),
        ("DeepSeek-V3", 671_026_404_352),  # transformers: e_score_correction_bias is a buffer
    ],
)
def test_well_known_counts(name, params):
    assert _arch(name).total_params == params


# ---------------------------------------------------------------- architecture details


def test_llama2_7b_shape():
    arch = _arch("Llama-2-7B")
    assert arch.kind == "decoder" and arch.num_layers == 32 and not arch.is_moe
    assert arch.head_dim == 128 and arch.gated_mlp and not arch.tie_word_embeddings
    assert arch.largest_module_params == 131_072_000
    assert arch.embedding_params == arch.head_params == 131_072_000
    names = [lin.name for lin in arch.stacks[0].linears]
    assert names == ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    groups = {lin.name: lin.input_group for lin in arch.stacks[0].linears}
    assert groups["q_proj"] == groups["k_proj"] == groups["v_proj"] == "attn_in"
    assert groups["gate_proj"] == groups["up_proj"] == "mlp_in"


def test_lora_params_match_peft():
    arch = _arch("Llama-2-7B")
    # PEFT prints "trainable params: 4,194,304" for r=8 on q_proj, v_proj.
    assert arch.lora_params(8, ["q_proj", "v_proj"]) == 4_194_304
    assert arch.lora_params(8, ["model.layers.0.self_attn.q_proj", "v_proj"]) == 4_194_304
    # all-linear: every projection in every layer, not lm_head.
    per_layer = 8 * (4 * (4096 + 4096) + 3 * (4096 + 11008))
    assert arch.lora_params(8, "all-linear") == 32 * per_layer == 19_988_480
    assert arch.lora_params(8, r"[qv]_proj") == 4_194_304


def test_lora_default_targets_follow_peft():
    llama = _arch("Llama-2-7B")
    assert llama.default_lora_targets == ("q_proj", "v_proj")
    assert llama.lora_params(8, None) == 4_194_304
    assert _arch("gpt2").lora_params(8, None) == 12 * 8 * (768 + 3 * 768)
    phi3 = _arch("Phi-3-mini-4k")
    assert phi3.default_lora_targets is None
    with pytest.raises(ValueError, match="phi3.*target_modules"):
        phi3.lora_params(8, None)


def test_lora_on_gpt2_c_proj_hits_attention_and_mlp():
    arch = _arch("gpt2")
    assert arch.lora_params(4, ["c_proj"]) == 12 * 4 * ((768 + 768) + (3072 + 768))
    assert arch.lora_params(4, ["mlp.c_proj"]) == 12 * 4 * (3072 + 768)  # dotted: PEFT's suffix match


def test_lora_targets_match_like_peft():
    llama = _arch("Llama-2-7B")
    qv = 4_194_304
    assert llama.lora_params(8, ["self_attn.q_proj", "v_proj"]) == qv
    assert llama.lora_params(8, ["model.layers.0.self_attn.q_proj"]) == qv // 2  # every layer's copy
    assert llama.lora_params(8, r".*\.(q_proj|v_proj)") == qv  # regex on the full module name
    assert llama.lora_params(8, r"model\.layers\.\d+\.self_attn\.[qv]_proj") == qv
    assert llama.lora_params(8, ["mlp.q_proj"]) == 0
    bert = _arch("bert-base")
    per_layer_out = 4 * (768 + 768) + 4 * (3072 + 768)  # attention.output.dense and output.dense
    assert bert.lora_params(4, ["output.dense"]) == 12 * per_layer_out
    t5 = _arch("flan-t5-base")
    assert t5.lora_params(4, ["EncDecAttention.q"]) == 12 * 4 * (768 + 768)


def test_linear_params():
    arch = _arch("Llama-2-7B")
    assert arch.linear_params({"q_proj"}) == 32 * 4096 * 4096
    assert arch.linear_params(None) == arch.total_params - 2 * 131_072_000 - 65 * 4096


def test_lora_counts_each_expert():
    arch = _arch("Mixtral-8x7B")
    assert arch.lora_params(8, ["w1"]) == 32 * 8 * 8 * (4096 + 14336)
    # transformers 5 fuses the experts: target_modules then reaches attention only.
    attention = 32 * 8 * (2 * (4096 + 4096) + 2 * (4096 + 1024))
    assert arch.lora_params(8, "all-linear", include_experts=False) == attention


def test_fused_experts_are_gathered_as_one_module():
    mixtral = _arch("Mixtral-8x7B")
    assert mixtral.largest_module_params == 8 * 3 * 4096 * 14336
    v3 = _arch("DeepSeek-V3")
    assert v3.largest_module_params == 256 * 3 * 7168 * 2048


def test_moe_active_params():
    mixtral = _arch("Mixtral-8x7B")
    assert mixtral.is_moe
    # Mistral's "12.9B active" figure.
    assert mixtral.active_params_per_token == 12_879_925_248
    v3 = _arch("DeepSeek-V3")
    assert round(v3.active_params_per_token / 1e9) == 38  # 37B active without the embedding lookup table
    assert [s.num_layers for s in v3.stacks] == [3, 58]
    qwen_moe = _arch("Qwen3-30B-A3B")
    assert 3.0e9 < qwen_moe.active_params_per_token < 3.5e9  # "A3B": 3.3B activated


def test_gpt_oss_fused_experts_are_the_largest_module():
    arch = _arch("gpt-oss-20b")
    stack = arch.stacks[0]
    assert stack.fused_experts and stack.extra_params == 64  # attention sinks
    assert arch.largest_module_params == 32 * stack.expert_params


def test_parallel_attention_shares_input_group():
    falcon7 = _arch("Falcon-7B").stacks[0]
    groups = {lin.name: lin.input_group for lin in falcon7.linears}
    assert groups["query_key_value"] == groups["dense_h_to_4h"]
    falcon40 = _arch("Falcon-40B").stacks[0]
    groups = {lin.name: lin.input_group for lin in falcon40.linears}
    assert groups["query_key_value"] != groups["dense_h_to_4h"]  # ln_attn and ln_mlp differ


def test_t5_stacks_and_cross_attention():
    arch = _arch("flan-t5-base")
    assert arch.kind == "encoder-decoder" and arch.gated_mlp and not arch.tie_word_embeddings
    encoder, decoder = arch.stacks
    assert (encoder.role, decoder.role) == ("encoder", "decoder")
    assert decoder.cross_attention and not encoder.cross_attention
    assert {lin.input_group for lin in decoder.linears} >= {"cross_q", "cross_kv"}
    assert [lin.name for lin in encoder.linears] == ["q", "k", "v", "o", "wi_0", "wi_1", "wo"]


@pytest.mark.parametrize(
    ("model", "names_with_bias", "names_without_bias"),
    [
        ("Qwen2.5-7B", {"q_proj", "k_proj", "v_proj"}, {"o_proj", "gate_proj", "up_proj", "down_proj"}),
        ("Llama-3.1-8B", set(), {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}),
        ("Phi-3-mini-4k", set(), {"qkv_proj", "o_proj", "gate_up_proj", "down_proj"}),
        ("Phi-2", {"q_proj", "k_proj", "v_proj", "dense", "fc1", "fc2"}, set()),
        ("gpt-oss-20b", {"q_proj", "k_proj", "v_proj", "o_proj", "gate_up_proj", "down_proj"}, set()),
        ("GPT-2", {"c_attn", "c_proj", "c_fc"}, set()),
        ("BERT-base-uncased", {"query", "key", "value", "dense"}, set()),
        ("T5-base", set(), {"q", "k", "v", "o", "wi", "wo"}),
        ("Falcon-7B", set(), {"query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"}),
        ("DeepSeek-V3", set(), {"q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj",
                                "gate_proj", "up_proj", "down_proj"}),
        ("Mixtral-8x7B", set(), {"q_proj", "k_proj", "v_proj", "o_proj", "w1", "w2", "w3"}),
    ],
)
def test_linear_names_and_biases(model, names_with_bias, names_without_bias):
    """The leaf names are what PEFT target_modules match; biases follow each family's config."""
    linears = [lin for stack in _arch(model).stacks for lin in stack.linears]
    assert {lin.name for lin in linears} == names_with_bias | names_without_bias
    assert {lin.name for lin in linears if lin.bias} == names_with_bias


def test_per_layer_norms_and_extras():
    assert _arch("Gemma-2-9B").stacks[0].norm_params == 4 * 3584
    assert _arch("Gemma-3-1B").stacks[0].norm_params == 4 * 1152 + 2 * 256  # + q_norm, k_norm
    assert _arch("Qwen3-8B").stacks[0].norm_params == 2 * 4096 + 2 * 128
    assert _arch("OLMo-2-7B").stacks[0].norm_params == 2 * 4096 + 2 * 4096  # q_norm, k_norm over all heads
    assert _arch("GPT-2").stacks[0].norm_params == 2 * 2 * 768  # two LayerNorms with bias
    roberta = _arch("RoBERTa-base")
    assert roberta.embedding_params == (50265 + 514 + 1) * 768  # 514 positions: padding offset included
    assert roberta.head_params == 768 * 768 + 768  # pooler
    t5 = _arch("T5-small")
    assert t5.embedding_params == 32128 * 512 + 2 * 32 * 8  # shared + one relative bias table per stack


def test_qwen2_moe_shared_expert_and_gate():
    arch = _arch("Qwen1.5-MoE-A2.7B")
    (stack,) = arch.stacks
    assert stack.num_experts == 60 and stack.experts_per_token == 4
    assert stack.router_params == 2048 * 60 + 2048  # router + shared_expert_gate
    shared = [lin for lin in stack.linears if lin.input_group.startswith("shared")]
    assert {lin.out_features for lin in shared if lin.name != "down_proj"} == {5632}


def test_deepseek_dense_then_moe_layers():
    lite = _arch("DeepSeek-V2-Lite")
    dense, moe = lite.stacks
    assert (dense.num_layers, moe.num_layers) == (1, 26)
    assert "q_proj" in {lin.name for lin in moe.linears}  # no q_lora_rank: plain q_proj
    assert lite.is_moe and not dense.num_experts


def test_bias_flags_and_head_dim_override():
    base = dict(model_type="llama", hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                num_attention_heads=4, vocab_size=100)
    plain = from_hf_config(base, "t").total_params
    biased = from_hf_config({**base, "attention_bias": True, "mlp_bias": True}, "t").total_params
    assert biased - plain == 2 * (3 * 64 + 64 + 2 * 128 + 64)
    wide = from_hf_config({**base, "head_dim": 32}, "t")
    assert wide.head_dim == 32 and wide.stacks[0].linears[0].out_features == 128


def test_multimodal_config_reads_text_config():
    entry = next(e for e in CATALOG if e.name == "Gemma-3-4B-text")
    nested = {"model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"],
              "text_config": {k: v for k, v in entry.config.items() if k != "model_type"},
              "vision_config": {"model_type": "siglip_vision_model"}}
    arch = from_hf_config(nested, "g")
    # The language model as the catalog counts it, plus the vision tower and projector (never dropped).
    assert arch.total_params - arch.tower_params == entry.published_params
    assert [t.role for t in arch.towers] == ["vision", "projector"] and not arch.approximate


def test_llava_style_config_reads_its_language_model():
    llama = next(e for e in CATALOG if e.name == "Llama-2-7B").config
    config = {"model_type": "llava", "architectures": ["LlavaForConditionalGeneration"], "torch_dtype": "float16",
              "text_config": llama, "vision_config": {"model_type": "clip_vision_model", "hidden_size": 1024}}
    arch = from_hf_config(config, "llava")
    assert arch.total_params - arch.tower_params == 6_738_415_616 and arch.checkpoint_dtype == "float16"
    assert arch.tower_params > 0


def test_transformers_5_config_spelling():
    # transformers 5 writes `dtype` and `rope_parameters`, and gives DeepSeek-V2 a `head_dim` field.
    lite = dict(next(e for e in CATALOG if e.name == "DeepSeek-V2-Lite").config, head_dim=64, dtype="bfloat16",
                rope_parameters={"rope_type": "yarn", "rope_theta": 10000, "factor": 40})
    lite.pop("rope_theta")
    arch = from_hf_config(lite, "lite")
    assert arch.total_params == 15_706_484_224 and arch.checkpoint_dtype == "bfloat16"


def test_checkpoint_dtype_and_quantization_are_kept():
    config = dict(next(e for e in CATALOG if e.name == "Mistral-7B-v0.1").config, torch_dtype="bfloat16",
                  quantization_config={"quant_method": "gptq", "bits": 4})
    arch = from_hf_config(config, "m")
    assert (arch.checkpoint_dtype, arch.quantization) == ("bfloat16", "gptq")
    assert _arch("Mistral-7B-v0.1").quantization is None


def test_missing_fields_take_transformers_class_defaults():
    # google/gemma-3-4b-it's config.json: the text_config leaves heads, head_dim and vocab_size to
    # Gemma3TextConfig's defaults.
    config = {"model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"],
              "text_config": {"model_type": "gemma3_text", "hidden_size": 2560, "intermediate_size": 10240,
                              "num_hidden_layers": 34, "sliding_window": 1024}}
    assert from_hf_config(config, "g").total_params == _arch("Gemma-3-4B-text").total_params
    # T5 v1.0 configs have no feed_forward_proj: ReLU, ungated.
    t5 = from_hf_config({"model_type": "t5"}, "t5")
    assert t5.total_params == _arch("t5-small").total_params and not t5.gated_mlp


def test_summary_line():
    assert _arch("Llama-3.1-8B").summary() == (
        "Llama-3.1-8B: decoder, 32 layers, hidden 4,096, 32 heads (8 KV), vocab 128,256, 8.03B params")
    assert "128 experts, top-8, 3.35B active" in _arch("Qwen3-30B-A3B").summary()


def test_importing_does_not_load_the_catalog():
    import subprocess
    import sys

    code = ("import trainlint.catalog.models as m, trainlint.catalog.hf_config; "
            "print(m._load_catalog.cache_info().currsize + m._raw_entries.cache_info().currsize)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.strip() == "0"


def test_no_two_entries_share_a_normalized_name():
    # what lets a name written as in the catalog be found by a direct scan before the normalized index
    from trainlint.catalog.naming import normalize

    owner: dict[str, str] = {}
    for entry in models._load_catalog():
        for name in entry.all_names():
            assert owner.setdefault(normalize(name), entry.name) == entry.name, name


def test_an_exact_name_is_found_without_the_index_or_every_entry():
    import subprocess
    import sys

    code = ("import trainlint.catalog.models as m\n"
            "a = m.find_model('meta-llama/Llama-3.1-8B'); b = m.find_model('Qwen3-30B-A3B')\n"
            "print(a.name, b.name, m._index.cache_info().currsize, m._load_catalog.cache_info().currsize,"
            " m._raw_entries.cache_info().currsize, m._entry_at.cache_info().currsize)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.split() == ["Llama-3.1-8B", "Qwen3-30B-A3B", "0", "0", "0", "2"]


def test_the_direct_lookup_agrees_with_the_index():
    full, _short = models._index()
    for entry in models._load_catalog():
        for name in entry.all_names():
            assert models._catalog_entry(name, by_short_name=False) is full[normalize_name(name)] is entry
    assert models._exact_position("no-such-model") is None


def test_an_entry_decoded_alone_is_the_parsed_files():
    text = models._text()
    assert models._bytes().count(ENTRY_START) == len(models._raw_entries())  # the layout the lookup reads
    for cached in (models._exact_position, models._raw_entries, models._entry_at, models._load_catalog):
        cached.cache_clear()
    models._DECODED.clear()
    models._MADE.clear()
    try:
        names = [(e["name"], n) for e in json.loads(text)["models"]
                 for n in (e["name"], *e.get("hf_ids", ()), *e.get("aliases", ()))]
        found = {n: models._exact_position(n) for _owner, n in names}
        assert models._raw_entries.cache_info().currsize == 0
        entries = models._raw_entries()
        for owner, n in names:
            assert entries[found[n]]["name"] == owner, n
            assert models._DECODED[found[n]] == entries[found[n]], n
    finally:
        for cached in (models._exact_position, models._raw_entries, models._entry_at, models._load_catalog):
            cached.cache_clear()
        models._DECODED.clear()
        models._MADE.clear()


def test_a_name_found_in_the_files_head_is_found_as_in_the_whole_file():
    # _exact_position reads models.json's head first: for any head, a name is found there as in the whole file,
    # or the search says it needs more (INCOMPLETE), never a wrong or a missing answer.
    from trainlint.catalog.files import INCOMPLETE, entry_holding

    whole = models._bytes()
    names = [n for e in json.loads(models._text())["models"] for n in (e["name"], *e.get("hf_ids", ()),
                                                                       *e.get("aliases", ()))]
    names += ["no-such-model", "Llama", "config"]
    for size in (0, 100, 1000, 4700, 20000, models._HEAD, len(whole) - 1):
        head = whole[:size]
        found_in_head = 0
        for name in names:
            found = entry_holding(head, name, models._holds, complete=False)
            if found is not INCOMPLETE:
                assert found == entry_holding(whole, name, models._holds), (size, name)
                found_in_head += found is not None
        assert found_in_head or size < 2000, size
    assert entry_holding(whole, "Llama-3.1-8B", models._holds, complete=False) is not INCOMPLETE


def test_an_entrys_architecture_is_built_from_its_own_config():
    # CatalogModel.architecture() finds its entry by name among those made (models._MADE), not by a second search.
    made = [models._entry_at(i) for i in range(len(models._raw_entries()))]
    for entry in made:
        arch = entry.architecture()
        assert models._MADE[entry.name] is entry
        assert arch == from_hf_config(entry.config, entry.name, source="catalog"), entry.name
        assert arch.name == entry.name


# ---------------------------------------------------------------- errors


def test_unsupported_model_type_says_why():
    with pytest.raises(UnsupportedArchitecture, match="'rwkv9' is not supported.*lacks a depth"):
        from_hf_config({"model_type": "rwkv9", "hidden_size": 8, "vocab_size": 10}, "m")
    with pytest.raises(UnsupportedArchitecture, match="no 'model_type'"):
        from_hf_config({"hidden_size": 8}, "m")
    with pytest.raises(UnsupportedArchitecture, match="intermediate_size"):
        from_hf_config({"model_type": "olmo2", "hidden_size": 8, "num_attention_heads": 2,
                        "num_hidden_layers": 1, "vocab_size": 10}, "m")
    with pytest.raises(UnsupportedArchitecture, match="must be an integer"):
        from_hf_config({"model_type": "llama", "hidden_size": "big"}, "m")
    assert issubclass(UnsupportedArchitecture, ValueError)


# ---------------------------------------------------------------- lookups


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Llama-3.1-8B", "Llama-3.1-8B"),
        ("llama3.1-8b", "Llama-3.1-8B"),
        ("meta-llama/Meta-Llama-3.1-8B-Instruct", "Llama-3.1-8B"),
        ("META LLAMA / llama_3.1_8b", "Llama-3.1-8B"),
        ("HuggingFaceH4/zephyr-7b-beta", "zephyr-7b-beta"),
        ("someone/zephyr-7b-beta", "zephyr-7b-beta"),
        ("Qwen/Qwen2.5-7B-Instruct", "Qwen2.5-7B"),
        ("gpt2", "GPT-2"),
        ("google/flan-t5-xl", "Flan-T5-xl"),
        ("llama3_1_8b", "Llama-3.1-8B"),  # torchtune builder names
        ("qwen2_5_0_5b", "Qwen2.5-0.5B"),
        ("unsloth/llama-3-8b-Instruct-bnb-4bit", "Llama-3-8B"),  # variant words dropped
        ("Qwen/Qwen3-4B-Instruct-2507", "Qwen3-4B"),
        ("qwen3_14b_instruct", "Qwen3-14B"),
    ],
)
def test_find_model_by_name(query, expected):
    arch = find_model(query)
    assert arch is not None and arch.name == expected and arch.source == "catalog"


def test_find_model_not_found():
    assert find_model("definitely-not-a-model-xyz") is None
    assert find_model("") is None


def test_closest_models():
    assert closest_models("lama-3.1-8b")[0] == "Llama-3.1-8B"
    assert closest_models("qwen2.5-7")[0] == "Qwen2.5-7B"
    assert closest_models("meta-llama/Llama-3.1-8B-Instrukt")[0] == "Llama-3.1-8B"
    assert len(closest_models("mistral", n=2)) <= 2


def _write_config(folder: Path, config: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def test_find_model_local_folder(tmp_path, monkeypatch):
    entry = next(e for e in CATALOG if e.name == "SmolLM2-135M")
    path = _write_config(tmp_path / "ckpt" / "my-smol", entry.config)
    arch = find_model("ckpt/my-smol", base_dir=tmp_path)
    assert arch is not None and arch.total_params == entry.published_params
    assert arch.source == str(path) and arch.name == "my-smol"
    # the config file itself, and a path relative to the working directory
    assert find_model(str(path)).total_params == entry.published_params
    monkeypatch.chdir(tmp_path)
    assert find_model("ckpt/my-smol").total_params == entry.published_params


def test_local_folder_beats_catalog(tmp_path):
    config = dict(next(e for e in CATALOG if e.name == "SmolLM2-135M").config, num_hidden_layers=2)
    _write_config(tmp_path / "gpt2", config)
    assert find_model("gpt2", base_dir=tmp_path).num_layers == 2


def test_bad_local_config_raises(tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelLookupError, match="not valid JSON"):
        find_model(str(folder))
    _write_config(tmp_path / "rwkv", {"model_type": "rwkv9"})
    with pytest.raises(ModelLookupError, match="not supported"):
        find_model(str(tmp_path / "rwkv"))


def test_explicit_path_without_config_says_so(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelLookupError, match="has no config.json"):
        find_model(str(tmp_path / "empty"))
    assert find_model("./no/such/checkpoint", base_dir=tmp_path) is None
    # a path that only exists on the training cluster: its folder name still identifies the model
    assert find_model("/cluster/models/Meta-Llama-3.1-8B-Instruct").name == "Llama-3.1-8B"
    assert find_model("no-such-model-name") is None


def test_find_model_in_hf_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    entry = next(e for e in CATALOG if e.name == "Qwen2.5-0.5B")
    snaps = tmp_path / "models--acme--tiny-qwen" / "snapshots"
    old = _write_config(snaps / "old", dict(entry.config, num_hidden_layers=1))
    new = _write_config(snaps / "abc", entry.config)
    past = time.time() - 3600
    os.utime(old, (past, past))
    arch = find_model("acme/tiny-qwen")
    assert arch is not None and arch.total_params == entry.published_params
    assert arch.source == str(new) and arch.name == "acme/tiny-qwen"
    assert find_model("acme/other-model") is None


def test_hf_cache_exact_repo_beats_catalog_name_part(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    config = dict(next(e for e in CATALOG if e.name == "Mistral-7B-v0.1").config, num_hidden_layers=4)
    _write_config(tmp_path / "models--someone--zephyr-7b-beta" / "snapshots" / "abc", config)
    assert find_model("someone/zephyr-7b-beta").num_layers == 4


def test_hf_home_is_used(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    config = next(e for e in CATALOG if e.name == "GPT-2").config
    _write_config(tmp_path / "hub" / "models--acme--gpt" / "snapshots" / "x", config)
    assert find_model("acme/gpt").total_params == 124_439_808


@pytest.mark.parametrize("replace", [dataclasses.replace, trainlint_replace], ids=["dataclasses", "trainlint"])
def test_parameter_counts_are_cached_per_architecture_not_shared(replace):
    # Architecture and LayerStack cache their counts on the instance: a changed copy (made by either replace, the
    # catalog's builders use trainlint's) counts afresh.
    arch = find_model("meta-llama/Llama-3.1-8B")
    stack = arch.stacks[0]
    total, layers, largest, per_layer = (arch.total_params, arch.num_layers, arch.largest_module_params,
                                         stack.params_per_layer)
    deeper = replace(arch, stacks=(replace(stack, num_layers=stack.num_layers + 1),))
    assert deeper.total_params == total + per_layer and deeper.num_layers == layers + 1
    wider = replace(stack, linears=stack.linears + (stack.linears[0]._replace(in_features=10**6),))
    assert wider.params_per_layer == per_layer + 10**6 * stack.linears[0].out_features
    assert replace(arch, stacks=(wider,)).largest_module_params == 10**6 * stack.linears[0].out_features > largest
    assert replace(arch, checkpoint_params=123).total_params == 123
    assert (arch.total_params, arch.num_layers, arch.largest_module_params, stack.params_per_layer) == \
        (total, layers, largest, per_layer)
