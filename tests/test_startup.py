"""What keeps `trainlint check` cheap stays exact: the byte prefilters of the launch index and of the repository's
parser scan select a superset of what the full scans would, so the findings do not change."""

from __future__ import annotations

import re
from pathlib import Path

from trainlint.context import dialect, launch

ROOT = Path(__file__).resolve().parent.parent


def test_every_parser_pattern_needs_one_of_the_prefilter_words():
    for pattern, _name in dialect.BY_IMPORT:
        for alternative in pattern.pattern.split("|"):
            assert any(word.decode() in alternative for word in dialect._IMPORT_WORDS), alternative
    assert dialect._ANY_IMPORT.pattern.count("|") == sum(p.pattern.count("|") + 1 for p, _ in dialect.BY_IMPORT) - 1


def test_launch_index_lookup_is_the_full_scan_filtered(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "train.sh").write_text("#!/bin/bash\nCFG=configs/b.yaml\naccelerate launch train.py configs/a.yaml\n"
                                       "torchrun --nproc_per_node 2 train.py $CFG\n")
    (tmp_path / "README.md").write_text("# x\n\n```sh\ntrl sft --config configs/c.yaml\n```\n")
    (tmp_path / "Makefile").write_text("train:\n\tdeepspeed train.py --deepspeed ds/zero2.json configs/a.yaml\n")
    launch.clear_cache()
    for root in (tmp_path, ROOT):
        full = launch._build_index(root).commands
        for name in ("a.yaml", "b.yaml", "c.yaml", "zero2.json", "train.yaml", "nothing.yaml"):
            for variables in (True, False):
                index = launch._build_index(root)
                found = index.commands_naming(name, variables)
                wanted = [c for c in full if name in c.text or (variables and "$" in c.text)]
                assert [c for c in found if c in wanted] == wanted
                assert index.commands == full  # parsing some files first changes nothing
    index = launch._build_index(tmp_path)
    assert [c.line for c in index.commands_naming("a.yaml")] == [1, 2, 3]  # Makefile, then train.sh (the README has neither)
    assert not re.search(r"c\.yaml", " ".join(c.text for c in index.commands_naming("a.yaml", variables=False)))
