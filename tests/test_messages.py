"""Finding messages are one-line headlines (what is wrong and what follows from it), as ruff's and yamllint's are;
the explanation, the evidence, the framework's own message and the figures go to `Diagnostic.detail`.

Measured over every finding of the rule fixtures, the tests/realworld slices and the shared corpus (when it is
there): each message is one line of at most 160 characters, the median at most 120 and the 90th percentile at most
200. TL102 (no memory verdict) is off by default and, even when selected, silent where no estimate is expected.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from shared_corpus import AVAILABLE, CORPUS, MISSING
from trainlint import cli, engine
from trainlint.context.settings import Settings

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "fixtures"
REALWORLD = TESTS / "realworld"
LONGEST = 160
MEDIAN = 120
P90 = 200


def _fixture_messages() -> list[tuple[str, str, str]]:
    """(where, code, message) of every finding of every fixture file, with its folder's args (as the fixture tests)."""
    out = []
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        args_file = folder / "args"
        extra = args_file.read_text().split() if args_file.exists() else []
        args = cli.build_parser().parse_args(["check", "x", *extra])
        settings = Settings(cli=cli._cli_overrides(args), selection=engine.selection_from(args.select, args.ignore),
                            use_project_config=False)
        for path in sorted(folder.iterdir()):
            if path.is_file() and path.suffix in (".yaml", ".yml", ".json", ".toml") and path.name != "args":
                result = engine.check_path(str(path), settings)
                out += [(f"{folder.name}/{path.name}", d.code, d.message) for d in result.diagnostics]
    return out


def _checked(root: Path, monkeypatch, capsys, *extra: str) -> list[tuple[str, str, str]]:
    """(where, code, message) of `trainlint check --output-format json .` run from inside `root`."""
    monkeypatch.chdir(root)
    capsys.readouterr()
    cli.main(["check", "--output-format", "json", *extra, "."])
    data = json.loads(capsys.readouterr().out)
    return [(f"{root.name}/{entry['path']}", d["code"], d["message"]) for entry in data["files"]
            for d in entry["diagnostics"]]


def _assert_headlines(found: list[tuple[str, str, str]]) -> None:
    assert found
    multi = [f for f in found if "\n" in f[2] or "\r" in f[2]]
    assert not multi, f"messages on more than one line: {multi[:5]}"
    long = sorted((f for f in found if len(f[2]) > LONGEST), key=lambda f: -len(f[2]))
    assert not long, f"{len(long)} messages over {LONGEST} characters, the longest: {long[:5]}"
    lengths = sorted(len(f[2]) for f in found)
    assert statistics.median(lengths) <= MEDIAN, statistics.median(lengths)
    assert lengths[int(0.9 * (len(lengths) - 1))] <= P90, lengths[int(0.9 * (len(lengths) - 1))]


def test_fixture_messages_are_one_line_headlines():
    _assert_headlines(_fixture_messages())


def test_realworld_messages_are_one_line_headlines(monkeypatch, capsys):
    found = []
    for root in sorted(p for p in REALWORLD.iterdir() if p.is_dir()):
        found += _checked(root, monkeypatch, capsys)
    _assert_headlines(found)


@pytest.mark.skipif(not AVAILABLE, reason=MISSING)
def test_corpus_messages_are_one_line_headlines(monkeypatch, capsys):
    # under a GPU target too: the fit verdicts (TL100, TL101, TL104) are made only with one
    found = _checked(CORPUS, monkeypatch, capsys) + _checked(CORPUS, monkeypatch, capsys, "--gpu", "A100-80GB")
    _assert_headlines(found)
    assert not any(code == "TL102" for _, code, _ in found)  # off by default


# ---- TL102: only asked for, and only where an estimate is expected ----------------------------------------

HF_NO_MODEL = "output_dir: out\nper_device_train_batch_size: 4\nlearning_rate: 1.0e-5\nbf16: true\n"
DS_JSON = '{\n  "train_micro_batch_size_per_gpu": 4,\n  "zero_optimization": {"stage": 2}\n}\n'
ACCELERATE = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_machines: 1\nnum_processes: 8\n"
LIGHTNING = ("trainer:\n  accelerator: gpu\n  devices: 8\n  precision: bf16-mixed\n  max_epochs: 3\n"
             "model:\n  learning_rate: 1.0e-5\n")


def _tl102(tmp_path: Path, files: dict[str, str], target: str, select: bool = True) -> list:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / ".git").mkdir(exist_ok=True)  # the folder is the project: its launch scripts are read
    selection = engine.selection_from(("TL102",), ()) if select else None
    result = engine.check_path(str(tmp_path / target), Settings(selection=selection))
    return [d for d in result.diagnostics if d.code == "TL102"]


def test_tl102_is_off_by_default_and_on_when_selected(tmp_path):
    assert _tl102(tmp_path, {"train.yaml": HF_NO_MODEL}, "train.yaml", select=False) == []
    (found,) = _tl102(tmp_path, {"train.yaml": HF_NO_MODEL}, "train.yaml")
    assert found.message == "no memory estimate: the config does not name a model"
    assert found.detail == "Pass --model or add `# trainlint: model=<name or folder>` to estimate memory."


@pytest.mark.parametrize("name,text", [("ds_config.json", DS_JSON), ("accelerate.yaml", ACCELERATE)])
def test_tl102_is_silent_on_files_that_never_name_a_model(tmp_path, name, text):
    assert _tl102(tmp_path, {name: text}, name) == []


def test_tl102_is_silent_where_the_launch_passes_the_model(tmp_path):
    launch = "python train.py fit --config fit.yaml --model.model_name_or_path meta-llama/Llama-3.2-1B\n"
    assert _tl102(tmp_path, {"fit.yaml": LIGHTNING, "train.sh": launch}, "fit.yaml") == []
    bare = tmp_path / "bare"
    bare.mkdir()
    assert [d.message for d in _tl102(bare, {"fit.yaml": LIGHTNING}, "fit.yaml")] == [
        "no memory estimate: the config does not name a model"]


def test_tl102_names_a_long_model_path_by_its_last_part(tmp_path):
    text = "model_name_or_path: /cluster/shared/someone/checkpoints/experiments/deepseek-7b-ft-full\n" + HF_NO_MODEL
    (found,) = _tl102(tmp_path, {"train.yaml": text}, "train.yaml")
    assert found.message == "no memory estimate: the model '.../deepseek-7b-ft-full' is not a model trainlint can size offline"
    assert "'/cluster/shared/someone/checkpoints/experiments/deepseek-7b-ft-full' is not in the catalog" in found.detail
