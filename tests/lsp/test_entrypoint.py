"""`trainlint server` (the CLI entry point editors run) serves the same server over stdio."""

from __future__ import annotations

import sys

import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import SERVER_ENV, TRAIN_YAML, diagnostics, open_doc, start

CLI = ClientServerConfig(server_command=[sys.executable, "-m", "trainlint", "server"], server_env=SERVER_ENV)


@pytest_lsp.fixture(config=CLI)
async def cli_client(lsp_client: LanguageClient):
    result = await start(lsp_client, "visual-studio-code")
    lsp_client.init_result = result
    yield lsp_client
    await lsp_client.shutdown_session()


async def test_cli_server_capabilities_and_diagnostics(cli_client, project):
    caps = cli_client.init_result.capabilities
    assert cli_client.init_result.server_info.name == "trainlint"
    assert caps.diagnostic_provider is not None and caps.diagnostic_provider.identifier == "trainlint"
    assert "source.fixAll.trainlint" in caps.code_action_provider.code_action_kinds
    assert caps.hover_provider and caps.completion_provider and caps.inlay_hint_provider and caps.code_lens_provider
    assert list(caps.execute_command_provider.commands) == ["trainlint.showEstimate"]
    assert caps.position_encoding in (t.PositionEncodingKind.Utf16, "utf-16")
    uri = project.uri("train.yaml")
    open_doc(cli_client, uri, TRAIN_YAML)
    assert any(d.code == "TL004" for d in await diagnostics(cli_client, uri))
