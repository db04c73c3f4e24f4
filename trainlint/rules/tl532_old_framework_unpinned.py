"""TL532 old-framework-unpinned: a script that only old releases of its framework can run, installed without a ref.

**What**: the launched script (or, with no launch, every repository script of the file's parser) imports a name
that a later release of the framework removed, or the repository's documents run a script of a cloned framework
checkout that a later release removed, and the repository installs that framework from its git repository without
a ref (an install of `git+https://github.com/huggingface/alignment-handbook.git` with no `@ref`, a `git clone`
that no `git checkout` follows). Known: alignment-handbook, whose rewrite (19f0345, 2025-07-24, `alignment/__init__.py`
0.4.0.dev0) removed `H4ArgumentParser`, `ModelArguments`, `DataArguments`, `get_datasets`, ... and
`scripts/run_sft.py` / `run_dpo.py` / `run_orpo.py` / `run_cpt.py` (`catalog/data/removed_names.json`,
`catalog/data/removed_scripts.json`).

**Why**: an install without a ref takes the newest commit, where the name or the script is gone: Python stops at
the import with "ImportError: cannot import name 'H4ArgumentParser' from 'alignment'" (or, for a removed script,
"can't open file '.../scripts/run_dpo.py': [Errno 2] No such file or directory") before the recipe is read. The
recipe's keys belong to that old era (alignment-handbook v0.2.0 pinned transformers==4.35.0 and trl==0.7.4;
5a7ba95, the last commit with H4ArgumentParser, trl>=0.9.6,<0.13.0), so trainlint reports this one install
instead of judging each key against today's releases (TL524 is silent on such files). A warning: a checkout or
wheel made before the rewrite still runs, and trainlint cannot see what is installed.

**Evidence**: `huggingface/alignment-handbook src/alignment/__init__.py` (0.4.0.dev0, 19f0345: the names removed);
the message is Python's own for a missing name. First message: "ImportError: cannot import name '{name}' from
'alignment'".

**Example**: `git+https://github.com/huggingface/alignment-handbook.git` (the URL a README's install names) →
`git+https://github.com/huggingface/alignment-handbook.git@v0.3.0`.

**Fix**: none automatic: pin the install to the last release the scripts were written for (`@v0.3.0`, 6da26f5,
the last tag with H4ArgumentParser and scripts/run_*.py), or port the scripts to today's handbook.
"""

from __future__ import annotations

import os
from pathlib import Path

from trainlint._patterns import compile_later
from trainlint.diagnostics import Pos, Severity, Span
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL532", "old-framework-unpinned", Severity.WARNING,
            "A script only old framework releases run, with the framework installed without a ref",
            flavors=("huggingface",), framework="alignment-handbook",
            evidence="alignment-handbook src/alignment/__init__.py (0.4.0.dev0, 19f0345)",
            raises="ImportError: cannot import name '{name}' from 'alignment'")

_IMPORTS = compile_later(r"^(\S+?)(?: \(imported by \S+\))? (?:imports|uses) (\S+?),")
_RUNS = compile_later(r"^\S+ runs (\S+) of a clone")


def _what(reason: str) -> tuple[str, str]:
    """(the short subject for the message, Python's message) from the era's reason."""
    found = _IMPORTS.match(reason)
    if found:
        name = found.group(2).split(".")[-1]
        return (f"`{name}` ({Path(found.group(1)).name} imports it;",
                f"ImportError: cannot import name '{name}' from 'alignment'")
    found = _RUNS.match(reason)
    if found:
        return f"`{found.group(1)}` (", f"can't open file '{found.group(1)}': [Errno 2] No such file or directory"
    return "what the scripts use (", "ImportError"


def check(ctx: LintContext):
    dialect = ctx.dialect
    if not dialect.era or not dialect.era_install:
        return
    package, below, reason = dialect.era[0]
    path, line, start, end, offset, command = dialect.era_install
    shown = path
    doc_path = ctx.document.path or ""
    if doc_path and not os.path.isabs(doc_path):
        try:
            shown = os.path.relpath(path)
        except ValueError:
            shown = path
    what, stop = _what(reason)
    span = Span(Pos(line, start, offset), Pos(line, end, offset + (end - start)))
    yield RULE.diagnostic(
        shown, span, f"{package} installed without a ref: its newest lacks {what} gone in {below})",
        assumptions=("the install gets the newest commit of the default branch; an environment made before the "
                     "removal still runs",),
        detail=f"{reason}. `{command}` names no ref, so it installs the newest {package}, where Python stops with "
               f"\"{stop}\" before the recipe is read. Pin the release the scripts were written for "
               f"(`@v0.3.0`, the last tag before {below}) or port them to today's {package}.")
