"""`--output-format gitlab`: a GitLab Code Quality report (the Code Climate issue subset GitLab reads),
for `artifacts: reports: codequality:`.

A JSON list of `{description, check_name, fingerprint, severity, location: {path, lines: {begin, end}}}`.
Paths are relative to the current directory (the project root in CI). The fingerprint is a hash of
path, code, key path and source text (not the line number or the message), so a finding keeps its
identity when lines move. Severities: error → major, warning → minor, info → info; a trainlint
failure on a file (TL000) → blocker.
"""

from __future__ import annotations

import json

from trainlint.output.sarif import fingerprints, relative_path

SEVERITIES = {"error": "major", "warning": "minor", "info": "info"}


def issue(d, fingerprint: str, base: str | None = None) -> dict:
    end_line = d.span.end.line
    if end_line > d.span.start.line and d.span.end.column == 0:
        end_line -= 1
    return {
        "type": "issue",
        "engine_name": "trainlint",
        "check_name": d.code,
        "description": f"{d.code} {d.message}",
        "categories": ["Bug Risk"],
        "severity": "blocker" if d.code == "TL000" else SEVERITIES[d.severity.value],
        "fingerprint": fingerprint,
        "location": {"path": relative_path(d.path, base) or d.path,
                     "lines": {"begin": d.span.start.line + 1, "end": end_line + 1}},
    }


def render(results: list, base: str | None = None, **_: object) -> str:
    prints = fingerprints(results, base)
    issues = [issue(d, prints[id(d)], base) for r in results for d in r.diagnostics]
    return json.dumps(issues, indent=2) + "\n"
