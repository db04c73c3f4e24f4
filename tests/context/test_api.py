"""The rule evidence API: Rule.framework/versions, LintContext.versions/launch/dialect, Diagnostic.assumptions."""

from __future__ import annotations

import json

from trainlint import engine
from trainlint.context.dialect import Dialect
from trainlint.context.launch import Launch
from trainlint.context.versions import FrameworkVersion, Versions
from trainlint.diagnostics import Severity
from trainlint.document.reading import parse_document
from trainlint.output import json_format
from trainlint.rules.base import LintContext, Rule

PINNED = Versions({"trl": FrameworkVersion("trl", "0.18.0", "pin", "requirements.txt")})
ASSUMED = Versions({"trl": FrameworkVersion("trl", "0.29.0", "known", "newest release trainlint knows", assumed=True)})


def ctx_with(versions: Versions) -> LintContext:
    return LintContext(document=parse_document("a: 1\n", "x.yaml"), flavor="huggingface", versions=versions)


def test_version_helpers():
    ctx = ctx_with(PINNED)
    assert ctx.version_of("TRL").version == "0.18.0"
    assert ctx.version_in("trl", ">=0.16,<0.20") is True
    assert ctx.version_in("trl", ">=0.20") is False
    assert ctx.version_in("transformers", ">=4") is None
    assert ctx.version_in("trl", "not a spec") is None
    assumed = ctx_with(ASSUMED)
    assert assumed.version_in("trl", ">=0.20") is None and assumed.version_of("trl").assumed
    assert isinstance(ctx.launch, Launch) and not ctx.launch.found
    assert isinstance(ctx.dialect, Dialect) and not ctx.dialect.known and ctx.dialect.accepts("x") is None


def test_rule_range():
    rule = Rule("TL999", "x", Severity.ERROR, "x", framework="trl", versions=">=0.20")
    assert rule.applies_to(PINNED) is False
    assert rule.applies_to(ASSUMED) is None  # only assumed: decided by nothing
    assert rule.applies_to(Versions()) is None
    assert rule.version_assumptions(PINNED) == ()
    assert "assumed trl 0.29.0" in rule.version_assumptions(ASSUMED)[0]
    assert "trl version unknown" in rule.version_assumptions(Versions())[0]
    assert Rule("TL998", "y", Severity.ERROR, "y").applies_to(PINNED) is None


def test_calibrate_caps_assumed_errors():
    rule = Rule("TL999", "x", Severity.ERROR, "x")
    doc = parse_document("a: 1\n", "x.yaml")
    certain = rule.at(doc, None, "m")
    assert engine.calibrate(certain).severity is Severity.ERROR
    assumed = rule.at(doc, None, "m", assumptions=["assumed 1 GPU"])
    out = engine.calibrate(assumed)
    assert out.severity is Severity.WARNING and out.assumptions == ("assumed 1 GPU",)
    extra = engine.calibrate(certain, ("assumed trl",))
    assert extra.severity is Severity.WARNING and extra.assumptions == ("assumed trl",)


def test_json_output_has_assumptions():
    result = engine.check_text("train_batch_size: 3\ntrain_micro_batch_size_per_gpu: 2\n"
                               "gradient_accumulation_steps: 1\nzero_optimization: {stage: 2}\n", "ds.json")
    data = json.loads(json_format.render([result]))
    for d in data["files"][0]["diagnostics"]:
        assert isinstance(d["assumptions"], list)
