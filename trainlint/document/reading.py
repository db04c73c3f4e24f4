"""Reading config files into `Document`s: the file-size and binary guards, the parsed-file cache, and the
overlay of unsaved editor buffers (or in-memory fixes) that stand in for files on disk.
"""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path

from trainlint.document.tree import Document, SyntaxProblem

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


@contextlib.contextmanager
def overlay(texts: dict[str, str]):
    """Within the block, `read_document` sees these texts instead of the files' contents."""
    saved = dict(_overlay)
    _overlay.update({str(Path(p).resolve()): t for p, t in texts.items()})
    try:
        yield
    finally:
        _overlay.clear()
        _overlay.update(saved)


def in_overlay(path: str | Path) -> bool:
    """True when an unsaved buffer stands in for this path (it may not exist on disk yet)."""
    return bool(_overlay) and str(Path(path).resolve()) in _overlay


def read_document(path: str | Path, display_path: str | None = None) -> Document:
    """Read and parse a file. Never raises for bad content: unreadable files become documents
    whose `syntax_error` says why."""
    shown = display_path or str(path)
    if _overlay:
        text = _overlay.get(str(Path(path).resolve()))
        if text is not None:
            return parse_document(text, shown)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        return _unreadable(shown, f"cannot read the file: {exc.strerror or exc}")
    key = (shown, len(data), hashlib.blake2b(data, digest_size=16).digest())
    cached = _parsed.get(key)
    if cached is not None:
        return cached
    if len(data) > MAX_FILE_BYTES:
        return _unreadable(shown, f"the file is {len(data) / 2**20:.1f} MiB; training configs over "
                                  f"{MAX_FILE_BYTES // 2**20} MiB are not read")
    if b"\x00" in data[:8192]:
        return _unreadable(shown, "this is a binary file, not a YAML or JSON config")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _unreadable(shown, f"the file is not valid UTF-8 (byte {exc.start}); YAML and JSON configs must be UTF-8")
    doc = parse_document(text, shown)
    if len(_parsed) >= 64:
        _parsed.pop(next(iter(_parsed)))
    _parsed[key] = doc
    return doc


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
    if kind == "json":
        from trainlint.document import json_parser

        json_parser.parse_into(doc)
    else:
        from trainlint.document import yaml_parser

        yaml_parser.parse_into(doc)
    return doc
