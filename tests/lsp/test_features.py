"""Hover, completion, inlay hints and code lenses (memory parts tolerate a missing estimate)."""

from __future__ import annotations

from lsprotocol import types as t

from conftest import TRAIN_YAML, diagnostics, open_doc


def _doc(uri):
    return t.TextDocumentIdentifier(uri=uri)


def _estimate_available(project) -> bool:
    from trainlint import engine

    return engine.check_text(TRAIN_YAML, project.path("train.yaml")).estimate is not None


async def test_hover_on_a_key_shows_schema_docs(client, project):
    uri = project.uri("train.yaml")
    open_doc(client, uri, TRAIN_YAML)
    await diagnostics(client, uri)
    line = TRAIN_YAML.splitlines().index("save_strategy: no")
    hover = await client.text_document_hover_async(t.HoverParams(text_document=_doc(uri), position=t.Position(line=line, character=3)))
    assert hover is not None and hover.contents.kind == t.MarkupKind.Markdown
    text = hover.contents.value
    assert "save_strategy" in text and "Default" in text and '"epoch"' in text


async def test_hover_in_deepspeed_json(client, project):
    uri = project.uri("ds_zero2.json")
    text = (project.root / "ds_zero2.json").read_text(encoding="utf-8")
    open_doc(client, uri, text, language="json")
    line = next(i for i, s in enumerate(text.splitlines()) if '"stage"' in s)
    hover = await client.text_document_hover_async(t.HoverParams(text_document=_doc(uri), position=t.Position(line=line, character=6)))
    assert hover is not None and "zero_optimization.stage" in hover.contents.value
    assert "ZeRO" in hover.contents.value


async def test_hover_first_line_and_lens_without_crashing(client, project):
    uri = project.uri("train.yaml")
    open_doc(client, uri, TRAIN_YAML)
    await diagnostics(client, uri)
    hover = await client.text_document_hover_async(t.HoverParams(text_document=_doc(uri), position=t.Position(line=0, character=1)))
    lenses = await client.text_document_code_lens_async(t.CodeLensParams(text_document=_doc(uri)))
    titles = [lens.command.title for lens in lenses]
    assert any("finding(s) at warning or above" in title for title in titles)
    if _estimate_available(project):
        assert hover is not None and "GiB" in hover.contents.value
        assert any("GiB" in title for title in titles)
    else:
        assert hover is None or "GiB" not in hover.contents.value


async def test_inlay_hints(client, project):
    uri = project.uri("train.yaml")
    open_doc(client, uri, TRAIN_YAML)
    await diagnostics(client, uri)
    hints = await client.text_document_inlay_hint_async(t.InlayHintParams(
        text_document=_doc(uri), range=t.Range(start=t.Position(line=0, character=0), end=t.Position(line=20, character=0))))
    hints = list(hints)
    if _estimate_available(project):
        assert hints and all("GiB" in h.label for h in hints)


async def test_key_completion(client, project):
    uri = project.uri("train.yaml")
    text = TRAIN_YAML + "gradient_che"
    open_doc(client, uri, text)
    line = len(text.splitlines()) - 1
    result = await client.text_document_completion_async(t.CompletionParams(
        text_document=_doc(uri), position=t.Position(line=line, character=len("gradient_che"))))
    labels = [i.label for i in result.items]
    assert "gradient_checkpointing" in labels
    assert "save_strategy" not in labels and "bf16" not in labels, "keys already present are not offered"
    item = next(i for i in result.items if i.label == "gradient_checkpointing")
    assert item.kind == t.CompletionItemKind.Property and item.insert_text == "gradient_checkpointing: "


async def test_value_completion(client, project):
    uri = project.uri("train.yaml")
    text = TRAIN_YAML + "lr_scheduler_type: "
    open_doc(client, uri, text)
    line = len(text.splitlines()) - 1
    result = await client.text_document_completion_async(t.CompletionParams(
        text_document=_doc(uri), position=t.Position(line=line, character=len("lr_scheduler_type: "))))
    labels = [i.label for i in result.items]
    assert "cosine" in labels and "linear" in labels


async def test_nested_json_completion(client, project):
    uri = project.uri("ds_new.json")
    text = '{\n  "zero_optimization": {\n    "stage": 2,\n    "off'
    open_doc(client, uri, text, language="json")
    result = await client.text_document_completion_async(t.CompletionParams(
        text_document=_doc(uri), position=t.Position(line=3, character=8)))
    labels = [i.label for i in result.items]
    assert "offload_optimizer" in labels and "stage" not in labels


async def test_space_trigger_offers_values_only(client, project):
    uri = project.uri("train.yaml")
    text = TRAIN_YAML + "lr_scheduler_type: \n"
    open_doc(client, uri, text)
    line = len(text.splitlines()) - 1
    space = t.CompletionContext(trigger_kind=t.CompletionTriggerKind.TriggerCharacter, trigger_character=" ")
    result = await client.text_document_completion_async(t.CompletionParams(
        text_document=_doc(uri), position=t.Position(line=line, character=len("lr_scheduler_type: ")), context=space))
    assert "cosine" in [i.label for i in result.items]
    result = await client.text_document_completion_async(t.CompletionParams(
        text_document=_doc(uri), position=t.Position(line=line + 1, character=0), context=space))
    assert result.items == [] or list(result.items) == []
