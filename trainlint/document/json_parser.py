"""JSON into the position-aware tree.

Accepts what DeepSpeed accepts (it reads its config with hjson): `//`, `#` and `/* */` comments and
trailing commas. Each such leniency is recorded, because the HF Trainer reads the same file with
`json.load`, which rejects them. Values are what `json.load` would build.
"""

from __future__ import annotations

import re

from trainlint._patterns import compile_later
from trainlint.document.tree import MAX_DEPTH, MAX_INT_DIGITS, MAX_NODES, Document, DuplicateKey, Entry, KeyPath, Node, RelaxedSyntax, SyntaxProblem

# A bare value: a literal json.load (and hjson) reads, or a number; either one not run on into a word
# (`[\w.]`: str.isalnum, "_" and ".", what would make it a longer bare word).
_BARE = compile_later(r"(?:(?P<word>true|false|null|NaN|Infinity|-Infinity)"
                      r"|-?(?:0|[1-9][0-9]*)(?P<fraction>\.[0-9]+)?(?P<exponent>[eE][-+]?[0-9]+)?)(?![\w.])")
_BLANKS = compile_later("[ \t\r\n\ufeff]*")
_TO_LINE_END = compile_later("[^\r\n]*")
_STRING_RUN = compile_later('[^"\\\\\r\n]*')  # the characters a string holds as they are
_WORDS = {"true": True, "false": False, "null": None, "NaN": float("nan"), "Infinity": float("inf"),
          "-Infinity": float("-inf")}
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
# A bare placeholder that a launch script replaces before the file is read (`sed "s/CONFIG_BATCH_SIZE/$GBS/"`,
# envsubst): ALL_CAPS or underscored names starting with a capital (Megatron-DeepSpeed's ds_config_*_TEMPLATE.json:
# CONFIG_BATCH_SIZE, GBSIZE, CL_1st_TOTAL_STEP) and shell variables; never Python's True/False/None.
_PLACEHOLDER = compile_later(r"(?:[A-Z][A-Za-z0-9]*_[A-Za-z0-9_]*|[A-Z][A-Z0-9]+|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?)")
_NOT_PLACEHOLDERS = {"TRUE", "FALSE", "NULL", "NONE", "NAN", "INF", "INFINITY", "T", "F", "Y", "N", "YES", "NO"}


class JsonSyntaxError(Exception):
    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.offset = offset


def parse_into(doc: Document) -> None:
    _parse(doc)
    if doc.syntax_error is not None and "unexpected '" in doc.syntax_error.message and doc.root is None:
        _template(doc)


def _template(doc: Document) -> None:
    """A file that parses once its bare placeholders count as values is a template a script fills in: it is
    recorded as such (`doc.placeholders`), with no tree and no syntax error, and not linted as a config."""
    trial = Document(doc.path, doc.text, doc.kind)
    parser = _Parser(trial, placeholders=[])
    try:
        parser.skip_space()
        parser.value((), 0)
        parser.skip_space()
        if parser.i < len(trial.text):
            return
    except (JsonSyntaxError, RecursionError, ValueError):
        return
    if parser.placeholders:
        doc.placeholders = tuple(dict.fromkeys(parser.placeholders))
        doc.syntax_error = None
        doc.relaxed, doc.duplicates = [], []


def _parse(doc: Document) -> None:
    parser = _Parser(doc)
    try:
        parser.skip_space()
        if parser.i >= len(doc.text):
            return  # an empty file: nothing to read
        root = parser.value((), 0)
        parser.skip_space()
        if parser.i < len(doc.text):
            raise JsonSyntaxError("unexpected text after the end of the JSON value", parser.i)
        doc.root = root
    except JsonSyntaxError as exc:
        doc.syntax_error = SyntaxProblem(f"JSON syntax error: {exc}", doc.span(exc.offset, exc.offset + 1))
    except RecursionError:
        doc.root = None
        doc.syntax_error = SyntaxProblem("the JSON is nested too deeply to read", doc.span(0, 0))
    except Exception as exc:  # noqa: BLE001 - whatever the text, a diagnostic, never a traceback
        doc.root = None
        doc.syntax_error = SyntaxProblem(f"the JSON cannot be read: {type(exc).__name__}: {exc}"[:500], doc.span(0, 0))


class _Parser:
    def __init__(self, doc: Document, placeholders: list | None = None):
        self.doc = doc
        self.text = doc.text
        self.i = 0
        self.count = 0
        self.placeholders = placeholders  # a list: bare placeholders are read as null values and collected

    # ---- whitespace and the comments hjson allows ------------------------------------------
    def skip_space(self) -> None:
        text, n = self.text, len(self.text)
        while True:
            blanks = _BLANKS.match(text, self.i)
            assert blanks is not None  # a pattern of '*' matches everywhere, as do the runs below
            self.i = blanks.end()
            if self.i >= n:
                return
            ch = text[self.i]
            if ch == "#" or text.startswith("//", self.i):
                line = _TO_LINE_END.match(text, self.i)
                assert line is not None
                end = line.end()
                self._relaxed("a comment", self.i, end)
                self.i = end
            elif text.startswith("/*", self.i):
                end = text.find("*/", self.i + 2)
                if end < 0:
                    raise JsonSyntaxError("unterminated /* comment", self.i)
                self._relaxed("a comment", self.i, end + 2)
                self.i = end + 2
            else:
                return

    def _relaxed(self, what: str, start: int, end: int) -> None:
        self.doc.relaxed.append(RelaxedSyntax(what, self.doc.span(start, end)))

    # ---- values ----------------------------------------------------------------------------
    def value(self, path: KeyPath, depth: int) -> Node:
        self.count += 1
        if self.count > MAX_NODES:
            raise JsonSyntaxError(f"the JSON has more than {MAX_NODES:,} values; it is not read further", self.i)
        if depth > MAX_DEPTH:
            raise JsonSyntaxError(f"the JSON is nested more than {MAX_DEPTH} levels deep", self.i)
        self.skip_space()
        if self.i >= len(self.text):
            raise JsonSyntaxError("unexpected end of file: a value is missing", self.i)
        ch = self.text[self.i]
        if ch == "{":
            return self.obj(path, depth)
        if ch == "[":
            return self.array(path, depth)
        if ch == '"':
            start = self.i
            s = self.string()
            return Node("scalar", self.doc.span(start, self.i), path, value=s, raw=s, style='"')
        return self.bare(path)

    def bare(self, path: KeyPath) -> Node:
        start = self.i
        m = _BARE.match(self.text, start)
        if m is not None:
            raw = m.group(0)
            self.i = m.end()
            if m.lastgroup == "word":
                return Node("scalar", self.doc.span(start, self.i), path, value=_WORDS[raw], raw=raw)
            integral = m.group("fraction") is None and m.group("exponent") is None
            if integral and len(raw.lstrip("-")) > MAX_INT_DIGITS:
                raise JsonSyntaxError(f"an integer of {len(raw.lstrip('-')):,} digits: json.load refuses integers over "
                                      f"{MAX_INT_DIGITS:,} digits (and no setting is that large)", start)
            try:
                value = int(raw) if integral else float(raw)
            except (ValueError, OverflowError):
                raise JsonSyntaxError(f"the number {raw[:40]!r} cannot be read", start) from None
            return Node("scalar", self.doc.span(start, self.i), path, value=value, raw=raw)
        end = start
        while end < len(self.text) and self.text[end] not in ",:]}\r\n \t":
            end += 1
        found = self.text[start:max(end, start + 1)]
        if self.placeholders is not None:
            m = _PLACEHOLDER.match(self.text, start)
            if m and len(m.group(0)) > 1 and m.group(0).upper() not in _NOT_PLACEHOLDERS and not self._word_continues(m.end()):
                self.placeholders.append(m.group(0))
                self.i = m.end()
                return Node("scalar", self.doc.span(start, self.i), path, value=None, raw=m.group(0))
        hint = " (strings must be in double quotes)" if found[:1] not in "'" else " (JSON strings use double quotes)"
        raise JsonSyntaxError(f"unexpected {found!r}{hint}", start)

    def _word_continues(self, i: int) -> bool:
        return i < len(self.text) and (self.text[i].isalnum() or self.text[i] in "_.")

    def string(self) -> str:
        text, n = self.text, len(self.text)
        start = self.i
        m = _STRING_RUN.match(text, start + 1)
        assert m is not None
        i = m.end()
        if i < n and text[i] == '"':  # most strings: no escape, one run of plain characters
            self.i = i + 1
            return m.group(0)
        out = [m.group(0)]
        while True:
            if i >= n:
                raise JsonSyntaxError("unterminated string", start)
            ch = text[i]
            if ch == '"':
                self.i = i + 1
                return "".join(out)
            if ch == "\\":
                if i + 1 >= n:
                    raise JsonSyntaxError("unterminated string", start)
                esc = text[i + 1]
                if esc in _ESCAPES:
                    out.append(_ESCAPES[esc])
                    i += 2
                elif esc == "u":
                    code, i = self._unicode_escape(i)
                    out.append(code)
                else:
                    raise JsonSyntaxError(f"invalid escape '\\{esc}' in a string", i)
            else:  # a line break: JSON strings do not span lines
                raise JsonSyntaxError("a string may not span lines", i)
            m = _STRING_RUN.match(text, i)
            assert m is not None
            out.append(m.group(0))
            i = m.end()

    def _unicode_escape(self, i: int) -> tuple[str, int]:
        digits = self.text[i + 2:i + 6]
        if not re.fullmatch(r"[0-9a-fA-F]{4}", digits):
            raise JsonSyntaxError("invalid \\u escape in a string", i)
        code = int(digits, 16)
        i += 6
        if 0xD800 <= code < 0xDC00 and self.text.startswith("\\u", i):
            low = self.text[i + 2:i + 6]
            if re.fullmatch(r"[dD][c-fC-F][0-9a-fA-F]{2}", low):
                code = 0x10000 + ((code - 0xD800) << 10) + (int(low, 16) - 0xDC00)
                i += 6
        return chr(code), i

    def obj(self, path: KeyPath, depth: int) -> Node:
        start = self.i
        self.i += 1
        node = Node("mapping", self.doc.span(start, start), path)
        seen: dict[str, Entry] = {}
        while True:
            self.skip_space()
            if self.i < len(self.text) and self.text[self.i] == "}":
                if node.entries and self._last_comma is not None:
                    self._relaxed("a trailing comma", self._last_comma, self._last_comma + 1)
                self.i += 1
                break
            if self.i >= len(self.text):
                raise JsonSyntaxError("unexpected end of file: '}' is missing", start)
            if self.text[self.i] != '"':
                raise JsonSyntaxError("expected a key in double quotes", self.i)
            key_start = self.i
            key = self.string()
            key_span = self.doc.span(key_start, self.i)
            self.skip_space()
            if self.i >= len(self.text) or self.text[self.i] != ":":
                raise JsonSyntaxError(f"expected ':' after the key \"{key}\"", self.i)
            self.i += 1
            value = self.value(path + (key,), depth + 1)
            entry = Entry(key, key, key_span, '"', value)
            if key in seen:
                self.doc.duplicates.append(DuplicateKey(path + (key,), seen[key].key_span, key_span))
            seen[key] = entry
            node.entries.append(entry)
            if not self._separator("}", "member"):
                break
        node.span = self.doc.span(start, self.i)
        return node

    def array(self, path: KeyPath, depth: int) -> Node:
        start = self.i
        self.i += 1
        node = Node("sequence", self.doc.span(start, start), path)
        while True:
            self.skip_space()
            if self.i < len(self.text) and self.text[self.i] == "]":
                if node.items and self._last_comma is not None:
                    self._relaxed("a trailing comma", self._last_comma, self._last_comma + 1)
                self.i += 1
                break
            if self.i >= len(self.text):
                raise JsonSyntaxError("unexpected end of file: ']' is missing", start)
            node.items.append(self.value(path + (len(node.items),), depth + 1))
            if not self._separator("]", "item"):
                break
        node.span = self.doc.span(start, self.i)
        return node

    _last_comma: int | None = None

    def _separator(self, close: str, what: str) -> bool:
        """After a member/item: a comma (go on) or the closing bracket (done)."""
        self.skip_space()
        if self.i < len(self.text) and self.text[self.i] == ",":
            self._last_comma = self.i
            self.i += 1
            return True
        self._last_comma = None
        if self.i < len(self.text) and self.text[self.i] == close:
            self.i += 1
            return False
        if self.i >= len(self.text):
            raise JsonSyntaxError(f"unexpected end of file: '{close}' is missing", self.i)
        raise JsonSyntaxError(f"expected ',' or '{close}' after an {what}", self.i)
