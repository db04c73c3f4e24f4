"""The repository stands alone: its own files (not the third-party files vendored as test data under tests/realworld
and tests/data) name no location on the machine they were written on, cite no notes kept outside the repository, and
link only to files that exist."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
VENDORED = ("tests/realworld/", "tests/data/")
TEXT_SUFFIXES = {".md", ".py", ".json", ".yaml", ".yml", ".toml", ".txt", ".sh", ".cfg", ".ini", ".js", ".ts",
                 ".lua", ".el", ".vim", ".html"}
SKIPPED_FOLDERS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache",
                   ".ruff_cache", "build", "dist"}
# A home or work folder of one machine: work, root, home or Users at the root of the file system (not a home-relative
# ~/.cache, nor the workspace folder axolotl's Docker images hold the repository in).
MACHINE_PATH = re.compile(r"(?<![\w.~/-])/(?:work|root|home|Users)/")
# A temporary folder as where to write something: in the documentation and the benchmarks' recorded results (in a
# config or a Dockerfile line of a test, /tmp/ is data).
TEMP_PATH = re.compile(r"(?<![\w.~/-])/tmp/")
# The notes trainlint was designed from live outside the repository: facts cite their public sources instead.
RESEARCH_NOTE = re.compile(r"(?<![\w-])research/[\w.-]+\.md")
MARKDOWN_LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")


def own_files() -> list[str]:
    """The repository's files (git's list in a checkout, else a walk), vendored data and build output left out."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, timeout=60)
        names = [n for n in listed.stdout.split("\0") if n] if listed.returncode == 0 else []
    except (OSError, subprocess.SubprocessError):
        names = []
    if not names:
        names = [p.relative_to(REPO).as_posix() for p in REPO.rglob("*")
                 if p.is_file() and not SKIPPED_FOLDERS.intersection(p.relative_to(REPO).parts)]
    return sorted(n for n in names if not n.startswith(VENDORED) and Path(n).suffix in TEXT_SUFFIXES
                  and (REPO / n).is_file())


FILES = own_files()


def read(name: str) -> str:
    return (REPO / name).read_text(encoding="utf-8", errors="replace")


def hits(pattern: re.Pattern, names: list[str]) -> list[str]:
    found = []
    for name in names:
        for number, line in enumerate(read(name).splitlines(), 1):
            if pattern.search(line):
                found.append(f"{name}:{number}: {line.strip()[:160]}")
    return found


def test_the_repository_files_are_found():
    assert "README.md" in FILES and "trainlint/cli.py" in FILES and len(FILES) > 100


def test_no_machine_paths():
    found = hits(MACHINE_PATH, FILES)
    assert not found, "paths of one machine (use a relative path, an argument or a placeholder):\n" + "\n".join(found)


def test_no_temporary_folders_as_locations_in_docs_or_results():
    documents = [n for n in FILES if n.endswith(".md") or re.match(r"benchmarks/.*/results/", n)]
    found = hits(TEMP_PATH, documents)
    assert not found, "a /tmp/ location (write to a relative path instead):\n" + "\n".join(found)


def test_no_citations_of_notes_outside_the_repository():
    found = hits(RESEARCH_NOTE, FILES)
    assert not found, "cites research notes that are not in the repository (cite the public source):\n" + \
        "\n".join(found)


@pytest.mark.parametrize("name", [n for n in FILES if n.endswith(".md")])
def test_markdown_links_point_at_files_that_exist(name):
    missing = []
    for target in MARKDOWN_LINK.findall(read(name)):
        path = target.split("#", 1)[0]
        if not path or re.match(r"^[a-zA-Z][\w+.-]*:", path):  # an anchor in the page, a URL, mailto:
            continue
        if not (REPO / name).parent.joinpath(path).exists():
            missing.append(target)
    assert not missing, f"{name} links to files that do not exist: {missing}"
