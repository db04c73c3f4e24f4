"""Every hub-style config in tests/data/hf_configs is sized as real transformers builds it.

tests/data/hf_configs/expected_params.json holds the exact parameter counts transformers builds from
each config.json on the meta device (benchmarks/model_sizing/count_params.py; `other_versions` where
another transformers version builds a different count, as for T5's lm_head). trainlint must match one
of them exactly, or be within 5% where it labels its count approximate; the vision tower and projector
of a multimodal model are counted, never dropped.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trainlint.catalog.models import load_config_file

DATA = Path(__file__).parent / "data" / "hf_configs"
EXPECTED = json.loads((DATA / "expected_params.json").read_text())["models"]


def test_the_set_covers_sixty_model_types():
    folders = {p.name for p in DATA.iterdir() if (p / "config.json").is_file()}
    assert folders == set(EXPECTED)
    assert len({e["model_type"] for e in EXPECTED.values()}) >= 60


@pytest.mark.parametrize("folder", sorted(EXPECTED))
def test_sized_as_transformers_builds_it(folder):
    expected = EXPECTED[folder]
    allowed = {expected["total_params"], *expected.get("other_versions", {}).values()}
    arch = load_config_file(DATA / folder / "config.json")
    if arch.approximate:
        assert abs(arch.total_params - expected["total_params"]) <= 0.05 * expected["total_params"], arch.sizing_note
    else:
        assert arch.total_params in allowed, f"{arch.total_params:,} vs {sorted(allowed)}"


@pytest.mark.parametrize("folder", sorted(f for f, e in EXPECTED.items() if "vision" in e.get("split", {})))
def test_vision_towers_are_counted(folder):
    split = EXPECTED[folder]["split"]
    arch = load_config_file(DATA / folder / "config.json")
    assert arch.tower_params == split["vision"] + split.get("projector", 0)
    assert {t.role for t in arch.towers} >= {"vision"}
    assert "vision" in arch.summary()


def _unknown_type_copy(tmp_path, folder="meta-llama__Meta-Llama-3-8B", model_type="exaone_like"):
    config = json.loads((DATA / folder / "config.json").read_text())
    config["model_type"] = model_type
    target = tmp_path / "model"
    target.mkdir()
    (target / "config.json").write_text(json.dumps(config))
    return target


def test_generic_tier_is_approximate_and_says_so(tmp_path):
    arch = load_config_file(_unknown_type_copy(tmp_path) / "config.json")
    expected = EXPECTED["meta-llama__Meta-Llama-3-8B"]["total_params"]
    assert arch.approximate and "exaone_like" in arch.sizing_note and "approximate" in arch.summary()
    assert abs(arch.total_params - expected) <= 0.05 * expected


def test_approximate_model_caps_memory_findings_at_warning(tmp_path):
    from trainlint import engine
    from trainlint.context.settings import Settings
    from trainlint.diagnostics import Severity

    model = _unknown_type_copy(tmp_path)
    config = tmp_path / "train.yaml"
    config.write_text(f"# trainlint: gpu=A100-80GB num-gpus=1 model={model}\noutput_dir: out\n"
                      "per_device_train_batch_size: 16\nmax_length: 4096\nbf16: true\n")
    result = engine.check_path(config, Settings(use_project_config=False))
    (oom,) = [d for d in result.diagnostics if d.code == "TL100"]
    assert oom.severity is Severity.WARNING
    assert any("approximate" in a for a in oom.assumptions)
    assert any("approximate" in a for a in result.estimate.assumptions)


# ---- exact counts from safetensors headers ----------------------------------------------------------

def _safetensors(path: Path, tensors: dict[str, tuple[str, list[int]]]) -> None:
    """A real safetensors file: header, then zero bytes for the data (shapes kept tiny)."""
    import math
    import struct

    sizes = {"F32": 4, "BF16": 2, "F16": 2, "I32": 4, "U8": 1}
    header, offset = {}, 0
    for name, (dtype, shape) in tensors.items():
        n = math.prod(shape) * sizes[dtype]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(offset))


def test_checkpoint_headers_make_a_generic_count_exact(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "brand_new", "hidden_size": 8, "num_hidden_layers": 2,
                                                    "num_attention_heads": 2, "vocab_size": 16}))
    _safetensors(folder / "model-00001-of-00002.safetensors",
                 {"model.embed_tokens.weight": ("BF16", [16, 8]), "model.layers.0.w": ("BF16", [8, 8])})
    _safetensors(folder / "model-00002-of-00002.safetensors",
                 {"model.layers.1.w": ("BF16", [8, 8]), "model.layers.1.rotary_emb.inv_freq": ("F32", [4])})
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": 0}, "weight_map": {
        "model.embed_tokens.weight": "model-00001-of-00002.safetensors", "model.layers.0.w": "model-00001-of-00002.safetensors",
        "model.layers.1.w": "model-00002-of-00002.safetensors"}}))
    arch = load_config_file(folder / "config.json")
    assert arch.sizing == "checkpoint" and not arch.approximate
    assert arch.total_params == 16 * 8 + 2 * 64  # inv_freq is a buffer, not a parameter
    assert "2 safetensors files" in arch.sizing_note


def test_checkpoint_headers_confirm_an_exact_builder(tmp_path):
    folder = tmp_path / "tiny"
    folder.mkdir()
    config = {"model_type": "llama", "hidden_size": 8, "intermediate_size": 16, "num_hidden_layers": 1,
              "num_attention_heads": 2, "vocab_size": 10, "tie_word_embeddings": True}
    (folder / "config.json").write_text(json.dumps(config))
    arch = load_config_file(folder / "config.json")
    _safetensors(folder / "model.safetensors", {"all": ("F32", [arch.total_params])})
    checked = load_config_file(folder / "config.json")
    assert checked.total_params == arch.total_params and checked.sizing == "exact"
    assert "matches the headers" in checked.sizing_note
    _safetensors(folder / "model.safetensors", {"all": ("F32", [arch.total_params + 5])})
    noted = load_config_file(folder / "config.json")
    assert noted.total_params == arch.total_params and "+5 against" in noted.sizing_note


@pytest.mark.parametrize("bad", ["lfs", "quantized", "huge_header", "truncated"])
def test_unreadable_or_quantized_checkpoints_are_ignored(tmp_path, bad):
    import struct

    folder = tmp_path / bad
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "brand_new", "hidden_size": 8, "num_hidden_layers": 2,
                                                    "num_attention_heads": 2, "vocab_size": 16}))
    target = folder / "model.safetensors"
    if bad == "lfs":
        target.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 123\n")
    elif bad == "quantized":
        _safetensors(target, {"model.layers.0.qweight": ("I32", [2, 8]), "model.layers.0.scales": ("F16", [8])})
    elif bad == "huge_header":
        target.write_bytes(struct.pack("<Q", 2**40) + b"{}")
    else:
        target.write_bytes(struct.pack("<Q", 100) + b'{"a": ')
    arch = load_config_file(folder / "config.json")
    assert arch.approximate and arch.checkpoint_params is None


# ---- names people write for derivatives ------------------------------------------------------------

@pytest.mark.parametrize(("name", "entry"), [
    ("Qwen/Qwen2.5-Coder-7B-Instruct", "Qwen2.5-7B"),
    ("Qwen/Qwen2.5-Coder-1.5B-Instruct", "Qwen2.5-1.5B"),
    ("unsloth/Qwen2.5-Coder-32B-Instruct-bnb-4bit", "Qwen2.5-32B"),
    ("Qwen/Qwen2.5-Math-7B-Instruct", "Qwen2.5-7B"),
    ("Qwen/QwQ-32B", "Qwen2.5-32B"),
    ("Qwen/QwQ-32B-Preview", "Qwen2.5-32B"),
    ("Qwen/Qwen2-7B-Instruct", "Qwen2.5-7B"),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "Qwen2.5-7B"),
    ("unsloth/DeepSeek-R1-Distill-Qwen-14B-bnb-4bit", "Qwen2.5-14B"),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", "DeepSeek-R1-Distill-Qwen-1.5B"),
    ("deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "Llama-3.1-8B"),
    ("deepseek-ai/DeepSeek-R1-Distill-Llama-70B", "Llama-3.3-70B"),
    ("NousResearch/Hermes-3-Llama-3.1-8B", "Llama-3.1-8B"),
    ("lmsys/vicuna-7b-v1.5", "Llama-2-7B"),
    ("huggyllama/llama-7b", "Llama-2-7B"),
    ("decapoda-research/llama-13b-hf", "Llama-2-13B"),
    ("mistralai/Mistral-7B-Instruct-v0.2", "Mistral-7B-v0.1"),
    ("HuggingFaceH4/zephyr-7b-beta", "zephyr-7b-beta"),
    ("google/gemma-2-9b-it", "Gemma-2-9B"),
    ("meta-llama/Llama-2-7b-chat-hf", "Llama-2-7B"),
    ("unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit", "Llama-3.1-8B"),
    ("unsloth/Llama-3.2-1B-Instruct-unsloth-bnb-4bit", "Llama-3.2-1B"),
    ("NousResearch/Meta-Llama-3-8B-Instruct", "Llama-3-8B"),
    ("unsloth/gemma-3-4b-it", "Gemma-3-4B"),
    ("Qwen/Qwen2.5-VL-7B-Instruct", "Qwen2.5-VL-7B"),
    ("NovaSky-AI/Sky-T1-32B-Preview", "Qwen2.5-32B"),
    ("NovaSky-AI/Sky-T1-32B-Flash", "Qwen2.5-32B"),
    ("simplescaling/s1.1-32B", "Qwen2.5-32B"),
    ("open-thoughts/OpenThinker-7B", "Qwen2.5-7B"),
    ("open-thoughts/OpenThinker2-32B", "Qwen2.5-32B"),
])
def test_derivatives_and_reuploads_resolve(name, entry):
    from trainlint.catalog.models import find_model

    arch = find_model(name)
    assert arch is not None and arch.name == entry


@pytest.mark.parametrize(("folder", "name"), [
    ("Qwen__Qwen2.5-Coder-1.5B-Instruct", "Qwen/Qwen2.5-Coder-1.5B-Instruct"),
    ("deepseek-ai__DeepSeek-R1-Distill-Qwen-7B", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B"),
    ("Qwen__Qwen2-1.5B-Instruct", "Qwen/Qwen2-1.5B-Instruct"),
    ("mistralai__Mistral-7B-Instruct-v0.3", "mistralai/Mistral-7B-Instruct-v0.3"),
])
def test_derivative_aliases_have_the_derivatives_exact_count(folder, name):
    from trainlint.catalog.models import find_model

    assert find_model(name).total_params == EXPECTED[folder]["total_params"]


@pytest.mark.parametrize(("query", "first"), [
    ("Qwen2.5-9B", ["Qwen2.5-7B", "Qwen2.5-14B"]),
    ("llama-3-13b", ["Llama-3-8B", "Llama-3-70B"]),
    ("gemma-2-4b", ["Gemma-2-2B", "Gemma-2-9B"]),
    ("Llama-3.2-7B", ["Llama-3.2-3B", "Llama-3.2-1B"]),
    ("Qwen2.5-VL-5B", ["Qwen2.5-VL-3B", "Qwen2.5-VL-7B"]),
])
def test_closest_suggestions_rank_by_family_then_size(query, first):
    from trainlint.catalog.models import closest_models

    assert closest_models(query)[:2] == first


def test_peft_defaults_follow_the_configs_top_level_model_type():
    # PEFT reads config.model_type: "gemma3" (multimodal) has no default target_modules, "opt" has q/v.
    gemma = load_config_file(DATA / "google__gemma-3-4b-it" / "config.json")
    assert gemma.config_model_type == "gemma3" and gemma.default_lora_targets is None
    assert load_config_file(DATA / "facebook__opt-125m" / "config.json").default_lora_targets == ("q_proj", "v_proj")
    bart = load_config_file(DATA / "facebook__bart-base" / "config.json")
    assert bart.lora_params(8, ["q_proj", "v_proj"]) == 8 * (768 + 768) * 2 * (6 + 12)  # enc self, dec self + cross
    assert {s.module_prefix for s in bart.stacks} == {"model.encoder.layers", "model.decoder.layers"}


def test_hostile_or_malformed_configs_are_refused_with_a_reason_never_a_crash():
    import copy
    import random
    import time

    from trainlint.catalog.architecture import UnsupportedArchitecture
    from trainlint.catalog.hf_config import from_hf_config

    def key_paths(obj, prefix=()):
        if isinstance(obj, dict):
            for k, v in obj.items():
                yield prefix + (k,)
                yield from key_paths(v, prefix + (k,))

    rnd = random.Random(7)
    weird = [None, "x", -5, 0, 1.5, float("inf"), float("nan"), [], {}, True, [1, "a"], {"a": 1}, 10**15]
    start = time.monotonic()
    for folder in sorted(EXPECTED):
        config = json.loads((DATA / folder / "config.json").read_text())
        paths = list(key_paths(config))
        for _ in range(12):
            mutated = copy.deepcopy(config)
            path = rnd.choice(paths)
            node = mutated
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = rnd.choice(weird)
            try:
                arch = from_hf_config(mutated, folder)
            except UnsupportedArchitecture:
                continue
            assert isinstance(arch.total_params, int)  # sized or refused, never an exception of another kind
            arch.summary()
    assert time.monotonic() - start < 30  # a layer count of 10**15 must not be iterated


def test_an_audio_encoder_is_counted_approximately_not_dropped():
    # Qwen2-Audio style: a text_config and an audio_config (a Whisper-like encoder), no vision tower.
    text = json.loads((DATA / "Qwen__Qwen2.5-7B-Instruct" / "config.json").read_text())
    config = {"model_type": "qwen2_audio_like", "text_config": text,
              "audio_config": {"model_type": "qwen2_audio_encoder", "d_model": 1280, "encoder_layers": 32,
                               "encoder_ffn_dim": 5120, "num_mel_bins": 128}}
    from trainlint.catalog.hf_config import from_hf_config

    arch = from_hf_config(config, "audio")
    assert [t.role for t in arch.towers] == ["audio"] and arch.approximate and "audio encoder" in arch.sizing_note
    # Whisper-large-v3's encoder: ~635M parameters; the generic formula lands close.
    assert abs(arch.tower_params - 635_000_000) < 0.05 * 635_000_000
    assert arch.total_params - arch.tower_params == EXPECTED["Qwen__Qwen2.5-7B-Instruct"]["total_params"]


@pytest.mark.parametrize("folder", sorted(f for f, e in EXPECTED.items() if "lora_all_linear_r8" in e))
def test_all_linear_lora_reaches_vision_towers_as_peft_does(folder):
    # PEFT's target_modules="all-linear" adapts every nn.Linear but the output head: the vision tower's and
    # the projector's too (Gemma 3's projection is a bare Parameter, not a Linear).
    arch = load_config_file(DATA / folder / "config.json")
    # Fused 3-D experts (Llama 4) are out of target_modules' reach; PEFT does adapt the routers
    # (nn.Linear), which trainlint's lora_params leaves out by design.
    fused = any(s.fused_experts for s in arch.stacks)
    routers = sum(s.num_layers * 8 * (arch.hidden_size + s.num_experts) for s in arch.stacks if s.num_experts)
    assert arch.lora_params(8, "all-linear", include_experts=not fused) + routers == \
        EXPECTED[folder]["lora_all_linear_r8"]


def test_no_model_type_has_two_builders():
    """hf_config's own families and the family modules' (imported only when needed) never name the same model type,
    so which is looked up first decides nothing."""
    from trainlint.catalog import hf_config

    assert not set(hf_config._OWN_BUILDERS) & set(hf_config.family_builders())
    assert len(hf_config.supported_model_types()) > 60
