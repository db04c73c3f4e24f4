"""Where the tests find the shared corpus of real configs: $TRAINLINT_CORPUS when set, else `../shared/corpus` beside
the checkout (the repository root's parent). The corpus is not part of the repository: tests that read it skip,
saying where they looked, when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ["TRAINLINT_CORPUS"]) if os.environ.get("TRAINLINT_CORPUS") else \
    REPO.parent / "shared" / "corpus"
MISSING = (f"the shared corpus is not at {CORPUS} (it is looked for at ../shared/corpus beside the checkout, "
           "or where TRAINLINT_CORPUS says)")
AVAILABLE = CORPUS.is_dir()

# A module's or a test's mark: skipped, with the reason, where there is no corpus.
needs_corpus = pytest.mark.skipif(not AVAILABLE, reason=MISSING)


def corpus_path(*parts: str) -> Path:
    """A file or folder of the corpus, or the running test skipped when it is not there."""
    path = CORPUS.joinpath(*parts)
    if not path.exists():
        pytest.skip(MISSING if not AVAILABLE else f"{path} is not in the shared corpus")
    return path


def corpus_files(pattern: str = "*/*") -> list[Path]:
    """The corpus's config files matching `pattern` (its .md notes left out), sorted; [] without a corpus."""
    return sorted(p for p in CORPUS.glob(pattern) if p.is_file() and p.suffix != ".md") if AVAILABLE else []
