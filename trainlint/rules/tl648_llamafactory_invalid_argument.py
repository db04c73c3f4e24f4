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

A repository that vendors LLaMA-Factory's source (`src/llamafactory/hparams/finetuning_args.py`: a fork, such as
Javkonline/AMoPO with its `amopo` and `modpo` stages) is judged by its own `FinetuningArguments`: the `Literal`
values of `stage` and `finetuning_type` there (read with `ast`, never run), whatever the release; the release
checks are not applied to it.

The parser is LLaMA-Factory when the run's context says so (`llamafactory-cli train`, a script importing
llamafactory, the repository's pins or scripts, a declared `dialect` or LLaMA-Factory version, vendored source) or,
failing that, when the file's own keys are LLaMA-Factory's. Every check here is LLaMA-Factory's own, which a fork
changes (Javkonline/AMoPO adds `stage: modpo`), so on a parser guessed from the keys a finding is a warning that
names the assumption ("refused by upstream LLaMA-Factory") and how to declare the parser; it is an error only where
the context establishes the parser (a misspelt key, TL523, is a defect whichever parser). The value is judged at the LLaMA-Factory release in play, as TL647 does for
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

import ast
import json
from functools import lru_cache
from pathlib import Path

from trainlint.diagnostics import Severity, Span
from trainlint.document.tree import Node
from trainlint.fixes.edits import fix, replace_value
from trainlint.catalog.files import read_data
from trainlint.context.pins import repo_root
from trainlint.rules._closed_values import judged_at, rejected, severity_of
from trainlint.rules._frameworks import hf_dialect, reader_assumption
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL648", "llamafactory-invalid-argument", Severity.ERROR,
            "A LLaMA-Factory finetuning_type, stage or quantization its own checks refuse",
            flavors=("huggingface",), framework="llamafactory",
            evidence="llamafactory/hparams/finetuning_args.py: FinetuningArguments.__post_init__",
            raises="AssertionError: Invalid fine-tuning method.", misreads=True)

ADVICE = {"qlora": "QLoRA is `finetuning_type: lora` with `quantization_bit: 4`",
          "dora": "DoRA is `finetuning_type: lora` with `use_dora: true`"}


def _parser_assumptions(ctx: LintContext) -> tuple[str, ...] | None:
    """() when the context establishes that LLaMA-Factory reads the file (a declared dialect, `llamafactory-cli`, a
    script importing llamafactory, the repository's pins, a declared LLaMA-Factory version), the assumption when only
    the file's keys say so, None when it is another parser's file. Every verdict of this rule holds for LLaMA-Factory's
    own releases only (a fork such as Javkonline/AMoPO adds stages): on a guessed parser it is at most a warning."""
    if ctx.dialect.known:
        return reader_assumption(ctx, "llamafactory") if ctx.dialect.name == "llamafactory" else None
    if hf_dialect(ctx.document, ctx) != "llamafactory":
        return None
    return ("assumed LLaMA-Factory itself reads this file (its keys are LLaMA-Factory's; no launch, script, pin or "
            "vendored source names the parser, and a fork may accept more): declare it with "
            "`# trainlint: dialect=llamafactory`",)


def _guessed(parser: tuple[str, ...], severity: Severity | None) -> Severity | None:
    """The finding's severity: a warning at most where the parser is only guessed."""
    return Severity.WARNING if parser and severity in (None, Severity.ERROR) else severity


VENDORED = ("src/llamafactory/hparams/finetuning_args.py", "llamafactory/hparams/finetuning_args.py",
            "src/llmtuner/hparams/finetuning_args.py")


def vendored_literals(doc) -> dict[str, tuple[str, ...]] | None:
    """The `Literal` values of `stage` and `finetuning_type` in the repository's own copy of LLaMA-Factory (a fork
    that vendors src/llamafactory, as Javkonline/AMoPO does with its `amopo` and `modpo` stages), or None when the
    repository has none: its own source, not a release, decides what the file may say."""
    try:
        root = repo_root(Path(doc.path).resolve().parent)
    except (OSError, RuntimeError, ValueError):
        return None
    return _literals_in(str(root))


@lru_cache(maxsize=64)
def _literals_in(root: str) -> dict[str, tuple[str, ...]] | None:
    for relative in VENDORED:
        try:
            tree = ast.parse((Path(root) / relative).read_text(encoding="utf-8", errors="replace"))
        except (OSError, SyntaxError, ValueError):
            continue
        found: dict[str, tuple[str, ...]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and \
                    node.target.id in ("stage", "finetuning_type") and isinstance(node.annotation, ast.Subscript):
                inner = node.annotation.slice
                items = inner.elts if isinstance(inner, ast.Tuple) else [inner]
                values = tuple(str(i.value) for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str))
                if values:
                    found[node.target.id] = values
        return found
    return None


def _vendored(ctx: LintContext, literals: dict[str, tuple[str, ...]], parser: tuple[str, ...]):
    """The file judged by the repository's own FinetuningArguments (its Literals), certain whatever the release."""
    doc = ctx.document
    for key, allowed in literals.items():
        node = doc.find((key,))
        if node is None or node.kind != "scalar" or not isinstance(node.value, str) or node.value in allowed:
            continue
        yield RULE.at(doc, node,
                      f"`{key}: {node.value}` is not a {key} of this repository's LLaMA-Factory: the run stops",
                      assumptions=parser,
                      detail=f"The repository's own FinetuningArguments (its vendored finetuning_args.py) declares "
                             f"{key} as one of {', '.join(allowed)}; LLaMA-Factory stops on any other "
                             "(\"Invalid fine-tuning method.\" / \"Unknown task: ...\").")


def check(ctx: LintContext):
    doc = ctx.document
    parser = _parser_assumptions(ctx)
    if parser is None:
        return
    literals = vendored_literals(doc)
    if literals is not None:  # the repository's own LLaMA-Factory source reads it: no guess left
        yield from _vendored(ctx, literals, ())
        return  # a fork: its own checks, not the releases', decide the rest
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
        upstream = "upstream " if parser else ""
        yield RULE.at(doc, r.node,
                      f"`{r.key}: {r.value}` is refused by {upstream}LLaMA-Factory{releases}: the run stops{there}{guess}",
                      fixes, severity=_guessed(parser, severity_of(r)), assumptions=(*parser, *r.assumptions),
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
                      severity=_guessed(parser, None if holds else Severity.WARNING),
                      assumptions=(*parser, *assumptions),
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
                  "and stops", severity=_guessed(parser, None), assumptions=parser,
                  detail="LLaMA-Factory (src/llamafactory/hparams/parser.py: _verify_model_args) stops when the "
                         "arguments are parsed: \"Quantization is only compatible with the LoRA or OFT method.\" "
                         "(\"... "
                         "with the LoRA method.\" before 0.9.4). Use `finetuning_type: lora` for QLoRA, or remove "
                         "`quantization_bit`.")
