"""`python -m tests.fuzz`: the long fuzz run (see tests/fuzz/README.md).

    .venv/bin/python -m tests.fuzz cli --seed 1 --minutes 30 [--save tests/fuzz/regressions] [--report out.json]
    .venv/bin/python -m tests.fuzz lsp --seed 1 --ops 3000 [--report out.json]
    .venv/bin/python -m tests.fuzz scenarios
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz")
    sub = parser.add_subparsers(dest="what", required=True)
    cli = sub.add_parser("cli", help="mutated corpus configs through the CLI")
    cli.add_argument("--seed", type=int, default=1)
    cli.add_argument("--minutes", type=float, default=10.0)
    cli.add_argument("--max-inputs", type=int, default=None)
    cli.add_argument("--save", type=Path, default=None, help="write new findings as regression fixtures here")
    cli.add_argument("--report", type=Path, default=None)
    cli.add_argument("--no-minimize", action="store_true")
    lsp = sub.add_parser("lsp", help="random edits and requests against `trainlint server`")
    lsp.add_argument("--seed", type=int, default=1)
    lsp.add_argument("--ops", type=int, default=2000)
    lsp.add_argument("--minutes", type=float, default=10.0)
    lsp.add_argument("--report", type=Path, default=None)
    scen = sub.add_parser("scenarios", help="special files, links, permissions, odd names, stdin")
    scen.add_argument("--report", type=Path, default=None)
    args = parser.parse_args(argv)

    if args.what == "cli":
        from . import campaign

        result = campaign.run(args.seed, args.minutes * 60, args.max_inputs, minimize=not args.no_minimize,
                              log=lambda m: print(m, file=sys.stderr, flush=True))
        summary = result.summary()
        if args.save:
            summary["saved"] = campaign.save_regressions(result, args.save)
    elif args.what == "lsp":
        from . import lsp_campaign

        summary = lsp_campaign.run(args.seed, args.ops, args.minutes * 60,
                                   log=lambda m: print(m, file=sys.stderr, flush=True))
    else:
        from . import scenarios

        summary = scenarios.run_all()
    text = json.dumps(summary, indent=1, default=str)
    if args.report:
        args.report.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
