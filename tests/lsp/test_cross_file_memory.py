"""Cross-file re-lint and memory features: an HF YAML whose memory verdict depends on the ZeRO stage in
its linked DeepSpeed JSON. Editing the JSON buffer (unsaved) changes the YAML's diagnostics; hover,
inlay hints and the code lens show the estimate. The memory parts are skipped when the estimator is
not installed."""

from __future__ import annotations

import asyncio

import pytest
import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import LanguageClient

from conftest import CLIENTS, SERVER, change_doc, diagnostics, open_doc, pulls, start

CONFIG = """\
model_name_or_path: meta-llama/Llama-3.1-8B
output_dir: out
per_device_train_batch_size: 1
max_length: 2048
bf16: true
gradient_checkpointing: true
deepspeed: ds.json
"""
STAGE = '{{"zero_optimization": {{"stage": {}}}}}\n'
OPTIONS = {"gpu": "A100-80GB", "numGpus": 8}


def _estimator() -> bool:
    try:
        from trainlint.memory import estimate  # noqa: F401
    except ImportError:
        return False
    return True


pytestmark = pytest.mark.skipif(not _estimator(), reason="trainlint.memory.estimate (the memory model) is not available")


@pytest_lsp.fixture(params=CLIENTS, config=SERVER)
async def mem_client(lsp_client: LanguageClient, request):
    await start(lsp_client, request.param, OPTIONS)
    yield lsp_client
    await lsp_client.shutdown_session()


def _codes(items):
    return {str(d.code) for d in items}


async def test_editing_linked_json_changes_the_config_verdict(mem_client, project):
    client = mem_client
    yaml_uri = project.write("mem.yaml", CONFIG)
    json_uri = project.write("ds.json", STAGE.format(0))
    open_doc(client, yaml_uri, CONFIG)
    assert "TL100" in _codes(await diagnostics(client, yaml_uri))
    open_doc(client, json_uri, STAGE.format(0), language="json")
    await diagnostics(client, json_uri)
    refreshes = client.diagnostic_refresh_count
    client.diagnostics.pop(yaml_uri, None)
    change_doc(client, json_uri, STAGE.format(3), version=2)  # unsaved: the disk still says stage 0
    items = await diagnostics(client, yaml_uri, predicate=lambda xs: "TL100" not in _codes(xs))
    assert "TL100" not in _codes(items)
    ws = client.capabilities.workspace
    if ws.inlay_hint and ws.inlay_hint.refresh_support:
        for _ in range(100):
            if t.WORKSPACE_INLAY_HINT_REFRESH in client.view_refreshes:
                break
            await asyncio.sleep(0.05)
        assert t.WORKSPACE_INLAY_HINT_REFRESH in client.view_refreshes, "memory hints depend on the linked file"
    if pulls(client) and client.capabilities.workspace.diagnostics and \
            client.capabilities.workspace.diagnostics.refresh_support:
        for _ in range(100):
            if client.diagnostic_refresh_count > refreshes:
                break
            await asyncio.sleep(0.05)
        assert client.diagnostic_refresh_count > refreshes, "pull clients are asked to re-pull the config"


async def test_hover_inlay_and_lens_show_memory(mem_client, project):
    client = mem_client
    yaml_uri = project.write("mem.yaml", CONFIG)
    project.write("ds.json", STAGE.format(2))
    open_doc(client, yaml_uri, CONFIG)
    await diagnostics(client, yaml_uri)
    doc = t.TextDocumentIdentifier(uri=yaml_uri)
    top = await client.text_document_hover_async(t.HoverParams(text_document=doc, position=t.Position(line=0, character=0)))
    assert top is not None
    assert "A100-80GB" in top.contents.value and "\u2588" in top.contents.value and "Assumptions" in top.contents.value
    line = CONFIG.splitlines().index("gradient_checkpointing: true")
    key = await client.text_document_hover_async(t.HoverParams(text_document=doc, position=t.Position(line=line, character=4)))
    assert key is not None and "checkpointing off: +" in key.contents.value
    hints = list(await client.text_document_inlay_hint_async(t.InlayHintParams(text_document=doc, range=t.Range(
        start=t.Position(line=0, character=0), end=t.Position(line=10, character=0)))))
    by_line = {h.position.line: h for h in hints}
    assert line in by_line and by_line[line].label.startswith("checkpointing off: +")
    assert by_line[line].position.character == len("gradient_checkpointing: true")
    lenses = await client.text_document_code_lens_async(t.CodeLensParams(text_document=doc))
    assert any("GiB per GPU of" in lens.command.title and "A100-80GB" in lens.command.title for lens in lenses)
    shown = await client.workspace_execute_command_async(t.ExecuteCommandParams(
        command="trainlint.showEstimate", arguments=[yaml_uri]))
    assert "GiB" in shown


async def test_memory_hints_in_the_linked_json(mem_client, project):
    client = mem_client
    yaml_uri = project.write("mem.yaml", CONFIG)
    json_text = '{\n  "zero_optimization": {\n    "stage": 2\n  }\n}\n'
    json_uri = project.write("ds.json", json_text)
    open_doc(client, yaml_uri, CONFIG)
    await diagnostics(client, yaml_uri)
    open_doc(client, json_uri, json_text, language="json")
    await diagnostics(client, json_uri)
    doc = t.TextDocumentIdentifier(uri=json_uri)
    hints = list(await client.text_document_inlay_hint_async(t.InlayHintParams(text_document=doc, range=t.Range(
        start=t.Position(line=0, character=0), end=t.Position(line=5, character=0)))))
    (hint,) = [h for h in hints if h.position.line == 2]
    assert hint.label.startswith("ZeRO-3: \u2212") and hint.label.endswith("(mem.yaml)")
    assert hint.position.character == len('    "stage": 2')
    hover = await client.text_document_hover_async(t.HoverParams(text_document=doc, position=t.Position(line=2, character=6)))
    assert "Memory per GPU for `mem.yaml`" in hover.contents.value and "ZeRO-3" in hover.contents.value
    assert "zero_optimization.stage" in hover.contents.value  # the schema's docs too
