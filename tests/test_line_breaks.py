"""Lines are counted as editors and LSP count them (the LSP spec's "Position": only \\n, \\r\\n and \\r end a
line), whatever PyYAML's marks or `str.splitlines` count: a NEL, LS or PS inside a YAML string moves no finding,
no advertised edit and no LSP position, so the edits of `--output-format json` give exactly what `--fix` writes."""

from __future__ import annotations

import json
import re

import pytest

from trainlint import cli, engine
from trainlint.context.settings import Settings
from trainlint.document.reading import parse_document
from trainlint.document.tree import split_lines
from trainlint.lsp import convert, features

ISOLATED = Settings(use_project_config=False)
SEPARATORS = {"NEL": "\x85", "LS": "\u2028", "PS": "\u2029"}


def spec_lines(text: str) -> list[str]:
    """The lines of the LSP spec, written out independently of trainlint's line table."""
    return re.split(r"\r\n|\r|\n", text)


def spec_offset(text: str, line: int, column: int) -> int:
    """Offset of a (0-based line, code-point column) position under the spec's line breaks."""
    breaks = [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
    return ([0] + breaks)[line] + column


def configs(sep: str) -> dict[str, str]:
    return {
        "double-quoted": f'model_name_or_path: meta-llama/Llama-3.1-8B\nrun_name: "a{sep}b{sep}c"\n'
                         "save_strategy: no\nlearning_rate: 2e-5\n",
        "single-quoted": f"model_name_or_path: meta-llama/Llama-3.1-8B\nrun_name: 'a{sep}b'\nsave_strategy: no\n"
                         "learning_rate: 2e-5\n",
        "flow": f'model_name_or_path: meta-llama/Llama-3.1-8B\nx: {{a: "p{sep}q", save_strategy: no}}\n'
                "save_strategy: no\nlearning_rate: 2e-5\n",
        "crlf": f'model_name_or_path: meta-llama/Llama-3.1-8B\r\nrun_name: "a{sep}b"\r\nsave_strategy: no\r\n'
                "learning_rate: 2e-5\r\n",
        "comment": f"# note{sep}more: 1\nmodel_name_or_path: meta-llama/Llama-3.1-8B\nsave_strategy: no\n",
    }


CASES = [(name, variant, text) for name, sep in SEPARATORS.items() for variant, text in configs(sep).items()]


@pytest.mark.parametrize("sep_name, variant, text", CASES, ids=[f"{n}-{v}" for n, v, _ in CASES])
def test_json_edits_give_what_fix_writes(tmp_path, monkeypatch, capsys, sep_name, variant, text):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.yaml").write_bytes(text.encode("utf-8"))
    cli.main(["check", "--isolated", "--output-format", "json", "train.yaml"])
    (report,) = json.loads(capsys.readouterr().out)["files"]
    edits = []
    for finding in report["diagnostics"]:
        if finding["code"] == "TL004":  # at its line and column as an editor shows them
            start = finding["range"]["start"]
            line = spec_lines(text)[start["line"] - 1]
            assert line[start["column"] - 1:].startswith("no"), (finding, line)
        safe = [fix for fix in finding["fixes"] if fix["applicability"] == "safe"][:1]
        for fix in safe:
            for edit in fix["edits"]:
                r = edit["range"]
                start = spec_offset(text, r["start"]["line"] - 1, r["start"]["column"] - 1)
                end = spec_offset(text, r["end"]["line"] - 1, r["end"]["column"] - 1)
                edits.append((start, end, edit["new_text"]))
    assert edits
    expected = text
    for start, end, new_text in sorted(edits, reverse=True):
        expected = expected[:start] + new_text + expected[end:]
    cli.main(["check", "--isolated", "--fix", "train.yaml"])
    capsys.readouterr()
    assert (tmp_path / "train.yaml").read_bytes().decode("utf-8") == expected


@pytest.mark.parametrize("sep_name, variant, text", CASES, ids=[f"{n}-{v}" for n, v, _ in CASES])
@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
def test_lsp_positions_are_the_spec_positions(sep_name, variant, text, encoding):
    result = engine.check_text(text, "train.yaml", ISOLATED)
    index = convert.LineIndex(text, encoding)
    lines = spec_lines(text)
    seen = 0
    for d in result.diagnostics:
        spans = [d.span] + [e.span for fix in d.fixes for e in fix.edits]
        for span in spans:
            for pos in (span.start, span.end):
                lsp = index.from_pos(pos)
                before = text[spec_offset(text, lsp.line, 0):pos.offset]
                assert "\n" not in before and "\r" not in before
                assert lsp.character == len(before.encode(encoding.replace("utf-16", "utf-16-le")
                                                          .replace("utf-32", "utf-32-le"))) // \
                    {"utf-8": 1, "utf-16": 2, "utf-32": 4}[encoding]
                assert (pos.line, pos.column) == (lsp.line, len(before)) and lsp.line < len(lines)
                seen += 1
    assert seen


@pytest.mark.parametrize("sep", SEPARATORS.values())
def test_document_lines_are_the_spec_lines(sep):
    text = f'a: "x{sep}y"\r\nb: 1\rc: 2\n{sep}# d\n'
    doc = parse_document(text, "a.yaml")
    lines = spec_lines(text)
    assert doc.line_count == len(lines)
    assert [doc.line_text(i) for i in range(doc.line_count)] == lines
    assert split_lines(text) == lines[:-1]  # the final line break starts no line (as str.splitlines)
    assert "".join(split_lines(text, keepends=True)) == text
    entry = doc.root.entry("c")
    assert (entry.key_span.start.line, entry.key_span.start.column) == (2, 0)


@pytest.mark.parametrize("sep", SEPARATORS.values())
def test_completion_reads_the_line_the_client_means(sep):
    text = f'model_name_or_path: gpt2\nrun_name: "a{sep}b"\nsave_strategy: \nlr_scheduler_type: cosine\n'
    where, path, key, _ = features._yaml_context(text, 2, len("save_strategy: "))
    assert (where, path, key) == ("value", (), "save_strategy")
    labels = [c.label for c in features.completions("huggingface", "yaml", text, 2, len("save_strategy: "),
                                                     text.index("save_strategy: ") + len("save_strategy: "))]
    assert "steps" in labels and "epoch" in labels
