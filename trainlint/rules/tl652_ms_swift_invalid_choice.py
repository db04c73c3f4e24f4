"""TL652 ms-swift-invalid-choice: an ms-swift `rlhf_type` outside the choices its parser accepts.

**What**: an ms-swift config (`swift rlhf --config FILE`) whose `rlhf_type` is not one of dpo, orpo, simpo, kto,
cpo, rm, ppo, grpo, gkd (`rlhf_type: ipo`: IPO is `rlhf_type: dpo` with `loss_type: ipo`; `rlhf_type: sft`). The
set per release range is data: `catalog/data/closed_values.json` (`ms-swift`), read from the tags v3.0.0 - v4.5.2
and main.

**Why**: from 3.12 ms-swift turns the config file into command-line options (`swift/cli/main.py`:
`prepare_config_args`, `parse_yaml_args` in 4.x) and parses them with HfArgumentParser, which makes a `Literal`
field an argparse option with `choices` (`RLHFArguments.rlhf_type`, `swift/arguments/rlhf_args.py`): argparse stops
with "argument --rlhf_type: invalid choice: 'ipo' (choose from 'dpo', 'orpo', ...)" before anything loads. Older
releases read a JSON file with `parse_json_file`, which does not check a Literal: not judged there. The Megatron entry
point (`megatron rlhf`) has its own set and is not judged here.

The value is judged at the ms-swift release in play, as TL647 does for Axolotl. The choices are ms-swift's own (a
fork may add an `rlhf_type`): where only the file's keys name ms-swift (no `swift rlhf` launch, script, pin, declared
dialect or ms-swift version), the finding is a warning that names that assumption, as TL648 does for LLaMA-Factory.

A file refused this way gets this finding and no memory verdict (TL100, TL101, TL103, TL104): the run does not
start (`Rule.misreads`).

**Evidence**: `swift/arguments/rlhf_args.py: RLHFArguments` (argparse choices; stops); ms-swift 3.12 - 4.5.2 and main
(2026-08).

**Example**: `rlhf_type: ipo` → `rlhf_type: dpo` with `loss_type: ipo`.

**Fix** (unsafe: a guess): the closest choice, when one is close.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._closed_values import rejected, severity_of
from trainlint.rules._frameworks import reader_assumption
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL652", "ms-swift-invalid-choice", Severity.ERROR,
            "An ms-swift rlhf_type outside the choices its parser accepts", flavors=("huggingface",),
            framework="ms-swift", evidence="swift/arguments/rlhf_args.py: RLHFArguments.rlhf_type (argparse choices)",
            raises="argument --rlhf_type: invalid choice: '{value}' (choose from ...)", misreads=True)

ADVICE = {"ipo": "IPO is `rlhf_type: dpo` with `loss_type: ipo`"}


def check(ctx: LintContext):
    if ctx.dialect.name != "ms-swift":
        return
    doc = ctx.document
    parser = reader_assumption(ctx, "ms-swift")  # the keys alone named ms-swift: a fork may add choices
    for r in rejected(ctx, "ms-swift"):
        fixes = []
        if r.suggestion is not None and r.suggestion in r.allowed() and r.value not in ADVICE:
            fixes = [fix(f"write {r.suggestion}", replace_value(doc, r.node, r.suggestion), safe=False)]
        releases = f" {r.release}" if r.release else "" if r.certain and not r.assumptions else f" {r.versions}"
        there = " there" if releases and not r.release else ""
        guess = f"; did you mean `{r.suggestion}`?" if fixes else ""
        advice = f" {ADVICE[r.value]}." if r.value in ADVICE else ""
        upstream = "upstream " if parser else ""
        severity = Severity.WARNING if parser else severity_of(r)
        yield RULE.at(doc, r.node,
                      f"`{r.key}: {r.value}` is refused by {upstream}ms-swift{releases}: the run stops{there}{guess}",
                      fixes, severity=severity, assumptions=(*parser, *r.assumptions),
                      detail=f"ms-swift ({r.range.get('where')}) stops {r.range.get('when')}: \"{r.message()}\". "
                             f"Allowed{releases}: {', '.join(r.allowed())}.{advice}")
