"""trainlint's own schema checker gives what jsonschema gives, on every config in the test corpus.

A plain `trainlint check` validates with `trainlint.catalog.schema_check` (importing jsonschema costs more CPU
than a lint); these tests hold it to jsonschema's errors: the same keyword, path, message and anyOf branches,
and the same converted findings, for every schema and every YAML/JSON file in the corpus, the fixtures and the
examples, plus mutations that hit each keyword.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path

import pytest

from trainlint.catalog import schema_check, schemas
from trainlint.document.reading import read_document

ROOT = Path(__file__).resolve().parent.parent
from shared_corpus import CORPUS  # noqa: E402
FILES = sorted(p for base in (CORPUS, ROOT / "tests" / "fixtures", ROOT / "examples", ROOT / "tests" / "realworld")
               if base.is_dir() for p in base.rglob("*")
               if p.suffix in (".json", ".yaml", ".yml", ".conf") and p.is_file())
NAMES = [n for n in schemas.SCHEMA_NAMES]


def _data(path: Path):
    doc = read_document(path)
    if doc.root is None or doc.syntax_error is not None:
        return None
    return doc.root.to_python()


def _raw(validator, data):
    def key(e):
        sub = sorted((tuple(c.absolute_path), c.validator, c.message, tuple(c.relative_schema_path)[:1])
                     for c in (e.context or []))
        return (tuple(e.absolute_path), e.validator, e.message, repr(sub))
    return sorted(key(e) for e in validator.iter_errors(data))


def _both(name: str, data):
    ours = schemas._checker(name)
    theirs = schemas.jsonschema_validator(name)
    return ours, theirs


def test_the_shipped_schemas_need_no_jsonschema():
    for name in NAMES:
        assert schema_check.supports(schemas.load_schema(name)), name
        assert isinstance(schemas._checker(name), schema_check.Checker)


def test_the_corpus_is_there():
    assert len(FILES) > 150


@pytest.mark.parametrize("name", NAMES)
def test_same_errors_as_jsonschema_on_every_file(name):
    checked = 0
    for path in FILES:
        data = _data(path)
        if data is None:
            continue
        ours, theirs = _both(name, data)
        assert _raw(ours, data) == _raw(theirs, data), path
        checked += 1
    assert checked > 150


@pytest.mark.parametrize("name", NAMES)
def test_same_errors_as_jsonschema_on_mutated_values(name):
    rng = random.Random(7)
    replacements = [None, True, False, 0, -1, 1.5, 2.0, "", "x", "auto", "1e-5", [], [1, "a"], {}, {"k": 1}, 10**30]
    docs = [d for d in (_data(p) for p in FILES) if isinstance(d, dict)]
    ours, theirs = _both(name, {})
    for doc in docs[:120]:
        for _ in range(6):
            mutated = copy.deepcopy(doc)
            node, keys = mutated, list(mutated)
            while keys:
                key = rng.choice(keys)
                if isinstance(node[key], dict) and node[key] and rng.random() < 0.6:
                    node, keys = node[key], list(node[key])
                    continue
                node[key] = copy.deepcopy(rng.choice(replacements))
                break
            assert _raw(ours, mutated) == _raw(theirs, mutated)


@pytest.mark.parametrize("name", NAMES)
def test_same_findings_as_with_jsonschema(name, monkeypatch):
    for path in FILES[::3]:
        data = _data(path)
        if data is None:
            continue
        ours = schemas.validation_errors(name, data)
        monkeypatch.setattr(schemas, "_schema_errors",
                            lambda n, d: list(schemas.jsonschema_validator(n).iter_errors(d)))
        theirs = schemas.validation_errors(name, data)
        monkeypatch.undo()
        assert ours == theirs, path


def test_a_document_that_reaches_an_unimplemented_keyword_is_validated_by_jsonschema(monkeypatch):
    schema = {"type": "object", "properties": {"a": {"type": "array", "uniqueItems": True}, "b": {"type": "integer"}}}
    checker = schema_check.Checker(schema)
    assert [e.message for e in checker.iter_errors({"b": "x"})] == ["'x' is not of type 'integer'"]  # `a` unread
    with pytest.raises(schema_check.Unsupported):
        list(checker.iter_errors({"a": [1, 1]}))
    monkeypatch.setattr(schemas, "load_schema", lambda name: schema)
    for cached in (schemas._checker, schemas.jsonschema_validator):
        cached.cache_clear()
    try:
        errors = schemas._schema_errors("made-up", {"a": [1, 1], "b": "x"})
        assert sorted(e.message for e in errors) == ["'x' is not of type 'integer'", "[1, 1] has non-unique elements"]
    finally:
        for cached in (schemas._checker, schemas.jsonschema_validator):
            cached.cache_clear()


def test_a_schema_with_an_unimplemented_keyword_is_left_to_jsonschema():
    assert not schema_check.supports({"properties": {"a": {"oneOf": [{"type": "string"}]}}})
    assert not schema_check.supports({"$defs": {"x": {"uniqueItems": True}}})
    assert schema_check.supports({"properties": {"a": {"anyOf": [{"type": "string"}, {"const": 1}]}},
                                  "description": "annotations are fine", "x-trainlint-note": 1})


@pytest.mark.parametrize("schema, value, ok", [
    ({"type": "integer"}, 2.0, True), ({"type": "integer"}, True, False), ({"type": "number"}, False, False),
    ({"const": 1}, True, False), ({"const": 1}, 1.0, True), ({"enum": [[1, 2]]}, [1, 2], True),
    ({"minimum": 1}, "0", True), ({"pattern": "^a"}, "ba", False), ({"minLength": 1}, "", False),
    ({"not": {"type": "string"}}, "s", False), ({"items": {"type": "integer"}}, [1, "a"], False),
    ({"additionalProperties": False, "patternProperties": {"^x_": {}}}, {"x_a": 1}, True),
    ({"$defs": {"n": {"type": "null"}}, "$ref": "#/$defs/n"}, 0, False),
])
def test_keyword_semantics(schema, value, ok):
    from jsonschema import Draft202012Validator

    assert schema_check.Checker(schema).is_valid(value, schema) is ok
    assert Draft202012Validator(schema).is_valid(value) is ok
