"""One file named twice in one run (`train.yaml ./train.yaml $PWD/train.yaml`, a symlink to it, a folder symlink, a
hard link) is checked, fixed and diffed once, under the first name given: its findings are not reported twice, and
the `--diff` of the run is one patch that `patch` and `git apply` accept."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from trainlint import cli
from trainlint.context.discovery import discover

CONFIG = "model_name_or_path: meta-llama/Llama-3.1-8B\nsave_strategy: no\nlearning_rate: 2e-5\n"
FIXED = 'model_name_or_path: meta-llama/Llama-3.1-8B\nsave_strategy: "no"\nlearning_rate: 2.0e-5\n'


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "train.yaml").write_text(CONFIG)
    os.symlink("train.yaml", tmp_path / "configs" / "link.yaml")
    os.link(tmp_path / "configs" / "train.yaml", tmp_path / "configs" / "hard.yaml")
    os.symlink("configs", tmp_path / "alias")
    (tmp_path / "sub").mkdir()
    return tmp_path


def names(root) -> list[str]:
    return ["configs/train.yaml", "./configs/train.yaml", str(root / "configs" / "train.yaml"),
            "sub/../configs/train.yaml", "configs/link.yaml", "alias/train.yaml", "configs/hard.yaml"]


def test_discovery_keeps_the_first_name_of_each_file(project):
    targets, missing = discover(names(project) + ["configs"], exclude=(), respect_gitignore=False)
    assert not missing
    assert [t.path for t in targets] == ["configs/train.yaml"]
    targets, _ = discover(["configs", "configs/link.yaml"], exclude=(), respect_gitignore=False)
    # found by the walk first (hard.yaml sorts first), then named: still one target, and a named one
    assert [(t.path, t.explicit) for t in targets] == [("configs/hard.yaml", True)]


@pytest.mark.parametrize("first", [0, 4, 5, 6])
def test_json_output_reports_the_file_once(project, capsys, first):
    given = names(project)
    given.insert(0, given.pop(first))
    cli.main(["check", "--isolated", "--output-format", "json", *given])
    files = json.loads(capsys.readouterr().out)["files"]
    assert [f["path"] for f in files] == [os.path.relpath(given[0])]  # the first name given, as shown


def test_diff_is_one_patch_that_applies(project, capsys):
    cli.main(["check", "--isolated", "--diff", *names(project)])
    diff = capsys.readouterr().out
    assert diff.count("--- a/") == 1 and diff.count("+++ b/") == 1
    shutil.copytree(project / "configs", project / "copy" / "configs")
    for command in (["patch", "-p1", "--dry-run", "-s", "-f"], ["git", "apply", "--check", "-"]):
        if shutil.which(command[0]) is None:
            continue
        proc = subprocess.run(command, cwd=project / "copy", input=diff.encode(), capture_output=True)
        assert proc.returncode == 0, (command, proc.stdout, proc.stderr)
    if shutil.which("patch"):
        subprocess.run(["patch", "-p1", "-s"], cwd=project / "copy", input=diff.encode(), check=True)
        assert (project / "copy" / "configs" / "train.yaml").read_text() == FIXED
    cli.main(["check", "--isolated", "--fix", *names(project)])
    assert "2 fixed" in capsys.readouterr().out  # two edits in one file, not the same edits once per name
    assert (project / "configs" / "train.yaml").read_text() == FIXED
    assert os.path.islink(project / "configs" / "link.yaml")
    assert os.path.samefile(project / "configs" / "hard.yaml", project / "configs" / "train.yaml")
