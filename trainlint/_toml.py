"""`loads`: TOML text as `tomllib.loads` reads it, without importing `tomllib` for the TOML that pin and settings
files hold.

`tomllib` costs about 6 ms of CPU to import (it compiles its patterns and imports `datetime` and `typing`), more than
a check spends on most files. The reader here takes what pyproject.toml, uv.lock, poetry.lock, Pipfile and
trainlint.toml use: tables and arrays of tables, bare, quoted and dotted keys, basic and literal strings (one-line
and multi-line), decimal integers and floats, booleans, arrays and inline tables. On anything else (dates and
times, hexadecimal or special numbers, a table reopened in ways it does not follow, and every error) it hands the whole text to `tomllib`, so the value or the error is tomllib's.
`tests/test_toml.py` holds the two to the same results.
"""

from __future__ import annotations

import re

from trainlint._pattern import lazy

__all__ = ["loads"]


class _Unsupported(Exception):
    """Not in the subset read here (or not TOML): tomllib reads it."""


def loads(text: str) -> dict:
    """The TOML document `text` as a dict (tomllib's TOMLDecodeError, a ValueError, when it is not TOML)."""
    try:
        return _Reader(text.replace("\r\n", "\n")).document()
    except (_Unsupported, IndexError, RecursionError):
        pass
    try:  # Python 3.11+
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib.loads(text)


_CONTROL = "\x00-\x08\x0a-\x1f\x7f"  # not allowed in strings and comments (tab is)
_SPACE = lazy(r"[ \t]*")
_COMMENT = lazy(f"#[^{_CONTROL}]*")
_BARE_KEY = lazy(r"[A-Za-z0-9_-]+")
_BASIC = lazy(f'"([^"\\\\{_CONTROL}]*)"')
_LITERAL = lazy(f"'([^'{_CONTROL}]*)'")
_NUMBER = lazy(r"[+-]?(?:0|[1-9](?:_?[0-9])*)(\.[0-9](?:_?[0-9])*)?([eE][+-]?[0-9](?:_?[0-9])*)?"
               r"(?=[ \t\n,\]}#]|$)")
_ESCAPE = lazy(r'\\(?:([btnfr"\\])|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8}))')
# ... and in a multi-line basic string, a backslash ending a line trims the whitespace and newlines after it
_MULTILINE_ESCAPE = lazy(r'\\(?:([btnfr"\\])|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|[ \t]*\n[ \t\n]*)')
_ESCAPED = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}
_BASIC_ESCAPES = lazy(f'"((?:[^"\\\\{_CONTROL}]|\\\\[^\\n])*)"')
_MULTILINE_CHARS = lazy(f"[^{_CONTROL.replace(chr(10) + '-', chr(11) + '-')}]*")  # newlines allowed


class _Reader:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0
        self.root: dict = {}
        self.explicit: set[int] = set()  # tables defined by a [header]
        self.implicit: set[int] = set()  # tables made as a header's parents, not yet defined
        self.dotted: set[int] = set()  # tables made by dotted keys (in the current section)
        self.frozen: set[int] = set()  # inline tables and arrays written as values
        self.table_arrays: set[int] = set()  # arrays made by [[headers]]

    # --- the document ---

    def document(self) -> dict:
        text = self.text
        table = self.root
        while True:
            self._blank_lines()
            if self.pos >= len(text):
                return self.root
            if text[self.pos] == "[":
                table = self._header()
            else:
                self._key_value(table)
            self._line_end()

    def _blank_lines(self) -> None:
        text = self.text
        while self.pos < len(text):
            self.pos = _SPACE.match(text, self.pos).end()
            if self.pos < len(text) and text[self.pos] == "#":
                self.pos = _COMMENT.match(text, self.pos).end()
            if self.pos < len(text) and text[self.pos] == "\n":
                self.pos += 1
            else:
                return

    def _line_end(self) -> None:
        text = self.text
        self.pos = _SPACE.match(text, self.pos).end()
        if self.pos < len(text) and text[self.pos] == "#":
            self.pos = _COMMENT.match(text, self.pos).end()
        if self.pos < len(text):
            if text[self.pos] != "\n":
                raise _Unsupported
            self.pos += 1

    def _header(self) -> dict:
        text = self.text
        array = text.startswith("[[", self.pos)
        self.pos += 2 if array else 1
        keys = self._key()
        closing = "]]" if array else "]"
        if not text.startswith(closing, self.pos):
            raise _Unsupported
        self.pos += len(closing)
        self.dotted = set()  # dotted-key tables belong to their section
        parent = self.root
        for key in keys[:-1]:
            parent = self._descend(parent, key)
        last = keys[-1]
        existing = parent.get(last)
        if array:
            if existing is None:
                existing = parent[last] = []
                self.table_arrays.add(id(existing))
            elif not (isinstance(existing, list) and id(existing) in self.table_arrays):
                raise _Unsupported
            table: dict = {}
            existing.append(table)
        elif existing is None:
            table = parent[last] = {}
        elif isinstance(existing, dict) and id(existing) in self.implicit:
            table = existing
            self.implicit.discard(id(existing))
        else:
            raise _Unsupported  # a redefinition (an error) or a way of reopening a table not followed here
        self.explicit.add(id(table))
        return table

    def _descend(self, parent: dict, key: str) -> dict:
        """A header's parent table `key` in `parent`: made (implicitly) when missing, the last table of an array of
        tables."""
        child = parent.get(key)
        if child is None:
            child = parent[key] = {}
            self.implicit.add(id(child))
            return child
        if isinstance(child, list) and id(child) in self.table_arrays:
            return child[-1]
        if isinstance(child, dict) and id(child) not in self.frozen and (
                id(child) in self.explicit or id(child) in self.implicit):
            return child
        raise _Unsupported

    def _key_value(self, table: dict, inline: set[int] | None = None) -> None:
        """`key = value` into `table`; `inline`: the tables its dotted keys made (inside an inline table)."""
        keys = self._key()
        if not self.text.startswith("=", self.pos):
            raise _Unsupported
        self.pos = _SPACE.match(self.text, self.pos + 1).end()
        made = self.dotted if inline is None else inline
        for key in keys[:-1]:
            child = table.get(key)
            if child is None:
                child = table[key] = {}
                made.add(id(child))
            elif not (isinstance(child, dict) and id(child) in made):
                raise _Unsupported
            table = child
        if keys[-1] in table:
            raise _Unsupported  # a duplicate key: tomllib's error
        table[keys[-1]] = self._value()

    def _key(self) -> list[str]:
        text = self.text
        keys = []
        while True:
            self.pos = _SPACE.match(text, self.pos).end()
            char = text[self.pos] if self.pos < len(text) else ""
            if char == '"':
                keys.append(self._basic_string())
            elif char == "'":
                match = _LITERAL.match(text, self.pos)
                if match is None:
                    raise _Unsupported
                keys.append(match.group(1))
                self.pos = match.end()
            else:
                match = _BARE_KEY.match(text, self.pos)
                if match is None:
                    raise _Unsupported
                keys.append(match.group())
                self.pos = match.end()
            self.pos = _SPACE.match(text, self.pos).end()
            if not text.startswith(".", self.pos):
                return keys
            self.pos += 1

    # --- values ---

    def _value(self):
        text = self.text
        char = text[self.pos] if self.pos < len(text) else ""
        if char == '"':
            if text.startswith('"""', self.pos):
                return self._multiline('"""')
            return self._basic_string()
        if char == "'":
            if text.startswith("'''", self.pos):
                return self._multiline("'''")
            match = _LITERAL.match(text, self.pos)
            if match is None:
                raise _Unsupported
            self.pos = match.end()
            return match.group(1)
        if char == "[":
            return self._array()
        if char == "{":
            return self._inline_table()
        for word, value in (("true", True), ("false", False)):
            if text.startswith(word, self.pos):
                end = self.pos + len(word)
                if end < len(text) and text[end] not in " \t\n,]}#":
                    raise _Unsupported
                self.pos = end
                return value
        match = _NUMBER.match(text, self.pos)
        if match is None:
            raise _Unsupported  # dates, times, inf/nan, hexadecimal/octal/binary numbers, or not TOML
        self.pos = match.end()
        number = match.group().replace("_", "")
        return float(number) if match.group(1) or match.group(2) else int(number)

    def _basic_string(self) -> str:
        match = _BASIC.match(self.text, self.pos)
        if match is not None:
            self.pos = match.end()
            return match.group(1)
        match = _BASIC_ESCAPES.match(self.text, self.pos)
        if match is None:
            raise _Unsupported
        self.pos = match.end()
        raw = match.group(1)
        out = _ESCAPE.sub(_unescape, raw)
        if "\\" in _ESCAPE.sub("", raw):  # an escape TOML does not have: tomllib's error
            raise _Unsupported
        return out

    def _multiline(self, quotes: str) -> str:
        text = self.text
        start = self.pos + 3
        if text.startswith("\n", start):
            start += 1
        end = text.find(quotes, start)
        if end < 0 or text.startswith(quotes[0], end + 3):
            raise _Unsupported  # unclosed, or quotes next to the closing ones
        body = text[start:end]
        if _MULTILINE_CHARS.fullmatch(body) is None:
            raise _Unsupported
        self.pos = end + 3
        if quotes == "'''" or "\\" not in body:
            return body
        if (len(body) - len(body.rstrip("\\"))) % 2:
            raise _Unsupported  # `\"""`: an escaped quote, not the end
        out = _MULTILINE_ESCAPE.sub(_unescape, body)
        if "\\" in _MULTILINE_ESCAPE.sub("", body):  # an escape TOML does not have: tomllib's error
            raise _Unsupported
        return out

    def _array(self) -> list:
        self.pos += 1
        items: list = []
        while True:
            self._blank_lines()
            if self.text.startswith("]", self.pos):
                break
            items.append(self._value())
            self._blank_lines()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif self.text.startswith("]", self.pos):
                break
            else:
                raise _Unsupported
        self.pos += 1
        self.frozen.add(id(items))
        return items

    def _inline_table(self) -> dict:
        text = self.text
        self.pos = _SPACE.match(text, self.pos + 1).end()
        table: dict = {}
        made: set[int] = set()
        if text.startswith("}", self.pos):
            self.pos += 1
        else:
            while True:
                self._key_value(table, made)
                self.pos = _SPACE.match(text, self.pos).end()
                if text.startswith(",", self.pos):
                    self.pos += 1
                elif text.startswith("}", self.pos):
                    self.pos += 1
                    break
                else:
                    raise _Unsupported
        self.frozen.add(id(table))
        self.frozen.update(made)
        return table


def _unescape(match: re.Match) -> str:
    simple, short, long = match.groups()
    if simple is None and short is None and long is None:
        return ""  # a line-ending backslash
    if simple is not None:
        return _ESCAPED[simple]
    code = int(short or long, 16)
    if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
        raise _Unsupported
    return chr(code)
