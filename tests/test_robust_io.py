"""Hostile input never stops a run, and fixes never damage a file: the document layer (tags that do not
convert, huge numbers, NEL/LS/PS line positions, surrogates), reading (only regular files, bounded),
writing fixes (symlinks, hard links, read-only, changed since read, interrupts), --diff with `patch`,
the engine's TL001/TL000 split, and output with names that are not UTF-8."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess

import pytest

from trainlint import cli, engine
from trainlint.context.settings import Settings
from trainlint.document.reading import parse_document, read_document, read_regular_file
from trainlint.fixes import apply
from trainlint.fixes.apply import FixOutcome, compute_fixes, write_fixed

ISOLATED = Settings(use_project_config=False)
DS_FIXABLE = '{\n  "train_micro_batch_size_per_gpu": "4",\n  "gradient_accumulation_steps": 1\n}\n'
DS_FIXED = '{\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 1\n}\n'


def codes(result) -> list[str]:
    return [d.code for d in result.diagnostics]


# ---- the document layer ------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["!!bool maybe", "!!timestamp x", "!!int abc", "!!float abc", "!!int " + "1" * 4400,
                                   "1" * 4400])
def test_tagged_scalars_that_do_not_convert_are_tl001_at_their_position(value):
    text = f"model_name_or_path: meta-llama/Llama-3.1-8B\nlearning_rate: {value}\n"
    result = engine.check_text(text, "train.yaml", ISOLATED)
    assert not result.internal_error
    (tl001,) = [d for d in result.diagnostics if d.code == "TL001"]
    assert tl001.span.start.line == 1 and tl001.span.start.column == len("learning_rate: ")
    assert "yaml.safe_load fails" in tl001.message


def test_tagged_keys_do_not_crash():
    result = engine.check_text("!!bool maybe: 1\n!!timestamp x: 2\n? [a]: 3\n", "a.yaml", ISOLATED)
    assert not result.internal_error and codes(result).count("TL001") == 2


def test_integers_too_large_to_print_are_read_as_text():
    doc = parse_document("max_steps: 0x" + "f" * 5000 + "\n", "a.yaml")
    assert doc.errors and isinstance(doc.root.get("max_steps").value, str)
    assert not engine.check_document(doc, ISOLATED).internal_error


@pytest.mark.parametrize("number", ["1" + "0" * 5000, "-" + "9" * 4400])
def test_json_integers_over_4300_digits_are_a_syntax_error(number):
    result = engine.check_text('{"steps_per_print": ' + number + "}", "ds.json", ISOLATED)
    assert not result.internal_error
    (tl001,) = [d for d in result.diagnostics if d.code == "TL001"]
    assert "4,300 digits" in tl001.message and tl001.span.start.column == len('{"steps_per_print": ')


@pytest.mark.parametrize("sep", ["\x85", "\u2028", "\u2029"])
def test_nel_ls_ps_do_not_shift_positions(sep):
    """YAML breaks lines at NEL/LS/PS; LSP, editors and `patch` do not: positions count \\n only."""
    text = f"# a{sep}b: 1\nbf16: true\nfp16: true\n"
    doc = parse_document(text, "a.yaml")
    entry = doc.root.entry("fp16")
    assert entry.key_span.start.line == 2 and entry.key_span.start.column == 0
    assert text[entry.key_span.start.offset:entry.key_span.end.offset] == "fp16"


def test_unpaired_surrogates_are_a_syntax_error_not_a_crash():
    for path in ("a.yaml", "a.json"):
        result = engine.check_text("a: \udcff\n" if path.endswith("yaml") else '{"a": "\udcff"}', path, ISOLATED)
        assert not result.internal_error and "TL001" in codes(result)


def test_deep_nesting_and_bombs_are_bounded():
    for text in ["a: " + "[" * 30000 + "]" * 30000, "[" * 30000,
                 'a0: &a0 ["l","l","l","l","l","l","l","l","l"]\n' + "".join(
                     f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 10))]:
        result = engine.check_text(text, "a.yaml", ISOLATED)
        assert not result.internal_error and "TL001" in codes(result)


# ---- reading -------------------------------------------------------------------------------------------
def test_only_regular_files_are_opened(tmp_path):
    os.mkfifo(tmp_path / "fifo.yaml")
    os.symlink("loop.yaml", tmp_path / "loop.yaml")
    os.symlink("/dev/zero", tmp_path / "zero.yaml")
    (tmp_path / "dir.yaml").mkdir()
    expected = {"fifo.yaml": "FIFO", "loop.yaml": "symlink loop", "zero.yaml": "character device",
                "dir.yaml": "folder", "a" * 300 + ".yaml": "too long"}
    for name, words in expected.items():
        doc = read_document(tmp_path / name)
        assert doc.kind == "unreadable" and words in doc.syntax_error.message, (name, doc.syntax_error)


def test_the_size_limit_applies_before_reading(tmp_path, monkeypatch):
    big = tmp_path / "big.json"
    big.write_bytes(b"{}" + b" " * 2000)
    data, why = read_regular_file(big, limit=1000)
    assert data is None and "MiB" in why


def test_linked_special_files_are_reported_without_opening(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.mkfifo(tmp_path / "fifo.json")
    for target, words in (("/dev/zero", "character device"), ("fifo.json", "FIFO")):
        (tmp_path / "train.yaml").write_text(f"model_name_or_path: meta-llama/Llama-3.1-8B\ndeepspeed: {target}\n")
        result = engine.check_path(tmp_path / "train.yaml", ISOLATED)
        assert any(d.code == "TL001" and words in d.message for d in result.diagnostics), codes(result)


def test_a_long_model_path_is_no_internal_error(tmp_path):
    result = engine.check_text("model_name_or_path: /" + "a" * 300 + "\noutput_dir: x\n", "train.yaml", ISOLATED)
    assert not result.internal_error


def test_os_errors_in_the_pipeline_are_tl001_not_tl000(monkeypatch):
    from trainlint.rules import tl001_syntax_error

    def broken(ctx):
        raise OSError(36, "File name too long", "/x")

    monkeypatch.setattr(tl001_syntax_error, "check", broken)
    result = engine.check_text("a: 1\n", "a.yaml", ISOLATED)
    assert not result.internal_error and "TL001" in codes(result) and "TL000" not in codes(result)


def test_stdin_garbage_is_tl001(monkeypatch, capsys):
    import io

    for data in (bytes(range(256)) * 4, bytes(range(1, 256)) * 4, b"a: \xed\xa0\x80\n"):
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
        rc = cli.main(["check", "--isolated", "--output-format", "json", "-"])
        report = json.loads(capsys.readouterr().out)
        assert rc == 1 and report["files"][0]["diagnostics"][0]["code"] == "TL001"


def test_names_that_are_not_utf8_in_every_format(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    name = os.fsdecode(b"bad\xff.json")
    with open(os.fsencode(str(tmp_path)) + b"/bad\xff.json", "w") as handle:
        handle.write(DS_FIXABLE)
    for fmt in ("text", "json", "sarif", "gitlab", "github", "full"):
        rc = cli.main(["check", "--isolated", "--output-format", fmt, name])
        out = capsys.readouterr().out
        out.encode("utf-8")  # printable
        assert rc == 1
        if fmt in ("json", "sarif", "gitlab"):
            out = json.dumps(json.loads(out), ensure_ascii=False).replace("\\\\", "\\")
        assert "bad\\xff.json" in out or "bad%5Cxff.json" in out, out[:500]


# ---- writing fixes ---------------------------------------------------------------------------------------
def _fix(path) -> str | None:
    return write_fixed(str(path), DS_FIXED, open(path, encoding="utf-8").read())


def test_fix_writes_through_a_symlink(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "ds.json").write_text(DS_FIXABLE)
    os.symlink("real/ds.json", tmp_path / "ds.json")
    assert _fix(tmp_path / "ds.json") is None
    assert (tmp_path / "ds.json").is_symlink() and (tmp_path / "real" / "ds.json").read_text() == DS_FIXED


def test_fix_keeps_hard_links_mode_and_owner(tmp_path):
    path = tmp_path / "ds.json"
    path.write_text(DS_FIXABLE)
    os.chmod(path, 0o640)
    os.link(path, tmp_path / "other.json")
    before = path.stat()
    assert _fix(path) is None
    after = path.stat()
    assert after.st_ino == before.st_ino and after.st_nlink == 2 and (tmp_path / "other.json").read_text() == DS_FIXED
    assert stat.S_IMODE(after.st_mode) == 0o640 and (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)


def test_fix_keeps_mode_on_replace(tmp_path):
    path = tmp_path / "ds.json"
    path.write_text(DS_FIXABLE)
    os.chmod(path, 0o604)
    assert _fix(path) is None
    assert stat.S_IMODE(path.stat().st_mode) == 0o604 and path.read_text() == DS_FIXED
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds.json"]


def test_fix_refuses_a_read_only_file(tmp_path):
    path = tmp_path / "ds.json"
    path.write_text(DS_FIXABLE)
    os.chmod(path, 0o444)
    problem = _fix(path)
    assert problem and "read-only" in problem and path.read_text() == DS_FIXABLE


def test_fix_refuses_a_read_only_folder(tmp_path, monkeypatch):
    path = tmp_path / "ds.json"
    path.write_text(DS_FIXABLE)
    real_access = os.access
    monkeypatch.setattr(apply.os, "access", lambda p, mode: False if str(p) == str(tmp_path) else real_access(p, mode))
    problem = _fix(path)
    assert problem and "read-only" in problem and path.read_text() == DS_FIXABLE
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds.json"]


def test_fix_skips_a_file_changed_since_it_was_read(tmp_path):
    path = tmp_path / "ds.json"
    path.write_text(DS_FIXABLE)
    outcome = compute_fixes([str(path)], lambda p: engine.check_path(p, ISOLATED), unsafe=False)
    path.write_text(DS_FIXABLE.replace("1\n", "2\n"))  # another writer
    problem = write_fixed(str(path), outcome.fixed[str(path)], outcome.original[str(path)])
    assert problem and "changed since" in problem and "2\n" in path.read_text()


def test_an_interrupted_write_leaves_no_temp_file(tmp_path, monkeypatch):
    path = tmp_path / "ds.json"
    path.write_text(DS_FIXABLE)

    def interrupted(*args):
        raise KeyboardInterrupt()

    monkeypatch.setattr(apply.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _fix(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds.json"] and path.read_text() == DS_FIXABLE


def test_cli_fix_reports_read_only_instead_of_a_traceback(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ds.json").write_text(DS_FIXABLE)
    os.chmod(tmp_path / "ds.json", 0o444)
    cli.main(["check", "--isolated", "--fix", "ds.json"])
    assert "read-only" in capsys.readouterr().err and (tmp_path / "ds.json").read_text() == DS_FIXABLE


# ---- --diff applies with patch ------------------------------------------------------------------------------
@pytest.mark.skipif(shutil.which("patch") is None, reason="needs patch")
@pytest.mark.parametrize("variant", ["plain", "no-final-newline", "crlf", "lone-cr", "bom-tabs", "nel-ls-ps"])
def test_diff_applies_with_patch_to_give_what_fix_writes(tmp_path, variant, monkeypatch, capsys):
    text = DS_FIXABLE
    if variant == "no-final-newline":
        text = text.rstrip("\n")
    elif variant == "crlf":
        text = text.replace("\n", "\r\n")
    elif variant == "lone-cr":
        text = text.replace("\n", "\r")
    elif variant == "bom-tabs":
        text = "\ufeff" + text.replace("  ", "\t").replace("\n", "\r\n").rstrip("\r\n")
    elif variant == "nel-ls-ps":
        text = '{"a": "x\x85y\u2028z\u2029",\n "train_micro_batch_size_per_gpu": "4", "b": 1}'
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ds.json").write_bytes(text.encode("utf-8"))
    cli.main(["check", "--isolated", "--diff", "ds.json"])
    diff = capsys.readouterr().out
    assert diff
    (tmp_path / "copy").mkdir()
    (tmp_path / "copy" / "ds.json").write_bytes(text.encode("utf-8"))
    proc = subprocess.run(["patch", "-p1", "-s", "--no-backup-if-mismatch"], cwd=tmp_path / "copy",
                          input=diff.encode("utf-8"), capture_output=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cli.main(["check", "--isolated", "--fix", "ds.json"])
    capsys.readouterr()
    assert (tmp_path / "copy" / "ds.json").read_bytes() == (tmp_path / "ds.json").read_bytes()
    cli.main(["check", "--isolated", "--fix", "ds.json"])  # a second --fix changes nothing
    assert (tmp_path / "copy" / "ds.json").read_bytes() == (tmp_path / "ds.json").read_bytes()


def test_diff_marks_a_missing_final_newline():
    outcome = FixOutcome(original={"a": "x\ny"}, fixed={"a": "x\nz"})
    assert outcome.diff().endswith("+z\n\\ No newline at end of file\n")


def test_fixes_that_do_not_settle_are_not_written(tmp_path, monkeypatch):
    from trainlint.diagnostics import Diagnostic, Edit, Fix, Severity

    path = tmp_path / "a.yaml"
    path.write_text("n: 1\n")

    def lint(p):  # a fix that always grows the value
        doc = read_document(p)
        node = doc.root.get("n")
        fix = Fix("grow", (Edit(str(p), node.span, node.raw + "1"),))
        result = engine.FileResult(str(p), "unknown", doc)
        result.diagnostics = [Diagnostic("TL999", Severity.WARNING, "grows", str(p), node.span, (fix,))]
        return result

    outcome = compute_fixes([str(path)], lint, unsafe=False)
    assert outcome.fixed == {} and any("did not settle" in p for p in outcome.problems)


def test_a_fix_that_breaks_strict_parsing_is_not_applied(tmp_path):
    from trainlint.diagnostics import Diagnostic, Edit, Fix, Severity

    path = tmp_path / "ds.json"
    path.write_text('{"a": 1}\n')

    def lint(p):  # a fix that leaves a trailing comma: hjson reads it, json.load does not
        doc = read_document(p)
        node = doc.root.get("a")
        fix = Fix("comma", (Edit(str(p), node.span, "1,"),))
        result = engine.FileResult(str(p), "unknown", doc)
        result.diagnostics = [Diagnostic("TL999", Severity.WARNING, "x", str(p), node.span, (fix,))]
        return result

    outcome = compute_fixes([str(path)], lint, unsafe=False)
    assert outcome.fixed == {} and any("json.load" in p for p in outcome.problems)


def test_fixes_apply_in_a_file_that_already_holds_a_value_error(tmp_path):
    """A value the loader fails on that the fix does not touch does not block the advertised fixes."""
    path = tmp_path / "ds.yml"
    path.write_text('{"bf16": {"enabled": "true"}, "note": "' + "x" * 1_000_001 + '"}\n')
    outcome = compute_fixes([str(path)], lambda p: engine.check_path(p, ISOLATED), unsafe=False)
    assert outcome.problems == [] and '"enabled": true' in outcome.fixed[str(path)]


def test_link_index_name_scan_is_linear():
    """A 100k-character value with no extension once made the link index's name scan quadratic (minutes)."""
    import time

    from trainlint.context import links

    text = "deepspeed: " + "x" * 200_000 + "\nother: ds_z3.json\nz: a/b/c.yaml, d.yml"
    start = time.perf_counter()
    found = [m.group(1) for m in links._NAMES.finditer(text)]
    assert found == ["ds_z3.json", "c.yaml", "d.yml"] and time.perf_counter() - start < 1.0
