"""Minimal text edits on YAML and JSON that keep comments, key order, quoting and layout.

Every edit is a replacement of a code-point range of the original text; nothing is ever re-dumped.
"""

from __future__ import annotations

import json
from typing import Any

from trainlint.diagnostics import Edit, Fix
from trainlint.document.tree import Document, Entry, Node


def scalar_text(doc: Document, value: Any) -> str:
    """How to write a plain value in this document's syntax."""
    if doc.kind == "json":
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float):
        text = repr(value)
        # PyYAML (YAML 1.1) reads `1e-05` as a string: always give the mantissa a dot.
        if "e" in text and "." not in text.split("e")[0]:
            mantissa, exponent = text.split("e")
            text = f"{mantissa}.0e{exponent}"
        return text
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        if _plain_word(value) and value.lower() not in _YAML_SPECIAL:
            return value
        return json.dumps(value)
    return json.dumps(value)


def _plain_word(text: str) -> bool:
    r"""`re.fullmatch(r"[A-Za-z_][\w./-]*", text)` without compiling a pattern on a check's first fix: an ASCII
    letter or underscore, then word characters (what `\w` matches: `str.isalnum()` or `_`), dots, slashes, dashes."""
    return bool(text) and (text[0] == "_" or (text[0].isascii() and text[0].isalpha())) and \
        all(ch.isalnum() or ch in "_./-" for ch in text[1:])


_YAML_SPECIAL = {"yes", "no", "on", "off", "true", "false", "null", "y", "n", "~"}


def replace_value(doc: Document, node: Node, value: Any = None, text: str | None = None) -> Edit:
    new_text = text if text is not None else scalar_text(doc, value)
    if doc.kind == "yaml" and node.style in ('"', "'") and text is None and isinstance(value, str):
        new_text = node.style + value.replace(node.style, node.style * 2 if node.style == "'" else '\\"') + node.style
    return Edit(doc.path, node.span, new_text)


def rename_key(doc: Document, entry: Entry, new_key: str) -> Edit:
    if doc.kind == "launch":  # a launch's script argument (context/launch/targets.py): the option `--name`
        return Edit(doc.path, entry.key_span, "--" + new_key)
    quote = entry.key_style if entry.key_style in ('"', "'") else ""
    return Edit(doc.path, entry.key_span, f"{quote}{new_key}{quote}")


def _line_indent(doc: Document, line: int) -> str:
    text = doc.line_text(line)
    return text[: len(text) - len(text.lstrip(" "))]


def _end_of_line(doc: Document, offset: int) -> int:
    """Offset just past the line break of the line holding `offset`."""
    line = doc.pos(offset).line
    return doc.line_start(line + 1) if line + 1 < doc.line_count else len(doc.text)


def _content_end(node: Node) -> int:
    """Where a value's own text ends. A block mapping or sequence's end mark lies at the next
    sibling (or the next line's start), so use its last item's end instead."""
    while not node.flow and node.alias_of is None and (node.entries or node.items):
        node = node.entries[-1].value if node.kind == "mapping" else node.items[-1]
    return node.span.end.offset


def _entry_end(doc: Document, entry: Entry) -> int:
    """Offset just past the entry's last line (its line break included)."""
    value = entry.value
    if value.kind == "scalar" and value.style in ("|", ">"):
        end = value.span.end.offset  # block scalars end at the start of the next line already
        if end > entry.key_span.end.offset and doc.pos(end).column == 0:
            return end
    return _end_of_line(doc, max(_content_end(value), entry.key_span.end.offset))


def delete_entry(doc: Document, mapping: Node, entry: Entry) -> Edit:
    if doc.kind == "json" or mapping.flow:
        return _delete_flow_entry(doc, mapping, entry)
    start = doc.line_start(entry.key_span.start.line)
    prefix = doc.text[start:entry.key_span.start.offset]
    if prefix.strip() not in ("", "-"):
        start = entry.key_span.start.offset
    elif prefix.strip() == "-":
        # The first key of a sequence item: keep the dash, drop the rest of the entry.
        start = entry.key_span.start.offset
    end = _entry_end(doc, entry)
    if prefix.strip() == "-":
        following = doc.text[end:]
        next_indent = len(following) - len(following.lstrip(" "))
        end = end + next_indent if following.strip() else end
    return Edit(doc.path, doc.span(start, end), "")


def _delete_flow_entry(doc: Document, mapping: Node, entry: Entry) -> Edit:
    index = mapping.entries.index(entry)
    text = doc.text
    start = entry.key_span.start.offset
    end = entry.value.span.end.offset
    if index + 1 < len(mapping.entries):
        # Remove up to the next key, taking the comma between.
        end = mapping.entries[index + 1].key_span.start.offset
        line_start = doc.line_start(entry.key_span.start.line)
        if doc.pos(end).line != doc.pos(start).line and text[line_start:start].strip() == "":
            start = line_start
            end = doc.line_start(doc.pos(end).line)
    elif index > 0:
        prev_end = mapping.entries[index - 1].value.span.end.offset
        start = prev_end
        # Keep what follows the value (spaces, newline before the closing bracket).
    else:
        end = _skip_trailing_comma(text, end)
    return Edit(doc.path, doc.span(start, end), "")


def _skip_trailing_comma(text: str, end: int) -> int:
    i = end
    while i < len(text) and text[i] in " \t":
        i += 1
    return i + 1 if i < len(text) and text[i] == "," else end


def insert_entry(doc: Document, mapping: Node, key: str, value_text: str, after: Entry | None = None) -> Edit:
    """Insert `key: value` into a mapping, after `after` (default: the last entry), matching its layout."""
    entries = mapping.entries
    anchor = after or (entries[-1] if entries else None)
    if doc.kind == "json" or mapping.flow:
        return _insert_flow(doc, mapping, key, value_text, anchor)
    if anchor is None:
        # An empty block mapping cannot be empty in YAML unless it is the root: append at the top level.
        indent = ""
        position = len(doc.text)
        prefix = "" if doc.text.endswith(("\n", "\r")) or not doc.text else doc.newline
        return Edit(doc.path, doc.span(position, position), f"{prefix}{indent}{key}: {value_text}{doc.newline}")
    indent = _line_indent(doc, anchor.key_span.start.line)
    line_prefix = doc.text[doc.line_start(anchor.key_span.start.line):anchor.key_span.start.offset]
    if line_prefix.strip() == "-":  # first key of a sequence item: siblings align after the dash
        indent = " " * len(line_prefix)
    position = _entry_end(doc, anchor)
    line = f"{indent}{key}: {value_text}"
    if position == len(doc.text) and not doc.text.endswith(("\n", "\r")):
        return Edit(doc.path, doc.span(position, position), doc.newline + line)
    return Edit(doc.path, doc.span(position, position), line + doc.newline)


def _insert_flow(doc: Document, mapping: Node, key: str, value_text: str, anchor: Entry | None) -> Edit:
    quoted = json.dumps(key) if doc.kind == "json" else key
    close = mapping.span.end.offset - 1  # the closing brace
    if anchor is None:
        return Edit(doc.path, doc.span(close, close), f"{quoted}: {value_text}")
    position = anchor.value.span.end.offset
    same_line = doc.pos(anchor.key_span.start.offset).line == doc.pos(close).line
    if same_line:
        return Edit(doc.path, doc.span(position, position), f", {quoted}: {value_text}")
    indent = _line_indent(doc, anchor.key_span.start.line)
    # Keep a trailing comma where the anchor already has one (hjson style).
    after = _skip_trailing_comma(doc.text, position)
    if after != position:
        return Edit(doc.path, doc.span(after, after), f"{doc.newline}{indent}{quoted}: {value_text},")
    return Edit(doc.path, doc.span(position, position), f",{doc.newline}{indent}{quoted}: {value_text}")


def fix(title: str, *edits: Edit, safe: bool = True) -> Fix:
    return Fix(title, tuple(edits), safe)


def apply_edits(text: str, edits: list[Edit]) -> tuple[str, list[Edit]]:
    """Apply non-overlapping edits (code-point offsets of `text`); returns the new text and the edits
    that were skipped because they overlapped one already applied."""
    applied: list[Edit] = []
    skipped: list[Edit] = []
    # In start order, an edit overlaps an applied one exactly when it overlaps the applied edit reaching furthest
    # (two applied edits never overlap each other), or inserts at a point another insertion took.
    reach: Edit | None = None
    points: set[int] = set()
    for edit in sorted(edits, key=lambda e: (e.span.start.offset, e.span.end.offset)):
        start, end = edit.span.start.offset, edit.span.end.offset
        if reach is not None and start < reach.span.end.offset and reach.span.start.offset < end or \
                start == end and start in points:
            skipped.append(edit)
            continue
        applied.append(edit)
        if start == end:
            points.add(start)
        if reach is None or end > reach.span.end.offset:
            reach = edit
    parts = []
    cursor = 0
    for edit in applied:  # in start order: the text between the edits, then each edit's new text
        parts.append(text[cursor:edit.span.start.offset])
        parts.append(edit.new_text)
        cursor = edit.span.end.offset
    parts.append(text[cursor:])
    return "".join(parts), skipped
