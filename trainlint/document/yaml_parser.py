"""YAML into the position-aware tree, through PyYAML's safe composer.

Scalars are constructed exactly as `yaml.safe_load` would (YAML 1.1: `2e-5` stays a string, `no` is
False), because that is what HF, TRL, Axolotl and Accelerate see; rules warn about those traps.
"""

from __future__ import annotations


import yaml
from yaml.constructor import ConstructorError, SafeConstructor

from trainlint._patterns import compile_later
from trainlint.diagnostics import Pos, Span
from trainlint.document.tree import (
    MAX_ALIAS_NODES,
    MAX_DEPTH,
    MAX_INT_DIGITS,
    MAX_NODES,
    MAX_SCALAR_CHARS,
    Document,
    DuplicateKey,
    Entry,
    KeyPath,
    Node,
    SyntaxProblem,
)

_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"
_DIRECT = {tag: SafeConstructor.yaml_constructors[tag]
           for tag in ("tag:yaml.org,2002:null", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int",
                       "tag:yaml.org,2002:float")}
# libyaml (in the PyYAML wheel) composes ~15x faster with the same marks (code-point index, line,
# column); the pure-Python loader is the fallback where PyYAML was built without it.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _TooLarge(Exception):
    def __init__(self, message: str, span: Span):
        super().__init__(message)
        self.span = span


# Jinja2 (and Go-template / Ansible) markup that a script renders before the framework reads the result:
# `{{ model_dir }}`, `{% if ... %}`, `{# ... #}` on one line each.
_JINJA = compile_later(r"\{\{[^{}\n]*\}\}|\{%[^\n]*?%\}|\{#[^\n]*?#\}")


def parse_into(doc: Document) -> None:
    try:
        _parse_into(doc)
        if doc.syntax_error is not None and doc.root is None and ("{{" in doc.text or "{%" in doc.text):
            _template(doc)
    except Exception as exc:  # noqa: BLE001 - whatever the text, a diagnostic, never a traceback
        doc.root = None
        doc.syntax_error = SyntaxProblem(f"the YAML cannot be read: {type(exc).__name__}: {exc}"[:500],
                                         doc.span(0, 0))


def _template(doc: Document) -> None:
    """A file that is valid YAML once its Jinja2 markup is masked is a template a script renders (Azure's
    torchtune-azureml: `path: {{model_dir}}/tokenizer.model`, rendered by jinja2 and written back before
    `tune run --config` reads it): recorded as such (`doc.placeholders`), with no tree and no syntax error, and
    not linted as a config, like a JSON template with bare placeholders."""
    found = [m.group(0) for m in _JINJA.finditer(doc.text)]
    if not found:
        return
    masked = _JINJA.sub(lambda m: ("x" if m.group(0).startswith("{{") else " ") * len(m.group(0)), doc.text)
    loader = _LOADER(masked)
    try:
        if loader.check_node():
            loader.get_node()
    except Exception:  # noqa: BLE001 - still broken without the markup: a real syntax error
        return
    finally:
        loader.dispose()
    doc.placeholders = tuple(dict.fromkeys(m for m in found if m.startswith("{{")))[:16] or tuple(found[:1])
    doc.syntax_error = None
    doc.duplicates, doc.notes = [], []


def _parse_into(doc: Document) -> None:
    loader = _LOADER(doc.text)
    try:
        node = loader.get_node() if loader.check_node() else None
        try:
            if node is not None and loader.check_node():
                mark = loader.peek_event().start_mark
                doc.notes.append(SyntaxProblem(
                    "this file holds more than one YAML document; only the first is read",
                    _span(doc, mark, mark)))
        except yaml.YAMLError:
            pass  # trouble after the first document does not spoil the first one
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        message = _error_message(exc, doc.text, mark)
        span = _span(doc, mark, mark) if mark is not None else doc.span(0, 0)
        doc.syntax_error = SyntaxProblem(message, span)
        return
    except yaml.YAMLError as exc:
        doc.syntax_error = SyntaxProblem(f"YAML error: {exc}", doc.span(0, 0))
        return
    except RecursionError:
        doc.syntax_error = SyntaxProblem("the YAML is nested too deeply to read", doc.span(0, 0))
        return
    finally:
        loader.dispose()
    if node is None:
        return
    try:
        doc.root = _Builder(doc).convert(node, (), 0)
    except _TooLarge as exc:
        doc.syntax_error = SyntaxProblem(str(exc), exc.span)
        doc.root = None


def _error_message(exc: yaml.MarkedYAMLError, text: str, mark) -> str:
    parts = [p for p in (exc.context, exc.problem) if p]
    message = ", ".join(parts) if parts else "invalid YAML"
    if mark is not None and 0 <= mark.index < len(text) and text[mark.index] == "\t":
        message += " (YAML does not allow tabs for indentation; use spaces)"
    return f"YAML syntax error: {message}"


def _span(doc: Document, start, end) -> Span:
    # The marks' index is a code-point offset; their line and column count NEL, LS and PS as line
    # breaks (YAML 1.1) where editors, LSP and `patch` do not, and put the end of the text on a line
    # after the last one: positions come from the offset.
    return Span(doc.pos(start.index), doc.pos(end.index))


# The characters after which libyaml's line and column differ from the editors' (YAML 1.1 line breaks, a BOM).
_ODD_BREAKS = compile_later("[\x85\u2028\u2029\ufeff]")


class _Builder:
    def __init__(self, doc: Document):
        self.doc = doc
        self.size = len(doc.text)
        # Where no YAML-only line break occurs, libyaml's line and column are the editors' (checked on every mark
        # of the corpus and the fixtures): taken as they are, without a search in the line table.
        self.marks_exact = _ODD_BREAKS.search(doc.text) is None
        self.count = 0
        self.alias_count = 0
        self.converted: set[int] = set()
        self.constructor = SafeConstructor()

    def span(self, start, end) -> Span:
        if self.marks_exact and end.index < self.size:
            return Span(Pos(start.line, start.column, start.index), Pos(end.line, end.column, end.index))
        return _span(self.doc, start, end)

    def convert(self, node: yaml.Node, path: KeyPath, depth: int, alias: bool = False) -> Node:
        self.count += 1
        span = self.span(node.start_mark, node.end_mark)
        # compose() hands back the anchor's node object for every alias: a second visit is an alias.
        is_alias = alias or id(node) in self.converted
        self.alias_count += is_alias
        if self.count > MAX_NODES or self.alias_count > MAX_ALIAS_NODES:
            limit = MAX_NODES if self.count > MAX_NODES else MAX_ALIAS_NODES
            raise _TooLarge(f"the YAML expands to more than {limit:,} values through anchors and aliases "
                            "(a \"YAML bomb\"); it is not read further", span)
        if depth > MAX_DEPTH:
            raise _TooLarge(f"the YAML is nested more than {MAX_DEPTH} levels deep; it is not read further", span)
        self.converted.add(id(node))
        alias_of = span if is_alias else None
        if isinstance(node, yaml.MappingNode):
            out = Node("mapping", span, path, flow=bool(node.flow_style), alias_of=alias_of)
            self._mapping(node, out, path, depth, is_alias)
            return out
        if isinstance(node, yaml.SequenceNode):
            out = Node("sequence", span, path, flow=bool(node.flow_style), alias_of=alias_of)
            out.items = [self.convert(child, path + (i,), depth + 1, is_alias) for i, child in enumerate(node.value)]
            return out
        assert isinstance(node, yaml.ScalarNode)  # the composer makes only mapping, sequence and scalar nodes
        value = self._scalar_value(node, span)
        # libyaml gives plain scalars style "" where the Python parser gives None.
        return Node("scalar", span, path, value=value, raw=node.value, style=node.style or None, alias_of=alias_of)

    def _scalar_value(self, node: yaml.ScalarNode, span: Span):
        if len(node.value) > MAX_SCALAR_CHARS:
            self.doc.errors.append(SyntaxProblem(
                f"a value of {len(node.value):,} characters; no training setting is that long (the limit read is "
                f"{MAX_SCALAR_CHARS:,}), so it is read as text and not checked", span))
            return node.value[:64]
        if node.tag == _STR_TAG:
            return node.value  # what SafeConstructor gives a string, without its per-node bookkeeping
        try:
            direct = _DIRECT.get(node.tag)
            # the common scalar tags straight to their SafeConstructor function: construct_object adds only the
            # bookkeeping for recursive and shared objects, which scalars never need
            value = direct(self.constructor, node) if direct is not None else self.constructor.construct_object(node)
        except ConstructorError as exc:
            if "could not determine a constructor" in str(exc):
                self.doc.notes.append(SyntaxProblem(
                    f"unsupported YAML tag {node.tag!r}; the value is read as plain text", span))
            else:
                self.doc.errors.append(_conversion_error(node, exc, span))
            return node.value
        except Exception as exc:  # noqa: BLE001 - PyYAML's constructors raise anything on bad values
            self.doc.errors.append(_conversion_error(node, exc, span))
            return node.value
        if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_DIGITS * 3:
            self.doc.errors.append(SyntaxProblem(
                f"an integer of about {int(value.bit_length() * 0.30103):,} digits; no training setting is that large "
                f"and Python cannot print integers over {MAX_INT_DIGITS:,} digits, so it is read as text", span))
            return node.value[:64]
        return value

    def _mapping(self, node: yaml.MappingNode, out: Node, path: KeyPath, depth: int, alias: bool) -> None:
        explicit: dict[str, Entry] = {}
        merged: list[Entry] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                for source in sources:
                    if isinstance(source, yaml.MappingNode):
                        sub = self.convert(source, path, depth + 1, alias=True)
                        merged.extend(sub.entries)
                continue
            key, key_raw = self._key(key_node)
            key_span = self.span(key_node.start_mark, key_node.end_mark)
            value = self.convert(value_node, path + (key,), depth + 1, alias)
            entry = Entry(key, key_raw, key_span, getattr(key_node, "style", None) or None, value)
            if key in explicit and not alias:
                self.doc.duplicates.append(DuplicateKey(path + (key,), explicit[key].key_span, key_span))
            explicit[key] = entry
            out.entries.append(entry)
        if merged:
            given = set(explicit)
            out.entries[:0] = [e for e in merged if e.key not in given]

    def _key(self, key_node: yaml.Node) -> tuple[str, str]:
        if isinstance(key_node, yaml.ScalarNode):
            if key_node.tag == _STR_TAG:
                return key_node.value, key_node.value
            try:
                value = self.constructor.construct_object(key_node)
            except ConstructorError as exc:
                if "could not determine a constructor" not in str(exc):
                    self.doc.errors.append(_conversion_error(
                        key_node, exc, _span(self.doc, key_node.start_mark, key_node.end_mark)))
                value = key_node.value
            except Exception as exc:  # noqa: BLE001
                self.doc.errors.append(_conversion_error(
                    key_node, exc, _span(self.doc, key_node.start_mark, key_node.end_mark)))
                value = key_node.value
            return (value if isinstance(value, str) else key_node.value), key_node.value
        return "<complex key>", "<complex key>"


_TAG_NAMES = {"tag:yaml.org,2002:bool": "a boolean", "tag:yaml.org,2002:int": "an integer",
              "tag:yaml.org,2002:float": "a number", "tag:yaml.org,2002:timestamp": "a date/time",
              "tag:yaml.org,2002:binary": "base64 binary data", "tag:yaml.org,2002:null": "null"}


def _conversion_error(node: yaml.ScalarNode, exc: BaseException, span: Span) -> SyntaxProblem:
    tag = node.tag.replace("tag:yaml.org,2002:", "!!")
    what = _TAG_NAMES.get(node.tag, f"the type of {tag}")
    shown = node.value if len(node.value) <= 40 else node.value[:37] + "..."
    explicit = node.tag != "tag:yaml.org,2002:int" or not node.value[:1].isdigit()
    reason = f"{tag} {shown!r} is not {what}" if explicit else f"the integer {shown!r} cannot be converted"
    return SyntaxProblem(f"{reason} ({type(exc).__name__}); yaml.safe_load fails on this value, so the framework "
                         "cannot read the file", span)
