"""The catalog's data files, read from the package folder; `importlib.resources` is the fallback for an install
that is not a plain folder."""

from __future__ import annotations

import json
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any, Final, Literal, overload

DATA = Path(__file__).resolve().parent / "data"


def _zipped(name: str) -> Any:
    """The data file of an install that is not a plain folder (importlib.resources, with tempfile, only then)."""
    from importlib import resources

    return resources.files("trainlint.catalog").joinpath("data").joinpath(name)


def read_data_bytes(name: str) -> bytes:
    """The data file as stored (no decoding), for a lookup that decodes only the part it needs."""
    try:
        return (DATA / name).read_bytes()
    except OSError:  # pragma: no cover - zipped installs
        return _zipped(name).read_bytes()


def read_data_head(name: str, size: int) -> bytes:
    """The data file's first `size` bytes (all of it when it is shorter)."""
    try:
        with open(DATA / name, "rb") as f:
            return f.read(size)
    except OSError:  # pragma: no cover - zipped installs
        return read_data_bytes(name)[:size]


def read_data(name: str) -> str:
    path = DATA / name
    try:
        return path.read_text(encoding="utf-8")
    except OSError:  # pragma: no cover - zipped installs
        return _zipped(name).read_text(encoding="utf-8")


def data_mapping(name: str, required: str = "") -> dict:
    """A catalog JSON file that holds one mapping, read for a rule's closed sets: {} when it is missing, unreadable or
    not a mapping (or lacks the `required` table), so that a broken data file silences its rule instead of stopping
    the run."""
    try:
        data = json.loads(read_data(name))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or (required and not isinstance(data.get(required), dict)):
        return {}
    return data


# In the catalog's JSON files as written, each entry of the top-level list opens a line at this indentation (the
# line of its `{`); nothing inside an entry does (its nested objects are indented further, and JSON strings hold no
# raw newline).
ENTRY_START = b"\n    {"


class Incomplete(Enum):
    """entry_holding's answer on a file's head when the answer lies past the end of the bytes given."""

    INCOMPLETE = "the answer lies past the end of the bytes given"


INCOMPLETE: Final = Incomplete.INCOMPLETE
_DECODER = json.JSONDecoder()  # its raw_decode reads one entry out of a file's text

EntryTest = Callable[[Any, str], bool]  # holds(entry, name): whether the decoded entry is the one named


@overload
def entry_holding(data: bytes, name: str, holds: EntryTest,
                  complete: Literal[True] = True) -> tuple[int, dict[str, Any]] | None: ...
@overload
def entry_holding(data: bytes, name: str, holds: EntryTest,
                  complete: bool) -> tuple[int, dict[str, Any]] | Incomplete | None: ...
def entry_holding(data: bytes, name: str, holds: EntryTest,
                  complete: bool = True) -> tuple[int, dict[str, Any]] | Incomplete | None:
    """(position, entry) of the first entry of a catalog file's list (`data`, its bytes) whose text holds `name` as a
    JSON string and for which `holds(entry, name)` is true, only that entry decoded; None when no entry holds it so.
    The position is the number of entry starts before it. With `complete` False `data` is the file's head, and
    INCOMPLETE says that the answer needs the bytes after it."""
    needle = json.dumps(name).encode("ascii")  # json.dumps escapes anything outside ASCII, as the files are written
    at = data.find(needle)
    while at != -1:
        start = data.rfind(ENTRY_START, 0, at)
        if start == -1:
            return None
        end = data.find(ENTRY_START, at)  # the next entry's start: this entry ends before it
        if end == -1 and not complete:
            return INCOMPLETE
        try:
            entry, _end = _DECODER.raw_decode(data[start + len(ENTRY_START) - 1:end if end != -1 else len(data)]
                                              .decode("utf-8"))
        except ValueError:  # UnicodeDecodeError included
            return None
        if holds(entry, name):
            return data.count(ENTRY_START, 0, start), entry
        at = data.find(needle, at + len(needle))
    return None if complete else INCOMPLETE


def release_indices(spans: str) -> set[int]:
    """The release indices a generated table's span text names ("0-3,5" -> {0, 1, 2, 3, 5}): the per-release
    tables of torchtune components, LitGPT keys and accelerate launch options."""
    out: set[int] = set()
    for span in str(spans).split(","):
        first, _, last = span.partition("-")
        if first.isdigit():
            out.update(range(int(first), int(last or first) + 1))
    return out


def missing_spec(present: set[int], labels: list[str]) -> str | None:
    """A PEP 440 range of the tagged releases (of `labels`) not in `present`, when they are one run (else None)."""
    tags = [i for i, label in enumerate(labels) if label[:1].isdigit()]
    missing = [i for i in tags if i not in present]
    if not missing or missing != list(range(missing[0], missing[-1] + 1)):
        return None
    bounds = [] if missing[0] == tags[0] else [f">={labels[missing[0]]}"]
    after = missing[-1] + 1
    if after < len(labels) and labels[after][:1].isdigit():
        bounds.append(f"<{labels[after]}")
    return ",".join(bounds) or ">=0"
