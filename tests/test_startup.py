"""What keeps `trainlint check` cheap stays exact: the byte prefilters of the launch index and of the repository's
parser scan select a superset of what the full scans would, so the findings do not change."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from trainlint.context import dialect, launch

ROOT = Path(__file__).resolve().parent.parent


def test_every_parser_pattern_needs_one_of_its_prefilter_words():
    assert len(dialect._IMPORT_WORDS) == len(dialect.BY_IMPORT)
    for (pattern, _name), words in zip(dialect.BY_IMPORT, dialect._IMPORT_WORDS):
        for alternative in pattern.pattern.split("|"):  # plain alternatives: no groups, no quantified letters
            assert not re.search(r"[()?*{]", alternative.replace(r"\s+", "")), alternative
            assert any(re.escape(word.decode()) in alternative for word in words), alternative


def test_repository_parser_finds_what_the_patterns_find(tmp_path):
    (tmp_path / "a.py").write_text("from swift.llm import x\nparse = 1\n")
    (tmp_path / "b.py").write_text("import open_r1\nparser = 2\n")
    (tmp_path / "c.py").write_text("HfArgumentParser  # no parse call\n")
    (tmp_path / "d.py").write_text("swiftly parse\n")
    dialect.clear_cache()
    assert dialect.repository_parser(str(tmp_path)) == ("open-r1", str(tmp_path / "b.py"))


def _top_level_alternatives(pattern: str) -> list[str]:
    out, depth, start = [], 0, 0
    for i, ch in enumerate(pattern):
        if ch == "\\":
            continue
        if ch == "(" and (i == 0 or pattern[i - 1] != "\\"):
            depth += 1
        elif ch == ")" and pattern[i - 1] != "\\":
            depth -= 1
        elif ch == "|" and depth == 0 and pattern[i - 1] != "\\":
            out.append(pattern[start:i])
            start = i + 1
    return out + [pattern[start:]]


def test_every_launch_word_alternative_needs_one_of_the_literals():
    literals = launch._LAUNCH_LITERALS.pattern.replace("\\", "").split("|")
    assert not launch.LAUNCH_WORDS.flags & re.IGNORECASE
    for alternative in _top_level_alternatives(launch.LAUNCH_WORDS.pattern):
        plain = alternative.replace("\\", "")
        hits = [word for word in literals if word in plain]
        assert hits, alternative
        # the literal is not made optional by a quantifier right after it
        after = [plain[plain.index(word) + len(word):][:1] for word in hits]
        assert any(not re.match(r"[?*{]", char) for char in after), alternative


def test_has_launch_words_is_launch_words():
    for text in ("accelerate launch x", "accelerate  \tlaunch", "torchrun --nproc 2", "python3.11 -m x", "pythonic",
                 "trl sft", "trl", "srun -n 2", "megatron sft", "megatron", "tune run lora", "no launch here", ""):
        assert launch.has_launch_words(text) == (launch.LAUNCH_WORDS.search(text) is not None), text


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
    # the Makefile, then train.sh (the README has neither the name nor a variable)
    assert [c.line for c in index.commands_naming("a.yaml")] == [1, 2, 3]
    assert not re.search(r"c\.yaml", " ".join(c.text for c in index.commands_naming("a.yaml", variables=False)))


def test_may_name_keeps_every_command_that_names_the_config(tmp_path):
    """may_name is a superset of parse_command + _names_file: on crafted commands and on every command of the
    vendored real-world repositories against every config in them."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "configs").mkdir()
    config = tmp_path / "configs" / "train.yaml"
    config.write_text("a: 1\n")
    env = (("A", "train"), ("B", "yaml"), ("C", "configs/train.yaml"), ("D", "configs"))
    texts = ['accelerate launch x.py "$A".yaml', "accelerate launch x.py $A.$B", "accelerate launch x.py $C",
             "accelerate launch x.py ${D}/train.yaml", "accelerate launch x.py $UNKNOWN/train.yaml",
             "accelerate launch x.py configs/$UNKNOWN.yaml", "accelerate launch x.py ${X:-configs/train.yaml}",
             "accelerate launch x.py $D/'train'.yaml", 'accelerate launch x.py "$D"/tr"ai"n.yaml',
             "accelerate launch x.py $D/tr\\ain.yaml", "torchrun --nproc_per_node 8 x.py --config=$C",
             "accelerate launch --config_file $D/ds.json x.py $A.json", "accelerate launch x.py $UNKNOWN",
             "accelerate launch x.py $D/other.yaml"]
    commands = [launch.Command("run.sh", i, text, 0, env) for i, text in enumerate(texts)]
    named = 0
    for command in commands:
        parsed = launch.parse_command(command.text, dict(command.env))
        if parsed is not None and launch._names_file(parsed, config, [tmp_path, tmp_path], tmp_path):
            named += 1
            assert launch.may_name(command, config), command.text
    assert named >= 8  # `configs/$UNKNOWN.yaml` names no file (a variable plus the extension could name any)
    assert not launch.may_name(commands[-2], config) and not launch.may_name(commands[-1], config)

    for repo in sorted(p for p in (ROOT / "tests" / "realworld").iterdir() if p.is_dir()):
        index = launch._build_index(repo)
        configs = [p for p in repo.rglob("*") if p.suffix in (".yaml", ".yml", ".json") and p.is_file()]
        for command in index.commands:
            parsed = launch.parse_command(command.text, dict(command.env))
            if parsed is None:
                continue
            bases = [repo, Path(command.path).parent]
            for cfg in configs:
                if launch._names_file(parsed, cfg.resolve(), bases, repo.resolve()):
                    assert launch.may_name(command, cfg.resolve()), (command.path, command.text, cfg)


def test_collection_pause_is_only_for_the_process_command_line(tmp_path):
    config = tmp_path / "train.yaml"
    config.write_text("model_name_or_path: gpt2\nper_device_train_batch_size: 2\n")
    probe = ("import gc, sys\nfrom trainlint.cli import main\npath = sys.argv[1]\n"
             "sys.argv = ['trainlint', 'check', path]\n"
             "code = main()\nprint(gc.isenabled(), gc.get_freeze_count() > 0, code)\n"
             "gc.unfreeze()\ncode = main(['check', path])\nprint(gc.isenabled(), gc.get_freeze_count() > 0, code)")
    out = subprocess.run([sys.executable, "-c", probe, str(config)], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path).stdout.split("\n")
    assert [line for line in out if line.startswith(("True", "False"))] == ["True True 0", "True False 0"]


def test_pathspec_is_imported_only_where_a_path_is_matched(tmp_path):
    """A config named on the command line (pre-commit's case) matches no path against ignore files: pathspec (~6% of
    such a check's instructions) is not imported; walking a folder imports it and applies the .gitignore."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("ignored/\n")
    for folder in ("configs", "ignored"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "train.yaml").write_text("model_name_or_path: gpt2\nper_device_train_batch_size: 2\n")
    probe = ("import json, sys\nfrom trainlint.cli import main\n"
             "sys.argv = ['trainlint', 'check', '--output-format', 'json', *sys.argv[1:]]\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\nprint('pathspec' in sys.modules)")

    def run(*paths: str) -> tuple[bool, str]:
        out = subprocess.run([sys.executable, "-c", probe, *paths], capture_output=True, text=True, timeout=120,
                             cwd=tmp_path).stdout
        report, _, imported = out.rstrip().rpartition("\n")
        return imported == "True", report

    imported, report = run("configs/train.yaml")
    assert not imported and "configs/train.yaml" in report
    imported, report = run(".")
    assert imported and "configs/train.yaml" in report and "ignored/" not in report


def test_a_pattern_compiled_later_is_the_pattern_and_compiles_on_first_use():
    from trainlint._patterns import compile_later

    later = compile_later(r"(?P<key>\w+)\s*=\s*(\d+)", re.M)
    assert "pattern" not in vars(later)  # nothing compiled at definition
    now = re.compile(r"(?P<key>\w+)\s*=\s*(\d+)", re.M)
    text = "a = 1\nbb=22\n"
    assert later.pattern == now.pattern and later.flags == now.flags and later.groupindex == now.groupindex
    assert [m.groups() for m in later.finditer(text)] == [m.groups() for m in now.finditer(text)]
    assert later.sub(r"\g<key>", text) == now.sub(r"\g<key>", text)
    assert later.search(text).span() == now.search(text).span()
    bytes_later = compile_later(rb"\bdeepspeed\b")
    assert bytes_later.search(b"run deepspeed now") is not None


def test_module_level_patterns_are_compiled_later():
    # A module-level re.compile runs at every start-up, whether a check uses it or not.
    import ast

    for path in sorted((ROOT / "trainlint").rglob("*.py")):
        if path.name == "_patterns.py":
            continue
        tree = ast.parse(path.read_text(), str(path))
        pending = list(ast.iter_child_nodes(tree))
        while pending:
            node = pending.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "compile"
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"):
                raise AssertionError(f"{path.relative_to(ROOT)}:{node.lineno}: use compile_later at module level")
            pending.extend(ast.iter_child_nodes(node))


def test_every_dataclass_has_a_docstring():
    # Python 3.11's dataclasses builds a missing docstring from inspect.signature at import, for every class.
    import ast

    missing = []
    for path in sorted((ROOT / "trainlint").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.ClassDef) and any("dataclass" in ast.unparse(d) for d in node.decorator_list)
                    and ast.get_docstring(node) is None):
                missing.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert not missing, missing


def test_immutable_value_records_are_named_tuples():
    # A frozen dataclass costs ~3x a NamedTuple to define (3.11's dataclasses compiles __init__, __repr__, __eq__,
    # __hash__, __setattr__ and __delattr__ from source at import): an immutable record is a NamedTuple unless it
    # needs what only a dataclass has.
    import dataclasses
    import functools
    import importlib
    import pkgutil
    import typing

    import trainlint

    def needs_a_dataclass(cls: type) -> bool:
        fields = dataclasses.fields(cls)
        return (hasattr(cls, "__post_init__") or typing.Generic in cls.__mro__  # 3.10 has no generic NamedTuple
                or any(f.default_factory is not dataclasses.MISSING or not f.compare for f in fields)
                or any(isinstance(v, functools.cached_property) for v in vars(cls).values())
                or bool(cls.__subclasses__()) or any(dataclasses.is_dataclass(b) for b in cls.__mro__[1:]))

    plain, factories = [], []
    for info in pkgutil.walk_packages(trainlint.__path__, "trainlint."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if not isinstance(value, type) or value.__module__ != info.name:
                continue
            if (dataclasses.is_dataclass(value) and value.__dataclass_params__.frozen  # type: ignore[attr-defined]
                    and not needs_a_dataclass(value)):
                plain.append(f"{info.name}.{name}")
            # a NamedTuple takes `field(default_factory=...)` as its default value itself (mypy does not see it)
            if issubclass(value, tuple) and any(isinstance(d, dataclasses.Field)
                                                for d in getattr(value, "_field_defaults", {}).values()):
                factories.append(f"{info.name}.{name}")
    assert not plain, plain
    assert not factories, factories


def test_a_pattern_compiled_later_can_be_copied():
    import copy

    from trainlint._patterns import compile_later

    later = compile_later(r"a+")
    assert copy.copy(later).match("aa").group() == "aa"
