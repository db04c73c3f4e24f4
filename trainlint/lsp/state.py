"""`trainlint server`, the language server over stdio (pygls 2.x): the server object and its state.

The handlers (`trainlint.lsp.server`) stay thin: they look up the current lint of a document (linting again when its text, a
linked file or the settings changed), convert with `convert`, and answer. Every handler is guarded:
an exception is logged to the client (window/logMessage) and the request gets an empty answer; the
server keeps serving.

Diagnostics: pulled (`textDocument/diagnostic`) by clients that can, published to the others, never
both. Publishing is debounced per document (leading edge: a change after a quiet period is linted at
once; changes during typing wait until `DEBOUNCE_MS` pass without one). Pull requests are answered
from the current text at once. A DeepSpeed JSON linked from an open config gets the config's
findings about it while it is open, and so do the configs on disk that link it (found with the repository's
link index, context/links.py; their lints cached until the config, the JSON or the settings change); when it
changes, the configs that link it are linted again (and pull clients are asked to refresh). Linked files open
in the editor are read from their buffers.

Features:
- diagnostics with code, severity, source "trainlint" and `codeDescription.href` (the rule's page);
  positions in the negotiated encoding (UTF-16 by default, UTF-8 when the client prefers it);
- code actions: every fix as a `quickfix` (the first fix of the first diagnostic preferred), computed
  from the current text (no `Diagnostic.data` needed); for YAML, "disable CODE on this line / in this
  file" comments; `source.fixAll.trainlint` (all safe fixes, iterated as `trainlint check --fix`);
- hover: schema docs of the key (description, type, default, allowed values, deprecation), its memory
  effect (what the alternative would change per GPU), and the memory breakdown on the first line;
- inlay hints after memory-driving values (in a linked DeepSpeed JSON too, for each open config);
- a code lens at the top: the estimate and the number of findings at or above `failLevel`;
- completion of keys not yet present at the mapping level and of enum values (from the schemas);
- settings: `gpu`, `numGpus`, `model`, `seqLen`, `select`, `ignore`, `failLevel` from
  initializationOptions, the `trainlint` section of workspace/configuration and
  workspace/didChangeConfiguration, over the project's [tool.trainlint]; bad values are reported with
  window/showMessage and ignored.

Environment: TRAINLINT_LSP_DEBOUNCE_MS (default 150); TRAINLINT_LSP_FAULT (tests: handler names that
raise on purpose).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import time
import traceback
from pathlib import Path
from typing import Any

from lsprotocol import types as t
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import from_fs_path, to_fs_path

from dataclasses import dataclass, field
from trainlint import __version__, engine
from trainlint.context import dialect, imports, installs, launch, links, pins
from trainlint.diagnostics import Diagnostic
from trainlint.document.tree import Document, SyntaxProblem
from trainlint.document.reading import MAX_FILE_BYTES, overlay, read_document
from trainlint.lsp import convert, options as opts
from trainlint.context.settings import Settings

DEBOUNCE_MS = float(os.environ.get("TRAINLINT_LSP_DEBOUNCE_MS", "150"))
FIX_ALL_KIND = "source.fixAll.trainlint"
SHOW_ESTIMATE = "trainlint.showEstimate"
CONFIG_TIMEOUT_S = 5.0
LINK_INDEX_MAX_AGE_S = 30.0  # a config that starts linking an open JSON is seen within this (or on a save)

log = logging.getLogger("trainlint.lsp")


@functools.lru_cache(maxsize=4096)
def _resolved(path: str) -> str:
    try:
        return str(Path(path).resolve())
    except (OSError, RuntimeError, ValueError):
        return path


@dataclass
class Entry:
    """The last lint of one open document."""

    uri: str
    path: str
    source: str
    version: int | None
    result: engine.FileResult
    linked: frozenset[str]  # resolved paths of linked files
    stamp: tuple
    good_flavor: str = "unknown"  # the last flavor seen while the text parsed


@dataclass
class Report:
    """The diagnostics published for one document, as trainlint's and as the protocol's."""
    pairs: list[tuple[Diagnostic, t.Diagnostic]] = field(default_factory=list)
    index: convert.LineIndex | None = None
    result_id: str | None = None

    @property
    def items(self) -> list[t.Diagnostic]:
        return [lsp for _d, lsp in self.pairs]


class _Unreadable:
    """A request whose params did not fit the method's types: answered with the error, not dropped."""

    jsonrpc = "2.0"

    def __init__(self, msg_id: Any, method: str, error: JsonRpcException) -> None:
        self.id, self.method, self.error = msg_id, method, error


class TrainlintProtocol(LanguageServerProtocol):
    """pygls drops a request whose params do not deserialize (no response ever comes) and requests after
    `shutdown`; JSON-RPC wants an answer to every request: InvalidParams (-32602), InvalidRequest (-32600)."""

    def structure_message(self, data):
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(data, dict) and "id" in data and isinstance(data.get("method"), str) \
                    and isinstance(data["id"], (int, str)) and not isinstance(data["id"], bool):
                if not isinstance(exc, JsonRpcInvalidParams):
                    exc = JsonRpcInvalidParams()
                return _Unreadable(data["id"], data["method"], exc)
            raise

    def _handle_notification(self, method_name, params):
        # pygls keeps the future of a notification run by a generator handler under a fresh uuid in
        # `_request_futures` and never removes it (only responses do): ~1.3 MiB per 1000 edits.
        # Pruned here, on the event loop, when done (not from a done callback: those may run on another
        # thread while pygls iterates the dict).
        notes = self.__dict__.setdefault("_notification_keys", set())
        for key in [k for k in notes if k not in self._request_futures or self._request_futures[k].done()]:
            notes.discard(key)
            self._request_futures.pop(key, None)
        before = set(self._request_futures)
        super()._handle_notification(method_name, params)
        notes.update(set(self._request_futures) - before)

    def handle_message(self, message):
        if isinstance(message, _Unreadable):
            error = message.error.to_response_error()
            error.message = f"invalid params for {message.method}"
            self._send_response(message.id, error=error)
            return
        if self._shutdown and getattr(message, "method", "exit") != "exit" and getattr(message, "id", None) \
                is not None and hasattr(message, "params"):
            error = JsonRpcInvalidRequest().to_response_error()
            error.message = "the server is shutting down"
            self._send_response(message.id, error=error)
            return
        super().handle_message(message)


class TrainlintServer(LanguageServer):
    def __init__(self) -> None:
        # Full sync: configs are small, and pygls applies incremental changes with str.splitlines(),
        # which also breaks lines at \u2028, \x0c, \x85, ... where LSP does not (a config with such a
        # character in a string would be corrupted by the next edit).
        super().__init__("trainlint", __version__, text_document_sync_kind=t.TextDocumentSyncKind.Full,
                         protocol_cls=TrainlintProtocol)
        self.init_raw: Any = None
        self.config_raw: Any = None
        self.options = opts.ClientOptions()
        self.settings: Settings = Settings()
        self.settings_gen = 0
        self.entries: dict[str, Entry] = {}
        self.disk_lints: dict[tuple[str, str], tuple] = {}  # (config, linked file) -> (stamp, lint or None)
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.last_lint: dict[str, float] = {}
        self.published: set[str] = set()
        self.pending_messages: list[str] = []
        self.debounce_s = max(0.0, DEBOUNCE_MS) / 1000.0
        self.refresh_timer: asyncio.TimerHandle | None = None

    # ---- logging --------------------------------------------------------------------------------
    def log(self, message: str, kind: t.MessageType = t.MessageType.Log) -> None:
        try:
            self.window_log_message(t.LogMessageParams(type=kind, message=f"trainlint: {message}"))
        except Exception:  # noqa: BLE001 - no client to tell (shutting down)
            log.warning("%s", message)

    def log_exception(self, where: str, exc: BaseException) -> None:
        detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=6))
        self.log(f"{where} failed: {type(exc).__name__}: {exc}\n{detail}", t.MessageType.Error)

    def warn(self, message: str) -> None:
        try:
            self.window_show_message(t.ShowMessageParams(type=t.MessageType.Warning, message=f"trainlint: {message}"))
        except Exception:  # noqa: BLE001
            log.warning("%s", message)

    def report_server_error(self, error: Exception, source: Any) -> None:  # pygls hook: log, never pop up
        self.log(f"internal error ({getattr(source, '__name__', source)}): {error}", t.MessageType.Error)

    # ---- client capabilities ----------------------------------------------------------------------
    @property
    def encoding(self) -> str:
        enc = None
        try:
            enc = self.workspace.position_encoding
        except Exception:  # noqa: BLE001 - before initialize
            enc = None
        value = getattr(enc, "value", enc)
        return str(value) if value else "utf-16"

    @property
    def pulls(self) -> bool:
        caps = self.client_capabilities
        return bool(caps and caps.text_document and caps.text_document.diagnostic is not None)

    @property
    def can_refresh(self) -> bool:
        caps = self.client_capabilities
        ws = caps.workspace if caps else None
        return bool(ws and ws.diagnostics and ws.diagnostics.refresh_support)

    @property
    def hover_markup(self) -> t.MarkupKind:
        """Markdown, or plain text where the client prefers it (Eglot without markdown-mode asks for plaintext
        only and would show markdown raw in the echo area)."""
        caps = self.client_capabilities
        hover = caps.text_document.hover if caps and caps.text_document else None
        return convert.preferred_markup(hover.content_format if hover else None)

    @property
    def completion_markup(self) -> t.MarkupKind:
        caps = self.client_capabilities
        completion = caps.text_document.completion if caps and caps.text_document else None
        item = completion.completion_item if completion else None
        return convert.preferred_markup(item.documentation_format if item else None)

    @property
    def can_configure(self) -> bool:
        caps = self.client_capabilities
        return bool(caps and caps.workspace and caps.workspace.configuration)

    # ---- settings ---------------------------------------------------------------------------------
    def apply_options(self) -> None:
        merged = opts.merge(self.init_raw, self.config_raw)
        parsed, problems = opts.parse(merged)
        self.options = parsed
        self.settings = parsed.to_settings()
        self.settings_gen += 1
        if problems:
            self.warn("ignoring bad settings: " + "; ".join(problems))

    # ---- documents --------------------------------------------------------------------------------
    def open_uris(self) -> list[str]:
        return list(self.workspace.text_documents.keys())

    def path_for(self, uri: str) -> str:
        path = to_fs_path(uri)
        if path:
            return path
        # untitled:Untitled-1 and other non-file schemes: a name the engine can sniff a format from
        name = uri.split(":", 1)[-1].rsplit("/", 1)[-1] or "untitled"
        try:
            language = self.workspace.get_text_document(uri).language_id or ""
        except Exception:  # noqa: BLE001
            language = ""
        if not Path(name).suffix:
            name += ".json" if "json" in language.lower() else ".yaml"
        return name

    def uri_for_path(self, path: str) -> str:
        key = _resolved(path)
        for uri in self.open_uris():
            if _resolved(self.path_for(uri)) == key:
                return uri
        return from_fs_path(key) or path

    def open_texts(self) -> dict[str, str]:
        texts = {}
        for uri, doc in list(self.workspace.text_documents.items()):
            try:
                texts[self.path_for(uri)] = doc.source
            except Exception:  # noqa: BLE001
                continue
        return texts

    def open_version(self, path: str) -> Any:
        """Version of the open buffer for a path, or the file's mtime when it is not open."""
        key = _resolved(path)
        for uri, doc in list(self.workspace.text_documents.items()):
            if _resolved(self.path_for(uri)) == key:
                return ("open", doc.version, len(doc.source))
        try:
            return ("disk", os.stat(key).st_mtime_ns)
        except OSError:
            return ("missing",)

    def stamp(self, uri: str, source: str, version: Any, linked: frozenset[str]) -> tuple:
        return (self.settings_gen, version, len(source), tuple(sorted((p, self.open_version(p)) for p in linked)))

    def lint(self, uri: str) -> Entry | None:
        """Lint an open document now (linked files read from open buffers)."""
        try:
            doc = self.workspace.get_text_document(uri)
            source = doc.source
        except Exception as exc:  # noqa: BLE001
            self.log_exception(f"reading {uri}", exc)
            return None
        path = self.path_for(uri)
        result = self.check(source, path)
        linked = set()
        for linked_doc in result.linked or ():
            linked.add(_resolved(linked_doc.path))
        if result.plan is not None:
            linked.update(_resolved(p) for p in getattr(result.plan, "linked_paths", ()) or ())
        linked.discard(_resolved(path))
        frozen = frozenset(linked)
        previous = self.entries.get(uri)
        good = result.flavor if result.document.root is not None and result.flavor != "unknown" else (
            previous.good_flavor if previous else "unknown")
        entry = Entry(uri, path, source, doc.version, result, frozen, self.stamp(uri, source, doc.version, frozen), good)
        self.entries[uri] = entry
        self.last_lint[uri] = time.monotonic()
        if self.pulls and previous is not None and previous.linked != frozen:
            # The set of linked files changed: their reports (seen from this config) change too.
            self.refresh()
        return entry

    def check(self, source: str, path: str) -> engine.FileResult:
        """engine.check_text with open buffers standing in for linked files; never raises."""
        if len(source) > MAX_FILE_BYTES:  # what `trainlint check` refuses to read, the editor too
            doc = Document(path=path, text="", kind="unreadable")
            doc.syntax_error = SyntaxProblem(
                f"the text is {len(source) / 2**20:.1f} MiB; training configs over {MAX_FILE_BYTES // 2**20} MiB "
                "are not checked", doc.span(0, 0))
            return engine.check_document(doc, self.settings)
        try:
            with overlay(self.open_texts()):
                return engine.check_text(source, path, self.settings)
        except Exception as exc:  # noqa: BLE001 - the engine should not raise; if it does, say so in the file
            self.log_exception(f"checking {path}", exc)
            doc = Document(path=path, text="", kind="unreadable")
            doc.syntax_error = SyntaxProblem(f"trainlint cannot read this text: {type(exc).__name__}: {exc}",
                                             doc.span(0, 0))
            return engine.check_document(doc, self.settings)

    def current(self, uri: str) -> Entry | None:
        """The lint of the document's current text (linting again if anything it depends on changed)."""
        try:
            doc = self.workspace.get_text_document(uri)
        except Exception:  # noqa: BLE001
            return None
        if uri not in self.workspace.text_documents:
            return None
        entry = self.entries.get(uri)
        if entry is not None:
            source = doc.source
            if entry.source == source and entry.stamp == self.stamp(uri, source, doc.version, entry.linked):
                return entry
        return self.lint(uri)

    def dependents(self, uri: str) -> list[str]:
        """Open documents whose last lint linked this document's file."""
        key = _resolved(self.path_for(uri))
        return [u for u, e in list(self.entries.items()) if u != uri and key in e.linked and u in self.workspace.text_documents]

    def users(self, uri: str) -> list[Entry]:
        """Current lints of the configs that link this document (for memory hints in a JSON): the open ones, then
        those found on disk by the repository's link index."""
        return [e for e in (self.current(u) for u in self.dependents(uri)) if e is not None] + self.disk_users(uri)

    def disk_users(self, uri: str) -> list[Entry]:
        """Lints of the configs on disk (not open) that link this document, found with the repository's link
        index (context/links.py) and read with the open buffers standing in for their files; each cached until
        the config, the document or the settings change."""
        entry = self.entries.get(uri)
        if entry is None or entry.result.flavor not in engine.LINKABLE_FLAVORS:
            return []
        path = entry.path
        open_paths = {_resolved(self.path_for(u)) for u in self.open_uris()}
        out = []
        for candidate in links.candidates(path, max_age=LINK_INDEX_MAX_AGE_S):
            key = _resolved(candidate)
            if key in open_paths:
                continue  # an open config is one of the dependents, linted from its buffer
            try:
                mtime = os.stat(key).st_mtime_ns
            except OSError:
                continue
            stamp = (self.settings_gen, mtime, self.open_version(path))
            cached = self.disk_lints.get((key, _resolved(path)))
            if cached is None or cached[0] != stamp:
                try:
                    with overlay(self.open_texts()):
                        result = engine.check_path(candidate, self.settings)
                except Exception as exc:  # noqa: BLE001
                    self.log_exception(f"checking {candidate}", exc)
                    continue
                cached = self.disk_lints[(key, _resolved(path))] = (stamp, result if engine.links_to(result, path)
                                                                    else None)
            if cached[1] is not None:
                out.append(Entry(from_fs_path(key) or key, candidate, "", None, cached[1], frozenset({_resolved(path)}),
                                 cached[0], cached[1].flavor))
        return out

    def index_for_path(self, path: str) -> convert.LineIndex | None:
        key = _resolved(path)
        for uri, doc in list(self.workspace.text_documents.items()):
            if _resolved(self.path_for(uri)) == key:
                return convert.LineIndex(doc.source, self.encoding)
        doc = read_document(path)
        if doc.kind == "unreadable":
            return None
        return convert.LineIndex(("\ufeff" if doc.bom else "") + doc.text, self.encoding)

    def report(self, uri: str) -> Report:
        """Diagnostics for one open document: its own, plus what open configs say about it."""
        entry = self.current(uri)
        if entry is None:
            return Report()
        index = convert.LineIndex(entry.source, self.encoding)
        own_key = _resolved(entry.path)
        seen: set = set()
        out = Report(index=index)
        contributors = [entry] + [e for e in (self.current(u) for u in self.dependents(uri)) if e is not None]
        on_disk = self.disk_users(uri)
        if len(contributors) == 1 and not on_disk and not self.is_config(entry):
            return out  # a workflow, a compose file, a tsconfig: not ours to lint
        stamps = []
        # What the linking configs say about the file first, its own lint last: where both report the same finding
        # (a trailing comma, which the linking config's framework reads), theirs is kept, as `trainlint check`
        # keeps it (engine.add_linked_findings).
        for source_entry in contributors[1:] + on_disk + contributors[:1]:
            stamps.append((source_entry.uri, source_entry.stamp))
            diagnostics = source_entry.result.diagnostics
            if any(source_entry is e for e in on_disk):  # a config not open: its findings here name it
                diagnostics = engine.linked_findings(entry.path, entry.path, [source_entry.result])
            elif source_entry is entry and (len(contributors) > 1 or on_disk):
                # estimated in the configs linking it: no "name a model" note on the linked file
                diagnostics = [d for d in diagnostics if d.code != engine.NO_ESTIMATE]
            for d in diagnostics:
                if d.path != entry.path and _resolved(d.path) != own_key:
                    continue
                key = (d.span, d.code)
                if key in seen:
                    continue
                seen.add(key)
                out.pairs.append((d, convert.diagnostic(d, index)))
        out.result_id = f"{abs(hash((tuple(stamps), self.encoding, len(out.pairs)))):x}"
        return out

    def is_config(self, entry: Entry) -> bool:
        """A training config (or was one while its text last parsed): other YAML/JSON gets no diagnostics. A text
        the server will not read at all (too large) still says so: the user opened it."""
        return (entry.good_flavor != "unknown" or entry.result.document.kind == "unreadable"
                or engine.is_training_config(entry.result))

    # ---- publishing -------------------------------------------------------------------------------
    def publish(self, uri: str) -> None:
        if self.pulls or uri not in self.workspace.text_documents:
            return
        report = self.report(uri)
        entry = self.entries.get(uri)
        self.text_document_publish_diagnostics(t.PublishDiagnosticsParams(
            uri=uri, version=entry.version if entry else None, diagnostics=report.items))
        self.published.add(uri)

    def clear(self, uri: str) -> None:
        if self.pulls or uri not in self.published:
            return
        self.published.discard(uri)
        self.text_document_publish_diagnostics(t.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def refresh(self) -> None:
        if self.pulls and self.can_refresh:
            try:
                self.workspace_diagnostic_refresh(None)
            except Exception as exc:  # noqa: BLE001
                self.log_exception("workspace/diagnostic/refresh", exc)

    def refresh_views(self) -> None:
        """Inlay hints and code lenses depend on settings and linked files too: ask clients that
        support it to request them again."""
        caps = self.client_capabilities
        ws = caps.workspace if caps else None
        try:
            if ws and ws.inlay_hint and ws.inlay_hint.refresh_support:
                self.workspace_inlay_hint_refresh(None)
            if ws and ws.code_lens and ws.code_lens.refresh_support:
                self.workspace_code_lens_refresh(None)
        except Exception as exc:  # noqa: BLE001
            self.log_exception("inlay hint / code lens refresh", exc)

    def related_uris(self, uri: str) -> list[str]:
        """Open documents whose report depends on this one: configs linking it, files it links."""
        out = list(self.dependents(uri))
        entry = self.entries.get(uri)
        if entry is not None:
            for other in self.open_uris():
                if other != uri and _resolved(self.path_for(other)) in entry.linked:
                    out.append(other)
        return list(dict.fromkeys(out))

    def lint_and_publish(self, uri: str) -> None:
        self.timers.pop(uri, None)
        try:
            if uri not in self.workspace.text_documents:
                return
            if self.pulls:
                # Nothing to push (the client pulls this document itself). If another open document
                # depends on this one (by the last lint's links), ask the client to pull again.
                if uri not in self.entries:
                    self.lint(uri)
                if self.related_uris(uri):
                    self.refresh()
                    self.refresh_views()
                return
            self.lint(uri)
            self.publish(uri)
            related = self.related_uris(uri)
            for other in related:
                self.publish(other)
            if related:
                self.refresh_views()
        except Exception as exc:  # noqa: BLE001
            self.log_exception(f"linting {uri}", exc)

    def schedule(self, uri: str, immediate: bool = False) -> None:
        loop = asyncio.get_event_loop()
        old = self.timers.pop(uri, None)
        if old is not None:
            old.cancel()
        quiet = time.monotonic() - self.last_lint.get(uri, 0.0) >= self.debounce_s
        if immediate or (quiet and old is None) or self.debounce_s == 0:
            self.timers[uri] = loop.call_soon(self.lint_and_publish, uri)  # type: ignore[assignment]
        else:
            self.timers[uri] = loop.call_later(self.debounce_s, self.lint_and_publish, uri)

    def context_changed(self, path: str) -> bool:
        """Whether a changed file decides how configs run: a launch script, Makefile, CI workflow or README (the
        launch index), a pin file or Dockerfile (versions), an accelerate config a launch names, or a Python script (the parser).
        If so, forget the context caches so the next lint reads them again."""
        if not (launch.is_launch_file(path) or pins.is_pin_file(path) or launch.is_cached_config(path)
                or installs.is_install_file(path) or path.endswith(".py")):
            return False
        launch.clear_cache()
        pins.clear_cache()
        dialect.clear_cache()
        imports.clear_cache()  # the launched scripts' imports (version cuts)
        self.settings_gen += 1
        return True

    def relint_all(self) -> None:
        self.refresh_views()
        if self.pulls:
            self.refresh()
            return
        for uri in self.open_uris():
            try:
                self.lint(uri)
            except Exception as exc:  # noqa: BLE001
                self.log_exception(f"linting {uri}", exc)
        for uri in self.open_uris():
            try:
                self.publish(uri)
            except Exception as exc:  # noqa: BLE001
                self.log_exception(f"publishing {uri}", exc)
