"""`--output-format sarif`: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

One run; `tool.driver.rules` lists every rule (the rule docs as `fullDescription` and `help`) plus any
engine code that appears in the results; each result has `ruleId` and `ruleIndex`, a 1-based region
(columns in code points: `columnKind: unicodeCodePoints`, `endColumn` exclusive), the one-line message as
`message.text` (and, when the finding has a detail, the message then the detail as `message.markdown`, which
viewers show instead), the fixes as `artifactChanges`, and a `partialFingerprints` entry that survives lines
moving. Paths are written relative to the base directory (the current directory) under `uriBaseId: %SRCROOT%`
when they lie inside it, as absolute `file://` URIs otherwise.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from urllib.parse import quote

from trainlint import __version__
from trainlint.engine import printable
from trainlint.output.full import document_for
from trainlint.rules import all_rules

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/trainlint/trainlint"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
SRCROOT = "%SRCROOT%"
FINGERPRINT = "trainlint/v1"

# Codes the engine emits itself (not rule modules): name, summary.
ENGINE_CODES = {
    "TL000": ("internal-error", "trainlint failed on this file"),
    "TL010": ("invalid-settings", "A trainlint setting (directive comment or project config) is invalid"),
}


def relative_path(path: str, base: str | None = None) -> str | None:
    """`path` relative to `base` (default: the current directory) with forward slashes, or None when it
    lies outside it (or is not a file path, like `<stdin>`)."""
    if path.startswith("<"):
        return None
    base = os.path.abspath(base or os.getcwd())
    full = os.path.abspath(path)
    try:
        rel = os.path.relpath(full, base)
    except ValueError:  # another drive on Windows
        return None
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return None
    return Path(rel).as_posix()


def fingerprints(results: list, base: str | None = None) -> dict[int, str]:
    """A stable fingerprint per diagnostic (keyed by `id(diagnostic)`): a hash of the code, the path, the
    key path and source text under the span, and which occurrence of that triple it is; line numbers
    and messages (which carry numbers that change) are left out so the fingerprint survives edits
    elsewhere in the file."""
    out: dict[int, str] = {}
    seen: dict[tuple, int] = {}
    for result in results:
        for d in result.diagnostics:
            doc = document_for(result, d)
            key_path, text = "", ""
            if doc is not None and d.span.end.offset > 0:  # (a finding on the whole file has no key or text)
                text = doc.text[d.span.start.offset:d.span.end.offset].strip()
                if not text:
                    text = doc.line_text(d.span.start.line).strip()
                found = doc.node_at(d.span.start.offset) if doc.root is not None else None
                if found:
                    key_path = ".".join(str(k) for k in found[0])
            path = relative_path(d.path, base) or d.path
            triple = (d.code, path, key_path, text[:200])
            seen[triple] = seen.get(triple, 0) + 1
            raw = "\x00".join((*triple, str(seen[triple])))
            out[id(d)] = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return out


def _artifact(path: str, base: str | None) -> dict:
    rel = relative_path(path, base)
    if rel is not None:
        return {"uri": quote(rel, safe="/"), "uriBaseId": SRCROOT}
    if path.startswith("<"):
        return {"uri": quote(path.strip("<>"), safe="")}
    return {"uri": Path(os.path.abspath(path)).as_uri()}


def _region(span) -> dict:
    return {"startLine": span.start.line + 1, "startColumn": span.start.column + 1,
            "endLine": span.end.line + 1, "endColumn": span.end.column + 1}


def _rule(module) -> dict:
    rule = module.RULE
    doc = (module.__doc__ or rule.summary).strip()
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": doc},
        "help": {"text": doc, "markdown": doc},
        "helpUri": rule.url,
        "defaultConfiguration": {"level": LEVELS[rule.severity.value], "enabled": rule.enabled_by_default},
        "properties": {"tags": ["training-config"] + list(rule.flavors)},
    }


def _engine_rule(d) -> dict:
    name, summary = ENGINE_CODES.get(d.code, (d.name or d.code.lower(), d.name or d.code))
    return {"id": d.code, "name": name, "shortDescription": {"text": summary},
            "fullDescription": {"text": summary}, "defaultConfiguration": {"level": LEVELS[d.severity.value]}}


def message(d) -> dict:
    """The headline as text; with a detail, the markdown viewers prefer: the headline, then the detail."""
    if not d.detail:
        return {"text": d.message}
    return {"text": d.message, "markdown": f"{d.message}\n\n{d.detail}"}


def _fix(fix, base: str | None) -> dict:
    changes: dict[str, list[dict]] = {}
    for edit in fix.edits:
        changes.setdefault(printable(edit.path), []).append(
            {"deletedRegion": _region(edit.span), "insertedContent": {"text": edit.new_text}})
    return {"description": {"text": f"{fix.title} ({fix.applicability})"},
            "artifactChanges": [{"artifactLocation": _artifact(path, base), "replacements": replacements}
                                for path, replacements in changes.items()],
            "properties": {"applicability": fix.applicability}}


def sarif_log(results: list, base: str | None = None) -> dict:
    rules = [_rule(m) for m in all_rules()]
    index = {r["id"]: i for i, r in enumerate(rules)}
    prints = fingerprints(results, base)
    sarif_results = []
    for result in results:
        for d in result.diagnostics:
            if d.code not in index:
                index[d.code] = len(rules)
                rules.append(_engine_rule(d))
            entry = {
                "ruleId": d.code,
                "ruleIndex": index[d.code],
                "level": LEVELS[d.severity.value],
                "message": message(d),
                "locations": [{"physicalLocation": {"artifactLocation": _artifact(d.path, base),
                                                    "region": _region(d.span)}}],
                "partialFingerprints": {FINGERPRINT: prints[id(d)]},
            }
            if d.fixes:
                entry["fixes"] = [_fix(f, base) for f in d.fixes]
            sarif_results.append(entry)
    root = Path(os.path.abspath(base or os.getcwd())).as_uri().rstrip("/") + "/"
    run = {
        "tool": {"driver": {"name": "trainlint", "version": __version__, "semanticVersion": __version__,
                            "informationUri": INFORMATION_URI, "rules": rules}},
        "invocations": [{"executionSuccessful": not any(getattr(r, "internal_error", False) for r in results)}],
        "originalUriBaseIds": {SRCROOT: {"uri": root}},
        "columnKind": "unicodeCodePoints",
        "results": sarif_results,
    }
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def render(results: list, base: str | None = None, **_: object) -> str:
    return json.dumps(sarif_log(results, base), indent=2) + "\n"
