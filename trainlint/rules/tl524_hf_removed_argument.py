"""TL524 hf-removed-argument: a TrainingArguments / TRL field that a newer transformers or TRL removed.

**What**: a key of an HF TrainingArguments-style YAML/JSON (HfArgumentParser, TrlParser,
LLaMA-Factory) that a transformers or TRL release no longer has. The table (the hf-training-args
schema's `x-trainlint-removed`, release history read from every transformers wheel 4.40 - 5.24 and
TRL's tags 0.15 - 1.16) gives for each key the release that deprecated it, the one that removed it,
and the release from which its replacement exists:

| key | deprecated | removed | replacement (since) |
|---|---|---|---|
| `evaluation_strategy` | transformers 4.41 | 4.51 | `eval_strategy` (4.41) |
| `dispatch_batches`, `split_batches` | 4.40 or earlier | 4.51 | `accelerator_config` |
| `tp_size` | - | 4.52 | `parallelism_config` (4.56) |
| `use_ipex` | 4.53 | 4.57 | - |
| `per_gpu_*_batch_size`, `no_cuda`, `adafactor`, `push_to_hub_*`, `torchdynamo`, `fsdp_min_num_params`, ... | 4.40 or earlier | 5.0 | `per_device_*`, `use_cpu`, `optim`, `hub_*`, ... (4.40 or earlier) |
| `overwrite_output_dir`, `save_safetensors`, `half_precision_backend`, `jit_mode_eval`, ... | - | 5.0 | - |
| `group_by_length` | - | 5.2 | `train_sampling_strategy` (5.2) |
| `warmup_ratio` | 5.0 | 5.15 | `warmup_steps` below 1 = a ratio (5.0) |
| `logging_dir` | 5.0 | 5.15 | `TENSORBOARD_LOGGING_DIR` |
| `max_seq_length` (SFTConfig) | TRL 0.16 | 0.20 | `max_length` (0.16) |
| `torch_dtype` (ModelConfig) | TRL 0.23 | 0.27 | `dtype` (0.23) |
| `max_prompt_length` (GRPOConfig; DPOConfig) | TRL 0.26; 0.28 | 0.28; 0.29 | - |
| `vllm_max_model_len` (GRPOConfig, from 0.15) | TRL 0.16 | 0.18 | `vllm_max_model_length` (0.26; 0.18 - 0.25: the vLLM server's `--max_model_len`) |

**Why**: on a release without the field, `HfArgumentParser.parse_dict` (transformers `hf_argparser.py`)
stops with "Some keys are not used by the HfArgumentParser: [...]". What TrlParser does depends on the TRL
release (`schemas/dialects.json`, trl `unknown_keys.by_version`, read from TRL's tags): TRL 0.12 and older
(`trl/commands/cli_utils.py: TrlParser.parse_args_and_config`, the leftovers come back as a Namespace) raise
"Some specified config arguments are not used by the TrlParser: {...}"; TRL 0.13 - 0.18
(`trl/scripts/utils.py: TrlParser.set_defaults_with_config` returns the unused keys, `parse_args_and_config`
discards them) drop the key without a word, so the setting has no effect (still an error with the release
known: the file says something the run will not do); TRL >= 0.19 (`parse_args_and_config`,
`fail_with_unknown_args=True` by default, #3543) raise "Unknown arguments from config file: [...]. Please
remove them, add them to the dataclass, or set `fail_with_unknown_args=False`." With the TRL release
unknown the message names the stop and its detail the older releases that differ. alignment-handbook's older scripts
parse with H4ArgumentParser (`src/alignment/configs.py: H4ArgumentParser.parse_yaml_and_args` ->
`parse_yaml_file`, allow_extra_keys=False): HfArgumentParser's stop on every TRL release. Under `trl <command> --config FILE` (TRL >= 0.18: `trl/cli.py`
main, then `trl/cli/commands/training.py: TrainingCommand.run` from 1.0) the leftovers are `accelerate launch`
arguments: its parser stops with "unrecognized arguments", or takes a key that is one of its options. On the releases before the removal
the key works. With the
release known exactly (a pin, a setting), a removed key is an error and a key the release still has is
not reported: a file pinned to an old stack (open-r1: transformers 4.52.3, TRL 0.18.0) is fine with
`torch_dtype`, `warmup_ratio` and `max_prompt_length`. With the release unknown or assumed, the finding is
a warning that names the releases and says what it assumed.
`max_prompt_length` is reported only in GRPO/DPO files: TRL 1.x distillation configs still have it.
open-instruct files are skipped: its own dataclass defines `max_seq_length`, `warmup_ratio`, ...
So is a file no launch, script or pin ties to a parser when most of its top-level keys are no
TrainingArguments/TRL field: a script's own dataclass reads it (PEFT's
`method_comparison/MetaMathQA/default_training_params.json`: `model_id`, `batch_size`,
`optimizer_type`, `use_amp`, ... and a `max_seq_length` of its own TrainConfig).
A key the repository's own argument classes declare (`trainlint.context.argclasses`: LMFlow's
`DPOv2AlignerArguments.max_prompt_length`, parsed by its HfArgumentParser) is not reported. Nor is any key when the
launched script (or, with no launch, every repository script of the file's parser) imports a name that only old
releases of the parser's package have (alignment-handbook's `H4ArgumentParser`, `ModelArguments`, `DataArguments`,
... removed by its rewrite, 19f0345, 0.4.0.dev0: `catalog/data/removed_names.json`): that script runs only on the
old handbook, whose releases pinned the transformers/TRL of their time (`transformers==4.35.0` and `trl==0.7.4` at
v0.2.0; `trl>=0.9.6,<0.13.0` at 5a7ba95, the last commit with H4ArgumentParser), and on today's handbook the launch
stops at the import before any key is read.

**Evidence**: `transformers/hf_argparser.py: HfArgumentParser.parse_dict` (stops on the releases that
removed the key; TrlParser per TRL release: 0.12 raises, 0.13 - 0.18 silent, >= 0.19 raises); verified
against transformers 4.40 - 5.24, TRL 0.15 - 1.16 (the parser's unknown-key handling: TRL tags v0.11.0 -
v1.9.0, `trl/commands/cli_utils.py`, `trl/scripts/utils.py`). First message: "Some keys are not used by the HfArgumentParser: [...]".

The other way round, a replacement on a transformers release known (pin, setting) to be older than it is refused
the same way: `eval_strategy` (4.41), `include_for_metrics` (4.46), `parallelism_config` (4.56),
`train_sampling_strategy` (5.2); `eval_strategy` on transformers 4.36.2 stops with "Some keys are not used by
the HfArgumentParser: ['eval_strategy']" (safe fix: its old name `evaluation_strategy`).

The arguments a launch passes the script are checked the same way, at the script's line (a shell script, a README
block, a Makefile): `accelerate launch train.py --config sft.yaml --evaluation_strategy steps` on transformers >=
4.51 stops in `HfArgumentParser.parse_args_into_dataclasses` ("Some specified arguments are not used by the
HfArgumentParser: ['--evaluation_strategy', 'steps']"; TrlParser and LLaMA-Factory's read_args parse the command line
with it; LLaMA-Factory's `key=value` overrides join the file's keys, `parse_dict`), and `--eval_strategy` on 4.36
stops the same way. The launch of a config file, or of a DeepSpeed file passed as `--deepspeed X` to a script that
reads its command line alone, whose script is in the repository; an argument the parser declares, the script's own
classes declare (BELLE's sft_train.py redeclares `evaluation_strategy` in its TrainingArguments subclass), or that
argparse takes as an abbreviation of a field is not reported.

A launch that passes no config file and carries its whole configuration as script arguments (a *launch target*,
`trainlint.context.launch.targets`: LESS's `torchrun ... -m less.train.train ... --evaluation_strategy no`) is
linted on its own: its arguments are this rule's keys, each reported at the script's line and column of the option,
with the command line's message; not where the launched script does not parse or its parser takes classes trainlint
cannot read (one of them may redeclare the field). Its fixes are the renames (`--evaluation_strategy` →
`--eval_strategy`); an edit of a value (`--warmup_ratio 0.1` → `--warmup_steps 0.1` is a rename and is kept,
`--adafactor` → `--optim adafactor` is not) is not offered on a command line.

**Example**: `evaluation_strategy: steps` → `eval_strategy: steps`.

**Fix**: a rename is offered only where its new name is valid on every release in play. With the release
unknown (nothing pinned), that is a new name every release read has (transformers 4.40, TRL 0.15 or
earlier): `per_gpu_*` → `per_device_*`, `no_cuda` → `use_cpu`, `push_to_hub_*`, `adafactor` → `optim`,
safe. A new name dated later (`eval_strategy` 4.41, `max_length` TRL 0.16, `warmup_steps` as a ratio 5.0,
`dtype` TRL 0.23) is refused by the older releases a file may still run on (`eval_strategy` on 4.40 stops
HfArgumentParser), so it is offered once the versions are pinned (a pin, `--versions`, a directive): safe
where the pinned release has the new name, not offered where it does not. Removing a key that did
something is unsafe; `group_by_length` → `train_sampling_strategy` is unsafe with the release it needs.
"""

from __future__ import annotations

from trainlint._versions import parse_version
from trainlint.catalog import schemas
from trainlint.context import codeargs
from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix, rename_key, replace_value
from trainlint.flavors.base import as_bool, as_float
from trainlint.rules._frameworks import (Claim, ParserOutcome, foreign_keys_share, hf_dialect, trl_unknown_key,
                                         version_status)
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL524", "hf-removed-argument", Severity.WARNING,
            "A TrainingArguments/TRL field removed in a newer transformers or TRL", flavors=("huggingface", "deepspeed"),
            framework="transformers", evidence="transformers/hf_argparser.py: HfArgumentParser.parse_dict",
            raises="Some keys are not used by the HfArgumentParser: [...]")

CLAIMS = (
    Claim("transformers", "hf_argparser.py HfArgumentParser.parse_dict",
          "Some keys are not used by the HfArgumentParser: [{keys}]", "stops"),
    Claim("trl", "scripts/utils.py TrlParser.parse_args_and_config",
          "Unknown arguments from config file: [{args}]. Please remove them, add them to the dataclass, or set "
          "`fail_with_unknown_args=False`.", "stops", since="0.19.0"),
    Claim("trl", "scripts/utils.py TrlParser.set_defaults_with_config", "", "silent", since="0.13.0",
          until="0.19.0"),
    Claim("trl", "commands/cli_utils.py TrlParser.parse_args_and_config",
          "Some specified config arguments are not used by the TrlParser: {remaining_args}", "stops",
          until="0.13.0"),
)

OLDEST_READ = "4.40"  # the oldest transformers release read: "deprecated in 4.40.0" means 4.40 or earlier
TRL_ONLY = {"max_seq_length", "max_prompt_length", "torch_dtype", "vllm_max_model_len"}
# max_prompt_length left GRPOConfig in 0.28 and DPOConfig/RLOOConfig in 0.29; TRL 1.x distillation configs keep it.
PROMPT_LENGTH_REMOVED = {"grpo": ("0.26.0", "0.28.0", "GRPOConfig"), "dpo": ("0.28.0", "0.29.0", "DPOConfig")}
SAFE_RENAMES = {"evaluation_strategy", "per_gpu_train_batch_size", "per_gpu_eval_batch_size", "no_cuda",
                "max_seq_length", "push_to_hub_model_id", "push_to_hub_token"}
FALLBACK = {
    "evaluation_strategy": {"replacement": "eval_strategy", "package": "transformers", "deprecated": "4.41.0",
                            "removed": "4.51.0", "replacement_since": "4.41.0"},
    "per_gpu_train_batch_size": {"replacement": "per_device_train_batch_size", "package": "transformers",
                                 "removed": "5.0.0", "replacement_since": "4.40.0"},
    "per_gpu_eval_batch_size": {"replacement": "per_device_eval_batch_size", "package": "transformers",
                                "removed": "5.0.0", "replacement_since": "4.40.0"},
    "no_cuda": {"replacement": "use_cpu", "package": "transformers", "removed": "5.0.0", "replacement_since": "4.40.0"},
    "adafactor": {"replacement": "optim", "package": "transformers", "removed": "5.0.0", "replacement_since": "4.40.0",
                  "hint": "write `optim: adafactor`"},
    "overwrite_output_dir": {"replacement": None, "package": "transformers", "removed": "5.0.0"},
    "warmup_ratio": {"replacement": "warmup_steps", "package": "transformers", "deprecated": "5.0.0",
                     "removed": "5.15.0", "replacement_since": "5.0.0",
                     "hint": "a warmup_steps value below 1 is read as a ratio of the total steps"},
    "max_seq_length": {"replacement": "max_length", "package": "trl", "deprecated": "0.16.0", "removed": "0.20.0",
                       "replacement_since": "0.16.0"},
    "torch_dtype": {"replacement": "dtype", "package": "trl", "deprecated": "0.23.0", "removed": "0.27.0",
                    "replacement_since": "0.23.0"},
}


def removed_table() -> dict:
    try:
        table = schemas.load_schema("hf-training-args").get("x-trainlint-removed")
        if isinstance(table, dict) and table:
            return table
    except Exception:  # noqa: BLE001
        pass
    return FALLBACK


def _name(package: str) -> str:
    return "TRL" if package.lower() == "trl" else package


def _short(version: str | None) -> str:
    return version[:-2] if version and version.count(".") == 2 and version.endswith(".0") else (version or "")


def _info(entry_key: str, info: dict, plan) -> dict | None:
    """The table entry, with the per-trainer release of max_prompt_length; None where the key is still valid."""
    if entry_key != "max_prompt_length":
        return info
    task = plan.task.value if plan is not None else None
    if task not in PROMPT_LENGTH_REMOVED:
        return None  # a distillation/other TRL config may still take it
    deprecated, removed, owner = PROMPT_LENGTH_REMOVED[task]
    return {**info, "deprecated": deprecated, "removed": removed, "owner": owner}


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    dialect = hf_dialect(doc, ctx)
    if dialect == "open-instruct":
        return
    fields = ctx.dialect.fields if ctx.dialect.known else None
    yield from _launch_arguments(ctx, dialect, fields, removed_table())
    if ctx.flavor != "huggingface":
        return  # a DeepSpeed file: only the arguments its launch passes the HF script (`--deepspeed X --key v`)
    if fields is None and dialect in ("transformers", "trl") and foreign_keys_share(root) > 0.5:
        return  # no known parser, and most keys are no TrainingArguments/TRL field: a script's own dataclass reads it
    if ctx.dialect.era:
        # the launched script imports its parser from a package release that later releases removed (alignment-
        # handbook's H4ArgumentParser): the releases it runs under are that era's, not the newest
        return
    table = removed_table()
    own = ctx.dialect.own_assumption()
    for entry in root.entries:
        info = table.get(entry.key)
        if not isinstance(info, dict):
            continue
        if (fields is not None and entry.key in fields) or ctx.dialect.declares(entry.key):
            continue  # the parser that reads this file declares the key itself (or the repository's own classes do)
        if entry.key in TRL_ONLY and dialect != "trl":
            continue
        info = _info(entry.key, info, ctx.plan)
        if info is None:
            continue
        package = (info.get("package") or "transformers").lower()
        removed, assumptions = (version_status(ctx, package, f">={info['removed']}") if info.get("removed")
                                else (None, ()))
        if removed is False:
            continue  # the release this file runs under still has the field
        new_ok = None
        if info.get("replacement_since"):
            new_ok, _ = version_status(ctx, package, f">={info['replacement_since']}")
        severity = Severity.ERROR if removed else None
        trl = (trl_unknown_key(ctx, info.get("removed") if package == "trl" else None, entry.key) if dialect == "trl"
               else None)
        if doc.kind == "launch":  # a launch's own script arguments (context/launch/targets.py): its command line
            headline, detail = _on_command_line(entry.key, entry.key_raw, info, bool(removed))
        else:
            headline, detail = message(entry.key, info, dialect, certain=bool(removed), trl=trl)
        yield RULE.at(doc, entry.key_span, headline,
                      list(_fixes(doc, root, entry, info, new_ok)), severity=severity, assumptions=assumptions + own,
                      detail=detail)
    yield from _too_new(ctx, doc, root, dialect, fields, table)


def _launch_arguments(ctx, dialect, fields, table):
    """The arguments the file's launch passes the script's parser, checked as its keys are: a removed field passed
    on the command line stops HfArgumentParser the same way (`parse_args_into_dataclasses`: "Some specified arguments
    are not used by the HfArgumentParser: [...]"; TrlParser and LLaMA-Factory's read_args parse the command line with
    it; LLaMA-Factory's `key=value` overrides join the file's keys: `parse_dict`), reported at the script's line. The
    launch of a config file (its parser reads the arguments with the file), or of a DeepSpeed file passed as
    `--deepspeed X` to a script that reads the command line alone; never twice for one launch."""
    launch = ctx.launch
    if not launch.found or not launch.arguments:
        return
    if ctx.flavor == "deepspeed":
        if launch.role != "hf-deepspeed" or launch.parser_reads != "command-line" or not ctx.dialect.known:
            return
    elif launch.role != "config" or launch.parser_reads not in ("override", "command-line"):
        return
    script = ctx.dialect.script if ctx.dialect.known else ""
    if not script and dialect != "llamafactory":
        return  # the launched script is not in the repository: its own dataclasses may declare any argument
    dotlist = dialect == "llamafactory" and launch.parser_reads == "override"
    for key, setting in launch.arguments:
        info = table.get(key)
        written = key if dotlist else "--" + key
        if fields is not None and (key in fields or any(f.startswith(key) for f in fields)):
            continue  # the parser declares it (or argparse takes it as an abbreviation of a field)
        if script and codeargs.declares(script, key) is not False:
            continue  # the script's own dataclass (or its TrainingArguments subclass) declares it
        if not isinstance(info, dict) or (key in TRL_ONLY and dialect != "trl"):
            yield from _too_new_argument(ctx, key, written, setting, table, dotlist)
            continue
        info = _info(key, info, ctx.plan)
        if info is None:
            continue
        package = (info.get("package") or "transformers").lower()
        removed, assumptions = (version_status(ctx, package, f">={info['removed']}") if info.get("removed")
                                else (None, ()))
        if removed is False:
            continue  # the release in play still has the field
        headline, detail = message(key, info, "hf", certain=bool(removed))
        stop = _argument_stop(written, dotlist)
        new = info.get("replacement")
        if new and not dotlist and "." not in new:
            headline, detail = headline.replace(f"`{new}`", f"`--{new}`"), detail.replace(f"`{new}`", f"`--{new}`")
        yield RULE.diagnostic(setting.origin.path, setting.origin.span or ctx.document.file_span,
                              headline.replace(f"`{key}`", f"`{written}`", 1),
                              (), Severity.ERROR if removed else None, assumptions,
                              detail=f"The launch passes `{written}` to the script ({setting.origin.note}). "
                                     + detail.replace("HfArgumentParser stops with \"Some keys are not used by the "
                                                      f"HfArgumentParser: ['{key}']\"", stop))


def _on_command_line(key: str, written: str, info: dict, removed: bool) -> tuple[str, str]:
    """(headline, detail) for a removed field passed on a command line that HfArgumentParser reads alone
    (`parse_args_into_dataclasses`; TrlParser's command line is the same)."""
    headline, detail = message(key, info, "hf", certain=removed)
    new = info.get("replacement")
    if new and "." not in new:
        headline, detail = headline.replace(f"`{new}`", f"`--{new}`"), detail.replace(f"`{new}`", f"`--{new}`")
    return (headline.replace(f"`{key}`", f"`{written}`", 1),
            detail.replace(f"HfArgumentParser stops with \"Some keys are not used by the HfArgumentParser: ['{key}']\"",
                           _argument_stop(written, False)))


def _too_new_argument(ctx, key, written, setting, table, dotlist):
    """A replacement argument on a transformers release known to be older than it (`--eval_strategy` on 4.36)."""
    for old, info in table.items():
        if not isinstance(info, dict) or info.get("replacement") != key or key not in ADDED or \
                (info.get("package") or "transformers") != "transformers" or not info.get("replacement_since"):
            continue
        since = info["replacement_since"]
        if version_status(ctx, "transformers", f"<{since}")[0] is not True:
            return
        version = ctx.version_of("transformers")
        release = version.version if version is not None else f"< {since}"
        old_written = old if dotlist else "--" + old
        yield RULE.diagnostic(setting.origin.path, setting.origin.span or ctx.document.file_span,
                              f"`{written}` exists only since transformers {_short(since)}: on {release} "
                              f"HfArgumentParser stops; pass `{old_written}`", (),
                              Severity.ERROR,
                              detail=f"The launch passes `{written}` to the script ({setting.origin.note}); it exists "
                                     f"since transformers {_short(since)} (it replaced `{old}`), and the run uses "
                                     f"transformers {release}: {_argument_stop(written, dotlist)}. Pass "
                                     f"`{old_written}`, its name there.")
        return


def _argument_stop(written: str, dotlist: bool) -> str:
    if dotlist:
        return f"HfArgumentParser stops with \"Some keys are not used by the HfArgumentParser: ['{written}']\""
    return f"HfArgumentParser stops with \"Some specified arguments are not used by the HfArgumentParser: ['{written}', ...]\""


# The replacements the table dates exactly (not "4.40 or earlier"): on a known older release they are unknown keys.
ADDED = ("eval_strategy", "include_for_metrics", "train_sampling_strategy", "parallelism_config")


def _too_new(ctx, doc, root, dialect, fields, table):
    """A replacement key on a transformers release known to be older than it: the parser does not have it yet
    (`eval_strategy` on transformers 4.36: "Some keys are not used by the HfArgumentParser: ['eval_strategy']")."""
    # a launch's own command line is HfArgumentParser's whatever the TRL release (no config keys are dropped)
    trl = trl_unknown_key(ctx) if dialect == "trl" and doc.kind != "launch" else None
    if trl is not None and trl.silent:
        return  # TrlParser 0.13 - 0.18 drops unknown keys silently: no stop to claim
    added = {}
    for old, info in table.items():
        new = info.get("replacement") if isinstance(info, dict) else None
        if new in ADDED and (info.get("package") or "transformers") == "transformers" and info.get("replacement_since"):
            added[new] = (old, info["replacement_since"])
    for entry in root.entries:
        if entry.key not in added or (fields is not None and entry.key in fields):
            continue
        old, since = added[entry.key]
        if version_status(ctx, "transformers", f"<{since}")[0] is not True:
            continue  # the release in play has it, or it is not known exactly
        version = ctx.version_of("transformers")
        release = version.version if version is not None else f"< {since}"
        stop = (trl.full if trl is not None else
                f"HfArgumentParser stops with \"Some keys are not used by the HfArgumentParser: ['{entry.key}']\"")
        short = trl.short if trl is not None else "HfArgumentParser stops"
        if doc.kind == "launch":  # a launch's own command line: HfArgumentParser's, whatever the TRL release
            stop, short = _argument_stop(entry.key_raw, False), "HfArgumentParser stops"
        rename = old if entry.key == "eval_strategy" and root.get(old) is None else None
        todo = f"Write `{rename}`, its name there" if rename else f"Remove it, or use transformers >= {_short(since)}"
        fixes = [fix(f"rename to `{rename}`", rename_key(doc, entry, rename), safe=True)] if rename else []
        shown, renamed = (entry.key_raw, f"--{rename}") if doc.kind == "launch" else (entry.key, rename)
        yield RULE.at(doc, entry.key_span,
                      f"`{shown}` exists only since transformers {_short(since)}: on {release} {short}"
                      + (f"; write `{renamed}`" if rename else ""), fixes, severity=Severity.ERROR,
                      detail=f"`{entry.key}` exists since transformers {_short(since)} (it replaced `{old}`), and this "
                             f"file runs under transformers {release}: {stop}. {todo}.")


def message(key: str, info: dict, dialect: str, certain: bool = False, trl: ParserOutcome | None = None) -> tuple[str, str]:
    """(headline, detail) for a removed key. trl: what TrlParser does with the key on the TRL release in play
    (`_frameworks.trl_unknown_key`)."""
    package = _name(info.get("package") or "transformers")
    removed = _short(info.get("removed"))
    deprecated = _short(info.get("deprecated"))
    owner = f" ({info['owner']})" if info.get("owner") else ""
    if removed:
        if deprecated == OLDEST_READ:
            when = f"deprecated (by {package} {deprecated} at the latest) and removed in {removed}"
        elif deprecated:
            when = f"deprecated in {package} {deprecated} and removed in {removed}"
        else:
            when = f"removed in {package} {removed}"
        cond = f"on {package} >= {removed}"
    else:  # an old table without release numbers
        when = f"removed in {info.get('since') or package}"
        cond = "on that release and later"
    gone = f"removed in {package} {removed}" if removed else when
    if dialect == "trl":
        stop = trl.full if trl is not None else "TrlParser stops with \"Unknown arguments from config file\""
        short = trl.short if trl is not None else "TrlParser stops"
    else:
        stop = f"HfArgumentParser stops with \"Some keys are not used by the HfArgumentParser: ['{key}']\""
        short = "HfArgumentParser stops"
    replacement, hint, since = info.get("replacement"), info.get("hint"), _short(info.get("replacement_since"))
    if replacement:
        brief = f"use `{replacement}`"
        todo = f"use `{replacement}`" + (f" ({hint})" if hint else "")
        if since and key not in SAFE_RENAMES and key != "adafactor":
            todo += f", which needs {package} >= {since}"
    else:
        todo = brief = hint or "remove it"
    older = "" if certain else "; older releases still accept it"
    return (f"`{key}`{owner} was {gone}: {short}; {brief}",
            f"{when[0].upper()}{when[1:]}: {cond} {stop}{older}. {todo[0].upper()}{todo[1:]}.")


# The oldest release of each package whose fields were read: a replacement dated there ("4.40 or earlier") exists on
# every release a file may run under.
OLDEST = {"transformers": "4.40.0", "trl": "0.15.0"}


def _everywhere(info: dict) -> bool:
    """Whether the replacement exists on every release in play when none is pinned: it is dated at or before the
    oldest release read (a rename to a key some plausible release refuses is offered only with the versions pinned)."""
    since = parse_version(info.get("replacement_since") or "")
    oldest = parse_version(OLDEST.get((info.get("package") or "transformers").lower(), ""))
    return since is not None and oldest is not None and since <= oldest


def _fixes(doc, root, entry, info, new_ok=None):
    """new_ok: whether the replacement exists on the release in use (True/False), None when unknown."""
    key, node = entry.key, entry.value
    replacement = info.get("replacement")
    package = _name(info.get("package") or "transformers")
    needs = _short(info.get("replacement_since"))
    if key == "adafactor":
        on = as_bool(node.value) if node.kind == "scalar" else None
        if on is False:
            yield fix("remove `adafactor: false`", delete_entry(doc, root, entry), safe=True)
        elif on and root.get("optim") is None:
            yield fix("write `optim: adafactor`", rename_key(doc, entry, "optim"),
                      replace_value(doc, node, "adafactor"), safe=True)
        return
    if key == "group_by_length":
        on = as_bool(node.value) if node.kind == "scalar" else None
        if on is False:
            yield fix("remove `group_by_length: false`", delete_entry(doc, root, entry), safe=True)
        elif on and root.get("train_sampling_strategy") is None:
            yield fix(f"write `train_sampling_strategy: group_by_length` (needs {package} >= {needs or '5.2'})",
                      rename_key(doc, entry, "train_sampling_strategy"),
                      replace_value(doc, node, "group_by_length"), safe=False)
        return
    if new_ok is False:
        return  # the replacement does not exist on the release in use
    # A rename to a replacement some release in play lacks (nothing pinned, and it is dated after the oldest release
    # read) is not offered: a file renamed for the newest release would stop on an older one.
    renames = new_ok is True or _everywhere(info)
    if key == "warmup_ratio":
        ratio = as_float(node.value) if node.kind == "scalar" else None
        if renames and ratio is not None and 0 <= ratio < 1 and root.get("warmup_steps") is None:
            yield fix(f"write `warmup_steps: {node.raw}` (a ratio below 1; needs {package} >= {needs or '5.0'})",
                      rename_key(doc, entry, "warmup_steps"), safe=new_ok is True)
        return
    if replacement and "." not in replacement and key not in ("include_inputs_for_metrics", "push_to_hub_organization",
                                                              "sharded_ddp", "amp_backend", "tp_size"):
        if root.get(replacement) is None:
            if not renames:
                return
            safe = key in SAFE_RENAMES or new_ok is True
            title = f"rename to `{replacement}`" + ("" if safe or not needs else f" (needs {package} >= {needs})")
            yield fix(title, rename_key(doc, entry, replacement), safe=safe)
        else:
            yield fix(f"remove `{key}` (`{replacement}` is already set)", delete_entry(doc, root, entry), safe=False)
        return
    if not replacement:
        yield fix(f"remove `{key}`", delete_entry(doc, root, entry), safe=False)
