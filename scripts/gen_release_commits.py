"""Build trainlint/catalog/data/release_commits.json from local git mirrors of the frameworks.

For each framework: every release tag's commit (a git pin `@<that hash>` is that release), and every commit of the
main branch's history after a release, grouped by the release window it falls in: after release X (the newest
release whose tag, or the point its release branch left main, is an ancestor of it) and before release Y (the oldest release tag that contains it). A git pin
`trl @ git+...@<hash>` then resolves to "between X and Y" (trainlint/context/pins.py). Hashes are stored as
their first 10 hex digits.

    python scripts/gen_release_commits.py MIRRORS   # the git mirrors, at MIRRORS/<owner>+<name>/repo
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from packaging.version import Version

MIRRORS = {"trl": "huggingface+trl", "accelerate": "huggingface+accelerate", "peft": "huggingface+peft"}
FLOOR = {"trl": "0.7.0", "accelerate": "0.20.0", "peft": "0.4.0"}  # windows before these are left out
PREFIX = 10
RELEASE = re.compile(r"^v?(\d+\.\d+(?:\.\d+)?)$")
OUT = Path(__file__).resolve().parent.parent / "trainlint" / "catalog" / "data" / "release_commits.json"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def build(repo: Path, floor: str) -> dict:
    tags = {}
    for line in git(repo, "tag").split():
        match = RELEASE.match(line)
        if match and Version(match.group(1)) >= Version(floor):
            tags[match.group(1)] = line
    order = sorted(tags, key=Version)
    commit = {v: git(repo, "rev-list", "-n1", tags[v]).strip() for v in order}
    head = git(repo, "rev-list", "HEAD").split()
    on_main = set(head)
    after: dict[str, str] = {}  # commit -> newest release it descends from
    before: dict[str, str] = {}  # commit -> oldest release that contains it
    for version in order:  # a release cut on a branch counts from its branch point on main
        anchor = git(repo, "merge-base", commit[version], "HEAD").strip()
        for sha in git(repo, "rev-list", "--ancestry-path", f"{anchor}..HEAD").split():
            after[sha] = version  # ascending: the newest ancestor release wins
        if anchor in on_main:
            after[anchor] = version
    for version in reversed(order):
        for sha in git(repo, "rev-list", tags[version]).split():
            before[sha] = version  # descending: the oldest containing release wins
    releases = {v: commit[v][:PREFIX] for v in order}
    windows: dict[str, list[str]] = {}
    exact = set(commit.values())
    for sha in head:
        if sha in exact or sha not in after:
            continue
        key = f"{after[sha]}..{before.get(sha, '')}"
        windows.setdefault(key, []).append(sha[:PREFIX])
    return {"releases": releases,
            "windows": {k: " ".join(sorted(v)) for k, v in sorted(windows.items(),
                                                                  key=lambda kv: Version(kv[0].split("..")[0]))}}


def main(root: str) -> None:
    data = {"_doc": "Git commits of framework repositories by release window, for git pins (`trl @ git+https://"
                    "github.com/huggingface/trl.git@<hash>`): `releases` maps a release to its tag's commit; "
                    "`windows` maps `X..Y` to the main-branch commits after release X (the newest release tag "
                    "that is their ancestor) and before release Y (the oldest release tag that contains them; "
                    "empty: not released yet), as their first 10 hex digits. Built exactly from the frameworks' "
                    "git history by scripts/gen_release_commits.py (git rev-list over the release tags)."}
    for name, mirror in MIRRORS.items():
        repo = Path(root) / mirror / "repo"
        if repo.is_dir():
            data[name] = build(repo, FLOOR[name])
    OUT.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    print(OUT, OUT.stat().st_size)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python scripts/gen_release_commits.py MIRRORS  (the folder holding <owner>+<name>/repo)")
    main(sys.argv[1])
