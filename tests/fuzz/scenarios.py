"""Fixed hostile situations around the files themselves (not their text): special files, links,
permissions, odd names, garbage on stdin, size. Each scenario builds a scratch folder, runs the
installed `trainlint` in a fresh process (memory capped, time-limited) and returns the problems it
saw (an empty list: the scenario passes).

Permissions are judged by mode bits: a file without write permission is refused by `--fix` even when
the run has the rights to replace it (root). Where the harness runs as root, the scenarios that need
the kernel to refuse (a read-only folder) run the command as `nobody` through `setpriv`.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import socket
import stat
import subprocess
import tempfile
import time
from pathlib import Path

from . import harness

HF = ("model_name_or_path: meta-llama/Llama-3.1-8B\noutput_dir: out\nper_device_train_batch_size: 8\n"
      "learning_rate: 1e-5\nbf16: true\n")
# A DeepSpeed config with a safe fix (TL502-style deprecated key or TL504 string-typed value).
DS_FIXABLE = '{\n  "train_micro_batch_size_per_gpu": "4",\n  "gradient_accumulation_steps": 1\n}\n'
FAST_S = 10.0


def _run(argv, cwd, stdin=None, timeout=30.0, as_nobody=False) -> harness.Answer:
    if as_nobody and os.geteuid() == 0 and shutil.which("setpriv"):
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"] + harness.trainlint_executable()
        start = time.perf_counter()
        try:
            proc = subprocess.run(cmd + argv, cwd=cwd, input=stdin or b"", capture_output=True, timeout=timeout,
                                  env={**os.environ, "LC_ALL": "C.UTF-8", "HOME": "/tmp"})
        except subprocess.TimeoutExpired:
            return harness.Answer(None, b"", b"", "timed out", True, timeout, killed=True)
        err = proc.stderr
        return harness.Answer(proc.returncode, proc.stdout, err,
                              err.decode("utf-8", "replace") if b"Traceback (most recent" in err else None, False,
                              time.perf_counter() - start)
    return harness.exec_cli(argv, cwd, stdin=stdin, timeout=timeout)


def _basic(answer: harness.Answer, what: str, max_s: float = FAST_S, json_out: bool = False) -> list[str]:
    problems = []
    if answer.hang:
        return [f"{what}: hung (killed after {answer.seconds:.0f} s)"]
    if answer.exception:
        problems.append(f"{what}: traceback: {answer.exception.strip().splitlines()[-1]}")
    if answer.seconds > max_s:
        problems.append(f"{what}: took {answer.seconds:.1f} s")
    if answer.rc not in (0, 1, 2):
        problems.append(f"{what}: exit code {answer.rc}")
    if json_out:
        try:
            json.loads(answer.stdout.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            problems.append(f"{what}: the JSON output does not parse ({exc})")
    return problems


def _codes(answer: harness.Answer) -> list[str]:
    try:
        report = json.loads(answer.stdout)
    except ValueError:
        return []
    return [d["code"] for f in report.get("files", []) for d in f.get("diagnostics", [])]


def _expect_diagnostic(answer, what, code="TL001") -> list[str]:
    problems = _basic(answer, what, json_out=True)
    if not problems and code not in _codes(answer):
        problems.append(f"{what}: expected a {code} diagnostic, got {_codes(answer)} (rc {answer.rc}, "
                        f"stderr {answer.stderr[-200:]!r})")
    if "TL000" in _codes(answer):
        problems.append(f"{what}: TL000 internal error")
    return problems


# ---- scenarios --------------------------------------------------------------------------------------
def special_file_as_config(tmp: Path) -> list[str]:
    problems = []
    os.mkfifo(tmp / "fifo.yaml")
    problems += _expect_diagnostic(_run(["check", "--output-format", "json", "fifo.yaml"], tmp, timeout=20),
                                   "a FIFO as the config")
    for dev in ("/dev/zero", "/dev/urandom"):
        problems += _expect_diagnostic(_run(["check", "--output-format", "json", dev], tmp, timeout=30), dev)
        link = tmp / f"{Path(dev).name}.yaml"
        os.symlink(dev, link)
        problems += _expect_diagnostic(_run(["check", "--output-format", "json", link.name], tmp, timeout=30),
                                       f"a symlink to {dev}")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp / "sock.yaml"))
        problems += _expect_diagnostic(_run(["check", "--output-format", "json", "sock.yaml"], tmp), "a socket")
    finally:
        sock.close()
    os.symlink("loop.yaml", tmp / "loop.yaml")
    problems += _expect_diagnostic(_run(["check", "--output-format", "json", "loop.yaml"], tmp), "a symlink loop")
    return problems


def special_file_linked(tmp: Path) -> list[str]:
    problems = []
    os.mkfifo(tmp / "fifo.json")
    os.symlink("loop.json", tmp / "loop.json")
    os.symlink("/dev/zero", tmp / "zero.json")
    (tmp / "dir.json").mkdir()
    (tmp / "big.json").write_bytes(b'{"a": "' + b"x" * (6 * 2**20) + b'"}')
    for target, words in (("/dev/zero", "device"), ("/dev/urandom", "device"), ("fifo.json", "FIFO"),
                          ("loop.json", "symlink loop"), ("zero.json", "device"), ("dir.json", "folder"), ("big.json", "MiB")):
        (tmp / "train.yaml").write_text(HF + f"deepspeed: {target}\n")
        answer = _run(["check", "--output-format", "json", "train.yaml"], tmp, timeout=30)
        found = _basic(answer, f"deepspeed: {target}", json_out=True)
        if not found:
            messages = [d["message"] for f in json.loads(answer.stdout)["files"] for d in f["diagnostics"]]
            if not any(words in m for m in messages):
                found.append(f"deepspeed: {target}: no diagnostic says it is a {words} ({_codes(answer)})")
        problems += found
    return problems


def special_model_config(tmp: Path) -> list[str]:
    """A local model folder whose config.json is a FIFO, a device, a folder or huge."""
    problems = []
    for kind in ("fifo", "zero", "dir", "big", "loop"):
        model = tmp / f"model-{kind}"
        model.mkdir()
        config = model / "config.json"
        if kind == "fifo":
            os.mkfifo(config)
        elif kind == "zero":
            os.symlink("/dev/zero", config)
        elif kind == "dir":
            config.mkdir()
        elif kind == "loop":
            os.symlink("config.json", config)
        else:
            config.write_bytes(b'{"x": "' + b"x" * (6 * 2**20) + b'"}')
        (tmp / "train.yaml").write_text(HF.replace("meta-llama/Llama-3.1-8B", f"./model-{kind}"))
        answer = _run(["check", "--output-format", "json", "train.yaml"], tmp, timeout=30)
        problems += _basic(answer, f"model folder with config.json as {kind}", json_out=True)
        if "TL000" in _codes(answer):
            problems.append(f"model folder with config.json as {kind}: TL000")
        answer = _run(["check", "--output-format", "json", "--model", str(model), "train.yaml"], tmp, timeout=30)
        problems += _basic(answer, f"--model folder with config.json as {kind}", json_out=True)
    return problems


def odd_names(tmp: Path) -> list[str]:
    problems = []
    long_name = "a" * 300 + ".yaml"
    answer = _run(["check", "--output-format", "json", long_name], tmp)
    problems += _basic(answer, "a 300-byte file name")
    (tmp / "train.yaml").write_text(HF.replace("meta-llama/Llama-3.1-8B", "/" + "a" * 300))
    answer = _run(["check", "--output-format", "json", "train.yaml"], tmp)
    problems += _basic(answer, "a 300-byte model path", json_out=True)
    if "TL000" in _codes(answer):
        problems.append("a 300-byte model path: TL000 internal error")
    bad = b"bad\xff name.yaml"
    with open(os.path.join(os.fsencode(str(tmp)), bad), "w") as handle:
        handle.write(HF)
    for fmt in ("text", "json", "sarif", "gitlab", "github", "full"):
        answer = _run(["check", "--output-format", fmt, os.fsdecode(bad)], tmp)
        problems += _basic(answer, f"a non-UTF-8 file name, {fmt}", json_out=fmt in ("json", "sarif", "gitlab"))
        if fmt == "sarif" and not answer.exception:
            try:
                errors = harness.sarif_errors(json.loads(answer.stdout))
            except ValueError:
                errors = ["unparsable"]
            if errors:
                problems.append(f"a non-UTF-8 file name, sarif: {errors[:2]}")
    return problems


def stdin_garbage(tmp: Path) -> list[str]:
    problems = []
    rng = random.Random(7)
    samples = [bytes(rng.randrange(256) for _ in range(3000)), bytes(rng.randrange(1, 256) for _ in range(3000)),
               b"\xff\xfe\x00a: 1", b"a: \xed\xa0\x80\n", "é: 1\n".encode("latin-1"), b"", b"\x00" * 100]
    for i, data in enumerate(samples):
        answer = _run(["check", "--output-format", "json", "-"], tmp, stdin=data)
        problems += _basic(answer, f"stdin sample {i}", json_out=True)
    return problems


def fix_through_symlink(tmp: Path) -> list[str]:
    (tmp / "real").mkdir()
    target = tmp / "real" / "ds.json"
    target.write_text(DS_FIXABLE)
    os.symlink("real/ds.json", tmp / "ds.json")
    answer = _run(["check", "--fix", "ds.json"], tmp)
    problems = _basic(answer, "--fix on a symlink")
    if not (tmp / "ds.json").is_symlink():
        problems.append("--fix replaced the symlink with a regular file")
    if target.read_text() == DS_FIXABLE:
        problems.append("--fix left the symlink's target unedited")
    return problems


def fix_keeps_hard_link(tmp: Path) -> list[str]:
    (tmp / "ds.json").write_text(DS_FIXABLE)
    os.link(tmp / "ds.json", tmp / "other.json")
    answer = _run(["check", "--fix", "ds.json"], tmp)
    problems = _basic(answer, "--fix on a hard-linked file")
    if (tmp / "ds.json").stat().st_ino != (tmp / "other.json").stat().st_ino:
        problems.append("--fix broke the hard link")
    if (tmp / "other.json").read_text() == DS_FIXABLE:
        problems.append("--fix: the other name of the hard link does not see the fix")
    return problems


def fix_keeps_mode(tmp: Path) -> list[str]:
    path = tmp / "ds.json"
    path.write_text(DS_FIXABLE)
    os.chmod(path, 0o640)
    problems = _basic(_run(["check", "--fix", "ds.json"], tmp), "--fix keeps the mode")
    if stat.S_IMODE(path.stat().st_mode) != 0o640:
        problems.append(f"--fix changed the mode 640 -> {stat.S_IMODE(path.stat().st_mode):o}")
    if path.read_text() == DS_FIXABLE:
        problems.append("--fix did not fix the file (mode scenario)")
    return problems


def fix_read_only_file(tmp: Path) -> list[str]:
    path = tmp / "ds.json"
    path.write_text(DS_FIXABLE)
    os.chmod(path, 0o444)
    answer = _run(["check", "--fix", "ds.json"], tmp)
    problems = _basic(answer, "--fix on a read-only file")
    if path.read_text() != DS_FIXABLE:
        problems.append("--fix rewrote a read-only file")
    if b"read-only" not in answer.stderr and b"not writable" not in answer.stderr:
        problems.append(f"--fix on a read-only file: no clear message ({answer.stderr[-200:]!r})")
    return problems


def fix_read_only_folder(tmp: Path) -> list[str]:
    folder = tmp / "ro"
    folder.mkdir()
    path = folder / "ds.json"
    path.write_text(DS_FIXABLE)
    os.chmod(path, 0o666)
    os.chmod(folder, 0o555)
    os.chmod(tmp, 0o755)
    try:
        answer = _run(["check", "--fix", "ds.json"], folder, as_nobody=True)
        problems = _basic(answer, "--fix in a read-only folder")
        if answer.rc is not None and not answer.exception and b"ds.json" not in answer.stderr:
            problems.append(f"--fix in a read-only folder: no clear message ({answer.stderr[-200:]!r})")
        if b"Traceback" in answer.stderr:
            problems.append("--fix in a read-only folder: traceback")
        leftovers = [p.name for p in folder.iterdir() if p.name != "ds.json"]
        if leftovers:
            problems.append(f"--fix in a read-only folder left {leftovers}")
    finally:
        os.chmod(folder, 0o755)
    return problems


def many_unknown_keys(tmp: Path) -> list[str]:
    """Work is linear in the input: 2,000 unknown keys in an HF YAML are checked well under a second."""
    problems = []
    text = HF + "".join(f"unknown_key_{i}: {i}\n" for i in range(2000))
    (tmp / "train.yaml").write_text(text)
    (tmp / "warm.yaml").write_text(HF + "unknown_key: 1\n")
    worker = harness.Worker()
    try:
        worker.run(["check", "--isolated", "--output-format", "json", "warm.yaml"], str(tmp))  # imports, catalogs
        answer = worker.run(["check", "--isolated", "--output-format", "json", "train.yaml"], str(tmp))
    finally:
        worker.close()
    problems += _basic(answer, "2,000 unknown keys", max_s=1.0, json_out=True)
    return problems


SCENARIOS = [special_file_as_config, special_file_linked, special_model_config, odd_names, stdin_garbage, fix_through_symlink,
             fix_keeps_hard_link, fix_keeps_mode, fix_read_only_file, fix_read_only_folder, many_unknown_keys]


def run_one(fn) -> list[str]:
    tmp = Path(tempfile.mkdtemp(prefix="tlscen-"))
    os.chmod(tmp, 0o755)
    try:
        return fn(tmp)
    finally:
        for p in tmp.rglob("*"):
            try:
                if p.is_dir() and not p.is_symlink():
                    os.chmod(p, 0o755)
            except OSError:
                pass
        shutil.rmtree(tmp, ignore_errors=True)


def run_all() -> dict:
    return {fn.__name__: run_one(fn) for fn in SCENARIOS}
