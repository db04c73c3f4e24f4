"""Module-level regular expressions compiled on first use.

Most of the ~90 patterns the package defines at module level serve one format, launcher or rule, so a one-file check
uses ~16 of them; compiling all of them at import cost ~5% of a one-file check's instructions (1,046M against 992M
in callgrind, benchmarks/startup/README.md). `compile_later` returns an object that behaves as the `re.Pattern` it stands for
(every attribute is the compiled pattern's, bound into the instance on first use so later calls are plain attribute
hits); `re` itself does the compiling and caching.
"""

from __future__ import annotations

import re
from typing import Any, AnyStr, cast


class _PatternOnFirstUse:
    def __init__(self, pattern: Any, flags: int) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        # Only called for what the instance does not hold yet: compile, then keep the attribute on the instance.
        if name == "_source":  # an instance made without __init__ (copy, pickle): no recursion
            raise AttributeError(name)
        pattern, flags = self._source
        value = getattr(re.compile(pattern, flags), name)
        self.__dict__[name] = value
        return value

    def __repr__(self) -> str:
        return f"compile_later({self._source[0]!r}, {self._source[1]!r})"


def compile_later(pattern: AnyStr, flags: int | re.RegexFlag = 0) -> re.Pattern[AnyStr]:
    """`re.compile(pattern, flags)`, done when the pattern is first used."""
    return cast("re.Pattern[AnyStr]", _PatternOnFirstUse(pattern, int(flags)))
