"""The pure parts of the server: position conversion, edits, markdown, client settings, completion
context. No server process here."""

from __future__ import annotations

from types import SimpleNamespace

from lsprotocol import types as t

from trainlint.diagnostics import Edit, Pos, Span
from trainlint.document.reading import parse_document
from trainlint.lsp import convert, features, options


def test_columns_per_encoding():
    text = 'a: "\u00e9\U0001F680"  # x\nb: 1\r\nc: 2\rd: 3\n'
    doc = parse_document(text, "x.yaml")
    end_of_value = text.index("  # x")
    pos = doc.pos(end_of_value)
    for encoding, column in (("utf-16", 8), ("utf-8", 11), ("utf-32", 7)):
        index = convert.LineIndex(text, encoding)
        assert index.from_pos(pos) == t.Position(line=0, character=column)
        assert index.to_doc_offset(t.Position(line=0, character=column)) == end_of_value
    index = convert.LineIndex(text, "utf-16")
    assert index.line_count == doc.line_count == 5
    assert index.from_pos(doc.pos(text.index("d: 3"))) == t.Position(line=3, character=0)
    # Past the end of a line or the document: clamped, never an error.
    assert index.offset(t.Position(line=1, character=99)) == text.index("\r\n")
    assert index.offset(t.Position(line=99, character=0)) == len(text)


def test_bom_shifts_the_first_line_only():
    text = "\ufeffa: 1\nb: 2\n"
    doc = parse_document(text, "x.yaml")
    index = convert.LineIndex(text, "utf-16")
    assert index.from_pos(doc.pos(0)) == t.Position(line=0, character=1)
    assert index.from_pos(doc.pos(doc.text.index("b"))) == t.Position(line=1, character=0)
    assert index.to_doc_offset(t.Position(line=1, character=0)) == doc.text.index("b")


def test_text_edit_and_minimal_edit_round_trip():
    text = "x: \U0001F680\nsave_strategy: no\n"
    doc = parse_document(text, "x.yaml")
    start = text.index("no")
    edit = Edit("x.yaml", Span(doc.pos(start), doc.pos(start + 2)), '"no"')
    for encoding in ("utf-8", "utf-16", "utf-32"):
        index = convert.LineIndex(text, encoding)
        new = convert.apply_text_edits(text, [convert.text_edit(edit, index)], encoding)
        assert new == 'x: \U0001F680\nsave_strategy: "no"\n'
        minimal = convert.minimal_edit(text, new, index)
        assert convert.apply_text_edits(text, [minimal], encoding) == new
    assert convert.minimal_edit(text, text, convert.LineIndex(text)) is None
    crlf = "a: 1\r\nb: 2\r\n"
    new = "a: 1\nb: 2\r\n"
    assert convert.apply_text_edits(crlf, [convert.minimal_edit(crlf, new, convert.LineIndex(crlf))]) == new


def test_breakdown_markdown_tolerates_partial_objects():
    assert convert.breakdown_markdown(None) is None
    gpu = SimpleNamespace(name="H100-80GB", memory_bytes=80 * 2**30)
    comp = [SimpleNamespace(key="weights", label="weights", bytes=20 * 2**30, assumption=""),
            SimpleNamespace(key="activations", label="activations", bytes=40 * 2**30, assumption="")]
    b = SimpleNamespace(components=comp, gpu=gpu, gpu_count=8, total=64 * 2**30, peak_allocated=None,
                        peak_reserved=None, fits=True, peak_phase="backward", assumptions=("seq 4096",),
                        summary=lambda: "needs 64 GiB")
    text = convert.breakdown_markdown(b)
    assert "| weights | `\u2588\u2588\u2588\u2591\u2591\u2591\u2591\u2591\u2591\u2591\u2591\u2591` | 20.0 |" in text
    assert "8 \u00d7 H100-80GB" in text and "fits" in text and "- seq 4096" in text
    assert convert.breakdown_title(b) == "trainlint: 64.0 GiB per GPU of 80.0 GiB (H100-80GB) \u2014 fits"
    assert convert.breakdown_markdown(SimpleNamespace()) is not None


def test_options_parse_merge_and_problems():
    merged = options.merge({"gpu": "h100", "numGpus": 4, "model": "m"},
                           {"trainlint": {"numGpus": 8, "gpu": None, "seq_len": 4096}})
    parsed, problems = options.parse(merged)
    assert problems == []
    # null unsets (VS Code sends every key), a missing key keeps the init option
    assert parsed.values == {"model": "m", "num_gpus": 8, "seq_len": 4096}
    settings = parsed.to_settings()
    assert settings.selection is None and settings.cli.values["num_gpus"] == 8
    parsed, problems = options.parse({"select": "TL1, tl004", "ignore": ["TL201"], "failLevel": "error"})
    assert parsed.select == ("TL1", "TL004") and parsed.ignore == ("TL201",) and parsed.fail_level == "error"
    parsed, problems = options.parse({"numGpus": 0, "seqLen": "x", "gpu": 3, "select": [1], "what": 1})
    assert parsed == options.ClientOptions() and len(problems) == 5
    assert options.parse("nonsense")[1]


def test_completion_context_in_broken_yaml_and_json():
    text = "trainer:\n  max_epochs: 3\n  accel\n"
    assert features._yaml_context(text, 2, 7)[:2] == ("key", ("trainer",))
    assert features._json_context('{"a": {"b": 1, ', 15)[:2] == ("key", ("a",))
    assert features._json_context('{"a": {"b": ', 12)[:3] == ("value", ("a",), "b")
    assert features._json_context('{"a": [1, ', 10)[0] == "none"


def test_disable_line_edit_extends_an_existing_comment():
    doc = parse_document("a: no  # trainlint: disable=TL004\nb: 1\n", "x.yaml")
    start, end, text = features.disable_line_edit(doc, 0, "TL003")
    assert text == ",TL003" and doc.text[:start].endswith("disable=TL004")
    assert features.disable_line_edit(doc, 0, "TL004") is None
    assert features.disable_line_edit(doc, 1, "TL003")[2] == "  # trainlint: disable=TL003"


def test_diagnostic_conversion_has_docs_link():
    from trainlint.diagnostics import Diagnostic, Severity

    doc = parse_document("a: 1\n", "x.yaml")
    d = Diagnostic("TL004", Severity.ERROR, "m", "x.yaml", Span(Pos(0, 0, 0), Pos(0, 1, 1)))
    lsp = convert.diagnostic(d, convert.LineIndex(doc.text))
    assert lsp.code == "TL004" and lsp.source == "trainlint" and lsp.severity == t.DiagnosticSeverity.Error
    assert lsp.code_description.href.endswith("TL004.md")


def test_hover_shows_the_detail_of_the_findings_under_the_cursor():
    from trainlint.diagnostics import Diagnostic, Severity
    from trainlint.engine import FileResult

    text = "learning_rate: 2e-5\nsave_strategy: no\n"
    doc = parse_document(text, "t.yaml")
    here = Diagnostic("TL003", Severity.WARNING, "`2e-5` is a string to YAML 1.1", "t.yaml", doc.span(15, 19),
                      detail="PyYAML reads a float only with a dot and a signed exponent.")
    bare = Diagnostic("TL004", Severity.WARNING, "`no` is false to YAML 1.1", "t.yaml", doc.span(35, 37))
    whole = Diagnostic("TL102", Severity.INFO, "no memory estimate: no model", "t.yaml", doc.file_span,
                       detail="Pass --model to estimate.")
    result = FileResult("t.yaml", "huggingface", doc, diagnostics=[here, bare, whole])
    on_value = features.findings_markdown(result, doc, 17, 0)
    assert on_value == ("**TL003** `2e-5` is a string to YAML 1.1\n\nPyYAML reads a float only with a dot and a "
                        "signed exponent.\n\n**TL102** no memory estimate: no model\n\nPass --model to estimate.")
    assert features.findings_markdown(result, doc, 36, 1) is None  # a finding without detail adds nothing
    hover = features.hover_markdown(result, doc, 17, 0)
    assert hover is not None and hover.startswith("**TL003**")
    # a config linking this file reports in it: its findings' detail shows too, once
    user = FileResult("train.yaml", "huggingface", doc, diagnostics=[here])
    assert features.findings_markdown(result, doc, 17, 0, (("train.yaml", user),)).count("**TL003**") == 1
    assert "TL003" in features.findings_markdown(FileResult("t.yaml", "huggingface", doc), doc, 17, 0,
                                                 (("train.yaml", user),))
