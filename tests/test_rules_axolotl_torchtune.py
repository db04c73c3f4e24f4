"""TL642: axolotl `adapter: lora` + `load_in_4bit: true` (an unquantized base, upcast to fp32)."""

from __future__ import annotations

from trainlint import engine
from trainlint.cli import _cli_overrides, build_parser
from trainlint.context.settings import Settings

BASE = "base_model: {model}\ndatasets:\n  - path: tatsu-lab/alpaca\n    type: alpaca\nmicro_batch_size: 1\n"


def findings(tmp_path, text: str):
    path = tmp_path / "axolotl.yaml"
    path.write_text(text)
    args = build_parser().parse_args(["check", "x"])
    result = engine.check_path(path, Settings(cli=_cli_overrides(args), use_project_config=False),
                               display_path=str(path))
    return [d for d in result.diagnostics if d.code == "TL642"]


def test_sizes_from_the_model(tmp_path):
    text = BASE.format(model="NousResearch/Meta-Llama-3-8B") + "adapter: lora\nload_in_4bit: true\n"
    (found,) = findings(tmp_path, text)
    assert found.severity.value == "warning"
    assert "29.9 GiB of frozen fp32 weights for this 8.0B model instead of about 3.7 GiB" in found.message
    assert [f.title for f in found.fixes] == ["set `adapter: qlora`", "remove `load_in_4bit`"]


def test_not_reported(tmp_path):
    lora = BASE.format(model="NousResearch/Meta-Llama-3-8B") + "adapter: lora\n"
    assert not findings(tmp_path, lora + "load_in_4bit: true\nload_in_8bit: true\n")  # TL527's
    assert not findings(tmp_path, lora + "load_in_4bit: true\nmodel_quantization_config: Mxfp4Config\n")  # TL638's
    assert not findings(tmp_path, lora + "load_in_4bit: false\n")
    assert not findings(tmp_path, BASE.format(model="unsloth/llama-3-8b-bnb-4bit") + "adapter: lora\nload_in_4bit: true\n")
    assert not findings(tmp_path, BASE.format(model="my-org/m") + "adapter: qlora\nload_in_4bit: true\n")
    # an unknown model: no sizes, still the finding
    (found,) = findings(tmp_path, BASE.format(model="my-org/m") + "adapter: lora\nload_in_4bit: true\n")
    assert "GiB" not in found.message
