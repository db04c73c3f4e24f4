"""A long-lived process that runs `trainlint` command lines in-process, one job at a time.

Starting Python and importing trainlint costs ~0.3 s per command; the fuzzer runs thousands, so
one worker runs `trainlint.cli.main(argv)` for each job, with stdin/stdout/stderr replaced by byte
buffers that behave as a UTF-8 terminal does (strict encoding, as under a UTF-8 locale). Anything
that escapes `main` is what a real run would print as a traceback. A job that runs past its time
limit is interrupted (its traceback says where it hung); the driver kills the worker if even that
does not return.

Framing on stdin/stdout: 8-byte big-endian length, then a JSON object.
    job:    {"argv": [...], "cwd": "...", "stdin": base64 | null, "timeout": seconds}
    answer: {"rc": int | null, "stdout": b64, "stderr": b64, "exception": str | null,
             "hang": bool, "seconds": float, "maxrss_kb": int}
"""

from __future__ import annotations

import base64
import io
import json
import os
import resource
import signal
import struct
import sys
import time
import traceback

MEMORY_LIMIT = int(os.environ.get("TL_FUZZ_MEMORY_LIMIT", str(3 * 2**30)))


class Hang(BaseException):
    """Raised by the alarm: not an Exception, so nothing in trainlint swallows it."""


def _alarm(signum, frame):
    raise Hang()


def _read_exact(stream, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = stream.read(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def run_job(job: dict) -> dict:
    from trainlint import cli

    stdin_bytes = base64.b64decode(job["stdin"]) if job.get("stdin") is not None else b""
    fake_in = io.TextIOWrapper(io.BytesIO(stdin_bytes), encoding="utf-8", errors="strict")
    out_buf, err_buf = io.BytesIO(), io.BytesIO()
    fake_out = io.TextIOWrapper(out_buf, encoding="utf-8", errors="strict", write_through=True)
    fake_err = io.TextIOWrapper(err_buf, encoding="utf-8", errors="backslashreplace", write_through=True)
    saved = sys.stdin, sys.stdout, sys.stderr
    cwd = os.getcwd()
    rc, exception, hang = None, None, False
    start = time.perf_counter()
    os.chdir(job.get("cwd") or cwd)
    sys.stdin, sys.stdout, sys.stderr = fake_in, fake_out, fake_err
    signal.setitimer(signal.ITIMER_REAL, float(job.get("timeout", 20)))
    try:
        rc = cli.main([os.fsdecode(a.encode("utf-8", "surrogateescape")) for a in job["argv"]])
    except Hang:
        hang = True
        exception = "".join(traceback.format_exc(limit=-12))
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - what a real run would die of
        exception = traceback.format_exc()
        rc = 1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        try:
            fake_out.flush()
        except Exception:  # noqa: BLE001
            pass
        sys.stdin, sys.stdout, sys.stderr = saved
        os.chdir(cwd)
    return {"rc": rc, "stdout": base64.b64encode(out_buf.getvalue()).decode(),
            "stderr": base64.b64encode(err_buf.getvalue()).decode(), "exception": exception, "hang": hang,
            "seconds": time.perf_counter() - start,
            "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


def main() -> None:
    try:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ValueError, OSError):
        pass
    signal.signal(signal.SIGALRM, _alarm)
    import trainlint.cli  # noqa: F401 - import once, before the first job
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    while True:
        head = _read_exact(inp, 8)
        if head is None:
            return
        body = _read_exact(inp, struct.unpack(">Q", head)[0])
        if body is None:
            return
        try:
            answer = run_job(json.loads(body))
        except BaseException:  # noqa: BLE001 - the harness itself failed: say so, keep going
            answer = {"rc": None, "stdout": "", "stderr": "", "exception": "HARNESS " + traceback.format_exc(),
                      "hang": False, "seconds": 0.0, "maxrss_kb": 0}
        data = json.dumps(answer).encode()
        out.write(struct.pack(">Q", len(data)) + data)
        out.flush()


if __name__ == "__main__":
    main()
