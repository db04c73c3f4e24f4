"""Helpers for driving the real `trainlint server` over stdio with pytest-lsp.

Every test runs against two captured client profiles: VS Code 1.65 (push diagnostics, UTF-16) and
Neovim 0.11 (pull diagnostics, UTF-8). `docs` writes a small project (an HF YAML linking a DeepSpeed
JSON) into a temporary folder with no pyproject.toml above it that could change the results.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

REPO = Path(__file__).resolve().parents[2]
CLIENTS = ["visual-studio-code", "neovim@v0.11"]
SERVER_ENV = {**os.environ, "TRAINLINT_LSP_DEBOUNCE_MS": "50", "PYTHONPATH": str(REPO)}
SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "trainlint.lsp"], server_env=SERVER_ENV)

TRAIN_YAML = """\
# Fine-tune \u2014 \U0001F680 test
model_name_or_path: meta-llama/Llama-3.1-8B
output_dir: out
per_device_train_batch_size: 8
learning_rate: 1e-5
bf16: true
deepspeed: ds_zero2.json
save_strategy: no
optim_args: {note: "\u00e9\U0001F680", beta: 1, beta: 2}
"""

DS_ZERO2 = """\
{
  // ZeRO-2 for the HF Trainer
  "train_micro_batch_size_per_gpu": "auto",
  "gradient_accumulation_steps": 8,
  "bf16": {"enabled": "auto"},
  "zero_optimization": {
    "stage": 2,
    "overlap_comm": true,
    "reduce_bucket_size": "auto",
  },
  "gradient_clipping": "auto"
}
"""

DS_DUP = '{"note": "\u00e9\U0001F680", "gradient_clipping": 1.0, "gradient_clipping": 1.0, "train_micro_batch_size_per_gpu": 4}\n'


class Project:
    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, name: str, text: str) -> str:
        path = self.root / name
        path.write_text(text, encoding="utf-8")
        return path.as_uri()

    def uri(self, name: str) -> str:
        return (self.root / name).as_uri()

    def path(self, name: str) -> str:
        return str(self.root / name)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    root = tmp_path / "proj"
    root.mkdir()
    p = Project(root)
    p.write("train.yaml", TRAIN_YAML)
    p.write("ds_zero2.json", DS_ZERO2)
    p.write("ds_dup.json", DS_DUP)
    return p


def pulls(client: LanguageClient) -> bool:
    return client.capabilities.text_document.diagnostic is not None


def _answer_view_refreshes(client: LanguageClient) -> None:
    """pytest-lsp answers workspace/diagnostic/refresh but not the inlay hint and code lens refreshes
    that the captured VS Code and Neovim capabilities advertise; answer them as those editors do."""
    client.view_refreshes = []
    for method in (t.WORKSPACE_INLAY_HINT_REFRESH, t.WORKSPACE_CODE_LENS_REFRESH):
        if method in client.protocol.fm.features:
            continue

        def answer(params=None, method=method):
            client.view_refreshes.append(method)
            return None

        client.feature(method)(answer)


async def start(client: LanguageClient, profile: str, init_options=None) -> t.InitializeResult:
    _answer_view_refreshes(client)
    result = await client.initialize_session(t.InitializeParams(
        capabilities=client_capabilities(profile), initialization_options=init_options,
        root_uri=None, workspace_folders=None))
    client.encoding = result.capabilities.position_encoding or "utf-16"
    return result


@pytest_lsp.fixture(params=CLIENTS, config=SERVER)
async def client(lsp_client: LanguageClient, request):
    await start(lsp_client, request.param)
    yield lsp_client
    await lsp_client.shutdown_session()


def open_doc(client: LanguageClient, uri: str, text: str, language: str = "yaml", version: int = 1) -> None:
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(t.DidOpenTextDocumentParams(
        text_document=t.TextDocumentItem(uri=uri, language_id=language, version=version, text=text)))


def change_doc(client: LanguageClient, uri: str, text: str, version: int) -> None:
    """A whole-document change (valid under incremental sync: a change event without a range)."""
    client.diagnostics.pop(uri, None)
    client.text_document_did_change(t.DidChangeTextDocumentParams(
        text_document=t.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[t.TextDocumentContentChangeWholeDocument(text=text)]))


async def wait_push(client: LanguageClient, uri: str, timeout: float = 15.0, predicate=None):
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        items = client.diagnostics.get(uri)
        if items is not None and (predicate is None or predicate(items)):
            return list(items)
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"no diagnostics published for {uri} (have {list(client.diagnostics)})")
        await asyncio.sleep(0.02)


async def diagnostics(client: LanguageClient, uri: str, predicate=None, timeout: float = 15.0) -> list[t.Diagnostic]:
    """The diagnostics the client would show: pulled (Neovim 0.11 profile) or pushed (VS Code)."""
    if not pulls(client):
        return await wait_push(client, uri, timeout, predicate)
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        report = await client.text_document_diagnostic_async(
            t.DocumentDiagnosticParams(text_document=t.TextDocumentIdentifier(uri=uri)))
        assert uri not in client.diagnostics, "a pull client must not also get published diagnostics"
        items = list(report.items)
        if predicate is None or predicate(items):
            return items
        if asyncio.get_running_loop().time() > deadline:
            return items
        await asyncio.sleep(0.05)


def apply_edits(text: str, edits, encoding: str) -> str:
    from trainlint.lsp.convert import apply_text_edits

    return apply_text_edits(text, edits, encoding)


async def alive(client: LanguageClient, uri: str) -> None:
    """The server still answers requests."""
    await client.text_document_hover_async(t.HoverParams(
        text_document=t.TextDocumentIdentifier(uri=uri), position=t.Position(line=0, character=0)))
