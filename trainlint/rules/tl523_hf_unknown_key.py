"""TL523 hf-unknown-key: a misspelled TrainingArguments / TRL key.

**What**: a top-level key of an HF TrainingArguments or TRL YAML/JSON that is not a field of
TrainingArguments, the TRL configs (SFT/DPO/GRPO/..., ModelConfig, ScriptArguments) or the
usual script dataclasses, and that is one typo away from one that is (`lerning_rate`,
`per_device_batch_size`, `gradient_acumulation_steps`).

**Why**: HfArgumentParser.parse_yaml_file/parse_json_file stop on keys no dataclass takes: "Some keys
are not used by the HfArgumentParser: [...]". TrlParser follows the TRL release (`schemas/dialects.json`, trl
`unknown_keys.by_version`): TRL >= 0.19 (`trl/scripts/utils.py: TrlParser.parse_args_and_config`,
`fail_with_unknown_args=True`): "Unknown arguments from config file: [...]. Please remove them, add them to
the dataclass, or set `fail_with_unknown_args=False`."; TRL 0.13 - 0.18 drop unknown config keys silently
(`set_defaults_with_config` returns them, `parse_args_and_config` discards them); TRL 0.12 and older
(`trl/commands/cli_utils.py`): "Some specified config arguments are not used by the TrlParser: {...}".
alignment-handbook's H4ArgumentParser (`src/alignment/configs.py: parse_yaml_and_args` -> `parse_yaml_file`,
allow_extra_keys=False) stops the HfArgumentParser way. `trl <command> --config FILE` (TRL >= 0.18, `trl/cli.py`;
`trl/cli/commands/training.py` from 1.0) hands the leftovers to `accelerate launch`: "unrecognized arguments". Scripts that
ignore extra keys silently train with the default instead. Known keys come from the
hf-training-args schema (transformers 5.24, TRL 1.16). Training scripts add dataclasses of their own,
so a key with no close known spelling is not reported. The parser comes from the run's context
(`trainlint.context.dialect`: the launch command, the script it runs, the repository's pins): for
LLaMA-Factory, open-instruct, ms-swift or open-r1 the keys are judged against that parser's own fields
(`schemas/dialects.json`). A key that the repository's own argument classes declare (the dataclasses its
HfArgumentParser takes, a forked LLaMA-Factory's `hparams` package: `trainlint.context.argclasses`) is known; where
one of those classes cannot be read, a finding says so and is at most a warning. Severity follows what is certain:
a key one typo away from a known field (`num_train_epoch`, `gradient_acumulation_steps`) is a warning whichever
parser reads it (every plausible reader either stops or trains without the setting: HfArgumentParser and TrlParser
>= 0.19 stop, TrlParser 0.13 - 0.18 and scripts that read the keys they know drop it), and an error when the parser
is known, its fields are complete and it stops on unknown keys (LLaMA-Factory, open-instruct, ms-swift); a key with
no close known spelling is reported only against a complete field list, and is info when no launch, script or pin
names the parser; where only the file's keys name that parser (`Dialect.guessed`), the warning says it assumed the
parser itself, not a fork that declares the key, and how to declare it.

A file this rule reports as refused (an error) gets no memory verdict (TL100, TL101, TL103, TL104): the plan they
would price is a reading of a file the framework does not start with (`Rule.misreads`).

**Evidence**: `transformers/hf_argparser.py: HfArgumentParser.parse_dict` (stops (TrlParser 0.13 -
0.18: silent, the key is dropped; 0.12: "Some specified config arguments are not used by the TrlParser");
verified against transformers 4.40 - 5.24, TRL 0.19 - 1.16 (the parser's unknown-key handling: TRL tags
v0.11.0 - v1.9.0). First message:
"Some keys are not used by the HfArgumentParser: [...]".

The arguments a launch passes the script are checked too, at the script's line: `--gradient_acumulation_steps 4`
one typo away from a field, declared by no class of the launched script, stops HfArgumentParser's command line
("Some specified arguments are not used by the HfArgumentParser: ['--gradient_acumulation_steps', '4']"); a unique
prefix of a field is argparse's abbreviation of it and is not reported.

A launch that passes no config file and carries its whole configuration as script arguments (a *launch target*,
`trainlint.context.launch.targets`: LESS's `torchrun ... -m less.train.train --model_name_or_path ...`) is linted on
its own: its arguments are this rule's keys, each reported at the script's line and column of the option, with
HfArgumentParser's command-line message ("Some specified arguments are not used by the HfArgumentParser:
['--gradient_acumulation_steps', ...]"); an abbreviation of a field is that field; not where the launched script does
not parse or its parser takes classes trainlint cannot read. The fix renames the option in the script line.

**Example**: `lerning_rate: 2.0e-5` → `learning_rate: 2.0e-5`.

**Fix** (unsafe: a guess): rename to the closest known key.
"""

from __future__ import annotations

from trainlint.catalog import dialects, schemas
from trainlint.context import codeargs
from trainlint.context.dialect import PACKAGE_OF
from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, rename_key
from trainlint.rules._frameworks import SCRIPT_KEYS, hf_dialect, parser_unknown, reader_assumption, suggest, \
    trl_unknown_key
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL523", "hf-unknown-key", Severity.WARNING,
            "A misspelled TrainingArguments/TRL key that HfArgumentParser rejects", flavors=("huggingface", "deepspeed"),
            framework="transformers", evidence="transformers/hf_argparser.py: HfArgumentParser.parse_dict",
            raises="Some keys are not used by the HfArgumentParser: [...]", misreads=True)


def known() -> tuple[set[str], set[str]]:
    try:
        keys = schemas.known_keys("hf-training-args", ()) or set()
        removed = set(schemas.load_schema("hf-training-args").get("x-trainlint-removed") or {})
        return keys, removed
    except Exception:  # noqa: BLE001
        return set(), set()


MAX_GUESSED = 100  # unknown keys per file matched against the known ones


def _releases_read(name: str) -> str:
    """" (in LLaMA-Factory 0.9.2 - 0.9.6.dev0, the releases read)" where the dialect's fields come from sampled
    releases: a key of an older release (LLaMA-Factory 0.9.1's train_mm_proj_only) is not in them."""
    try:
        versions = [v.get("version") for v in (dialects.dialect(name) or {}).get("versions") or []
                    if str(v.get("version") or "")[:1].isdigit()]
    except Exception:  # noqa: BLE001
        return ""
    if not versions:
        return ""
    span = versions[0] if len(versions) == 1 else f"{versions[0]} - {versions[-1]}"
    return f" (in {span}, the releases read; an older release may have had it)"


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    dialect = hf_dialect(doc, ctx)
    fields = ctx.dialect.fields if ctx.dialect.known else None
    if dialect not in ("transformers", "trl") and fields is None:
        return  # a parser with dataclasses of its own whose fields trainlint does not know
    keys, removed = known()
    if fields is not None:
        keys = set(fields)
    if not keys:
        return
    yield from _launch_arguments(ctx, keys, removed, fields)
    if ctx.flavor != "huggingface":
        return  # a DeepSpeed file: only the arguments its launch passes the HF script
    unknown = 0
    # An unknown parser means no unknown-key claim above info: the script's own dataclasses may take the key.
    unnamed = parser_unknown(ctx)
    assumptions = unnamed + ctx.dialect.own_assumption()
    # keys the repository's own argument classes declare (context/argclasses.py) are the parser's too
    candidates = [e for e in root.entries if isinstance(e.key, str) and e.key not in keys and e.key not in removed
                  and not (fields is None and e.key in SCRIPT_KEYS) and not e.key.startswith("_")
                  and not ctx.dialect.declares(e.key)]
    closed = fields is not None and _stops_on_unknown(ctx.dialect.name)
    if fields is not None and len(candidates) > 0.3 * max(1, len(root.entries)):
        # Many keys the parser does not know: another parser (or a version trainlint did not sample) reads it
        # (LLaMA-Factory's v1 configs, `megatron sft` files): no claim.
        return
    # A key one typo away from a field (`num_train_epoch`) is a defect whatever the parser: the run stops, or
    # trains without that setting. Not knowing which parser reads it keeps the warning (a script's own dataclass
    # may declare that very name); a parser whose fields are complete and stop on unknown keys makes it an error.
    near = Severity.ERROR if closed else Severity.WARNING
    unknown_parser = Severity.INFO if unnamed else None
    for entry in candidates:
        key = entry.key
        unknown += 1
        if unknown > MAX_GUESSED:  # a fuzzy match per key: bounded, so thousands of keys stay fast
            return
        guess = suggest(key, keys, cutoff=0.85)
        if guess is None and not closed:
            continue
        shown, wanted = key, guess
        if doc.kind == "launch":
            # a launch's own script arguments (context/launch/targets.py): HfArgumentParser's command line
            # (`parse_args_into_dataclasses`; TrlParser reads its command line with it), whatever the TRL release
            shown, wanted = entry.key_raw, f"--{guess}" if guess else guess
            short = "HfArgumentParser stops"
            parser = ("HfArgumentParser stops with \"Some specified arguments are not used by the HfArgumentParser: "
                      f"['{entry.key_raw}', ...]\"")
        elif ctx.dialect.known and ctx.dialect.name not in ("hf", "trl", "open-r1"):
            short = f"{ctx.dialect.label}'s parser stops"
            parser = f"{ctx.dialect.label}'s parser stops on keys its dataclasses do not declare"
            message = _message(ctx.dialect.name)
            if message:
                parser += f" (\"{message.replace('{keys}', repr([key]))}\")"
        elif dialect == "trl" or getattr(ctx.launch, "script_parser", "") == "h4":
            outcome = trl_unknown_key(ctx, key=key)  # alignment-handbook's H4ArgumentParser included
            short, parser = outcome.short, outcome.full
        elif unnamed:
            short = "the run stops or trains without it"
            parser = ("whichever parser reads it stops or drops it: HfArgumentParser stops with \"Some keys are not "
                      "used by the HfArgumentParser\", TrlParser >= 0.19 with \"Unknown arguments from config "
                      "file\", TrlParser 0.13 - 0.18 drops it")
        else:
            short = "HfArgumentParser stops"
            parser = "HfArgumentParser stops with \"Some keys are not used by the HfArgumentParser\""
        what = ctx.dialect.label if fields is not None else "TrainingArguments/TRL"
        if guess is None:
            read = _releases_read(ctx.dialect.name) if fields is not None else ""
            # the field list is that parser's own: where only the file's keys name it, a fork's may take the key
            guessed = reader_assumption(ctx, PACKAGE_OF.get(ctx.dialect.name, ctx.dialect.name)) if fields else ()
            yield RULE.at(doc, entry.key_span, f"`{shown}` is not a {what} argument: {short}", severity=unknown_parser,
                          assumptions=(*assumptions, *guessed),
                          detail=f"Not a {what} argument{read}: {parser}. Remove it or move it where it belongs.")
            continue
        fixes = [fix(f"rename to `{guess}`", rename_key(doc, entry, guess), safe=False)] if root.get(guess) is None else []
        yield RULE.at(doc, entry.key_span,
                      f"`{shown}` is not a {what} field: {short}; did you mean `{wanted}`?", fixes, severity=near,
                      assumptions=assumptions,
                      detail=f"{parser[0].upper()}{parser[1:]}, and a script that tolerates it trains with the default "
                             f"`{guess}` instead." if doc.kind != "launch" else
                             f"{parser[0].upper()}{parser[1:]}. Pass `{wanted}`.")


def _launch_arguments(ctx, keys: set, removed: set, fields):
    """The arguments the file's launch passes the script's parser, checked as its keys are, at the script's line:
    one typo away from a known field and declared by none of the script's own classes, HfArgumentParser's command
    line stops (`parse_args_into_dataclasses`: "Some specified arguments are not used by the HfArgumentParser"),
    whatever the TRL release (TrlParser reads the command line with it). Not an abbreviation argparse accepts (a
    unique prefix of a field: `--num_train_epoch` is `--num_train_epochs`); not where the launched script is absent
    from the repository; the launch of a config file, or of a DeepSpeed file passed as `--deepspeed X` to a script
    that reads its command line alone."""
    launch = ctx.launch
    if not launch.found or not launch.arguments or not ctx.dialect.known or not ctx.dialect.script:
        return
    if ctx.dialect.name not in ("hf", "trl", "open-r1"):
        return  # other parsers read their command line their own way
    if ctx.flavor == "deepspeed":
        if launch.role != "hf-deepspeed" or launch.parser_reads != "command-line":
            return
    elif launch.role != "config" or launch.parser_reads not in ("override", "command-line"):
        return
    script = ctx.dialect.script
    for key, setting in launch.arguments[:MAX_GUESSED]:
        if key in keys or key in removed or key in SCRIPT_KEYS or key in ("config", "deepspeed"):
            continue
        if sum(1 for k in keys if k.startswith(key)) == 1:
            continue  # argparse's abbreviation of the one field it begins
        if codeargs.declares(script, key) is not False:
            continue  # the script's own dataclass (or argparse option) declares it
        guess = suggest(key, keys, cutoff=0.85)
        if guess is None:
            continue  # the script's imported dataclasses may declare it
        stop = ("HfArgumentParser stops with \"Some specified arguments are not used by the HfArgumentParser: "
                f"['--{key}', ...]\"")
        yield RULE.diagnostic(setting.origin.path, setting.origin.span or ctx.document.file_span,
                              f"`--{key}` is not a TrainingArguments/TRL field: HfArgumentParser stops; did you mean "
                              f"`--{guess}`?", (), None,
                              detail=f"The launch passes `--{key}` to the script ({setting.origin.note}), which no "
                                     f"class of the script declares: {stop}. Pass `--{guess}`.")


def _stops_on_unknown(name: str) -> bool:
    try:
        return dialects.unknown_keys_action(name) == "error"
    except Exception:  # noqa: BLE001
        return False


def _message(name: str) -> str:
    try:
        return (dialects.dialect(name) or {}).get("unknown_keys", {}).get("message") or ""
    except Exception:  # noqa: BLE001
        return ""
