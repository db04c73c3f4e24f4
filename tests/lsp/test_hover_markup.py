"""Hover and completion documentation in the format the client asks for: Eglot asks for plaintext only when
markdown-mode is not installed (Emacs then shows the text as is in the echo area), so trainlint's markdown is
sent as plain text there, without `**`, backticks or pipe tables; markdown otherwise."""

from __future__ import annotations

import pytest
import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import LanguageClient, client_capabilities

from conftest import SERVER, TRAIN_YAML, _answer_view_refreshes, diagnostics, open_doc
from trainlint.lsp import convert

FORMATS = {"eglot-without-markdown-mode": ["plaintext"], "eglot-with-markdown-mode": ["markdown", "plaintext"]}


@pytest_lsp.fixture(params=list(FORMATS), config=SERVER)
async def emacs(lsp_client: LanguageClient, request):
    caps = client_capabilities("emacs@v29.1")
    caps.text_document.hover.content_format = [t.MarkupKind(f) for f in FORMATS[request.param]]
    caps.text_document.completion.completion_item.documentation_format = [
        t.MarkupKind(f) for f in FORMATS[request.param]]
    _answer_view_refreshes(lsp_client)
    await lsp_client.initialize_session(t.InitializeParams(capabilities=caps, root_uri=None, workspace_folders=None))
    lsp_client.wants = FORMATS[request.param][0]
    yield lsp_client
    await lsp_client.shutdown_session()


async def test_hover_follows_the_client_content_format(emacs, tmp_path):
    path = tmp_path / "train.yaml"
    path.write_text(TRAIN_YAML, encoding="utf-8")
    uri = path.as_uri()
    open_doc(emacs, uri, TRAIN_YAML)
    await diagnostics(emacs, uri)
    line = TRAIN_YAML.splitlines().index("save_strategy: no")
    hover = await emacs.text_document_hover_async(t.HoverParams(
        text_document=t.TextDocumentIdentifier(uri=uri), position=t.Position(line=line, character=3)))
    assert hover is not None and hover.contents.kind == t.MarkupKind(emacs.wants)
    text = hover.contents.value
    assert "save_strategy" in text and "Default" in text
    if emacs.wants == "plaintext":
        assert "**" not in text and "`" not in text and "|---" not in text, text
    else:
        assert "**`save_strategy`**" in text
    first = await emacs.text_document_hover_async(t.HoverParams(
        text_document=t.TextDocumentIdentifier(uri=uri), position=t.Position(line=0, character=1)))
    if first is not None and emacs.wants == "plaintext":
        assert "**" not in first.contents.value and "|" not in first.contents.value, first.contents.value


@pytest.mark.parametrize("formats, expected", [
    (None, t.MarkupKind.Markdown), ([], t.MarkupKind.Markdown), (["plaintext"], t.MarkupKind.PlainText),
    (["plaintext", "markdown"], t.MarkupKind.PlainText), (["markdown", "plaintext"], t.MarkupKind.Markdown),
    (["asciidoc"], t.MarkupKind.Markdown),
])
def test_preferred_markup(formats, expected):
    assert convert.preferred_markup(formats) == expected


def test_markdown_to_plaintext():
    markdown = "\n".join([
        "**`zero_optimization.stage`** (integer)", "", "*deprecated*: use `x` instead", "", "---", "",
        "**Memory per GPU**", "", "| component | | GiB |", "|---|---|--:|", "| weights | `\u2588\u2591` | 16.0 |",
        "| **total** | `\u2588\u2588` | **80.1** |", "", "target: 8 \u00d7 A100-80GB, **does not fit**", "",
        "- batch 8 \u2192 4: \u22126.0 GiB", "2 * 3 = 6, a*b",
    ])
    assert convert.markdown_to_plaintext(markdown).split("\n") == [
        "zero_optimization.stage (integer)", "", "deprecated: use x instead", "",
        "Memory per GPU", "", "component      GiB", "weights    \u2588\u2591  16.0", "total      \u2588\u2588  80.1", "",
        "target: 8 \u00d7 A100-80GB, does not fit", "", "- batch 8 \u2192 4: \u22126.0 GiB", "2 * 3 = 6, a*b",
    ]
