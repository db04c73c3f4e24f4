"""The memory fix planner and values the config's keys do not hold: a `# trainlint:` directive of the file is changed
where it is written (the fix edits the directive); a value a flag or [tool.trainlint] sets has no edit, so the finding
says which value, where it is set and what value fits; a value the config's keys hold gets the usual edit."""

from __future__ import annotations

import re
from pathlib import Path

from trainlint import engine
from trainlint.context.settings import Overrides, Settings, parse_directives
from trainlint.document.reading import overlay, parse_document, read_document
from trainlint.fixes.edits import apply_edits
from trainlint.plan import Origin

# Llama-3.2-3B full fine-tuning with AdamW at 4,096 tokens: micro-batch 16 needs ~94 GiB on an 80 GB card, a smaller
# micro-batch (accumulation up by as much) fits.
BODY = """model_name_or_path: meta-llama/Llama-3.2-3B
output_dir: out
gradient_accumulation_steps: 2
max_length: 4096
bf16: true
gradient_checkpointing: true
"""


def _settings(values: dict, project: bool = False) -> Settings:
    return Settings(cli=Overrides(dict(values), Origin("cli")), use_project_config=project)


def _oom(result):
    (oom,) = [d for d in result.diagnostics if d.code == "TL100"]
    return oom


def _applied(path: Path, fix) -> dict[str, str]:
    by_path: dict[str, list] = {}
    for edit in fix.edits:
        by_path.setdefault(edit.path, []).append(edit)
    out = {}
    for edit_path, edits in by_path.items():
        text, skipped = apply_edits(read_document(edit_path).text, edits)
        assert not skipped, fix.title
        out[edit_path] = text
    return out


def _claimed(fix) -> float:
    return float(re.search(r"-> ([0-9.]+) GiB", fix.title).group(1))


def test_a_directive_of_the_file_is_changed_where_it_is_written(tmp_path):
    path = tmp_path / "train.yaml"
    path.write_text("# trainlint: gpu=A100-80GB micro-batch=16\n" + BODY)
    chosen = _settings({})
    oom = _oom(engine.check_path(str(path), chosen))
    assert oom.fixes, oom.detail
    fix = oom.fixes[0]
    assert "micro-batch 16 ->" in fix.title
    new_micro = int(re.search(r"micro-batch 16 -> (\d+)", fix.title).group(1))
    # one edit is the directive's value itself, on its line: only "16" is replaced
    (directive_edit,) = [e for e in fix.edits if e.span.start.line == 0]
    assert directive_edit.new_text == str(new_micro)
    assert (directive_edit.span.start.column, directive_edit.span.end.column) == (39, 41)
    assert f"`# trainlint: gpu=A100-80GB micro-batch=16` directive at line 1; {new_micro} fits: the fix changes it " \
           "there" in oom.detail
    assert len(oom.message) <= 140 and "directive" not in oom.message
    texts = _applied(path, fix)
    fixed = texts[str(path)]
    assert fixed.startswith(f"# trainlint: gpu=A100-80GB micro-batch={new_micro}\n")
    assert f"gradient_accumulation_steps: {2 * 16 // new_micro}" in fixed  # the effective batch is kept
    with overlay(texts):
        after = engine.check_path(str(path), chosen)
    assert after.estimate is not None and after.estimate.fits
    assert after.plan.micro_batch.value == new_micro and after.plan.micro_batch.origin.kind == "directive"
    assert abs(after.estimate.total / 2**30 - _claimed(fix)) <= 0.051  # the title's figure is the re-estimate
    assert not {"TL100", "TL101"} & {d.code for d in after.diagnostics}


def test_a_value_set_by_a_flag_is_named_with_the_value_that_fits_and_no_edit(tmp_path):
    path = tmp_path / "train.yaml"
    path.write_text(BODY)
    chosen = _settings({"gpu": "A100-80GB", "micro_batch": 16})
    oom = _oom(engine.check_path(str(path), chosen))
    found = re.search(r"micro-batch 16 is set by the `--micro-batch` flag; (\d+) fits: change it there", oom.detail)
    assert found, oom.detail
    assert "directive" not in oom.detail.split("set by")[1].split(";")[0]
    fitting = int(found.group(1))
    assert 1 <= fitting < 16 and 16 % fitting == 0
    # no fix writes the micro-batch into the config: the flag would still win
    for fix in oom.fixes:
        assert "micro-batch" not in fix.title, fix.title
        for text in _applied(path, fix).values():
            assert "per_device_train_batch_size" not in text
    # what the finding says fits does: the same flags with the named micro-batch (and the accumulation it says)
    accumulation = int(re.search(rf"micro-batch 16 -> {fitting} with accumulation 2 -> (\d+)", oom.detail).group(1))
    after = engine.check_path(str(path), _settings({"gpu": "A100-80GB", "micro_batch": fitting,
                                                    "grad_accum": accumulation}))
    assert after.estimate is not None and after.estimate.fits
    assert "TL100" not in {d.code for d in after.diagnostics}


def test_a_value_set_in_tool_trainlint_is_named_there(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the settings file is named relative to the working directory, as a user runs it
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.trainlint]\ngpu = "A100-80GB"\nmicro-batch = 16\n')
    path = tmp_path / "train.yaml"
    path.write_text(BODY)
    oom = _oom(engine.check_path(str(path), Settings()))
    assert re.search(r"micro-batch 16 is set by `micro-batch` in \[tool\.trainlint\] in pyproject\.toml; \d+ fits: "
                     "change it there", oom.detail), oom.detail
    assert not any("micro-batch" in fix.title for fix in oom.fixes)


def test_a_value_in_the_config_text_gets_the_usual_edit(tmp_path):
    path = tmp_path / "train.yaml"
    path.write_text(BODY.replace("output_dir: out\n", "output_dir: out\nper_device_train_batch_size: 16\n"))
    chosen = _settings({"gpu": "A100-80GB"})
    oom = _oom(engine.check_path(str(path), chosen))
    fix = oom.fixes[0]
    new_micro = int(re.search(r"micro-batch 16 -> (\d+)", fix.title).group(1))
    fixed = _applied(path, fix)[str(path)]
    assert f"per_device_train_batch_size: {new_micro}\n" in fixed
    assert "is set by" not in oom.detail and "trainlint:" not in fixed
    with overlay({str(path): fixed}):
        assert engine.check_path(str(path), chosen).estimate.fits


def test_directive_values_carry_the_span_of_their_text():
    text = "x: 1  # trainlint: gpu=H100-80GB micro-batch='8' eval-batch=4\n"
    doc = parse_document(text, "d.yaml")
    directive = parse_directives(doc.comments(), doc.path, doc.pos_at)
    spans = {name: directive.overrides.origins[name].span for name in ("gpu", "micro_batch", "eval_batch")}
    assert {name: text[s.start.offset:s.end.offset] for name, s in spans.items()} == \
        {"gpu": "H100-80GB", "micro_batch": "8", "eval_batch": "4"}
    # without positions (or for a plan read without them) there is no span, and nothing to edit
    bare = parse_directives(doc.comments(), doc.path)
    assert all(origin.span is None for origin in bare.overrides.origins.values())
