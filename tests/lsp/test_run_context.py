"""The language server shows the run context (launch, parser, versions) and re-reads it when a launch script,
pin file or accelerate config changes (didSave / didChangeWatchedFiles)."""

from __future__ import annotations

import asyncio

from lsprotocol import types as t

from conftest import diagnostics, open_doc

CONFIG = "# trainlint: gpu=A100-80GB\nmodel_name_or_path: meta-llama/Llama-3.1-8B\nbf16: true\n" \
         "per_device_train_batch_size: 4\nmax_length: 2048\n"


async def _hover0(client, uri):
    hover = await client.text_document_hover_async(t.HoverParams(
        text_document=t.TextDocumentIdentifier(uri=uri), position=t.Position(line=0, character=0)))
    return hover.contents.value if hover is not None else ""


async def test_launch_script_change_is_picked_up(client, project):
    (project.root / ".git").mkdir()
    uri = project.write("sft.yaml", CONFIG)
    open_doc(client, uri, CONFIG)
    await diagnostics(client, uri)
    text = await _hover0(client, uri)
    assert "**Run context**" in text and "launch: none found" in text
    script = project.write("train.sh", "torchrun --nproc_per_node 8 train.py sft.yaml\n")
    client.workspace_did_change_watched_files(t.DidChangeWatchedFilesParams(
        changes=[t.FileEvent(uri=script, type=t.FileChangeType.Created)]))
    for _ in range(200):
        text = await _hover0(client, uri)
        if "torchrun, 8 processes" in text:
            break
        await asyncio.sleep(0.05)
    assert "torchrun, 8 processes" in text and "train.sh:1" in text
