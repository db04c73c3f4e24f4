"""Reading config files into `Document`s: the file-size and binary guards, the parsed-file cache, and the
overlay of unsaved editor buffers (or in-memory fixes) that stand in for files on disk.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from trainlint._patterns import compile_later
from trainlint.document import json_parser, yaml_parser
from trainlint.document.tree import Document, SyntaxProblem

try:  # the built-in BLAKE2 module: `hashlib` would load OpenSSL first, which costs more than reading a config
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - other Pythons
    from hashlib import blake2b

MAX_FILE_BYTES = 5 * 1024 * 1024

JSON_SUFFIXES = {".json", ".jsonc", ".json5", ".hjson", ".conf"}
YAML_SUFFIXES = {".yaml", ".yml"}


def kind_for_path(path: str, text: str) -> str:
    suffix = Path(path).suffix.lower()
    if suffix in JSON_SUFFIXES:
        return "json"
    if suffix in YAML_SUFFIXES:
        return "yaml"
    return "json" if text.lstrip().startswith(("{", "[")) else "yaml"


# Texts that stand in for files on disk: unsaved editor buffers, or files being fixed in memory.
# Keyed by resolved path.
_overlay: dict[str, str] = {}
# Parsed files, by (shown name, content hash): a linked DeepSpeed file is parsed once, not on every
# keystroke in the config that links it. Documents are not modified after parsing.
_parsed: dict[tuple, "Document"] = {}


class overlay:  # noqa: N801 - used as `with overlay(texts):`, like the function it was (contextlib costs an import)
    """Within the block, `read_document` sees these texts instead of the files' contents."""

    def __init__(self, texts: dict[str, str]):
        self._texts = texts
        self._saved: dict[str, str] = {}

    def __enter__(self) -> None:
        self._saved = dict(_overlay)
        _overlay.update({os.path.realpath(p): t for p, t in self._texts.items()})

    def __exit__(self, *exc: object) -> None:
        _overlay.clear()
        _overlay.update(self._saved)


def in_overlay(path: str | Path) -> bool:
    """True when an unsaved buffer stands in for this path (it may not exist on disk yet)."""
    return bool(_overlay) and os.path.realpath(path) in _overlay


def overlaid() -> dict[str, str]:
    """The texts standing in for files now, by the files' real paths (empty outside an `overlay` block)."""
    return _overlay


def read_document(path: str | Path, display_path: str | None = None) -> Document:
    """Read and parse a file. Never raises for bad content: unreadable files become documents
    whose `syntax_error` says why. Only regular files are opened (a FIFO would block, a device
    never ends), and never more than MAX_FILE_BYTES are read."""
    shown = display_path or str(path)
    if _overlay:
        try:
            text = _overlay.get(os.path.realpath(path))
        except (OSError, ValueError):
            text = None
        if text is not None:
            return parse_document(text, shown)
    data, why = read_regular_file(path)
    if data is None:
        return _unreadable(shown, why or "cannot read the file")
    return document_from_bytes(data, shown)


def file_problem(path: str | Path) -> str | None:
    """Why `path` cannot be read as a config (None when it is a regular file of acceptable size),
    without opening it."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return _os_reason(exc)
    except ValueError as exc:  # a NUL in the name
        return f"the file name is not valid ({exc})"
    return _kind_problem(st)


def read_regular_file(path: str | Path, limit: int = MAX_FILE_BYTES) -> tuple[bytes | None, str | None]:
    """The bytes of a regular file of at most `limit` bytes, or (None, why not). Never blocks on a
    FIFO, never reads a device, never reads more than `limit` + 1 bytes."""
    why = file_problem(path)
    if why is not None:
        return None, why
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        return None, _os_reason(exc)
    try:
        why = _kind_problem(os.fstat(fd), limit)  # it may have been swapped since the stat
        if why is not None:
            return None, why
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            return None, _too_large(size, limit, at_least=True)
        return b"".join(chunks), None
    except OSError as exc:
        return None, _os_reason(exc)
    finally:
        os.close(fd)


def _kind_problem(st: os.stat_result, limit: int = MAX_FILE_BYTES) -> str | None:
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return _too_large(st.st_size, limit) if st.st_size > limit else None
    kind = ("a folder" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
            else "a character device" if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
    return f"this is {kind}, not a config file; only regular files are read"


def _too_large(size: int, limit: int, at_least: bool = False) -> str:
    more = "more than " if at_least else ""
    return (f"the file is {more}{size / 2**20:.1f} MiB; training configs over {limit // 2**20} MiB are not read")


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "cannot read the file: a symlink loop (the link points, through other links, back at itself)"
    if exc.errno == errno.ENAMETOOLONG:
        return "cannot read the file: the file name is too long for the file system"
    if exc.errno == errno.ENOENT:
        return "cannot read the file: no such file (or a symlink to a file that does not exist)"
    return f"cannot read the file: {exc.strerror or exc}"


SURROGATE = compile_later("[\ud800-\udfff]")  # an unpaired surrogate code point: not Unicode text, cannot be encoded


def has_surrogates(text: str) -> bool:
    """Whether `text` holds an unpaired surrogate (searched for only then: encoding is far cheaper than the
    pattern's compilation)."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def document_from_bytes(data: bytes, shown: str) -> Document:
    """Bytes (a file's, or stdin's) into a Document, with the size, binary and UTF-8 guards."""
    key = (shown, len(data), blake2b(data, digest_size=16).digest())
    cached = _parsed.get(key)
    if cached is not None:
        return cached
    if len(data) > MAX_FILE_BYTES:
        return _unreadable(shown, _too_large(len(data), MAX_FILE_BYTES))
    if b"\x00" in data[:8192]:
        return _unreadable(shown, "this is a binary file, not a YAML or JSON config")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _unreadable(shown, f"the file is not valid UTF-8 (byte {exc.start}); YAML and JSON configs must be UTF-8")
    doc = parse_document(text, shown)
    _remember(key, doc)
    return doc


# The cache is bounded in entries and in the text it holds (a document's tree is a small multiple of
# its text): a language server that reads thousands of hostile versions of a linked file stays small.
MAX_CACHED = 64
MAX_CACHED_CHARS = 4 * 2**20
_cached_chars = [0]


def _remember(key: tuple, doc: Document) -> None:
    size = len(doc.text)
    if size > MAX_CACHED_CHARS // 8:
        return  # large files are parsed again rather than kept
    while _parsed and (len(_parsed) >= MAX_CACHED or _cached_chars[0] + size > MAX_CACHED_CHARS):
        old = _parsed.pop(next(iter(_parsed)))
        _cached_chars[0] -= len(old.text)
    _parsed[key] = doc
    _cached_chars[0] += size


def _unreadable(path: str, message: str) -> Document:
    doc = Document(path=path, text="", kind="unreadable")
    doc.syntax_error = SyntaxProblem(message, doc.span(0, 0))
    return doc


def parse_document(text: str, path: str, kind: str | None = None) -> Document:
    bom = text.startswith("\ufeff")
    if bom:
        text = text[1:]
    kind = kind or kind_for_path(path, text)
    doc = Document(path=path, text=text, kind=kind, bom=bom)
    bad = SURROGATE.search(text) if has_surrogates(text) else None
    if bad is not None:  # an unpaired surrogate (an editor buffer, a decoded name): not Unicode text
        doc.syntax_error = SyntaxProblem(f"the text holds an unpaired surrogate code point (U+{ord(bad.group()):04X}), "
                                         "which is not valid Unicode; save the file as UTF-8",
                                         doc.span(bad.start(), bad.start() + 1))
        return doc
    if kind == "json":
        json_parser.parse_into(doc)
    else:
        yaml_parser.parse_into(doc)
    return doc
