"""`lazy(pattern, flags)`: a regular expression compiled on its first use, for the module-level patterns a check
mostly never runs (a GPU name's capacity, a pip install line, a Jinja2 placeholder, ...). Compiling costs 50-500 us a
pattern; the ~200 patterns trainlint's modules define would be ~15% of a one-file check if all were compiled at
import. After the first use the pattern's methods are the compiled pattern's own (set on the instance), so a use
costs what `re.compile`'s would."""

from __future__ import annotations

import re

__all__ = ["lazy"]

_ATTRS = ("match", "search", "fullmatch", "findall", "finditer", "sub", "subn", "split", "scanner", "pattern", "flags",
          "groups", "groupindex")


class _LazyPattern:
    def __init__(self, pattern, flags: int = 0) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str):  # only for what the instance lacks: before the first use, a method
        if name.startswith("__"):
            raise AttributeError(name)
        compiled = re.compile(*self._source)
        self.compiled = compiled
        for attr in _ATTRS:
            setattr(self, attr, getattr(compiled, attr))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy({self._source[0]!r}, {self._source[1]!r})"


def lazy(pattern, flags: int = 0) -> _LazyPattern:
    """`re.compile(pattern, flags)`, compiled on its first use (a method or attribute of the pattern)."""
    return _LazyPattern(pattern, flags)
