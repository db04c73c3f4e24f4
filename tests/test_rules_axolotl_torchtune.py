"""Axolotl and torchtune rules: TL642 (adapter: lora + load_in_4bit), evidence, version-dependent branches."""

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
    assert "29.9 GiB of frozen fp32 weights for this 8.0B model instead of about 3.7 GiB" in found.detail
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
    assert "GiB" not in found.message + found.detail


# --- the family's evidence and version-dependent branches -----------------------------------------

from trainlint.context.versions import FrameworkVersion, Versions  # noqa: E402
from trainlint.document.reading import parse_document  # noqa: E402
from trainlint.rules import REGISTRY  # noqa: E402
from trainlint.rules.base import LintContext  # noqa: E402

FAMILY = ("TL314", "TL630", "TL631", "TL632", "TL633", "TL634", "TL635", "TL636", "TL637", "TL638", "TL639", "TL640",
          "TL641", "TL642")


def test_family_names_its_evidence():
    for code in FAMILY:
        module = REGISTRY[code]
        rule, doc = module.RULE, module.__doc__
        assert rule.framework in ("axolotl", "torchtune"), code
        assert rule.evidence and ".py" in rule.evidence, code
        assert "**Evidence**:" in doc, code
        if rule.raises:
            assert rule.raises[:40] in doc.replace("\n", " "), f"{code}: raises not quoted in the docs"


def run(code: str, text: str, flavor: str, **pins: str):
    versions = Versions({n: FrameworkVersion(n, v, "pin", "requirements.txt") for n, v in pins.items()})
    ctx = LintContext(document=parse_document(text, "x.yaml"), flavor=flavor, versions=versions)
    return list(REGISTRY[code].check(ctx))


MUON = "base_model: m\noptimizer: muon\nfsdp_version: 2\nfsdp_config:\n  reshard_after_forward: true\n"


def test_tl639_fsdp2_refused_before_axolotl_0_13_1():
    assert not run("TL639", MUON, "axolotl")  # version unknown: the current behaviour
    assert not run("TL639", MUON, "axolotl", axolotl="0.13.1")
    (old,) = run("TL639", MUON, "axolotl", axolotl="0.12.0")
    assert "Axolotl 0.12.0 stops" in old.message
    assert "incompatible with DeepSpeed and FSDP" in old.detail and "0.13.1" in old.detail
    (ds,) = run("TL639", "optimizer: muon\ndeepspeed: zero2.json\n", "axolotl", axolotl="0.12.0")
    assert "DeepSpeed and FSDP" in ds.detail


COMPILE = "optimizer_in_bwd: true\ncompile:\n  model: true\n  optimizer_step: true\noptimizer:\n  _component_: torch.optim.AdamW\n"


def test_tl640_compile_check_only_after_torchtune_0_6_1():
    assert not run("TL640", COMPILE, "torchtune", torchtune="0.6.1")
    (unknown,) = run("TL640", COMPILE, "torchtune")
    assert unknown.assumptions and "0.6.1" in unknown.assumptions[0]
    (known,) = run("TL640", COMPILE, "torchtune", torchtune="0.7.0.dev0")
    assert not known.assumptions


def test_tl642_only_from_axolotl_0_13():
    assert REGISTRY["TL642"].RULE.applies_to(Versions({"axolotl": FrameworkVersion("axolotl", "0.12.2", "pin")})) is False
    assert REGISTRY["TL642"].RULE.applies_to(Versions({"axolotl": FrameworkVersion("axolotl", "0.13.0", "pin")})) is True


def _tl653(tmp_path, text: str):
    path = tmp_path / "fft.yaml"
    path.write_text(text)
    result = engine.check_path(path, Settings(use_project_config=False), display_path=str(path))
    return [d for d in result.diagnostics if d.code == "TL653"]


FP16_FFT = ("base_model: meta-llama/Llama-3.2-1B\nmicro_batch_size: 1\ngradient_accumulation_steps: 1\n"
            "sequence_len: 1024\nfp16: true\n")


def test_tl653_fp16_full_fine_tune_stops_at_the_first_step(tmp_path):
    """resolve_dtype loads fp16, the Trainer's fp16 AMP GradScaler refuses the fp16 gradients: an error when the
    axolotl release is known, a warning saying what it assumed otherwise; an adapter, bf16, DeepSpeed or FSDP
    avoid it."""
    (known,) = _tl653(tmp_path, "# trainlint: axolotl=0.18.0\n" + FP16_FFT)
    assert known.severity.value == "error" and "Attempting to unscale FP16 gradients" in known.detail
    (assumed,) = _tl653(tmp_path, FP16_FFT)
    assert assumed.severity.value == "warning" and assumed.assumptions
    for extra in ("adapter: lora\nlora_r: 8\nlora_target_linear: true\n", "bf16: true\n", "bfloat16: true\n",
                  "fsdp:\n  - full_shard\n"):
        assert not _tl653(tmp_path, "# trainlint: axolotl=0.18.0\n" + FP16_FFT + extra), extra
    assert _tl653(tmp_path, "# trainlint: axolotl=0.18.0\n" + FP16_FFT + "bf16: auto\n")  # fp16 wins over auto
