"""A recording stand-in for `trainlint server`, for driving real editor clients in tests.

`lsp_stub` installs a fake `trainlint` package (its `__main__` speaks just enough LSP) and a
`bin/trainlint` executable; run a client with `lsp_stub.env()` and read what the server saw with
`lsp_stub.records()` (one record per server process: how it was started, the initialize params,
the answer to its workspace/configuration request, notifications, opened documents).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

STUB_SERVER = r'''
import json, os, sys

def read():
    headers = {}
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        line = line.decode().strip()
        if not line:
            break
        key, value = line.split(":", 1)
        headers[key.lower()] = value.strip()
    return json.loads(sys.stdin.buffer.read(int(headers["content-length"])))

def send(message):
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()

record = {"orig_argv": sys.orig_argv, "via": os.environ.get("STUB_VIA"), "cwd": os.getcwd(), "opened": []}
out = os.path.join(os.environ["STUB_DIR"], "%d.json" % os.getpid())

def dump():
    with open(out + ".tmp", "w") as f:
        json.dump(record, f)
    os.replace(out + ".tmp", out)

dump()
while True:
    message = read()
    if message is None:
        break
    method = message.get("method")
    if method == "initialize":
        record["initializationOptions"] = message["params"].get("initializationOptions")
        record["rootUri"] = message["params"].get("rootUri")
        capabilities = {"textDocumentSync": 1, "hoverProvider": True,
                        "codeActionProvider": {"codeActionKinds": ["quickfix", "source.fixAll.trainlint"]}}
        send({"jsonrpc": "2.0", "id": message["id"], "result": {"capabilities": capabilities}})
    elif method == "initialized":
        items = [{"section": "trainlint", "scopeUri": record["rootUri"]}]
        send({"jsonrpc": "2.0", "id": "cfg", "method": "workspace/configuration", "params": {"items": items}})
    elif method is None and message.get("id") == "cfg":
        record["configuration"] = message.get("result")
    elif method == "workspace/didChangeConfiguration":
        record.setdefault("didChangeConfiguration", []).append(message["params"])
    elif method == "textDocument/didOpen":
        document = message["params"]["textDocument"]
        record["opened"].append([document["uri"], document["languageId"]])
        diagnostic = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
                      "severity": 2, "code": "TL000", "source": "trainlint", "message": "stub diagnostic"}
        send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
              "params": {"uri": document["uri"], "diagnostics": [diagnostic]}})
    elif method == "textDocument/codeAction":
        uri = message["params"]["textDocument"]["uri"]
        edit = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                "newText": "# fixed\n"}
        action = {"title": "stub fix all", "kind": "source.fixAll.trainlint", "edit": {"changes": {uri: [edit]}}}
        send({"jsonrpc": "2.0", "id": message["id"], "result": [action]})
    elif method == "shutdown":
        record["shutdown"] = True
        send({"jsonrpc": "2.0", "id": message["id"], "result": None})
    elif method == "exit":
        break
    elif "id" in message and method is not None:
        send({"jsonrpc": "2.0", "id": message["id"], "result": None})
    dump()
'''


class LspStub:
    def __init__(self, root: Path, init: str = '__version__ = "0.0-stub"\n') -> None:
        self.root = root
        self.package_dir = root / "pkg"
        self.records_dir = root / "records"
        self.bin_dir = root / "bin"
        for folder in (self.package_dir / "trainlint", self.records_dir, self.bin_dir):
            folder.mkdir(parents=True, exist_ok=True)
        (self.package_dir / "trainlint" / "__init__.py").write_text(init, encoding="utf-8")
        (self.package_dir / "trainlint" / "__main__.py").write_text(STUB_SERVER, encoding="utf-8")
        self.python = sys.executable
        self.executable = self.bin_dir / "trainlint"
        self.executable.write_text(
            f'#!/bin/sh\n[ "$1" = server ] || exit 2\nexport STUB_VIA="${{STUB_VIA:-path}}"\n'
            f'exec "{self.python}" -m trainlint "$@"\n',
            encoding="utf-8",
        )
        self.executable.chmod(0o755)

    def env(self, **extra: str) -> dict[str, str]:
        # No other trainlint on PATH (CI runs the tests in an activated virtual environment that has the real
        # one): the stub's is the only one, so a test that removes it sees none.
        others = [d for d in os.environ.get("PATH", "").split(os.pathsep)
                  if d and not os.path.exists(os.path.join(d, "trainlint"))]
        return {
            **os.environ,
            "PATH": os.pathsep.join([str(self.bin_dir), *others]),
            "PYTHONPATH": str(self.package_dir),
            "STUB_DIR": str(self.records_dir),
            **extra,
        }

    def records(self) -> list[dict]:
        return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(self.records_dir.glob("*.json"))]


@pytest.fixture
def lsp_stub(tmp_path: Path) -> LspStub:
    return LspStub(tmp_path / "lsp-stub")


@pytest.fixture
def make_lsp_stub(tmp_path: Path):
    return lambda init: LspStub(tmp_path / "lsp-stub", init)
