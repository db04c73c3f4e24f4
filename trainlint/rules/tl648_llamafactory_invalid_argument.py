"""TL648 llamafactory-invalid-argument: a LLaMA-Factory argument its own checks refuse.

**What**: a LLaMA-Factory training YAML/JSON whose `finetuning_type` or `stage` is outside the set the release in
play accepts (`finetuning_type: qlora`: QLoRA is `finetuning_type: lora` with `quantization_bit: 4`;
`finetuning_type: oft` before 0.9.4; `stage: grpo`, `stage: orpo` after 0.7), or that sets `quantization_bit` with
a `finetuning_type` other than LoRA (or OFT from 0.9.4). The sets per release range are data:
`catalog/data/closed_values.json` (`llamafactory`), read from the tags v0.6.0 - v0.9.5 and main.

**Why**: `HfArgumentParser.parse_dict` builds the dataclasses without checking `Literal` fields, so the checks
are LLaMA-Factory's own: `src/llamafactory/hparams/finetuning_args.py: FinetuningArguments.__post_init__` asserts
`finetuning_type in [...]` ("AssertionError: Invalid fine-tuning method.") when the arguments are parsed;
`src/llamafactory/hparams/parser.py: _verify_model_args` raises "Quantization is only compatible with the LoRA or OFT
method." ("... with the LoRA method." before 0.9.4); `src/llamafactory/train/tuner.py: _training_function` (`run_exp`
in older releases) raises "Unknown task: {stage}." before the model is loaded. The run never starts, so the memory
verdict of the file as read (an unknown `finetuning_type` would be priced as a full fine-tune) is not reported:
this finding is.

The parser is LLaMA-Factory when the run's context says so (`llamafactory-cli train`, a script importing
llamafactory, the repository's pins) or, failing that, when the file's own keys are LLaMA-Factory's (then the
finding says it assumed the parser). The value is judged at the LLaMA-Factory release in play, as TL647 does for
Axolotl: an error where every release in play refuses it, a warning where it depends on the release and the
release assumed refuses it, nothing where only releases other than the one assumed do.

**Evidence**: `llamafactory/hparams/finetuning_args.py: FinetuningArguments.__post_init__`,
`llamafactory/hparams/parser.py: _verify_model_args`, `llamafactory/train/tuner.py`; LLaMA-Factory 0.6.0 - 0.9.5 and
main (2026-08).

**Example**: `finetuning_type: qlora` → `finetuning_type: lora` plus `quantization_bit: 4`.

**Fix** (unsafe: a guess): the closest allowed value, when one is close (none for `qlora`, whose meaning needs a
second key).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._closed_values import rejected, severity_of
from trainlint.rules._frameworks import hf_dialect
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL648", "llamafactory-invalid-argument", Severity.ERROR,
            "A LLaMA-Factory finetuning_type, stage or quantization its own checks refuse",
            flavors=("huggingface",), framework="llamafactory",
            evidence="llamafactory/hparams/finetuning_args.py: FinetuningArguments.__post_init__",
            raises="AssertionError: Invalid fine-tuning method.", misreads=True)

ADVICE = {"qlora": "QLoRA is `finetuning_type: lora` with `quantization_bit: 4`",
          "dora": "DoRA is `finetuning_type: lora` with `use_dora: true`"}


def _parser_assumptions(ctx: LintContext) -> tuple[str, ...] | None:
    """() when the context says LLaMA-Factory reads the file, an assumption when only its keys do, None when it
    is another parser's file."""
    if ctx.dialect.known:
        return () if ctx.dialect.name == "llamafactory" else None
    if hf_dialect(ctx.document, ctx) != "llamafactory":
        return None
    return ("assumed LLaMA-Factory reads this file (its keys are LLaMA-Factory's; no launch, script or pin names the "
            "parser): declare it with `# trainlint: dialect=llamafactory`",)


def check(ctx: LintContext):
    doc = ctx.document
    parser = _parser_assumptions(ctx)
    if parser is None:
        return
    refused_type = False
    for r in rejected(ctx, "llamafactory"):
        refused_type = refused_type or r.key == "finetuning_type"
        fixes = []
        if r.suggestion is not None and r.suggestion in r.allowed() and r.value not in ADVICE:
            fixes = [fix(f"write {r.suggestion}", replace_value(doc, r.node, r.suggestion), safe=False)]
        releases = f" {r.release}" if r.release else "" if r.certain and not r.assumptions else f" {r.versions}"
        there = " there" if releases and not r.release else ""
        guess = f"; did you mean `{r.suggestion}`?" if fixes else ""
        advice = f" {ADVICE[r.value]}." if r.value in ADVICE else ""
        yield RULE.at(doc, r.node,
                      f"`{r.key}: {r.value}` is refused by LLaMA-Factory{releases}: the run stops{there}{guess}", fixes,
                      severity=severity_of(r), assumptions=(*parser, *r.assumptions),
                      detail=f"LLaMA-Factory ({r.range.get('where')}) stops {r.range.get('when')}: "
                             f"\"{r.message()}\". Allowed{releases}: {', '.join(r.allowed())}.{advice}")
    if not refused_type:
        yield from _quantization(ctx, parser)


def _quantization(ctx: LintContext, parser: tuple[str, ...]):
    """`quantization_bit` with a finetuning_type that is neither LoRA nor (from 0.9.4) OFT."""
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    bits = root.entry("quantization_bit")
    if bits is None or bits.value.kind != "scalar" or bits.value.value is None:
        return
    ftype = root.get("finetuning_type")
    value = ftype.value if ftype is not None and ftype.kind == "scalar" else "lora"  # the field's default
    if value in ("lora", "oft", None):
        return  # OFT takes quantization from 0.9.4, the release that added it (before it `oft` is refused above)
    yield RULE.at(doc, bits.key_span,
                  f"`quantization_bit` with `finetuning_type: {value}`: LLaMA-Factory quantizes only for LoRA (or OFT) "
                  "and stops", severity=None, assumptions=parser,
                  detail="LLaMA-Factory (src/llamafactory/hparams/parser.py: _verify_model_args) stops when the "
                         "arguments are parsed: \"Quantization is only compatible with the LoRA or OFT method.\" "
                         "(\"... "
                         "with the LoRA method.\" before 0.9.4). Use `finetuning_type: lora` for QLoRA, or remove "
                         "`quantization_bit`.")
