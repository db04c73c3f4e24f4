"""Run a test module's `test_*` functions without pytest (the benchmark's venv may lack it)."""

from __future__ import annotations

import sys


def run_tests(namespace: dict) -> None:
    passed = failed = skipped = 0
    for name, fn in list(namespace.items()):
        if not name.startswith("test_") or not callable(fn):
            continue
        try:
            fn()
        except AssertionError as e:
            failed += 1
            print("FAIL", name, repr(e))
        except BaseException as e:  # pytest.skip() outside a pytest run (Skipped is a BaseException)
            if type(e).__name__ != "Skipped":
                raise
            skipped += 1
            print("SKIP", name, e)
        else:
            passed += 1
            print("PASS", name)
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    sys.exit(1 if failed else 0)
