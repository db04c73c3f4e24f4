"""trainlint.context.gitignore matches as pathspec.GitIgnoreSpec does: the same answer for every pattern set it
reads itself (random ones over gitignore's syntax, and the usual templates), pathspec's own matcher for the rest,
and never an error for a pattern git would skip."""

from __future__ import annotations

import random
import subprocess
import sys

import pathspec
import pytest

from trainlint.context import gitignore

PYTHON_TEMPLATE = """\
# Byte-compiled / optimized / DLL files
__pycache__/
*.py[cod]
*$py.class
*.so
build/
dist/
*.egg-info/
.installed.cfg
*.egg
.env
.venv
env/
venv/
!.vscode/settings.json
/outputs
wandb/
logs/*.log
**/checkpoints
data/raw/
.DS_Store
"""
PATHS = ["a.py", "a.pyc", "pkg/__pycache__/", "pkg/__pycache__/m.cpython-311.pyc", "build/", "build/lib/x.py",
         "src/build/", "x.egg-info/", "outputs/", "sub/outputs/", "wandb/run/", "logs/a.log", "logs/a/b.log",
         "m/checkpoints/", "m/checkpoints/step1/x.bin", "data/raw/", "data/raw/x.json", "data/clean/x.json",
         ".vscode/settings.json", ".vscode/launch.json", "configs/train.yaml", "x$py.class", ".env", ".env/"]


def _answers(matcher, paths):
    return [bool(matcher.match_file(p)) for p in paths]


def test_the_usual_template_is_read_here_and_matches_as_pathspec():
    lines = PYTHON_TEMPLATE.splitlines()
    ours = gitignore.spec(lines)
    assert isinstance(ours, gitignore.Patterns)
    assert _answers(ours, PATHS) == _answers(pathspec.GitIgnoreSpec.from_lines(lines), PATHS)


def test_random_pattern_sets_match_as_pathspec():
    rng = random.Random(20261201)
    atoms = ["a", "b", "ab", ".", "*", "?", "/", "**", "x.py", "*.py", "c", "[ab]", "[!a]", "[a-c]", "!", "*.py[cod]"]
    names = ["a", "b", "ab", "x.py", "c", ".a", "a.b", "aa", "ba", "x.pyc", "x.pyd", "!a"]
    read_here = 0
    for _ in range(3000):
        lines = ["".join(rng.choice(atoms) for _ in range(rng.randint(1, 4))) for _ in range(rng.randint(1, 3))]
        try:
            theirs = pathspec.GitIgnoreSpec.from_lines(lines)
        except Exception:  # noqa: BLE001 - a pattern pathspec refuses: see the next test
            continue
        ours = gitignore.spec(lines)
        if not isinstance(ours, gitignore.Patterns):
            continue
        read_here += 1
        paths = ["/".join(rng.choice(names) for _ in range(rng.randint(1, 4))) + ("/" if rng.random() < 0.4 else "")
                 for _ in range(8)]
        assert _answers(ours, paths) == _answers(theirs, paths), lines
    assert read_here > 1000


@pytest.mark.parametrize("lines", [["!"], ["["], ["a[", "*.pyc"], ["!", "x/"]])
def test_a_pattern_git_skips_never_raises(lines):
    matcher = gitignore.spec(lines)
    if matcher is not None:
        assert matcher.match_file("x.pyc") == ("*.pyc" in lines)


def test_walking_a_repository_with_the_usual_gitignore_does_not_import_pathspec(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text(PYTHON_TEMPLATE)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "ds.json").write_text('{"train_micro_batch_size_per_gpu": 1}\n')
    (tmp_path / "outputs").mkdir()
    (tmp_path / "outputs" / "ds.json").write_text('{"train_micro_batch_size_per_gpu": 1}\n')
    probe = ("import sys\nfrom trainlint.cli import main\nmain(['check', '.'])\n"
             "print('PATHSPEC', 'pathspec' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path).stdout
    assert "PATHSPEC False" in out and "configs/ds.json" in out and "outputs/ds.json" not in out, out
