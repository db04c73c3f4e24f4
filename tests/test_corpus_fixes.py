"""`--fix --unsafe-fixes` over the real-world corpus: every fixed file re-parses and re-lints with no
finding that was not there before (fixes never trade one problem for another)."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from trainlint import engine
from trainlint.document.reading import parse_document
from trainlint.fixes.apply import compute_fixes
from trainlint.context.settings import Settings

from shared_corpus import CORPUS, needs_corpus


@needs_corpus
def test_unsafe_fixes_on_the_corpus_reparse_and_add_no_findings(tmp_path):
    copy = tmp_path / "corpus"
    shutil.copytree(CORPUS, copy)
    files = sorted(str(p) for p in copy.glob("*/*") if p.suffix != ".md")
    settings = Settings(use_project_config=False)
    before = {p: Counter(d.code for d in engine.check_path(p, settings).diagnostics) for p in files}
    outcome = compute_fixes(files, lambda p: engine.check_path(p, settings), unsafe=True)
    assert outcome.problems == []
    assert outcome.fixed, "the corpus has fixable findings"
    for path, text in outcome.fixed.items():
        doc = parse_document(text, path)
        assert doc.syntax_error is None, (path, doc.syntax_error)
        Path(path).write_text(text)
    for path in files:
        after = Counter(d.code for d in engine.check_path(path, settings).diagnostics)
        new = {code: n for code, n in after.items() if n > before[path].get(code, 0)}
        assert not new, f"{path}: fixes introduced {new}"
