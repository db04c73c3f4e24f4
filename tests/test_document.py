"""Positions and parse facts of the document layer (YAML and JSON)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainlint.document.reading import parse_document, read_document


def text_at(doc, span):
    return doc.text[span.start.offset:span.end.offset]


# ---- YAML -------------------------------------------------------------------------------------

def test_yaml_block_positions_and_key_paths():
    doc = parse_document("# comment\ntrainer:\n  precision: bf16-mixed  # tail\n  devices: 8\n", "a.yaml")
    node = doc.find(("trainer", "devices"))
    assert node.value == 8 and node.key_path == ("trainer", "devices")
    assert (node.span.start.line, node.span.start.column) == (3, 11)
    entry = doc.find(("trainer",)).entry("precision")
    assert (entry.key_span.start.line, entry.key_span.start.column, entry.key_span.end.column) == (2, 2, 11)
    assert text_at(doc, entry.value.span) == "bf16-mixed"


def test_yaml_flow_style_positions():
    doc = parse_document("zero: {stage: 3, offload: [cpu, nvme]}\n", "a.yaml")
    assert text_at(doc, doc.find(("zero", "stage")).span) == "3"
    off = doc.find(("zero", "offload", 1))
    assert text_at(doc, off.span) == "nvme" and off.key_path == ("zero", "offload", 1)
    assert doc.find(("zero",)).flow


def test_yaml_quoted_keys_and_values_keep_quotes_in_span():
    doc = parse_document('"lr": \'2e-5\'\n', "a.yaml")
    entry = doc.root.entry("lr")
    assert text_at(doc, entry.key_span) == '"lr"' and entry.key_style == '"'
    assert text_at(doc, entry.value.span) == "'2e-5'" and entry.value.value == "2e-5"


def test_yaml_block_scalar():
    doc = parse_document("chat_template: |\n  line one\n  line two\nnext: 1\n", "a.yaml")
    node = doc.find(("chat_template",))
    assert node.value == "line one\nline two\n" and node.style == "|"
    assert doc.find(("next",)).span.start.line == 3


def test_yaml_anchor_alias_and_merge():
    text = "base: &b\n  lr: 1.0e-4\n  bs: 4\nrun:\n  <<: *b\n  bs: 8\nother: *b\n"
    doc = parse_document(text, "a.yaml")
    assert doc.data() == {"base": {"lr": 1e-4, "bs": 4}, "run": {"lr": 1e-4, "bs": 8}, "other": {"lr": 1e-4, "bs": 4}}
    # The merged key keeps its position at the anchor; the explicit one its own.
    assert doc.find(("run", "lr")).span.start.line == 1
    assert doc.find(("run", "bs")).span.start.line == 5
    assert doc.find(("other",)).alias_of is not None
    assert doc.duplicates == []


def test_yaml_unicode_columns_are_code_points():
    doc = parse_document("note: \"日本語 🚀\"\nlr: 1\n", "a.yaml")
    assert doc.find(("lr",)).span.start.column == 4
    node = doc.find(("note",))
    assert node.span.end.column == 13  # 6, then quote + 5 characters (the rocket is one) + quote


def test_yaml_11_typing_is_what_pyyaml_reads():
    doc = parse_document("lr: 2e-5\nlr2: 2.0e-5\nsave_strategy: no\nname: y\n", "a.yaml")
    assert doc.find(("lr",)).value == "2e-5"
    assert doc.find(("lr2",)).value == 2e-5
    assert doc.find(("save_strategy",)).value is False and doc.find(("save_strategy",)).raw == "no"
    assert doc.find(("name",)).value == "y"


def test_yaml_duplicate_keys_are_recorded_and_last_wins():
    doc = parse_document("a: 1\nb: 2\na: 3\n", "a.yaml")
    assert doc.data() == {"a": 3, "b": 2}
    (dup,) = doc.duplicates
    assert dup.key_path == ("a",) and dup.first.start.line == 0 and dup.duplicate.start.line == 2


def test_yaml_syntax_error_has_position():
    doc = parse_document("a: 1\nb: [1, 2\nc: 3\n", "a.yaml")
    assert doc.root is None and doc.syntax_error is not None
    assert doc.syntax_error.span.start.line >= 1


def test_yaml_tab_indentation_explained():
    doc = parse_document("a:\n\tb: 1\n", "a.yaml")
    assert "tabs" in doc.syntax_error.message
    assert doc.syntax_error.span.start.line == 1


def test_yaml_bom_and_crlf():
    doc = parse_document("\ufeffa: 1\r\nb: 2\r\n", "a.yaml")
    assert doc.bom and doc.newline == "\r\n"
    node = doc.find(("b",))
    assert (node.span.start.line, node.span.start.column) == (1, 3)


def test_yaml_bomb_is_stopped():
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for prev, cur in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    doc = parse_document("\n".join(lines) + "\n", "bomb.yaml")
    assert doc.root is None and "YAML bomb" in doc.syntax_error.message


def test_yaml_python_tags_are_not_constructed():
    doc = parse_document("x: !!python/object/apply:os.system ['echo hi']\ny: !!python/name:os.system ''\n", "a.yaml")
    # Safe composition: collections are never constructed from tags; a tagged scalar is read as text.
    assert doc.syntax_error is None
    assert doc.data() == {"x": ["echo hi"], "y": ""}
    (note,) = doc.notes
    assert "unsupported YAML tag" in note.message and note.span.start.line == 1


def test_yaml_multiple_documents_note():
    doc = parse_document("a: 1\n---\nb: 2\n", "a.yaml")
    assert doc.data() == {"a": 1}
    assert any("more than one YAML document" in n.message for n in doc.notes)


def test_comments_skip_strings_and_block_scalars():
    doc = parse_document("# top\na: \"x # no\"  # yes\nb: |\n  # inside\nurl: http://x#frag\n", "a.yaml")
    assert [c[2] for c in doc.comments()] == ["# top", "# yes"]


# ---- JSON -------------------------------------------------------------------------------------

DS = """{
  // hjson comment
  "train_batch_size": "auto",
  "zero_optimization": {"stage": 3, "offload_param": {"device": "cpu",}},
  "lr": 1e-5, # another
  "list": [1, 2.5, true, null, "\\u00e9\\ud83d\\ude80"]
}
"""


def test_json_values_match_json_load_semantics():
    doc = parse_document(DS, "ds.json")
    assert doc.data() == {"train_batch_size": "auto",
                          "zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}},
                          "lr": 1e-5, "list": [1, 2.5, True, None, "é🚀"]}


def test_json_positions():
    doc = parse_document(DS, "ds.json")
    node = doc.find(("zero_optimization", "offload_param", "device"))
    assert text_at(doc, node.span) == '"cpu"' and node.span.start.line == 3
    entry = doc.find(("zero_optimization",)).entry("stage")
    assert text_at(doc, entry.key_span) == '"stage"'


def test_json_relaxed_syntax_is_recorded():
    doc = parse_document(DS, "ds.json")
    assert sorted(r.what for r in doc.relaxed) == ["a comment", "a comment", "a trailing comma"]
    assert doc.syntax_error is None


def test_json_duplicate_keys():
    doc = parse_document('{"a": 1, "b": {"c": 1, "c": 2}}', "x.json")
    (dup,) = doc.duplicates
    assert dup.key_path == ("b", "c")
    assert doc.data()["b"]["c"] == 2


@pytest.mark.parametrize("text,fragment", [
    ('{"a": 1,, "b": 2}', "expected a key"),
    ('{"a": 1 "b": 2}', "expected ','"),
    ('{"a": tru}', "unexpected"),
    ("{'a': 1}", "double quotes"),
    ('{"a": [1, 2}', "expected ','"),
    ('{"a": "x\n"}', "span lines"),
    ('{"a": 1', "end of file"),
])
def test_json_syntax_errors_have_positions(text, fragment):
    doc = parse_document(text, "x.json")
    assert doc.root is None
    assert fragment in doc.syntax_error.message
    assert 0 <= doc.syntax_error.span.start.offset <= len(text)


def test_json_tabs_are_fine():
    doc = parse_document('{\n\t"a": {\n\t\t"b": 1\n\t}\n}\n', "x.json")
    assert doc.find(("a", "b")).span.start.column == 7


def test_json_deep_nesting_is_stopped():
    doc = parse_document("[" * 5000 + "]" * 5000, "x.json")
    assert doc.root is None and "nested" in doc.syntax_error.message


def test_conf_extension_is_json():
    assert parse_document('{"a": 1}', "stage3.conf").kind == "json"


# ---- files ------------------------------------------------------------------------------------

def test_binary_and_non_utf8_files(tmp_path):
    binary = tmp_path / "model.json"
    binary.write_bytes(b"\x89PNG\x00\x00data")
    assert "binary" in read_document(binary).syntax_error.message
    latin = tmp_path / "cfg.yaml"
    latin.write_bytes("name: caf\xe9\n".encode("latin-1"))
    assert "UTF-8" in read_document(latin).syntax_error.message


def test_missing_file(tmp_path):
    doc = read_document(tmp_path / "nope.yaml")
    assert doc.kind == "unreadable" and "cannot read" in doc.syntax_error.message


def test_node_at_offset():
    doc = parse_document("trainer:\n  devices: 8\n", "a.yaml")
    offset = doc.text.index("devices")
    assert doc.node_at(offset) == (("trainer", "devices"), True)
    assert doc.node_at(doc.text.index("8")) == (("trainer", "devices"), False)


def _node_at_corpus():
    root = Path(__file__).resolve().parent
    for path in sorted((root / "fixtures").rglob("*")) + sorted((root / "realworld").rglob("*")):
        if path.suffix in (".yaml", ".yml", ".json") and path.is_file() and path.stat().st_size < 200_000:
            yield path


def test_node_at_from_the_span_index_is_the_walk_from_the_root():
    """`node_at` answers from an index of the spans (one per document; SARIF asks for every finding's offset): the
    same answer as walking the tree, except where one span ends exactly where the next begins, and there the span
    that begins at the offset (the key under the cursor, not the block that ended before it)."""
    checked = 0
    for path in _node_at_corpus():
        doc = read_document(str(path))
        if doc.root is None:
            continue
        _starts, spans = doc._span_index()
        ends = {s[1] for s in spans}
        for offset in range(0, len(doc.text) + 1, max(1, len(doc.text) // 200)):
            found = doc.node_at(offset)
            if offset not in ends:
                assert found == doc._node_at_scan(offset), (path, offset)
            else:
                holding = [s for s in spans if s[0] <= offset <= s[1]]
                latest = max(holding, key=lambda s: (s[0], s[2], s[3]))
                assert found == latest[4], (path, offset)
            checked += 1
    assert checked > 10_000


def test_node_at_of_a_subdocument_answers_for_the_subdocument():
    doc = parse_document("outer:\n  inner:\n    key: 1\n", "x.yaml")
    assert doc.node_at(doc.text.index("key")) == (("outer", "inner", "key"), True)
    sub = doc.subdocument(doc.find(("outer",)))
    assert sub.node_at(doc.text.index("key")) == (("inner", "key"), True)
