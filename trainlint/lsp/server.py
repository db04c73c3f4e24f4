"""The language server's request and notification handlers (pygls 2.x); the per-document state they
read lives in `trainlint.lsp.state`. See that module for what the server does and its settings.

Every handler is guarded: an exception is logged to the client (window/logMessage) and the request gets
an empty answer; the server keeps serving.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import os
from pathlib import Path
from collections.abc import Sequence
from typing import Any, Callable

from lsprotocol import types as t

from trainlint import __version__, engine
from trainlint.context import launch, links
from trainlint.context.settings import find_project_config
from trainlint.diagnostics import Severity
from trainlint.document.reading import overlay
from trainlint.fixes.apply import compute_fixes
from trainlint.lsp import convert, features, options as opts
from trainlint.lsp.state import (CONFIG_TIMEOUT_S, FIX_ALL_KIND, SHOW_ESTIMATE, Entry, Report, TrainlintServer,
                                 _resolved)

server = TrainlintServer()


# Names of handlers that raise on purpose (tests of the guard): TRAINLINT_LSP_FAULT=hover,code_action
_FAULTS = set(filter(None, os.environ.get("TRAINLINT_LSP_FAULT", "").split(",")))


def guarded(default: Callable[[], Any] | Any = None):
    """Run a handler; on any exception log it and answer `default` (a value or a factory)."""

    def decorate(fn):
        def fallback():
            return default() if callable(default) else default

        if fn.__name__ in _FAULTS:
            original = fn
            if inspect.iscoroutinefunction(original):
                async def fn(ls, params=None):  # noqa: F811
                    raise RuntimeError(f"injected fault in {original.__name__}")
            else:
                def fn(ls, params=None):  # noqa: F811
                    raise RuntimeError(f"injected fault in {original.__name__}")
            fn.__name__ = original.__name__

        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def async_wrapper(ls: TrainlintServer, params: Any = None):
                try:
                    return await fn(ls, params)
                except Exception as exc:  # noqa: BLE001
                    ls.log_exception(fn.__name__, exc)
                    return fallback()
            return async_wrapper

        @functools.wraps(fn)
        def wrapper(ls: TrainlintServer, params: Any = None):
            try:
                return fn(ls, params)
            except Exception as exc:  # noqa: BLE001
                ls.log_exception(fn.__name__, exc)
                return fallback()
        return wrapper

    return decorate


# ---- lifecycle and settings ------------------------------------------------------------------------


@server.feature(t.INITIALIZE)
@guarded()
def initialize(ls: TrainlintServer, params: t.InitializeParams):
    ls.init_raw = params.initialization_options
    merged = opts.merge(ls.init_raw)
    parsed, problems = opts.parse(merged)
    ls.options, ls.settings = parsed, parsed.to_settings()
    ls.settings_gen += 1
    ls.pending_messages.extend(problems)


@server.feature(t.INITIALIZED)
@guarded()
async def initialized(ls: TrainlintServer, params: t.InitializedParams):
    if ls.pending_messages:
        ls.warn("ignoring bad settings: " + "; ".join(ls.pending_messages))
        ls.pending_messages.clear()
    ls.log(f"trainlint {__version__} ready ({'pull' if ls.pulls else 'push'} diagnostics, {ls.encoding})",
           t.MessageType.Info)
    if ls.can_configure:
        await pull_configuration(ls)


async def pull_configuration(ls: TrainlintServer, force: bool = False) -> None:
    try:
        result = await asyncio.wait_for(ls.workspace_configuration_async(t.ConfigurationParams(
            items=[t.ConfigurationItem(section="trainlint")])), CONFIG_TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001 - a client that does not answer keeps the init options
        ls.log(f"workspace/configuration failed: {type(exc).__name__}: {exc}", t.MessageType.Warning)
        return
    value = result[0] if isinstance(result, (list, tuple)) and result else None
    if value is not None and not isinstance(value, dict):
        value = None
    if value == ls.config_raw and not force:
        return
    ls.config_raw = value
    ls.apply_options()
    ls.relint_all()


@server.feature(t.WORKSPACE_DID_CHANGE_CONFIGURATION)
@guarded()
async def did_change_configuration(ls: TrainlintServer, params: t.DidChangeConfigurationParams):
    settings = params.settings
    section = None
    if isinstance(settings, dict):
        if isinstance(settings.get("trainlint"), dict):
            section = settings["trainlint"]
        elif set(settings) & (opts.KNOWN | set(opts.ALIASES)):
            section = settings
    if section is not None:
        ls.config_raw = section
    elif ls.can_configure:
        await pull_configuration(ls, force=True)
        return
    ls.apply_options()
    ls.relint_all()


# ---- document sync ---------------------------------------------------------------------------------


@server.feature(t.TEXT_DOCUMENT_DID_OPEN)
@guarded()
def did_open(ls: TrainlintServer, params: t.DidOpenTextDocumentParams):
    uri = params.text_document.uri
    ls.schedule(uri, immediate=True)


@server.feature(t.TEXT_DOCUMENT_DID_CHANGE)
@guarded()
def did_change(ls: TrainlintServer, params: t.DidChangeTextDocumentParams):
    ls.schedule(params.text_document.uri)


@server.feature(t.TEXT_DOCUMENT_DID_SAVE, t.SaveOptions(include_text=False))
@guarded()
def did_save(ls: TrainlintServer, params: t.DidSaveTextDocumentParams):
    uri = params.text_document.uri
    name = Path(ls.path_for(uri)).name
    if name in ("pyproject.toml", "trainlint.toml"):
        find_project_config.cache_clear()
        ls.settings_gen += 1
        ls.relint_all()
        return
    links.clear_cache()  # a saved config may link (or stop linking) a DeepSpeed file
    launch.forget_lookups()  # a file saved for the first time may be the one a launch's relative path names
    if ls.context_changed(ls.path_for(uri)):  # a launch script, pin file or accelerate config: relint the rest
        ls.relint_all()
    ls.schedule(uri, immediate=True)


@server.feature(t.WORKSPACE_DID_CHANGE_WATCHED_FILES)
@guarded()
def did_change_watched_files(ls: TrainlintServer, params: t.DidChangeWatchedFilesParams):
    changed = False
    if params.changes:
        launch.forget_lookups()  # a file created or deleted may change which one a launch's relative path names
    for change in params.changes or ():
        path = ls.path_for(change.uri)
        if Path(path).name in ("pyproject.toml", "trainlint.toml"):
            find_project_config.cache_clear()
            ls.settings_gen += 1
            changed = True
        changed = ls.context_changed(path) or changed
    if changed:
        ls.relint_all()


@server.feature(t.TEXT_DOCUMENT_DID_CLOSE)
@guarded()
def did_close(ls: TrainlintServer, params: t.DidCloseTextDocumentParams):
    uri = params.text_document.uri
    timer = ls.timers.pop(uri, None)
    if timer is not None:
        timer.cancel()
    entry = ls.entries.pop(uri, None)
    ls.last_lint.pop(uri, None)
    ls.clear(uri)
    if entry is None:
        return
    key = _resolved(entry.path)
    # Configs that linked it now read the file from disk; files it linked lose its findings.
    related = [u for u, e in list(ls.entries.items()) if key in e.linked]
    related += [u for u in ls.open_uris() if _resolved(ls.path_for(u)) in entry.linked]
    if ls.pulls:
        if related:
            ls.refresh()
        return
    for other in dict.fromkeys(related):
        ls.publish(other)


# ---- diagnostics (pull) ----------------------------------------------------------------------------


@server.feature(t.TEXT_DOCUMENT_DIAGNOSTIC, t.DiagnosticOptions(
    identifier="trainlint", inter_file_dependencies=True, workspace_diagnostics=False))
@guarded(lambda: t.FullDocumentDiagnosticReport(items=[]))
def pull_diagnostics(ls: TrainlintServer, params: t.DocumentDiagnosticParams):
    report = ls.report(params.text_document.uri)
    if params.previous_result_id and report.result_id and params.previous_result_id == report.result_id:
        return t.UnchangedDocumentDiagnosticReport(result_id=report.result_id)
    return t.FullDocumentDiagnosticReport(items=report.items, result_id=report.result_id)


# ---- code actions ----------------------------------------------------------------------------------


def _wants(only: Sequence[t.CodeActionKind | str] | None, kind: str) -> bool:
    if not only:
        return True
    return any(kind == o or kind.startswith(f"{o}.") for o in (str(getattr(k, "value", k)) for k in only))


def _overlaps(a: t.Range, b: t.Range) -> bool:
    a0, a1 = (a.start.line, a.start.character), (a.end.line, a.end.character)
    b0, b1 = (b.start.line, b.start.character), (b.end.line, b.end.character)
    return a0 <= b1 and b0 <= a1


def _same_diagnostic(client: t.Diagnostic, ours: t.Diagnostic) -> bool:
    return str(client.code) == str(ours.code) and client.range == ours.range and (client.source in (None, convert.SOURCE))


def _workspace_edit(ls: TrainlintServer, edits) -> t.WorkspaceEdit | None:
    by_uri: dict[str, list[t.TextEdit]] = {}
    indexes: dict[str, convert.LineIndex | None] = {}
    for edit in edits:
        if edit.path not in indexes:
            indexes[edit.path] = ls.index_for_path(edit.path)
        index = indexes[edit.path]
        if index is None:
            return None
        by_uri.setdefault(ls.uri_for_path(edit.path), []).append(convert.text_edit(edit, index))
    return t.WorkspaceEdit(changes=by_uri) if by_uri else None


def fix_all_edit(ls: TrainlintServer, entry: Entry) -> t.WorkspaceEdit | None:
    texts = ls.open_texts()
    texts[entry.path] = entry.source
    settings = ls.settings
    with overlay(texts):
        outcome = compute_fixes([entry.path], lambda p: engine.check_path(p, settings), unsafe=False)
    new = outcome.fixed.get(entry.path)
    if new is None:
        key = _resolved(entry.path)
        new = next((text for p, text in outcome.fixed.items() if _resolved(p) == key), None)
    if new is None:
        return None
    index = convert.LineIndex(entry.source, ls.encoding)
    edit = convert.minimal_edit(entry.source, new, index)
    return t.WorkspaceEdit(changes={entry.uri: [edit]}) if edit else None


@server.feature(t.TEXT_DOCUMENT_CODE_ACTION, t.CodeActionOptions(
    code_action_kinds=[t.CodeActionKind.QuickFix, t.CodeActionKind.SourceFixAll, FIX_ALL_KIND],
    resolve_provider=False))
@guarded(list)
def code_action(ls: TrainlintServer, params: t.CodeActionParams):
    uri = params.text_document.uri
    entry = ls.current(uri)
    if entry is None:
        return []
    only = params.context.only
    actions: list[t.CodeAction] = []
    report = ls.report(uri)
    index = report.index  # None only for a document without a lint, which has no findings either
    doc = entry.result.document
    if _wants(only, t.CodeActionKind.QuickFix.value):
        client_diags = list(params.context.diagnostics or [])
        preferred_given = False
        disables: list[t.CodeAction] = []
        disabled_codes: set[tuple[str, int]] = set()
        file_codes: set[str] = set()
        for d, ours in report.pairs:
            match = next((c for c in client_diags if _same_diagnostic(c, ours)), None)
            if match is None and not _overlaps(ours.range, params.range):
                continue
            attach = [match or ours]
            for fix in d.fixes:
                edit = _workspace_edit(ls, fix.edits)
                if edit is None:
                    continue
                title = fix.title if fix.safe else f"{fix.title} (unsafe)"
                actions.append(t.CodeAction(title=f"{title} ({d.code})", kind=t.CodeActionKind.QuickFix,
                                            diagnostics=attach, is_preferred=not preferred_given or None, edit=edit))
                preferred_given = True
            if doc.kind == "yaml" and index is not None and (d.path == entry.path
                                                             or _resolved(d.path) == _resolved(entry.path)):
                line = d.span.start.line
                if (d.code, line) not in disabled_codes:
                    disabled_codes.add((d.code, line))
                    change = features.disable_line_edit(doc, line, d.code)
                    if change is not None:
                        start, end, text = change
                        line_edit = t.TextEdit(range=t.Range(start=index.from_pos(doc.pos(start)),
                                                             end=index.from_pos(doc.pos(end))), new_text=text)
                        disables.append(t.CodeAction(
                            title=f"trainlint: disable {d.code} on this line", kind=t.CodeActionKind.QuickFix,
                            diagnostics=attach, edit=t.WorkspaceEdit(changes={uri: [line_edit]})))
                if d.code not in file_codes:
                    file_codes.add(d.code)
                    start, end, text = features.disable_file_edit(doc, d.code)
                    file_edit = t.TextEdit(range=t.Range(start=index.from_pos(doc.pos(start)),
                                                         end=index.from_pos(doc.pos(end))), new_text=text)
                    disables.append(t.CodeAction(
                        title=f"trainlint: disable {d.code} in this file", kind=t.CodeActionKind.QuickFix,
                        diagnostics=attach, edit=t.WorkspaceEdit(changes={uri: [file_edit]})))
        actions.extend(disables)
    # Fix-all re-lints until nothing changes (several engine runs): only when asked for by kind
    # (`source`, `source.fixAll`, `source.fixAll.trainlint`: editors' fix-on-save and source menus),
    # not on every cursor move's lightbulb request.
    if only and _wants(only, FIX_ALL_KIND) and any(f.safe for d, _ in report.pairs for f in d.fixes):
        edit = fix_all_edit(ls, entry)
        if edit is not None:
            actions.append(t.CodeAction(title="trainlint: fix all safe problems", kind=FIX_ALL_KIND, edit=edit))
    return actions


# ---- hover, completion, inlay hints, code lens -----------------------------------------------------


def markup(text: str, kind: t.MarkupKind) -> t.MarkupContent:
    """trainlint's markdown, as plain text for a client that asked for plaintext."""
    if kind == t.MarkupKind.PlainText:
        return t.MarkupContent(kind=kind, value=convert.markdown_to_plaintext(text))
    return t.MarkupContent(kind=t.MarkupKind.Markdown, value=text)


@server.feature(t.TEXT_DOCUMENT_HOVER)
@guarded()
def hover(ls: TrainlintServer, params: t.HoverParams):
    entry = ls.current(params.text_document.uri)
    if entry is None:
        return None
    index = convert.LineIndex(entry.source, ls.encoding)
    offset = index.to_doc_offset(params.position)
    users = tuple((Path(e.path).name, e.result) for e in ls.users(entry.uri))
    text = features.hover_markdown(entry.result, entry.result.document, offset, params.position.line, users)
    if not text:
        return None
    return t.Hover(contents=markup(text, ls.hover_markup))


@server.feature(t.TEXT_DOCUMENT_COMPLETION, t.CompletionOptions(trigger_characters=['"', ":", " "]))
@guarded(lambda: t.CompletionList(is_incomplete=False, items=[]))
def completion(ls: TrainlintServer, params: t.CompletionParams):
    uri = params.text_document.uri
    entry = ls.current(uri)
    if entry is None:
        return t.CompletionList(is_incomplete=False, items=[])
    doc = entry.result.document
    index = convert.LineIndex(entry.source, ls.encoding)
    offset = index.to_doc_offset(params.position)
    pos = doc.pos(offset)
    flavor = entry.result.flavor if entry.result.flavor != "unknown" else entry.good_flavor
    if flavor == "unknown":
        flavor = features.guess_flavor(doc.text, entry.path, pos.line)
    trigger = params.context.trigger_character if params.context is not None else None
    found = features.completions(flavor, doc.kind, doc.text, pos.line, pos.column, offset,
                                 values_only=trigger in (" ", ":"))
    items = []
    kind = ls.completion_markup
    for i, c in enumerate(found):
        items.append(t.CompletionItem(
            label=c.label,
            kind=t.CompletionItemKind.Property if c.kind == "key" else t.CompletionItemKind.EnumMember,
            detail=c.detail,
            documentation=markup(c.documentation, kind) if c.documentation else None,
            insert_text=c.insert_text,
            sort_text=f"{i:05d}",
            tags=[t.CompletionItemTag.Deprecated] if c.deprecated else None,
        ))
    return t.CompletionList(is_incomplete=False, items=items)


@server.feature(t.TEXT_DOCUMENT_INLAY_HINT, t.InlayHintOptions(resolve_provider=False))
@guarded(list)
def inlay_hints(ls: TrainlintServer, params: t.InlayHintParams):
    entry = ls.current(params.text_document.uri)
    if entry is None:
        return []
    doc = entry.result.document
    index = convert.LineIndex(entry.source, ls.encoding)
    hints = []
    sources = [("", entry.result)] + [(Path(e.path).name, e.result) for e in ls.users(entry.uri)]
    for name, result in sources:
        for effect in features.memory_effects(result, doc):
            position = index.from_pos(doc.pos(effect.value_end))
            if not (params.range.start.line <= position.line <= params.range.end.line):
                continue
            label = features.effect_text(effect) + (f" ({name})" if name else "")
            hints.append(t.InlayHint(position=position, label=label, padding_left=True,
                                     tooltip=f"per GPU{' for ' + name if name else ''}, if {effect.label}"))
    return hints


def _failures(ls: TrainlintServer, report: Report) -> int:
    level = ls.options.fail_level or "warning"
    threshold = Severity(level).rank
    return sum(1 for d, _ in report.pairs if d.severity.rank >= threshold)


@server.feature(t.TEXT_DOCUMENT_CODE_LENS, t.CodeLensOptions(resolve_provider=False))
@guarded(list)
def code_lens(ls: TrainlintServer, params: t.CodeLensParams):
    uri = params.text_document.uri
    entry = ls.current(uri)
    if entry is None or (not ls.is_config(entry) and not ls.dependents(uri)):
        return []
    top = t.Range(start=t.Position(line=0, character=0), end=t.Position(line=0, character=0))
    lenses = []
    title = convert.breakdown_title(entry.result.estimate)
    if title:
        lenses.append(t.CodeLens(range=top, command=t.Command(title=title, command=SHOW_ESTIMATE, arguments=[uri])))
    report = ls.report(uri)
    failures = _failures(ls, report)
    level = ls.options.fail_level or "warning"
    title = f"trainlint: {failures} finding(s) at {level} or above" if failures else \
        f"trainlint: no findings at {level} or above"
    lenses.append(t.CodeLens(range=top, command=t.Command(title=title, command=SHOW_ESTIMATE, arguments=[uri])))
    return lenses


@server.command(SHOW_ESTIMATE)
def show_estimate(ls: TrainlintServer, *args: Any):
    try:
        uri = args[0] if args else None
        entry = ls.current(uri) if isinstance(uri, str) else None
        text = convert.breakdown_markdown(entry.result.estimate) if entry else None
        if text and entry is not None:
            summary = convert.breakdown_title(entry.result.estimate) or "trainlint estimate"
            ls.window_show_message(t.ShowMessageParams(type=t.MessageType.Info, message=summary))
        return text
    except Exception as exc:  # noqa: BLE001
        ls.log_exception("trainlint.showEstimate", exc)
        return None


def run() -> None:
    """Serve LSP over stdio until the client exits."""
    logging.basicConfig(level=logging.WARNING)
    server.start_io()


if __name__ == "__main__":
    run()
