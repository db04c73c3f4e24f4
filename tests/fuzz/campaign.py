"""The CLI fuzz campaign: seeded, time-bounded; findings grouped by signature and minimized."""

from __future__ import annotations

import json
import random
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import harness, mutate

# Kinds whose reproducer can be shrunk by re-running the first job only (check --output-format json).
SHRINKABLE = {"crash", "internal-error", "hang", "memory", "bad-position", "bad-exit"}


@dataclass
class CampaignResult:
    seed: int
    inputs: int = 0
    jobs: int = 0
    seconds: float = 0.0
    findings: dict[str, harness.Finding] = field(default_factory=dict)  # signature -> first (minimized) finding
    counts: dict[str, int] = field(default_factory=dict)  # signature -> inputs that hit it
    inputs_with_findings: int = 0
    inputs_with_crash: int = 0
    oracles: dict[str, int] = field(default_factory=dict)  # oracle -> inputs it judged (harness.check_input tally)

    def summary(self) -> dict:
        return {"seed": self.seed, "inputs": self.inputs, "jobs": self.jobs, "seconds": round(self.seconds, 1),
                "inputs_with_findings": self.inputs_with_findings, "inputs_with_crash": self.inputs_with_crash,
                "oracles": dict(sorted(self.oracles.items())),
                "signatures": {sig: {"kind": f.kind, "inputs": self.counts[sig], "ops": f.ops, "argv": f.argv,
                                     "detail": f.detail[-400:]}
                               for sig, f in sorted(self.findings.items())}}


def _key(f: harness.Finding) -> str:
    return f"{f.kind}:{f.signature}"


def run(seed: int, budget_s: float, max_inputs: int | None = None, workdir: Path | None = None,
        minimize: bool = True, reference_every: int = 4, files: list[Path] | None = None,
        log=None, timeout: float = 20.0) -> CampaignResult:
    rng = random.Random(seed)
    files = files or mutate.corpus_files()
    if not files:
        raise RuntimeError("no corpus files (expected ../shared/corpus next to the checkout)")
    root = workdir or harness.new_workdir()
    worker = harness.Worker()
    result = CampaignResult(seed)
    start = time.monotonic()
    try:
        while time.monotonic() - start < budget_s and (max_inputs is None or result.inputs < max_inputs):
            source = rng.choice(files)
            data, ops = mutate.mutate(source, rng, files)
            suffix = source.suffix if rng.random() < 0.9 else rng.choice([".yaml", ".json", ".yml", ".conf"])
            result.inputs += 1
            jobs_before = worker.jobs
            # Run settings (a GPU, so the memory planner's fixes are made too) and version sets: the fix oracles
            # under each (multi-round, version-uncertain; harness.FLAG_SETS / VERSION_SETS).
            extra = list(rng.choice(harness.FLAG_SETS)) if rng.random() < 0.35 else []
            if rng.random() < 0.15:
                extra += ["--versions", rng.choice(harness.VERSION_SETS)]
            versions = rng.choice(harness.VERSION_SETS) if rng.random() < 0.25 else None
            findings = harness.check_input(worker, data, suffix, root / "case", rng=rng,
                                           reference=result.inputs % reference_every == 0,
                                           stdin=rng.random() < 0.1, timeout=timeout, extra=extra,
                                           versions=versions, tally=result.oracles)
            result.jobs += worker.jobs - jobs_before
            if findings:
                result.inputs_with_findings += 1
            if any(f.kind in ("crash", "hang", "memory") for f in findings):
                result.inputs_with_crash += 1
            for f in findings:
                f.data, f.suffix, f.ops = data, suffix, [source.parent.name + "/" + source.name] + ops
                key = _key(f)
                result.counts[key] = result.counts.get(key, 0) + 1
                if key not in result.findings:
                    if minimize and f.kind in SHRINKABLE:
                        f.data = shrink(worker, f, root / "shrink")
                        result.jobs += 0
                    result.findings[key] = f
                    if log:
                        log(f"[{result.inputs}] new {key} ({len(f.data)} bytes) ops={f.ops}")
    finally:
        worker.close()
        shutil.rmtree(root, ignore_errors=True)
    result.seconds = time.monotonic() - start
    return result


def _reproduces(worker: harness.Worker, f: harness.Finding, data: bytes, workdir: Path) -> bool:
    name = "config" + f.suffix
    shutil.rmtree(workdir, ignore_errors=True)
    harness.scratch_project(workdir, name, data)
    argv = ["check", "--isolated", *settings_of(f.argv), "--output-format", "json", name]
    answer = worker.run(argv, str(workdir), timeout=10)
    found = []
    bad = harness._crash(answer, argv)
    if bad is not None:
        found.append(bad)
    else:
        found.extend(harness._json_findings(answer.stdout, argv, {name: harness.decoded(data)})[0])
        if answer.rc not in (0, 1) and b"TL000" not in answer.stdout:
            found.append(harness.Finding("bad-exit", f"exit-{answer.rc}", "", argv))
    return any(_key(g) == _key(f) for g in found)


def settings_of(argv: list[str]) -> list[str]:
    """The run settings (`harness.FLAG_SETS`, `--versions`) a finding's command line was checked with."""
    out: list[str] = []
    i = 2 if argv[:2] == ["check", "--isolated"] else len(argv)
    while i + 1 < len(argv) and argv[i] in ("--gpu", "--num-gpus", "--seq-len", "--versions"):
        out += argv[i:i + 2]
        i += 2
    return out


def shrink(worker: harness.Worker, f: harness.Finding, workdir: Path, max_tries: int = 150) -> bytes:
    """Delta debugging over lines, then over bytes, keeping the finding's signature."""
    data = f.data
    if f.kind == "hang" or not _reproduces(worker, f, data, workdir):
        return data
    tries = 0
    for unit in ("lines", "bytes"):
        parts = data.splitlines(keepends=True) if unit == "lines" else [bytes([b]) for b in data]
        if unit == "bytes" and len(parts) > 600:
            break
        chunk = max(1, len(parts) // 2)
        while chunk >= 1 and tries < max_tries:
            i, progressed = 0, False
            while i < len(parts) and tries < max_tries:
                candidate = parts[:i] + parts[i + chunk:]
                tries += 1
                if candidate and _reproduces(worker, f, b"".join(candidate), workdir):
                    parts, progressed = candidate, True
                else:
                    i += chunk
            if not progressed:
                chunk //= 2
        data = b"".join(parts)
    shutil.rmtree(workdir, ignore_errors=True)
    return data


def save_regressions(result: CampaignResult, out: Path) -> list[str]:
    """Write each finding's (minimized) input and a case entry, for tests/fuzz/regressions/."""
    out.mkdir(parents=True, exist_ok=True)
    manifest = out / "cases.json"
    cases = json.loads(manifest.read_text()) if manifest.exists() else []
    known = {c["signature"] for c in cases}
    written = []
    for key, f in sorted(result.findings.items()):
        if key in known:
            continue
        slug = "".join(ch if ch.isalnum() else "-" for ch in key.lower()).strip("-")[:60]
        name = f"{slug}{f.suffix}"
        (out / name).write_bytes(f.data)
        cases.append({"name": slug, "file": name, "signature": key, "kind": f.kind, "ops": f.ops,
                      "settings": settings_of(f.argv),
                      "versions": f.detail[len("under "):].split(":")[0] if f.kind == "fix-version-unsafe" else None,
                      "found_by": f"seed {result.seed}", "detail": f.detail.strip().splitlines()[-1][:300] if f.detail
                      else ""})
        written.append(name)
    manifest.write_text(json.dumps(cases, indent=1, ensure_ascii=True) + "\n")
    return written
