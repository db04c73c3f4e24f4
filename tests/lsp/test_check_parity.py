"""The language server reports exactly what `trainlint check` reports for the same text, settings and context: every
rule fixture, opened in the real server, edited by a seeded random sequence of changes (lines deleted, duplicated,
numbers changed, garbage typed, undone), then its diagnostics pulled and compared, finding by finding (code,
severity, line, message (the server adds what the finding assumed on a line of its own), the fixes' titles and their
edits' new texts), with `trainlint check --output-format json` on the final texts.

The final texts are saved before the pull, so the server's open buffers and the files the command line reads are the
same world (linked DeepSpeed files included). Folders whose fixtures need command-line arguments (`args`) are left
out: the server has no such flags. The command line names every file, as an editor opens it; it names files relative
to where it runs (the server: absolute paths, made relative here). Two things differ by design and are left out:
TL005 ("not a training config format", which the command line says of any file it is given and the server of a file
that was a config while it is being edited), and the findings of a file that is no training config in its final text (a template, a foreign format, a YAML the
edits broke) and never was one in the server, which does not lint such a file at all.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fuzz import lsp_campaign

REPO = Path(__file__).resolve().parents[2]
SUFFIXES = (".yaml", ".yml", ".json", ".conf")
SEED = 20261202
_NUMBER = re.compile(r"(?<![\w.])\d+(?![\w.])")


def _edit(rng: random.Random, text: str) -> str:
    lines = text.splitlines(keepends=True)
    roll = rng.random()
    if not lines:
        return text + "x: 1\n"
    i = rng.randrange(len(lines))
    if roll < 0.25:
        return "".join(lines[:i] + lines[i + 1:])
    if roll < 0.45:
        return "".join(lines[:i] + [lines[i]] + lines[i:])
    if roll < 0.75:
        numbers = list(_NUMBER.finditer(text))
        if numbers:
            m = rng.choice(numbers)
            value = rng.choice(["0", "1", "3", "64", "-2", "4096", "99999999999"])
            return text[:m.start()] + value + text[m.end():]
    if roll < 0.9:
        k = rng.randrange(len(text) + 1)
        return text[:k] + rng.choice(["{", "]", ": ", "\n  - ", "\t", "#", '"']) + text[k:]
    return text


def _fixture_files(root: Path) -> list[Path]:
    shutil.copytree(REPO / "tests" / "fixtures", root / "fixtures")
    out = []
    for folder in sorted(p for p in (root / "fixtures").iterdir() if p.is_dir()):
        if (folder / "args").exists():
            continue
        out.extend(sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in SUFFIXES))
    return out


def _action(action: dict, code: str) -> tuple:
    """A quick-fix code action as (title without its code, the new texts of its edits)."""
    edit = action.get("edit") or {}
    texts = [e["newText"] for edits in (edit.get("changes") or {}).values() for e in edits]
    texts += [e["newText"] for change in edit.get("documentChanges") or [] for e in change.get("edits", [])]
    title = action["title"]
    return (title[:-len(f" ({code})")] if title.endswith(f" ({code})") else title, tuple(sorted(texts)))


def _key(code, severity, line, message, fixes) -> tuple:
    return (code, severity, line, message, tuple(fixes))


def test_server_reports_what_check_reports_after_random_edits(tmp_path):
    rng = random.Random(SEED)
    files = _fixture_files(tmp_path)
    client = lsp_campaign.Client(tmp_path)
    server: dict[str, set] = {}
    try:
        rid = client.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {
            "general": {"positionEncodings": ["utf-8"]},
            "textDocument": {"diagnostic": {"dynamicRegistration": False},
                             "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix"]}}}}}})
        assert client.wait_for(rid, 180) is not None  # a loaded machine starts the server slowly
        client.notify("initialized", {})
        for path in files:
            uri = path.as_uri()
            text = path.read_text(encoding="utf-8", errors="surrogateescape")
            client.notify("textDocument/didOpen", {"textDocument": {
                "uri": uri, "languageId": "json" if path.suffix == ".json" else "yaml", "version": 1, "text": text}})
            for version in range(2, 2 + rng.randrange(1, 5)):
                text = _edit(rng, text)
                client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                         "contentChanges": [{"text": text}]})
            path.write_text(text, encoding="utf-8", errors="surrogateescape")
        for path in files:
            uri = path.as_uri()
            rid = client.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
            answer = client.wait_for(rid, 180)
            assert answer is not None and "result" in answer, (path, answer)
            found = set()
            for d in answer["result"].get("items", []):
                if d.get("code") == "TL005":
                    continue
                rid = client.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": d["range"],
                                                                 "context": {"diagnostics": [d]}})
                actions = (client.wait_for(rid, 120) or {}).get("result") or []
                titles = sorted(_action(a, d.get("code")) for a in actions if a.get("kind", "") == "quickfix"
                                and not a["title"].startswith("trainlint: disable")
                                and any(x.get("code") == d.get("code") for x in a.get("diagnostics", [])))
                found.add(_key(d.get("code"), {1: "error", 2: "warning", 3: "info", 4: "info"}[d.get("severity", 1)],
                               d["range"]["start"]["line"],
                               d["message"].split("\nAssumed: ")[0].replace(f"{tmp_path}/", ""), titles))
            server[str(path)] = found
    finally:
        client.kill()
    proc = subprocess.run([sys.executable, "-m", "trainlint", "check", "--output-format", "json",
                           *[str(p.relative_to(tmp_path)) for p in files]], cwd=tmp_path, capture_output=True,
                          timeout=600)
    report = json.loads(proc.stdout)
    cli: dict[str, set] = {str(p): set() for p in files}
    foreign = set()
    for entry in report["files"]:
        if entry.get("flavor") == "unknown":
            foreign.add(str(tmp_path / entry["path"]))
        for d in entry["diagnostics"]:
            key = str(tmp_path / d["path"])
            if key in cli and d["code"] != "TL005":
                cli[key].add(_key(d["code"], d["severity"], d["range"]["start"]["line"] - 1, d["message"],
                                  sorted((f["title"] + ("" if f["applicability"] == "safe" else " (unsafe)"),
                                          tuple(sorted(e["new_text"] for e in f["edits"])))
                                         for f in d.get("fixes", []))))
    differ = {Path(p).relative_to(tmp_path).as_posix(): {"only_server": sorted(server[p] - cli[p])[:4],
                                                          "only_check": sorted(cli[p] - server[p])[:4]}
              for p in cli if server.get(p) != cli[p] and not (not server.get(p) and p in foreign)}
    assert len(files) > 100
    assert differ == {}, json.dumps(dict(list(differ.items())[:6]), indent=1, default=str)
