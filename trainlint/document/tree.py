"""The document layer: a config file's text plus a tree of nodes that know their key path and source span.

YAML goes through PyYAML's safe composer (nothing is constructed but plain scalars); JSON through
`trainlint.document.json_parser`, which accepts what DeepSpeed's hjson reader accepts and records what a strict
`json.load` would reject. Problems (syntax errors, duplicate keys, relaxed JSON, alias bombs) are
recorded as facts on the document; rules turn them into diagnostics.
"""

from __future__ import annotations

import bisect
import copy
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from trainlint.diagnostics import Pos, Span

# Alias expansion cap: a YAML "billion laughs" file composes quickly but expands exponentially.
MAX_NODES = 200_000
# Values reached through aliases (each one a copy in the tree): a real config repeats a few anchors.
MAX_ALIAS_NODES = 20_000
MAX_DEPTH = 200
# Python refuses to convert integers of more than 4,300 digits to or from text (sys.int_info); a value
# that long is no setting, and every message that shows it would fail.
MAX_INT_DIGITS = 4300
MAX_SCALAR_CHARS = 1_000_000

KeyPath = tuple  # of str (mapping keys) and int (sequence indexes)


@dataclass(eq=False)
class Node:
    """One value in the tree. Scalars carry the value a framework's loader would see (`value`),
    the source text (`raw`) and the quoting style; mappings carry ordered entries."""

    kind: str  # "mapping" | "sequence" | "scalar"
    span: Span
    key_path: KeyPath
    value: Any = None  # scalars only
    raw: str = ""  # scalar source text as written (without quotes)
    style: str | None = None  # None (plain), '"', "'", '|', '>'
    entries: list["Entry"] = field(default_factory=list)  # mappings
    items: list["Node"] = field(default_factory=list)  # sequences
    flow: bool = False  # `{...}` / `[...]` style
    alias_of: Span | None = None  # set when this node is a YAML alias (its span is the anchor's)

    # ---- access -------------------------------------------------------------------------
    def get(self, key: str) -> "Node | None":
        """The value of `key` in a mapping (last occurrence wins, as PyYAML and json.load do)."""
        entry = self.entry(key)
        return entry.value if entry else None

    def entry(self, key: str) -> "Entry | None":
        if self.kind != "mapping":
            return None
        index = self.__dict__.get("_index")
        if index is None or len(index) > len(self.entries) or self.__dict__.get("_indexed") != len(self.entries):
            index = {e.key: e for e in self.entries}  # later duplicates win, as in the loaders
            self.__dict__["_index"], self.__dict__["_indexed"] = index, len(self.entries)
        return index.get(key)

    def keys(self) -> list[str]:
        return [e.key for e in self.entries]

    def find(self, path: KeyPath) -> "Node | None":
        node: Node | None = self
        for part in path:
            if node is None:
                return None
            if isinstance(part, int):
                node = node.items[part] if node.kind == "sequence" and 0 <= part < len(node.items) else None
            else:
                node = node.get(part)
        return node

    def to_python(self) -> Any:
        """Plain data, as the framework's loader would build it (duplicate keys: last wins)."""
        if self.kind == "mapping":
            return {e.key: e.value.to_python() for e in self.entries}
        if self.kind == "sequence":
            return [item.to_python() for item in self.items]
        return self.value

    def walk(self) -> Iterator["Node"]:
        yield self
        if self.kind == "mapping":
            for e in self.entries:
                yield from e.value.walk()
        elif self.kind == "sequence":
            for item in self.items:
                yield from item.walk()

    @property
    def is_scalar(self) -> bool:
        return self.kind == "scalar"


@dataclass(eq=False)
class Entry:
    """One key of a mapping with its value node, and the key as written (style and span)."""
    key: str  # the key as a string (PyYAML may read `on:` as True: then key == "True", key_raw == "on")
    key_raw: str
    key_span: Span
    key_style: str | None
    value: Node


class SyntaxProblem(NamedTuple):
    """Why a file could not be parsed, and where."""
    message: str
    span: Span


class DuplicateKey(NamedTuple):
    """A key given twice in one mapping: both occurrences."""
    key_path: KeyPath
    first: Span
    duplicate: Span


class RelaxedSyntax(NamedTuple):
    """Something hjson (DeepSpeed) accepts but `json.load` (the HF Trainer) rejects."""

    what: str
    span: Span


@dataclass(eq=False)
class Document:
    """A parsed config file: its text, the tree of nodes with positions, and its syntax problems."""
    path: str
    text: str
    kind: str  # "yaml" | "json" | "unreadable"
    root: Node | None = None
    syntax_error: SyntaxProblem | None = None
    duplicates: list[DuplicateKey] = field(default_factory=list)
    relaxed: list[RelaxedSyntax] = field(default_factory=list)
    notes: list[SyntaxProblem] = field(default_factory=list)  # unsupported tags, extra YAML documents
    # Values the framework's loader fails on although the text parses (a tag that does not convert,
    # `!!bool maybe`; an integer too long to convert; a string too long): reported like syntax errors.
    errors: list[SyntaxProblem] = field(default_factory=list)
    bom: bool = False
    newline: str = "\n"
    # A template: the bare placeholders (CONFIG_BATCH_SIZE, $GBS; a YAML's Jinja2 {{model_dir}}) a script replaces
    # before the file is read.
    placeholders: tuple = ()
    _line_starts: list[int] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self._line_starts = line_starts(self.text)
        if "\r\n" in self.text:
            self.newline = "\r\n"

    # ---- positions ----------------------------------------------------------------------
    def pos(self, offset: int) -> Pos:
        if not 0 <= offset <= len(self.text):  # (two positions for every node of a parsed file)
            offset = max(0, min(offset, len(self.text)))
        starts = self._line_starts
        line = bisect.bisect_right(starts, offset) - 1
        return Pos(line, offset - starts[line], offset)

    def pos_at(self, line: int, column: int) -> Pos:
        line = max(0, min(line, len(self._line_starts) - 1))
        offset = min(self._line_starts[line] + column, len(self.text))
        return Pos(line, offset - self._line_starts[line], offset)

    def span(self, start: int, end: int) -> Span:
        return Span(self.pos(start), self.pos(end))

    @property
    def line_count(self) -> int:
        return len(self._line_starts)

    def line_text(self, line: int) -> str:
        if not 0 <= line < len(self._line_starts):
            return ""
        start = self._line_starts[line]
        end = self._line_starts[line + 1] if line + 1 < len(self._line_starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def line_start(self, line: int) -> int:
        return self._line_starts[max(0, min(line, len(self._line_starts) - 1))]

    @property
    def file_span(self) -> Span:
        return self.span(0, 0)

    # ---- tree access --------------------------------------------------------------------
    def subdocument(self, node: Node) -> "Document":
        """This document seen from a nested mapping (an inline DeepSpeed config, say): same text and
        positions, key paths starting at `node`."""
        sub = copy.copy(self)
        sub.root = _rebased(node, ())
        sub.__dict__.pop("_span_index", None)  # the index answers for the whole document's key paths
        sub.duplicates, sub.relaxed, sub.notes, sub.errors, sub.syntax_error = [], [], [], [], None
        return sub

    def find(self, path: KeyPath) -> Node | None:
        return self.root.find(path) if self.root is not None else None

    def comments(self) -> list[tuple[int, int, str]]:
        """(line, column, text) of every comment, `#` included (JSON: the hjson comments)."""
        cached = self.__dict__.get("_comments")
        if cached is None:
            cached = self.__dict__["_comments"] = self._scan_comments()
        return cached

    def _scan_comments(self) -> list[tuple[int, int, str]]:
        if self.kind == "json":
            return [(r.span.start.line, r.span.start.column, self.text[r.span.start.offset:r.span.end.offset])
                    for r in self.relaxed if r.what == "a comment"]
        if "#" not in self.text:
            return []  # no comment can start anywhere: the tree need not be walked
        scalars = []
        if self.root is not None:
            for node in self.root.walk():
                if node.kind == "scalar" and node.alias_of is None:
                    scalars.append((node.span.start.offset, node.span.end.offset))
                if node.kind == "mapping":
                    scalars.extend((e.key_span.start.offset, e.key_span.end.offset) for e in node.entries)
        scalars.sort()
        starts = [s for s, _ in scalars]
        found = []
        for line in range(self.line_count):
            text = self.line_text(line)
            base = self._line_starts[line]
            col = text.find("#")
            while col >= 0:
                if col == 0 or text[col - 1] in " \t":
                    offset = base + col
                    i = bisect.bisect_right(starts, offset) - 1
                    if not (i >= 0 and scalars[i][0] <= offset < scalars[i][1]):
                        found.append((line, col, text[col:]))
                        break
                col = text.find("#", col + 1)
        return found

    def data(self) -> Any:
        return self.root.to_python() if self.root is not None else None

    def node_at(self, offset: int) -> tuple[KeyPath, bool] | None:
        """The key path of the innermost key or value at `offset`, and whether it is on the key. From an index of
        the spans built once per document (SARIF fingerprints ask for every finding's offset: a scan of the whole
        tree each time was quadratic in a file of thousands of keys)."""
        if self.root is None:
            return None
        index = self.__dict__.get("_span_index")
        if index is None:
            index = self.__dict__["_span_index"] = self._span_index()
        starts, spans = index
        # Spans nest or are disjoint and are sorted by (start, depth): going back from the last span starting at or
        # before `offset`, the first that still contains it is the innermost one.
        j = bisect.bisect_right(starts, offset) - 1
        for _ in range(64):
            if j < 0:
                return None
            _start, end, _depth, _order, found = spans[j]
            if end >= offset:
                return found
            j -= 1
        return self._node_at_scan(offset)  # many siblings ended before the offset: the plain walk

    def _span_index(self) -> tuple[list[int], list[tuple[int, int, int, int, tuple[KeyPath, bool]]]]:
        """Every key and value span `node_at` can answer with: (start, end, depth, visit order, answer), sorted."""
        spans: list[tuple[int, int, int, int, tuple[KeyPath, bool]]] = []
        stack: list[tuple[Node, int]] = [(self.root, 0)] if self.root is not None else []
        while stack:
            node, depth = stack.pop()
            if node.kind == "mapping":
                for e in node.entries:
                    spans.append((e.key_span.start.offset, e.key_span.end.offset, depth + 1, len(spans),
                                  (e.value.key_path, True)))
                    if e.value.alias_of is None:
                        spans.append((e.value.span.start.offset, e.value.span.end.offset, depth + 1, len(spans),
                                      (e.value.key_path, False)))
                        stack.append((e.value, depth + 1))
            elif node.kind == "sequence":
                for item in node.items:
                    if item.alias_of is None:
                        spans.append((item.span.start.offset, item.span.end.offset, depth + 1, len(spans),
                                      (item.key_path, False)))
                        stack.append((item, depth + 1))
        spans.sort(key=lambda s: (s[0], s[2], s[3]))
        return [s[0] for s in spans], spans

    def _node_at_scan(self, offset: int) -> tuple[KeyPath, bool] | None:
        """`node_at` by walking the tree from the root (the index's fallback)."""
        if self.root is None:
            return None
        best: tuple[KeyPath, bool] | None = None
        stack = [self.root]
        while stack:
            node = stack.pop()
            if node.kind == "mapping":
                for e in node.entries:
                    if e.key_span.start.offset <= offset <= e.key_span.end.offset:
                        best = (e.value.key_path, True)
                    if e.value.alias_of is None and e.value.span.start.offset <= offset <= e.value.span.end.offset:
                        best = (e.value.key_path, False)
                        stack.append(e.value)
            elif node.kind == "sequence":
                for item in node.items:
                    if item.alias_of is None and item.span.start.offset <= offset <= item.span.end.offset:
                        best = (item.key_path, False)
                        stack.append(item)
        return best


def line_starts(text: str) -> list[int]:
    """Offsets where each line starts; `\n`, `\r\n` and a lone `\r` end a line (as YAML says)."""
    starts = [0]
    if "\r" not in text:
        pos = text.find("\n")
        while pos >= 0:
            starts.append(pos + 1)
            pos = text.find("\n", pos + 1)
        return starts
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            starts.append(i + 1)
        elif ch == "\r":
            if i + 1 < n and text[i + 1] == "\n":
                i += 1
            starts.append(i + 1)
        i += 1
    return starts


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """The text's lines as `Document` and LSP count them (ended by \\n, \\r\\n or \\r): `str.splitlines` also ends
    a line at NEL, LS, PS, \\v, \\f and \\x1c-\\x1e, which editors show inside a line (a YAML string holding
    U+2028 would move every line below it)."""
    starts = line_starts(text)
    ends = starts[1:] + [len(text)]
    lines = [text[start:end] for start, end in zip(starts, ends)]
    if lines and not lines[-1]:
        lines.pop()  # a final line break ends the last line; it starts none (as splitlines)
    return lines if keepends else [line.rstrip("\r\n") for line in lines]


def _rebased(node: Node, path: KeyPath) -> Node:
    out = Node(node.kind, node.span, path, value=node.value, raw=node.raw, style=node.style, flow=node.flow,
               alias_of=node.alias_of)
    out.entries = [Entry(e.key, e.key_raw, e.key_span, e.key_style, _rebased(e.value, path + (e.key,)))
                   for e in node.entries]
    out.items = [_rebased(item, path + (i,)) for i, item in enumerate(node.items)]
    return out
