"""`--output-format json`: the stable contract of DESIGN.md (version 1). Lines and columns are 1-based."""

from __future__ import annotations

import json

from trainlint.engine import printable


def position(pos) -> dict:
    return {"line": pos.line + 1, "column": pos.column + 1}


def span(s) -> dict:
    return {"start": position(s.start), "end": position(s.end)}


def diagnostic(d) -> dict:
    return {
        "code": d.code,
        "name": d.name,
        "severity": d.severity.value,
        "message": d.message,
        "detail": d.detail,
        "path": d.path,
        "range": span(d.span),
        "fixes": [{"title": f.title, "applicability": f.applicability,
                   "edits": [{"path": printable(e.path), "range": span(e.span), "new_text": e.new_text} for e in f.edits]}
                  for f in d.fixes],
        "assumptions": list(d.assumptions),
    }


def file_entry(result) -> dict:
    estimate = result.estimate.to_json() if result.estimate is not None else None
    return {"path": result.path, "flavor": result.flavor,
            "diagnostics": [diagnostic(d) for d in result.diagnostics], "estimate": estimate}


def render(results: list, **_: object) -> str:
    return json.dumps({"version": 1, "files": [file_entry(r) for r in results]}, indent=2) + "\n"
