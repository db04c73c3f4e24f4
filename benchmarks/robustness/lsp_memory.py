"""Memory of `trainlint server` over thousands of edits: RSS must stay bounded.

Starts the real server (python -m trainlint.lsp) over stdio with a raw JSON-RPC client, opens an HF
YAML that links a DeepSpeed JSON plus the JSON itself, then sends --edits full-text didChange edits;
every edit makes a different text (a new micro-batch, a new unknown key, sometimes a broken line),
so every text is linted and nothing is served from a cache of an earlier text. After every
--sample edits it waits for the diagnostics of the latest version (push client) or pulls them, and
reads the server's VmRSS from /proc. Hover, code actions and inlay hints are requested along the
way. Writes results/latest.json: RSS samples (MiB), growth from the first sample after warm-up to the
last, and whether it stayed under --limit-mib.

    python benchmarks/robustness/lsp_memory.py [--edits 10000] [--sample 500] [--pull] [--gpu A10G --num-gpus 8]
                                               [--out PATH]

With --gpu and --num-gpus (the client's `gpu` and `numGpus` settings) every lint also gives a fit verdict on those
cards, and where the run does not fit (A10G x 8) the fix planner searches its offers at every edit; without them
there is no verdict and nothing is planned.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from tests.fuzz.lsp_campaign import Client  # noqa: E402

DS = ('{\n  "train_micro_batch_size_per_gpu": "auto",\n  "gradient_accumulation_steps": "auto",\n'
      '  "bf16": {"enabled": "auto"},\n  "zero_optimization": {"stage": 3}\n}\n')


def text_for(i: int) -> str:
    broken = "broken: [\n" if i % 17 == 0 else ""
    return (f"# edit {i}\nmodel_name_or_path: meta-llama/Llama-3.1-8B\noutput_dir: out\n"
            f"per_device_train_batch_size: {1 + i % 64}\ngradient_accumulation_steps: {1 + i % 7}\n"
            f"learning_rate: 1e-5\nbf16: true\ndeepspeed: ds.json\nunknown_key_{i}: {i}\n{broken}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=10000)
    parser.add_argument("--sample", type=int, default=500)
    parser.add_argument("--pull", action="store_true", help="a pull-diagnostics client (default: push)")
    parser.add_argument("--gpu", default=None, help="the client's gpu setting (A10G: the 8B model does not fit)")
    parser.add_argument("--num-gpus", type=int, default=None, help="the client's numGpus setting")
    parser.add_argument("--limit-mib", type=float, default=20.0, help="allowed growth after warm-up")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "latest.json")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="tlmem-"))
    (root / "ds.json").write_text(DS)
    (root / "train.yaml").write_text(text_for(0))
    client = Client(root, env={"TRAINLINT_LSP_DEBOUNCE_MS": "0"})
    caps = {"textDocument": {"publishDiagnostics": {"versionSupport": True},
                             **({"diagnostic": {}} if args.pull else {})}}
    init = {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": caps}
    options = {k: v for k, v in (("gpu", args.gpu), ("numGpus", args.num_gpus)) if v is not None}
    if options:
        init["initializationOptions"] = options
    rid = client.request("initialize", init)
    client.wait_for(rid, 60)
    client.notify("initialized", {})
    uri, ds_uri = (root / "train.yaml").as_uri(), (root / "ds.json").as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 0,
                                                            "text": text_for(0)}})
    client.notify("textDocument/didOpen", {"textDocument": {"uri": ds_uri, "languageId": "json", "version": 0,
                                                            "text": DS}})
    samples = []
    start = time.monotonic()
    for i in range(1, args.edits + 1):
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": i},
                                                 "contentChanges": [{"text": text_for(i)}]})
        if i % 10 == 0:
            method = ["textDocument/hover", "textDocument/codeAction", "textDocument/inlayHint"][i // 10 % 3]
            pos = {"line": 3, "character": 30}
            params = {"textDocument": {"uri": uri}, "position": pos} if method.endswith("hover") else \
                {"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": pos},
                 **({"context": {"diagnostics": []}} if method.endswith("codeAction") else {})}
            client.wait_for(client.request(method, params), 30)
        if args.pull:
            client.wait_for(client.request("textDocument/diagnostic", {"textDocument": {"uri": uri}}), 30)
        if i % args.sample == 0:
            if not args.pull:
                deadline = time.monotonic() + 30
                while (client.published.get(uri) or {}).get("version") != i and time.monotonic() < deadline:
                    client.drain(quiet_s=0.05, limit_s=0.2)
            samples.append({"edits": i, "rss_mib": round(client.rss_kb() / 1024, 1),
                            "seconds": round(time.monotonic() - start, 1)})
            print(samples[-1], flush=True)
        elif not args.pull and i % 5 == 0:
            client.drain(quiet_s=0.0, limit_s=0.01)
    rid = client.request("shutdown", None)
    client.wait_for(rid, 10)
    client.notify("exit", None)
    client.kill()
    base = samples[min(1, len(samples) - 1)]["rss_mib"] if samples else 0.0
    growth = round(samples[-1]["rss_mib"] - base, 1) if samples else 0.0
    result = {"edits": args.edits, "client": "pull" if args.pull else "push", "gpu": args.gpu, "num_gpus": args.num_gpus,
              "samples": samples,
              "growth_after_warmup_mib": growth, "limit_mib": args.limit_mib, "bounded": growth <= args.limit_mib,
              "machine": {"cpus": os.cpu_count(), "load": os.getloadavg(), "python": platform.python_version()},
              "date": time.strftime("%Y-%m-%d")}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "samples"}))
    return 0 if result["bounded"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
