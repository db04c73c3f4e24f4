"""Code actions: quick fixes equal to `trainlint check --fix`, fix-all, suppression comments."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as t

from conftest import REPO, TRAIN_YAML, apply_edits, diagnostics, open_doc
from trainlint import engine
from trainlint.fixes.apply import compute_fixes
from trainlint.context.settings import Settings


def _cli_fix(path: str) -> str:
    outcome = compute_fixes([path], lambda p: engine.check_path(p, Settings()), unsafe=False)
    return outcome.fixed.get(path, Path(path).read_text(encoding="utf-8"))


async def _actions(client, uri, rng, diags, only=None):
    return await client.text_document_code_action_async(t.CodeActionParams(
        text_document=t.TextDocumentIdentifier(uri=uri), range=rng,
        context=t.CodeActionContext(diagnostics=diags, only=only)))


async def test_quickfix_equals_cli_fix(client, project):
    text = (REPO / "tests/fixtures/TL004/bad.yaml").read_text(encoding="utf-8")
    uri = project.write("bad.yaml", text)
    open_doc(client, uri, text)
    items = await diagnostics(client, uri)
    (d,) = [x for x in items if x.code == "TL004"]
    actions = await _actions(client, uri, d.range, [d])
    quick = [a for a in actions if a.kind == t.CodeActionKind.QuickFix and "disable" not in a.title]
    assert quick and quick[0].is_preferred
    assert quick[0].diagnostics[0].code == "TL004"
    fixed = apply_edits(text, quick[0].edit.changes[uri], client.encoding)
    assert fixed == _cli_fix(project.path("bad.yaml"))
    assert 'save_strategy: "no"' in fixed


async def test_quickfix_after_non_ascii_and_without_client_diagnostics(client, project):
    uri = project.uri("train.yaml")
    open_doc(client, uri, TRAIN_YAML)
    items = await diagnostics(client, uri)
    (dup,) = [x for x in items if x.code == "TL002"]
    # Neovim 0.7 sends no Diagnostic.data; the server works from the current text and the range alone.
    actions = await _actions(client, uri, dup.range, [])
    fix = next(a for a in actions if "beta" in a.title and "disable" not in a.title)
    fixed = apply_edits(TRAIN_YAML, fix.edit.changes[uri], client.encoding)
    assert 'optim_args: {note: "\u00e9\U0001F680", beta: 2}' in fixed


async def test_fix_all(client, project):
    uri = project.uri("train.yaml")
    open_doc(client, uri, TRAIN_YAML)
    await diagnostics(client, uri)
    whole = t.Range(start=t.Position(line=0, character=0), end=t.Position(line=0, character=0))
    actions = await _actions(client, uri, whole, [], only=["source.fixAll.trainlint"])
    (fix_all,) = actions
    assert fix_all.kind == "source.fixAll.trainlint"
    fixed = apply_edits(TRAIN_YAML, fix_all.edit.changes[uri], client.encoding)
    assert fixed == _cli_fix(project.path("train.yaml"))
    assert "learning_rate: 1.0e-5" in fixed and 'save_strategy: "no"' in fixed
    # Also offered for the generic source.fixAll kind.
    actions = await _actions(client, uri, whole, [], only=[t.CodeActionKind.SourceFixAll])
    assert [a.kind for a in actions] == ["source.fixAll.trainlint"]


async def test_disable_on_line_and_file(client, project):
    uri = project.uri("train.yaml")
    open_doc(client, uri, TRAIN_YAML)
    items = await diagnostics(client, uri)
    (d,) = [x for x in items if x.code == "TL004"]
    actions = await _actions(client, uri, d.range, [d], only=[t.CodeActionKind.QuickFix])
    by_title = {a.title: a for a in actions}
    line_action = by_title["trainlint: disable TL004 on this line"]
    fixed = apply_edits(TRAIN_YAML, line_action.edit.changes[uri], client.encoding)
    assert "save_strategy: no  # trainlint: disable=TL004\n" in fixed
    file_action = by_title["trainlint: disable TL004 in this file"]
    fixed_file = apply_edits(TRAIN_YAML, file_action.edit.changes[uri], client.encoding)
    assert fixed_file.startswith("# trainlint: disable-file=TL004\n")
    # The suppressed text really silences the finding (and nothing else appears).
    for variant in (fixed, fixed_file):
        codes = [x.code for x in engine.check_text(variant, project.path("train.yaml")).diagnostics]
        assert "TL004" not in codes and "TL009" not in codes


async def test_json_has_no_disable_actions(client, project):
    uri = project.uri("ds_dup.json")
    text = (project.root / "ds_dup.json").read_text(encoding="utf-8")
    open_doc(client, uri, text, language="json")
    (d,) = [x for x in await diagnostics(client, uri) if x.code == "TL002"]
    actions = await _actions(client, uri, d.range, [d])
    assert actions and not any("disable" in a.title for a in actions)
    assert any("unsafe" in a.title for a in actions)


async def test_fix_on_linked_json_from_its_own_buffer(client, project):
    yaml_uri, json_uri = project.uri("train.yaml"), project.uri("ds_zero2.json")
    json_text = (project.root / "ds_zero2.json").read_text(encoding="utf-8")
    open_doc(client, yaml_uri, TRAIN_YAML)
    open_doc(client, json_uri, json_text, language="json")
    items = await diagnostics(client, json_uri, predicate=lambda xs: any(x.code == "TL006" for x in xs))
    trailing = next(x for x in items if "trailing comma" in x.message)
    actions = await _actions(client, json_uri, trailing.range, [trailing])
    fix = next(a for a in actions if a.is_preferred)
    fixed = apply_edits(json_text, fix.edit.changes[json_uri], client.encoding)
    assert '"reduce_bucket_size": "auto"\n  },' in fixed


DIRECTIVE_OOM = """\
# trainlint: gpu=A100-80GB micro-batch=16
model_name_or_path: meta-llama/Llama-3.2-3B
output_dir: out
gradient_accumulation_steps: 2
max_length: 4096
bf16: true
gradient_checkpointing: true
"""


async def test_out_of_memory_quickfix_changes_the_directive_as_the_cli_does(client, project):
    """A micro-batch a `# trainlint:` directive sets is changed in the directive, by the server's quick fix as by
    `trainlint check --fix`; the hover on the finding says where the value is set."""
    uri = project.write("directive.yaml", DIRECTIVE_OOM)
    open_doc(client, uri, DIRECTIVE_OOM)
    items = await diagnostics(client, uri)
    (d,) = [x for x in items if x.code == "TL100"]
    actions = await _actions(client, uri, d.range, [d], only=[t.CodeActionKind.QuickFix])
    quick = [a for a in actions if "disable" not in a.title]
    assert quick and "micro-batch 16 ->" in quick[0].title
    fixed = apply_edits(DIRECTIVE_OOM, quick[0].edit.changes[uri], client.encoding)
    assert fixed == _cli_fix(project.path("directive.yaml"))
    assert fixed.splitlines()[0] != DIRECTIVE_OOM.splitlines()[0] and "micro-batch=16" not in fixed
    hover = await client.text_document_hover_async(t.HoverParams(
        text_document=t.TextDocumentIdentifier(uri=uri), position=d.range.start))
    assert hover is not None and "directive at line 1" in hover.contents.value
