"""Latency of `trainlint server` on a ~300-line HF YAML that links a DeepSpeed JSON.

Starts the real server over stdio (a small raw JSON-RPC client; no editor), opens
data/train.yaml (and, with --open-linked, data/ds_zero3.json), then:

* push: 50 didChange edits (a one-line change each, sent as the whole text: full sync, spaced --gap-ms apart, longer than
  the debounce so each is linted at once), timing didChange -> publishDiagnostics for that version;
* burst: --burst edits 20 ms apart as when typing, timing the last edit -> its publishDiagnostics
  (includes the debounce; informational);
* pull: 50 didChange + textDocument/diagnostic pairs, timing the diagnostic request -> response;
* baseline: `engine.check_text` on the same texts in this process (what the server cannot beat).

Writes a JSON result (default results/latest.json) and prints a summary. Target: median push and pull
latency <= 20 ms for this config. Timings are wall-clock on this machine; compare the ratio to the
baseline between machines, not the milliseconds.

    python benchmarks/lsp_latency/run.py [--edits 50] [--gap-ms 250] [--out results/latest.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import queue
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DATA = HERE / "data"


class Client:
    """Just enough LSP client: framed JSON-RPC over the server's stdin/stdout."""

    def __init__(self, env: dict) -> None:
        self.proc = subprocess.Popen([sys.executable, *(os.environ.get("TL_BENCH_SERVER") or "-m trainlint.lsp").split()], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=str(REPO))
        self.inbox: queue.Queue = queue.Queue()
        self.next_id = 0
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
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
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            body = out.read(length)
            message = json.loads(body)
            self.inbox.put((time.perf_counter(), message))

    def send(self, message: dict) -> float:
        body = json.dumps(message).encode()
        with self.lock:
            stamp = time.perf_counter()
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()
        return stamp

    def request(self, method: str, params) -> int:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def notify(self, method: str, params) -> float:
        return self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait(self, match, timeout: float = 30.0):
        deadline = time.perf_counter() + timeout
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError("no matching message from the server")
            item = self.inbox.get(timeout=left)
            if item is None:
                raise RuntimeError("the server exited")
            stamp, message = item
            if "id" in message and "method" in message:  # a request from the server: answer it
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                continue
            if match(message):
                return stamp, message

    def close(self) -> None:
        try:
            rid = self.request("shutdown", None)
            self.wait(lambda m: m.get("id") == rid, 10)
            self.notify("exit", None)
            self.proc.wait(10)
        except Exception:  # noqa: BLE001
            self.proc.kill()


def capabilities(pull: bool) -> dict:
    text = {"synchronization": {"didSave": True, "dynamicRegistration": False},
            "publishDiagnostics": {"relatedInformation": True, "versionSupport": True}}
    if pull:
        text["diagnostic"] = {"dynamicRegistration": False, "relatedDocumentSupport": False}
    return {"general": {"positionEncodings": ["utf-16"]}, "textDocument": text,
            "workspace": {"configuration": False}}


def start(pull: bool, debounce_ms: float | None) -> Client:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if debounce_ms is not None:
        env["TRAINLINT_LSP_DEBOUNCE_MS"] = str(debounce_ms)
    client = Client(env)
    rid = client.request("initialize", {"processId": os.getpid(), "rootUri": DATA.as_uri(),
                                        "capabilities": capabilities(pull), "initializationOptions": {}})
    client.wait(lambda m: m.get("id") == rid, 60)
    client.notify("initialized", {})
    return client


def edit_params(uri: str, version: int, lines: list[str], line: int, new: str) -> dict:
    """One edited line; the whole text is sent, as the server asks for full document sync."""
    lines[line] = new
    return {"textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"text": "\n".join(lines) + "\n"}]}


def variants(lines: list[str], n: int) -> tuple[int, list[str]]:
    """The line edited, and n values for it: micro-batch sizes (each changes the memory estimate)."""
    line = next(i for i, s in enumerate(lines) if s.startswith("per_device_train_batch_size:"))
    return line, [f"per_device_train_batch_size: {1 + (k % 8)}" for k in range(n)]


def open_docs(client: Client, text: str, open_linked: bool) -> str:
    uri = (DATA / "train.yaml").as_uri()
    if open_linked:
        json_uri = (DATA / "ds_zero3.json").as_uri()
        client.notify("textDocument/didOpen", {"textDocument": {
            "uri": json_uri, "languageId": "json", "version": 1, "text": (DATA / "ds_zero3.json").read_text()}})
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}})
    return uri


def summary(samples: list[float]) -> dict:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))] if ordered else None
    return {"n": len(samples), "median_ms": round(statistics.median(samples), 2) if samples else None,
            "p90_ms": round(p90, 2) if p90 is not None else None,
            "min_ms": round(ordered[0], 2) if ordered else None, "max_ms": round(ordered[-1], 2) if ordered else None}


def bench_push(text: str, edits: int, gap: float, burst: int, open_linked: bool, debounce_ms: float | None) -> dict:
    client = start(pull=False, debounce_ms=debounce_ms)
    try:
        uri = open_docs(client, text, open_linked)
        client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri, 60)
        lines = text.splitlines()
        line, values = variants(lines, edits + burst)
        version = 1
        samples = []
        for value in values[:edits]:
            time.sleep(gap)
            version += 1
            sent = client.notify("textDocument/didChange", edit_params(uri, version, lines, line, value))
            want = version
            got, _ = client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                                 and m["params"]["uri"] == uri and m["params"].get("version") == want)
            samples.append((got - sent) * 1000)
        # Typing burst: edits 20 ms apart; the time from the last one to its diagnostics.
        time.sleep(gap)
        last_sent = 0.0
        for value in values[edits:]:
            version += 1
            last_sent = client.notify("textDocument/didChange", edit_params(uri, version, lines, line, value))
            time.sleep(0.02)
        want = version
        got, _ = client.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                             and m["params"]["uri"] == uri and m["params"].get("version") == want)
        burst_ms = (got - last_sent) * 1000
    finally:
        client.close()
    return {"push": summary(samples), "burst_last_edit_to_diagnostics_ms": round(burst_ms, 2), "push_samples_ms": [round(s, 2) for s in samples]}


def bench_pull(text: str, edits: int, open_linked: bool) -> dict:
    client = start(pull=True, debounce_ms=None)
    try:
        uri = open_docs(client, text, open_linked)
        rid = client.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
        client.wait(lambda m: m.get("id") == rid, 60)
        lines = text.splitlines()
        line, values = variants(lines, edits)
        samples = []
        for version, value in enumerate(values, start=2):
            client.notify("textDocument/didChange", edit_params(uri, version, lines, line, value))
            sent = time.perf_counter()
            rid = client.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
            got, message = client.wait(lambda m, rid=rid: m.get("id") == rid)
            assert message.get("result", {}).get("kind") == "full", message
            samples.append((got - sent) * 1000)
    finally:
        client.close()
    return {"pull": summary(samples), "pull_samples_ms": [round(s, 2) for s in samples]}


def bench_baseline(text: str, edits: int) -> dict:
    from trainlint import engine
    from trainlint.context.settings import Settings

    path = str(DATA / "train.yaml")
    lines = text.splitlines(keepends=True)
    line, values = variants([s.rstrip("\n") for s in lines], edits)
    engine.check_text(text, path, Settings())  # warm caches (schemas, catalogs) as the server's first lint does
    samples = []
    for value in values:
        lines[line] = value + "\n"
        variant = "".join(lines)
        start = time.perf_counter()
        engine.check_text(variant, path, Settings())
        samples.append((time.perf_counter() - start) * 1000)
    return summary(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=50)
    parser.add_argument("--gap-ms", type=float, default=250.0, help="pause between timed edits (> the debounce)")
    parser.add_argument("--burst", type=int, default=10, help="edits in the typing burst")
    parser.add_argument("--debounce-ms", type=float, default=None, help="TRAINLINT_LSP_DEBOUNCE_MS for the server")
    parser.add_argument("--open-linked", action="store_true", help="also open the DeepSpeed JSON in the 'editor'")
    parser.add_argument("--target-ms", type=float, default=20.0)
    parser.add_argument("--out", default=str(HERE / "results" / "latest.json"))
    args = parser.parse_args()

    if not (DATA / "train.yaml").exists():
        import make_config  # noqa: F401 - the data files are committed; regenerate if missing

        make_config.main()
    text = (DATA / "train.yaml").read_text(encoding="utf-8")
    baseline = bench_baseline(text, args.edits)
    push = bench_push(text, args.edits, args.gap_ms / 1000, args.burst, args.open_linked, args.debounce_ms)
    pull = bench_pull(text, args.edits, args.open_linked)
    result = {
        "config": {"path": "benchmarks/lsp_latency/data/train.yaml", "lines": len(text.splitlines()),
                   "linked": "ds_zero3.json", "linked_open_in_editor": args.open_linked},
        "edits": args.edits, "gap_ms": args.gap_ms,
        "baseline_check_text": baseline,
        **push, **pull,
        "ratio_push_median_to_baseline": round(push["push"]["median_ms"] / baseline["median_ms"], 2),
        "ratio_pull_median_to_baseline": round(pull["pull"]["median_ms"] / baseline["median_ms"], 2),
        "target_median_ms": args.target_ms,
        "meets_target": {"push": push["push"]["median_ms"] <= args.target_ms,
                         "pull": pull["pull"]["median_ms"] <= args.target_ms},
        "machine": {"python": platform.python_version(), "platform": platform.platform(),
                    "cpus": os.cpu_count(), "load_avg": list(os.getloadavg()) if hasattr(os, "getloadavg") else None},
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    b, p, q = baseline, push["push"], pull["pull"]
    print(f"config: {result['config']['lines']} lines + linked DeepSpeed JSON; {args.edits} edits")
    print(f"baseline engine.check_text   median {b['median_ms']:7.2f} ms  p90 {b['p90_ms']:7.2f} ms")
    print(f"push didChange->publish      median {p['median_ms']:7.2f} ms  p90 {p['p90_ms']:7.2f} ms  "
          f"({result['ratio_push_median_to_baseline']}x baseline)")
    print(f"pull diagnostic request      median {q['median_ms']:7.2f} ms  p90 {q['p90_ms']:7.2f} ms  "
          f"({result['ratio_pull_median_to_baseline']}x baseline)")
    print(f"typing burst of {args.burst}: last edit -> diagnostics {push['burst_last_edit_to_diagnostics_ms']:.1f} ms "
          "(includes the debounce)")
    print(f"target median <= {args.target_ms:g} ms: push {'met' if result['meets_target']['push'] else 'NOT met'}, "
          f"pull {'met' if result['meets_target']['pull'] else 'NOT met'}; wrote {out}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    raise SystemExit(main())
