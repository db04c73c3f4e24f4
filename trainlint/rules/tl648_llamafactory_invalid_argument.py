"""TL648 llamafactory-invalid-argument: a LLaMA-Factory argument its own checks refuse.

**What**: a LLaMA-Factory training YAML/JSON whose `finetuning_type` or `stage` is outside the set the release in
play accepts (`finetuning_type: qlora`: QLoRA is `finetuning_type: lora` with `quantization_bit: 4`;
`finetuning_type: oft` before 0.9.4; `stage: grpo`, `stage: orpo` after 0.7), or that sets `quantization_bit` with
a `finetuning_type` other than LoRA (or OFT from 0.9.4), or that combines fields `FinetuningArguments.__post_init__`
refuses together: `use_dora`, `use_rslora`, `pissa_init` or `loraplus_lr_ratio` without LoRA, `use_galore` /
`use_badam` / `use_apollo` with LoRA, `use_llama_pro` with a full fine-tune, `stage: ppo` without `reward_model`. The
sets and checks per release range are data: `catalog/data/closed_values.json` (`llamafactory`) and
`catalog/data/llamafactory_checks.json`, read from the tags v0.6.0 - v0.9.5 and main.

**Why**: `HfArgumentParser.parse_dict` builds the dataclasses without checking `Literal` fields, so the checks
are LLaMA-Factory's own: `src/llamafactory/hparams/finetuning_args.py: FinetuningArguments.__post_init__` asserts
`finetuning_type in [...]` ("AssertionError: Invalid fine-tuning method.") when the arguments are parsed;
`src/llamafactory/hparams/parser.py: _verify_model_args` raises "Quantization is only compatible with the LoRA or OFT
method." ("... with the LoRA method." before 0.9.4); `FinetuningArguments.__post_init__` raises "`use_dora` is only
valid for LoRA training.", "Cannot use LoRA with GaLore, APOLLO or BAdam together.", "`reward_model` is necessary for
PPO training." and the like; `src/llamafactory/train/tuner.py: _training_function` (`run_exp`
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

import json
from functools import lru_cache

from trainlint.diagnostics import Severity, Span
from trainlint.document.tree import Node
from trainlint.fixes.edits import fix, replace_value
from trainlint.catalog.files import read_data
from trainlint.rules._closed_values import judged_at, rejected, severity_of
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
        yield from _cross_checks(ctx, parser)


@lru_cache(maxsize=1)
def _checks() -> tuple[dict, ...]:
    try:
        data = json.loads(read_data("llamafactory_checks.json"))
    except (OSError, ValueError):
        return ()
    return tuple(c for c in data.get("checks") or [] if isinstance(c, dict))


def _is_set(node, how: str) -> bool:
    if node is None or node.kind != "scalar":
        return node is not None and how == "not_null"
    if how == "true":
        return node.value is True or (isinstance(node.value, str) and node.value.strip().lower() == "true")
    return node.value is not None


def _cross_checks(ctx: LintContext, parser: tuple[str, ...]):
    """FinetuningArguments.__post_init__'s checks across fields (`catalog/data/llamafactory_checks.json`)."""
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    ftype_node = root.get("finetuning_type")
    ftype = ftype_node.value if ftype_node is not None and ftype_node.kind == "scalar" else "lora"
    stage_node = root.get("stage")
    stage = stage_node.value if stage_node is not None and stage_node.kind == "scalar" else "sft"
    for check in _checks():
        if "stage" in check:
            if stage != check["stage"] or _is_set(root.get(str(check.get("requires"))), "not_null"):
                continue
            target: Node | Span | None = stage_node
            what = f"`stage: {stage}` without `{check.get('requires')}`"
        else:
            entry = root.entry(str(check.get("key")))
            if entry is None or not _is_set(entry.value, str(check.get("set") or "not_null")):
                continue
            if "type_in" in check and ftype not in check["type_in"]:
                continue
            if "type_not_in" in check and ftype in check["type_not_in"]:
                continue
            target = entry.key_span
            what = f"`{entry.key}` with `finetuning_type: {ftype}`"
        spec = str(check.get("versions") or "")
        holds, assumptions = judged_at(ctx, "llamafactory", spec)
        if holds is False:
            continue
        releases = f" {spec}" if spec and holds is None else ""
        yield RULE.at(doc, target, f"{what}: LLaMA-Factory{releases} stops",
                      severity=None if holds else Severity.WARNING, assumptions=(*parser, *assumptions),
                      detail=f"LLaMA-Factory{' ' + spec if spec else ''} "
                             "(src/llamafactory/hparams/finetuning_args.py: FinetuningArguments.__post_init__) stops "
                             f"when the arguments are parsed: \"{check.get('raises')}\"")


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
