"""Diagnostics over a real server: positions in the negotiated encoding, push vs pull, rule docs links,
linked DeepSpeed files, and re-linting after changes."""

from __future__ import annotations

import asyncio

import pytest

from lsprotocol import types as t

from conftest import DS_DUP, TRAIN_YAML, change_doc, diagnostics, open_doc, pulls


def _codes(items):
    return sorted(str(d.code) for d in items)


async def test_push_or_pull_never_both(client, project):
    uri = project.uri("train.yaml")
    open_doc(client, uri, TRAIN_YAML)
    items = await diagnostics(client, uri)
    assert {"TL002", "TL003", "TL004"} <= set(_codes(items))
    if pulls(client):
        await asyncio.sleep(0.3)
        assert client.diagnostics == {}, "pull clients get no publishDiagnostics"
    for d in items:
        assert d.source == "trainlint"
        assert d.code_description is not None and d.code in d.code_description.href
        assert d.severity in (t.DiagnosticSeverity.Error, t.DiagnosticSeverity.Warning, t.DiagnosticSeverity.Information)


async def test_columns_follow_the_position_encoding(client, project):
    uri = project.uri("train.yaml")
    open_doc(client, uri, TRAIN_YAML)
    items = await diagnostics(client, uri)
    (dup,) = [d for d in items if d.code == "TL002"]
    # `optim_args: {note: "é🚀", beta: 1, beta: 2}`: the second `beta` starts at code point 34.
    line = TRAIN_YAML.splitlines()[8]
    assert line.index("beta: 2") == 34
    want = {"utf-16": 35, "utf-8": 38, "utf-32": 34}[str(client.encoding)]
    assert (dup.range.start.line, dup.range.start.character) == (8, want)
    assert dup.range.end.character == want + 4
    (boolean,) = [d for d in items if d.code == "TL004"]
    assert (boolean.range.start.line, boolean.range.start.character, boolean.range.end.character) == (7, 15, 17)


async def test_json_columns(client, project):
    uri = project.uri("ds_dup.json")
    open_doc(client, uri, DS_DUP, language="json")
    (dup,) = [d for d in await diagnostics(client, uri) if d.code == "TL002"]
    start = DS_DUP.index('"gradient_clipping": 1.0, "train') - 0
    cp = DS_DUP.rindex('"gradient_clipping"')
    assert start == cp
    want = {"utf-16": cp + 1, "utf-8": cp + 4, "utf-32": cp}[str(client.encoding)]
    assert dup.range.start.character == want


async def test_linked_deepspeed_findings_go_to_the_open_json(client, project):
    yaml_uri, json_uri = project.uri("train.yaml"), project.uri("ds_zero2.json")
    open_doc(client, yaml_uri, TRAIN_YAML)
    items = await diagnostics(client, yaml_uri)
    assert "TL006" not in _codes(items), "findings in the linked JSON are not shown on the YAML"
    json_text = (project.root / "ds_zero2.json").read_text()
    open_doc(client, json_uri, json_text, language="json")
    json_items = await diagnostics(client, json_uri, predicate=lambda xs: "TL006" in _codes(xs))
    assert _codes(json_items).count("TL006") == 2
    trailing = [d for d in json_items if "trailing comma" in d.message]
    assert trailing and trailing[0].range.start.line == 8


async def test_editing_the_linked_json_relints_the_config(client, project):
    yaml_uri, json_uri = project.uri("train.yaml"), project.uri("ds_zero2.json")
    json_text = (project.root / "ds_zero2.json").read_text()
    open_doc(client, yaml_uri, TRAIN_YAML)
    open_doc(client, json_uri, json_text, language="json")
    await diagnostics(client, json_uri, predicate=lambda xs: "TL006" in _codes(xs))
    # Fix the JSON in the editor only (not on disk): the config's findings about it go away.
    clean = json_text.replace("  // ZeRO-2 for the HF Trainer\n", "").replace('"auto",\n  },', '"auto"\n  },')
    refreshes = client.diagnostic_refresh_count
    change_doc(client, json_uri, clean, version=2)
    json_items = await diagnostics(client, json_uri, predicate=lambda xs: "TL006" not in _codes(xs))
    assert "TL006" not in _codes(json_items)
    if pulls(client) and client.capabilities.workspace.diagnostics and \
            client.capabilities.workspace.diagnostics.refresh_support:
        for _ in range(100):
            if client.diagnostic_refresh_count > refreshes:
                break
            await asyncio.sleep(0.05)
        assert client.diagnostic_refresh_count > refreshes
    # Break the link target in the buffer: the YAML (linting the buffer, not the disk) still works.
    change_doc(client, json_uri, '{"zero_optimization": {"stage": 3}, "bad": }', version=3)
    json_items = await diagnostics(client, json_uri, predicate=lambda xs: "TL001" in _codes(xs))
    assert "TL001" in _codes(json_items)


async def test_change_relints(client, project):
    uri = project.uri("train.yaml")
    open_doc(client, uri, TRAIN_YAML)
    await diagnostics(client, uri)
    fixed = TRAIN_YAML.replace("save_strategy: no", 'save_strategy: "no"')
    change_doc(client, uri, fixed, version=2)
    items = await diagnostics(client, uri, predicate=lambda xs: "TL004" not in _codes(xs))
    assert "TL004" not in _codes(items) and "TL003" in _codes(items)


async def test_close_clears_pushed_diagnostics(client, project):
    uri = project.uri("train.yaml")
    open_doc(client, uri, TRAIN_YAML)
    await diagnostics(client, uri)
    client.text_document_did_close(t.DidCloseTextDocumentParams(text_document=t.TextDocumentIdentifier(uri=uri)))
    if not pulls(client):
        for _ in range(100):
            if client.diagnostics.get(uri) is not None and len(client.diagnostics[uri]) == 0:
                break
            await asyncio.sleep(0.05)
        assert list(client.diagnostics.get(uri)) == []


async def test_unchanged_pull_report(client, project):
    if not pulls(client):
        return
    uri = project.uri("train.yaml")
    open_doc(client, uri, TRAIN_YAML)
    first = await client.text_document_diagnostic_async(
        t.DocumentDiagnosticParams(text_document=t.TextDocumentIdentifier(uri=uri)))
    again = await client.text_document_diagnostic_async(t.DocumentDiagnosticParams(
        text_document=t.TextDocumentIdentifier(uri=uri), previous_result_id=first.result_id))
    assert isinstance(again, t.UnchangedDocumentDiagnosticReport) or again.kind == "unchanged"


async def test_unicode_line_separator_is_not_a_line_break(client, project):
    """LSP breaks lines at \\n, \\r\\n and \\r only; U+2028 inside a string must not shift positions,
    before or after an edit."""
    uri = project.uri("sep.yaml")
    text = 'model_name_or_path: meta-llama/Llama-3.1-8B\nrun_name: "a\u2028b"\nsave_strategy: no\n'
    open_doc(client, uri, text)
    (d,) = [x for x in await diagnostics(client, uri) if x.code == "TL004"]
    assert (d.range.start.line, d.range.start.character) == (2, 15)
    edited = text.replace("run_name", "run_name_x")
    change_doc(client, uri, edited, version=2)
    items = await diagnostics(client, uri, predicate=lambda xs: any(x.code == "TL004" and x.range.start.line == 2 for x in xs))
    (d,) = [x for x in items if x.code == "TL004"]
    assert (d.range.start.line, d.range.start.character) == (2, 15)


WORKFLOW = "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps: [{run: 'echo hi'}]\n"
COMPOSE_BROKEN = "services:\n  web:\n    image: [x\n"


@pytest.mark.parametrize("name, text, language", [
    ("ci.yml", WORKFLOW, "yaml"), ("docker-compose.yml", COMPOSE_BROKEN, "yaml"),
    ("tsconfig.json", '{"compilerOptions": {"strict": true, "strict": false}}', "json"),
    ("package.json", '{"name": "x", "version": "1.0.0",}', "json"),
])
async def test_other_yaml_and_json_get_no_diagnostics_and_no_lens(client, project, name, text, language):
    uri = project.write(name, text)
    open_doc(client, uri, text, language=language)
    # the real config next to it still gets its findings (so the server did lint)
    config = project.uri("train.yaml")
    open_doc(client, config, TRAIN_YAML)
    assert "TL004" in _codes(await diagnostics(client, config))
    items = await diagnostics(client, uri, timeout=1.0)
    assert items == []
    lenses = await client.text_document_code_lens_async(t.CodeLensParams(text_document=t.TextDocumentIdentifier(uri=uri)))
    assert not lenses


async def test_a_broken_training_config_still_gets_its_syntax_error(client, project):
    text = "model_name_or_path: gpt2\nper_device_train_batch_size: [2\n"
    uri = project.write("broken_train.yaml", text)
    open_doc(client, uri, text)
    items = await diagnostics(client, uri, predicate=lambda xs: "TL001" in _codes(xs))
    assert "TL001" in _codes(items)


async def test_open_json_gets_the_findings_of_configs_that_are_not_open(client, project):
    """Only the DeepSpeed JSON is open: the config linking it is found on disk (the link index) and its findings
    about the JSON are shown, naming it; editing the JSON buffer re-checks it against the config."""
    json_uri = project.uri("ds_zero2.json")
    text = (project.root / "ds_zero2.json").read_text().replace('"train_micro_batch_size_per_gpu": "auto"',
                                                                '"train_micro_batch_size_per_gpu": 4')
    open_doc(client, json_uri, text, language="json")
    def batch(xs):
        return [d for d in xs if d.code == "TL600" and d.range.start.line == 2]

    items = await diagnostics(client, json_uri, predicate=lambda xs: bool(batch(xs)))
    (mismatch,) = batch(items)
    assert "train.yaml" in mismatch.message and "per_device_train_batch_size is 8" in mismatch.message
    change_doc(client, json_uri, text.replace('"train_micro_batch_size_per_gpu": 4', '"train_micro_batch_size_per_gpu": 8'),
               version=2)
    items = await diagnostics(client, json_uri, predicate=lambda xs: not batch(xs))
    assert not batch(items)
