"""The real-world corpus (shared/corpus, see its SOURCES.md) seen by the Hugging Face / TRL / Lightning /
Accelerate / Axolotl / torchtune / LitGPT rules: the known problems are found, the rest stays quiet, and
fixing everything leaves files that parse and lint without new findings."""

from __future__ import annotations

import collections
import shutil
from pathlib import Path

import pytest

from trainlint import engine
from trainlint.document.reading import parse_document
from trainlint.fixes.apply import compute_fixes
from trainlint.context.settings import Settings
from shared_corpus import CORPUS, needs_corpus

pytestmark = needs_corpus

SETTINGS = Settings(use_project_config=False)
# The codes these rules own.
OWN = tuple(f"TL{n}" for n in (*range(220, 240), *range(310, 340), *range(420, 440), *range(520, 560), *range(620, 660)))


def lint(relative: str):
    return engine.check_path(CORPUS / relative, SETTINGS)


def found(result, code: str) -> list[str]:
    return sorted(f"{d.span.start.line + 1}:{d.span.start.column + 1}" for d in result.diagnostics
                  if d.code == code and d.path == result.path)


EXPECTED = [
    # DeepSpeed#4953: ZeRO-3 Accelerate config edited to one process -> nothing is sharded.
    ("issues/deepspeedai__DeepSpeed__issues__4953__deepspeed_zero3.yaml", "TL426", ["16:16"]),
    # LlamaFactory#201: deepspeed_config GAS 4 / clipping 0.5 vs the HF command line -> HF mismatch error.
    ("issues/hiyouga__LlamaFactory__issues__201__fsdp.yml", "TL224", ["3:3", "4:3"]),
    # Lightning 1.x Trainer arguments removed in 2.0.
    ("lightning/catalys1__mae-pytorch__config__multigpu.yaml", "TL620", ["2:3"]),
    ("lightning/kouyk__pytorch-lightning-slurm__config__fit.yaml", "TL620", ["9:3"]),
    # TRL >= 0.20 / transformers 5 removed fields in alignment-handbook and LLaMA-Factory recipes.
    ("hf/huggingface__alignment-handbook__recipes__zephyr-7b-beta__sft__config_full.yaml", "TL524",
     ["4:1", "42:1", "46:1", "57:1"]),
    ("hf/huggingface__alignment-handbook__recipes__zephyr-7b-beta__dpo__config_full.yaml", "TL524", ["3:1", "42:1", "53:1"]),
    # qwen3_full_sft.yaml: overwrite_output_dir is declared by LLaMA-Factory's own TrainingArguments (0.9.4+) and
    # warmup_ratio exists on every transformers LLaMA-Factory admits (<=5.8.0; removed in 5.15): no TL524 there.
    # TRL's ALST example: a DeepSpeed JSON key inside accelerate's deepspeed_config is dropped.
    ("accelerate/huggingface__trl__examples__accelerate_configs__alst_ulysses_4gpu.yaml", "TL622", ["20:3"]),
    # Axolotl's 70B QLoRA+FSDP example still writes fsdp_-prefixed fsdp_config keys (deprecated; info).
    ("axolotl/axolotl-ai-cloud__axolotl__examples__llama-3__qlora-fsdp-70b.yaml", "TL637", ["61:3"]),
]
# Findings of these rules that the corpus is expected to have (above); everything else stays quiet.
EXPECTED_ELSEWHERE = {(Path(r).name, c) for r, c, _ in EXPECTED}


@pytest.mark.parametrize("relative,code,positions", EXPECTED, ids=[f"{c}:{Path(r).name[:50]}" for r, c, _ in EXPECTED])
def test_known_problems_are_found(relative, code, positions):
    result = lint(relative)
    assert found(result, code) == sorted(positions), [d.message for d in result.diagnostics if d.code == code]


def test_lightning_gpus_fix_is_accelerator_plus_devices():
    path = CORPUS / "lightning/catalys1__mae-pytorch__config__multigpu.yaml"
    outcome = compute_fixes([str(path)], lambda p: engine.check_path(p, SETTINGS), unsafe=False)
    assert outcome.fixed[str(path)] == "trainer:\n  devices: 8\n  accelerator: gpu\n  strategy: ddp"


def test_removed_lightning_argument_messages_name_the_version():
    result = lint("lightning/kouyk__pytorch-lightning-slurm__config__fit.yaml")
    (diag,) = [d for d in result.diagnostics if d.code == "TL620"]
    assert "Lightning" in diag.message and "2.0" in diag.message and "Tuner" in diag.detail


def test_script_dataclass_keys_are_not_unknown():
    """open-instruct, LLaMA-Factory and alignment-handbook add their own dataclasses: no typo findings,
    and open-instruct's own max_seq_length/warmup_ratio are not "removed"."""
    for path in sorted((CORPUS / "hf").iterdir()):
        result = engine.check_path(path, SETTINGS)
        assert found(result, "TL523") == [], path.name
        assert found(result, "TL520") == [] and found(result, "TL521") == [], path.name
        if path.name.startswith("allenai__open-instruct"):
            assert found(result, "TL524") == [], path.name


def test_quiet_where_nothing_is_wrong():
    quiet = ["axolotl", "torchtune", "other", "deepspeed"]
    for folder in quiet:
        for path in sorted((CORPUS / folder).iterdir()):
            result = engine.check_path(path, SETTINGS)
            own = [f"{d.code} {d.message}" for d in result.diagnostics
                   if d.code.startswith(OWN) and (path.name, d.code) not in EXPECTED_ELSEWHERE]
            assert own == [], path.name


def test_corpus_has_no_internal_errors():
    for path in sorted(CORPUS.glob("*/*")):
        result = engine.check_path(path, SETTINGS)
        assert not result.internal_error, (path.name, [d.message for d in result.diagnostics if d.code == "TL000"])


def test_fixing_the_corpus_adds_no_findings(tmp_path):
    copy = tmp_path / "corpus"
    shutil.copytree(CORPUS, copy)
    files = [str(p) for p in sorted(copy.glob("*/*")) if p.suffix in (".yaml", ".yml", ".json", ".conf")]
    before = {p: collections.Counter(d.code for d in engine.check_path(p, SETTINGS).diagnostics) for p in files}
    outcome = compute_fixes(files, lambda p: engine.check_path(p, SETTINGS), unsafe=True)
    assert outcome.problems == []
    for path, text in outcome.fixed.items():
        assert parse_document(text, path).syntax_error is None, path
        Path(path).write_text(text)
    for path in files:
        after = collections.Counter(d.code for d in engine.check_path(path, SETTINGS).diagnostics)
        new = {code: n for code, n in (after - before[path]).items() if code.startswith(OWN)}
        assert new == {}, (Path(path).name, new)
