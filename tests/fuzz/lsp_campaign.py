"""The language-server campaign: random edits and requests, valid and not, against `trainlint server`.

A raw JSON-RPC client (so it can send what no library client would) starts the real server over
stdio, opens a few mutated corpus configs in a scratch project, then sends seeded random operations:
full and ranged `didChange` (mutated texts, garbage, huge and empty ones), requests (hover,
completion, code actions, inlay hints, code lens, pull diagnostics, executeCommand, unknown methods)
with good params, out-of-range positions, and invalid params (wrong types, missing fields, unknown
documents), `$/cancelRequest`, configuration changes with junk settings, close/reopen, and rarely a
malformed message. Then `shutdown`, a request after it, and `exit`.

Judged: every request gets a response (a result or an error object with an integer code) within
ANSWER_S; the server never exits before `exit`; at the end the diagnostics the server holds for each
open document equal what `trainlint check` reports on the same final texts (written to disk); the
server's memory (VmRSS) after the run vs after opening.
"""

from __future__ import annotations

import json
import os
import queue
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from . import harness, mutate

ANSWER_S = 5.0
REPO = Path(__file__).resolve().parents[2]


class Client:
    def __init__(self, cwd: Path, env: dict | None = None) -> None:
        env = {**os.environ, "TRAINLINT_LSP_DEBOUNCE_MS": "20", **(env or {})}
        command = [sys.executable, *(os.environ.get("TL_FUZZ_SERVER") or "-m trainlint.lsp").split()]
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=str(cwd))
        self.inbox: queue.Queue = queue.Queue()
        self.next_id = 0
        self.published: dict[str, dict] = {}  # uri -> last publishDiagnostics params
        self.stderr_tail = b""
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _drain_stderr(self) -> None:
        assert self.proc.stderr
        for chunk in iter(lambda: self.proc.stderr.read(4096), b""):
            self.stderr_tail = (self.stderr_tail + chunk)[-20000:]

    def _read(self) -> None:
        out = self.proc.stdout
        assert out
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.inbox.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.decode("ascii", "replace").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if length is None:
                continue
            body = out.read(length)
            try:
                message = json.loads(body)
            except ValueError:
                message = {"unparsable": body[:200].decode("utf-8", "replace")}
            if message.get("method") == "textDocument/publishDiagnostics":
                params = message.get("params") or {}
                self.published[params.get("uri", "")] = params
            self.inbox.put(message)

    def send_raw(self, body: bytes) -> None:
        assert self.proc.stdin
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def send(self, message: dict) -> None:
        self.send_raw(json.dumps(message).encode("utf-8", "surrogatepass"))

    def request(self, method: str, params, raw_id=None) -> int:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id if raw_id is None else raw_id, "method": method}
        if params is not _ABSENT:
            message["params"] = params
        self.send(message)
        return self.next_id if raw_id is None else raw_id

    def notify(self, method: str, params) -> None:
        message = {"jsonrpc": "2.0", "method": method}
        if params is not _ABSENT:
            message["params"] = params
        self.send(message)

    def wait_for(self, rid, timeout: float = ANSWER_S) -> dict | None:
        """The response to request `rid`, answering server requests on the way; None on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                message = self.inbox.get(timeout=left)
            except queue.Empty:
                return None
            if message is None:
                raise ServerExited()
            if "method" in message and "id" in message:  # a request from the server
                result = [{}] * len((message.get("params") or {}).get("items", [])) \
                    if message["method"] == "workspace/configuration" else None
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
                continue
            if message.get("id") == rid and "method" not in message:
                return message

    def drain(self, quiet_s: float = 0.4, limit_s: float = 10.0) -> None:
        """Read until nothing arrives for quiet_s."""
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            try:
                message = self.inbox.get(timeout=quiet_s)
            except queue.Empty:
                return
            if message is None:
                raise ServerExited()
            if "method" in message and "id" in message:
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})

    def rss_kb(self) -> int:
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        except OSError:
            pass
        return 0

    def kill(self) -> None:
        try:
            self.proc.kill()
            self.proc.wait(5)
        except Exception:  # noqa: BLE001
            pass


class ServerExited(Exception):
    pass


_ABSENT = object()
REQUESTS = ["textDocument/hover", "textDocument/completion", "textDocument/codeAction", "textDocument/inlayHint",
            "textDocument/codeLens", "textDocument/diagnostic", "workspace/executeCommand",
            "textDocument/documentSymbol", "textDocument/definition", "workspace/symbol", "trainlint/unknown"]


def _pos(rng: random.Random, text: str, valid: bool) -> dict:
    lines = text.split("\n")
    if valid:
        line = rng.randrange(len(lines))
        return {"line": line, "character": rng.randint(0, len(lines[line]))}
    return rng.choice([{"line": 10**9, "character": 0}, {"line": 0, "character": 10**9},
                       {"line": len(lines) + 3, "character": 5}, {"line": 2**31 - 1, "character": 2**31 - 1}])


def _invalid_params(rng: random.Random, uri: str):
    return rng.choice([_ABSENT, None, [], "x", 5, {}, {"textDocument": {}}, {"textDocument": {"uri": 5}},
                       {"textDocument": {"uri": uri}}, {"textDocument": {"uri": uri}, "position": {"line": -1,
                                                                                                   "character": -1}},
                       {"textDocument": {"uri": uri}, "position": {"line": "a", "character": None}},
                       {"textDocument": {"uri": uri}, "range": {"start": {}, "end": {}}},
                       {"textDocument": {"uri": uri}, "range": "all", "context": {"diagnostics": "x"}},
                       {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}, "context": 7},
                       {"textDocument": {"uri": "file:///nonexistent/x.yaml"}, "position": {"line": 0,
                                                                                            "character": 0}},
                       {"textDocument": {"uri": "not a uri"}, "position": {"line": 0, "character": 0}},
                       {"textDocument": {"uri": uri}, "position": {"line": 1.5, "character": 2**70}}])


def _valid_params(method: str, rng: random.Random, uri: str, text: str) -> dict:
    doc = {"uri": uri}
    if method in ("textDocument/hover", "textDocument/completion", "textDocument/definition"):
        return {"textDocument": doc, "position": _pos(rng, text, rng.random() < 0.85)}
    if method in ("textDocument/codeAction", "textDocument/inlayHint"):
        a, b = sorted([_pos(rng, text, True), _pos(rng, text, True)], key=lambda p: (p["line"], p["character"]))
        if rng.random() < 0.15:
            b = _pos(rng, text, False)
        params = {"textDocument": doc, "range": {"start": a, "end": b}}
        if method == "textDocument/codeAction":
            only = rng.choice([None, ["quickfix"], ["source.fixAll.trainlint"], ["source"], ["refactor"]])
            params["context"] = {"diagnostics": [], **({"only": only} if only else {})}
        return params
    if method == "workspace/executeCommand":
        return {"command": rng.choice(["trainlint.showEstimate", "nope"]),
                "arguments": rng.choice([[uri], [], [5], [None], ["file:///x"], [{"uri": uri}]])}
    if method == "workspace/symbol":
        return {"query": ""}
    return {"textDocument": doc}


def _start_project(root: Path, rng: random.Random, files: list[Path]) -> dict[str, str]:
    """Scratch project: a DeepSpeed JSON, an HF YAML linking it, and two random corpus files."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "ds.json").write_text(harness.DS_LINKED)
    texts = {"ds.json": harness.DS_LINKED,
             "train.yaml": "model_name_or_path: meta-llama/Llama-3.1-8B\noutput_dir: out\n"
                           "per_device_train_batch_size: 8\nbf16: true\ndeepspeed: ds.json\n"}
    for i, src in enumerate(rng.sample(files, 2)):
        texts[f"doc{i}{src.suffix}"] = src.read_text(encoding="utf-8", errors="replace")
    for name, text in texts.items():
        (root / name).write_text(text, encoding="utf-8", errors="surrogatepass")
    return texts


def _mutated_text(rng: random.Random, name: str, original: str, files: list[Path]) -> str:
    is_json = name.endswith((".json", ".conf"))
    roll = rng.random()
    if roll < 0.05:
        return ""
    if roll < 0.1:
        return mutate.random_garbage(rng).decode("utf-8", "replace")
    if roll < 0.25:
        return mutate.byte_mutate(original.encode("utf-8", "surrogatepass"), rng).decode("utf-8", "replace")
    text = original
    for _ in range(rng.choice([1, 1, 2])):
        op = rng.choice(mutate.STRUCTURE_OPS)
        text = op(text, rng, is_json, original) if op is mutate.op_multidoc else op(text, rng, is_json)
    if rng.random() < 0.2:
        text = mutate.newline_transform(text, rng)
    return text


def run(seed: int, ops: int, budget_s: float, files: list[Path] | None = None, log=None,
        memory_every: int = 0) -> dict:
    rng = random.Random(seed)
    files = files or mutate.corpus_files()
    root = Path(tempfile.mkdtemp(prefix="tllsp-"))
    stats = {"seed": seed, "ops": 0, "requests": 0, "answered": 0, "errors": {}, "no_answer": [],
             "malformed_answers": [], "exited_early": False, "inconsistent": [], "rss_kb": {}, "seconds": 0.0}
    start = time.monotonic()
    texts = _start_project(root, rng, files)
    originals = dict(texts)
    client = Client(root)
    pull = rng.random() < 0.5
    encoding = rng.choice(["utf-16", "utf-8"])
    caps = {"general": {"positionEncodings": [encoding]},
            "textDocument": {"synchronization": {"didSave": True},
                             "publishDiagnostics": {"versionSupport": True},
                             **({"diagnostic": {"dynamicRegistration": False}} if pull else {})},
            "workspace": {"configuration": rng.random() < 0.5, "diagnostics": {"refreshSupport": True}}}
    stats["client"] = {"pull": pull, "encoding": encoding}
    versions: dict[str, int] = {}
    last_rss = [0]
    open_docs: set[str] = set()

    def uri(name: str) -> str:
        return (root / name).as_uri()

    def ask(method, params, kind: str) -> None:
        stats["requests"] += 1
        rid = client.request(method, params)
        answer = client.wait_for(rid)
        if answer is None:
            stats["no_answer"].append({"op": stats["ops"], "method": method, "kind": kind,
                                       "params": json.dumps(params, default=str)[:300]})
            return
        stats["answered"] += 1
        if "error" in answer:
            err = answer["error"]
            if not (isinstance(err, dict) and isinstance(err.get("code"), int) and isinstance(err.get("message"), str)):
                stats["malformed_answers"].append(answer)
            else:
                key = f"{kind}:{err['code']}"
                stats["errors"][key] = stats["errors"].get(key, 0) + 1
        elif "result" not in answer:
            stats["malformed_answers"].append(answer)

    try:
        ask("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": caps,
                           "initializationOptions": rng.choice([{}, {"gpu": 5, "numGpus": "x"}, None])}, "valid")
        client.notify("initialized", {})
        for name, text in texts.items():
            versions[name] = 1
            client.notify("textDocument/didOpen", {"textDocument": {
                "uri": uri(name), "languageId": "json" if name.endswith(".json") else "yaml", "version": 1,
                "text": text}})
            open_docs.add(name)
        client.drain()
        stats["rss_kb"]["after_open"] = client.rss_kb()
        while stats["ops"] < ops and time.monotonic() - start < budget_s:
            stats["ops"] += 1
            if client.proc.poll() is not None:
                raise ServerExited()
            name = rng.choice(sorted(texts))
            roll = rng.random()
            if roll < 0.35:
                new = _mutated_text(rng, name, originals[name], files)
                if name not in open_docs:
                    continue
                versions[name] += 1
                if rng.random() < 0.85:
                    change = {"text": new}
                    texts[name] = new
                else:  # a ranged change, valid or not (the server asks for full sync; clients may not listen)
                    change = {"range": {"start": _pos(rng, texts[name], rng.random() < 0.7),
                                        "end": _pos(rng, texts[name], rng.random() < 0.7)}, "text": new[:50]}
                    texts[name] = None  # unknown: whatever the server made of it
                client.notify("textDocument/didChange", {"textDocument": {"uri": uri(name), "version": versions[name]},
                                                         "contentChanges": [change]})
                if texts[name] is None:  # resync with a full change
                    texts[name] = new
                    versions[name] += 1
                    client.notify("textDocument/didChange", {"textDocument": {"uri": uri(name),
                                                                              "version": versions[name]},
                                                             "contentChanges": [{"text": new}]})
            elif roll < 0.75:
                method = rng.choice(REQUESTS)
                text = texts[name] or ""
                if rng.random() < 0.3:
                    ask(method, _invalid_params(rng, uri(name)), "invalid")
                else:
                    ask(method, _valid_params(method, rng, uri(name), text), "valid")
            elif roll < 0.8:
                if name in open_docs:
                    client.notify("textDocument/didClose", {"textDocument": {"uri": uri(name)}})
                    open_docs.discard(name)
                else:
                    versions[name] += 1
                    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri(name), "languageId": "yaml",
                                                                            "version": versions[name],
                                                                            "text": texts[name]}})
                    open_docs.add(name)
            elif roll < 0.85:
                client.notify("workspace/didChangeConfiguration", {"settings": rng.choice(
                    [{}, None, {"trainlint": {"gpu": "H100"}}, {"trainlint": {"gpu": ["x"], "select": 5}},
                     {"trainlint": {"numGpus": -3, "seqLen": "big", "failLevel": "fatal"}}, "junk"])})
            elif roll < 0.9:
                if name in open_docs:
                    (root / name).write_text(texts[name], encoding="utf-8", errors="surrogatepass")
                    client.notify("textDocument/didSave", {"textDocument": {"uri": uri(name)}})
            elif roll < 0.95:
                client.notify(rng.choice(["$/cancelRequest", "$/setTrace", "workspace/didChangeWatchedFiles",
                                          "trainlint/junk", "textDocument/didChange"]),
                              rng.choice([{"id": rng.randint(0, 10**6)}, {}, None, [], {"value": "verbose"},
                                          {"changes": [{"uri": uri(name), "type": 2}]}]))
            elif roll < 0.97:
                stats["requests"] += 1
                client.send_raw(rng.choice([b"{not json", b"[]", b'{"jsonrpc": "2.0"}', b'"x"',
                                            b'{"jsonrpc": "2.0", "id": 99999, "method": 5}']))
                stats["answered"] += 1  # malformed messages: only the server's survival is judged
            else:
                if memory_every:
                    pass
            if memory_every and stats["ops"] % memory_every == 0:
                rss = client.rss_kb()
                if rss - last_rss[0] > 4096:  # a jump of more than 4 MiB: what did it?
                    stats.setdefault("rss_jumps", []).append(
                        {"op": stats["ops"], "rss_mib": rss // 1024, "doc": name, "roll": round(roll, 3),
                         "chars": len(texts.get(name) or "")})
                last_rss[0] = rss
            if log and stats["ops"] % 200 == 0:
                log(f"lsp op {stats['ops']}: {stats['requests']} requests, {len(stats['no_answer'])} unanswered, "
                    f"rss {client.rss_kb() // 1024} MiB")
        # back to the default settings, so that the final diagnostics compare with a plain `trainlint check`
        client.notify("workspace/didChangeConfiguration", {"settings": {"trainlint": {}}})
        client.drain(quiet_s=1.0, limit_s=20)
        stats["rss_kb"]["after_ops"] = client.rss_kb()
        stats["inconsistent"] = _consistency(client, root, texts, open_docs, pull, versions, uri)
        # shutdown, a request after it, exit
        rid = client.request("shutdown", None)
        if client.wait_for(rid) is None:
            stats["no_answer"].append({"op": "shutdown", "method": "shutdown", "kind": "valid"})
        rid = client.request("textDocument/hover", {"textDocument": {"uri": uri("train.yaml")},
                                                    "position": {"line": 0, "character": 0}})
        stats["requests"] += 1
        answer = client.wait_for(rid, 5)
        if answer is None:
            stats["no_answer"].append({"op": "after-shutdown", "method": "textDocument/hover", "kind": "after-shutdown"})
        else:
            stats["answered"] += 1
        client.notify("exit", None)
        try:
            stats["exit_code"] = client.proc.wait(10)
        except subprocess.TimeoutExpired:
            stats["exit_code"] = "did not exit"
    except ServerExited:
        stats["exited_early"] = True
        stats["stderr_tail"] = client.stderr_tail.decode("utf-8", "replace")[-3000:]
    finally:
        client.kill()
        shutil.rmtree(root, ignore_errors=True)
    stats["seconds"] = round(time.monotonic() - start, 1)
    stats["no_answer_count"] = len(stats["no_answer"])
    return stats


def _consistency(client: Client, root: Path, texts: dict, open_docs: set, pull: bool, versions: dict, uri) -> list:
    """The server's diagnostics per open document vs `trainlint check` on the final texts."""
    for name in open_docs:
        (root / name).write_text(texts[name], encoding="utf-8", errors="surrogatepass")
    names = sorted(open_docs)
    if not names:
        return []
    proc = subprocess.run(harness.trainlint_executable() + ["check", "--output-format", "json", *names], cwd=root,
                          capture_output=True, timeout=120)
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        return [{"doc": "*", "problem": "trainlint check gave no JSON", "stderr": proc.stderr[-500:].decode()}]
    cli: dict[str, set] = {n: set() for n in names}
    for entry in report["files"]:
        for d in entry["diagnostics"]:
            key = os.path.basename(d["path"])
            if key in cli:
                cli[key].add((d["code"], d["range"]["start"]["line"] - 1))
    out = []
    for name in names:
        if pull:
            rid = client.request("textDocument/diagnostic", {"textDocument": {"uri": uri(name)}})
            answer = client.wait_for(rid)
            items = ((answer or {}).get("result") or {}).get("items", []) if answer else None
        else:
            params = client.published.get(uri(name))
            items = params.get("diagnostics", []) if params else []
            if params and params.get("version") not in (None, versions[name]):
                out.append({"doc": name, "problem": f"published for version {params.get('version')}, "
                                                    f"last is {versions[name]}"})
        if items is None:
            out.append({"doc": name, "problem": "no answer to the diagnostic pull"})
            continue
        server = {(d.get("code"), d["range"]["start"]["line"]) for d in items}
        if server != cli[name]:
            out.append({"doc": name, "only_server": sorted(server - cli[name])[:10],
                        "only_cli": sorted(cli[name] - server)[:10]})
    return out
