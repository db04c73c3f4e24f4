"""Small helpers shared by the Hugging Face / TRL / Lightning / Accelerate / Axolotl / torchtune /
LitGPT rules (TL22x, TL31x-TL33x, TL42x-TL43x, TL52x-TL55x, TL62x-TL65x). Not a rule."""

from __future__ import annotations

import difflib
import functools
import re
from pathlib import Path
from typing import NamedTuple

from trainlint._patterns import compile_later
from trainlint.catalog import dialects, schemas
from trainlint.catalog.gpus import find_gpu
from trainlint.context.pins import repo_root
from trainlint.document.tree import Document, Entry, Node
from trainlint.flavors.base import as_bool, as_int
from trainlint.flavors.huggingface import dialect

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable

# Keys that scripts built on TRL / the alignment handbook add with their own dataclasses (ScriptArguments,
# handbook ScriptArguments/SFTConfig extras, ModelConfig spellings): never "unknown" there.
SCRIPT_KEYS = {
    "dataset_mixture", "dataset_mixer", "chat_template", "dataset_name", "dataset_config", "dataset_splits",
    "dataset_train_split", "dataset_test_split", "dataset_streaming", "preprocessing_num_workers",
    "truncation_side", "auto_insert_empty_system_msg", "ignore_bias_buffers", "gradient_checkpointing_use_reentrant",
    "model_name_or_path", "model_revision", "tokenizer_name_or_path", "trust_remote_code", "attn_implementation",
    "use_peft", "lora_r", "lora_alpha", "lora_dropout", "lora_target_modules", "lora_modules_to_save",
    "lora_task_type", "use_rslora", "use_dora", "load_in_8bit", "load_in_4bit", "bnb_4bit_quant_type",
    "use_bnb_nested_quant", "dtype", "torch_dtype", "config", "env",
    # transformers example scripts (run_clm / run_mlm / run_summarization ModelArguments, DataTrainingArguments)
    "config_name", "tokenizer_name", "cache_dir", "use_fast_tokenizer", "token", "train_file", "validation_file",
    "test_file", "max_train_samples", "max_eval_samples", "max_predict_samples", "streaming", "block_size",
    "overwrite_cache", "validation_split_percentage", "keep_linebreaks", "dataset_config_name", "text_column",
    "summary_column", "max_source_length", "max_target_length", "pad_to_max_length", "source_prefix",
    "low_cpu_mem_usage", "model_type", "config_overrides", "use_auth_token",
}


class Claim(NamedTuple):
    """What a framework does with the case a rule reports, as read in its source: the package, the file and
    function that decide it, the first message it raises or logs, whether it stops, logs or is silent, and the
    releases where that holds (`since` inclusive, `until` exclusive; None: open). Rules keep a tuple of these as
    `CLAIMS`, so a framework-version context can later say which one applies to the installed release."""

    package: str  # distribution name: transformers, trl, accelerate, lightning, litgpt, jsonargparse
    where: str  # "training_args.py TrainingArguments.__post_init__"
    message: str  # the first message, verbatim (placeholders as {name})
    outcome: str  # "stops" | "logs" | "silent"
    since: str | None = None
    until: str | None = None

    def releases(self) -> str:
        """`transformers 4.52 - 5.9`, `TRL >= 0.19`, `accelerate < 1.12`, or the package alone."""
        name = PACKAGE_NAMES.get(self.package, self.package)
        since, until = _short(self.since), _short(self.until)
        if since and until:
            return f"{name} >= {since}, < {until}"
        if since:
            return f"{name} >= {since}"
        if until:
            return f"{name} < {until}"
        return name


PACKAGE_NAMES = {"transformers": "transformers", "trl": "TRL", "accelerate": "accelerate", "lightning": "Lightning",
                 "litgpt": "LitGPT", "jsonargparse": "jsonargparse", "torch": "torch"}
OUTCOMES = ("stops", "logs", "silent")


def _short(version: str | None) -> str | None:
    """`5.15.0` -> `5.15`; other forms unchanged."""
    if version and version.count(".") == 2 and version.endswith(".0"):
        return version[:-2]
    return version


def version_tuple(version: str) -> tuple[int, ...]:
    """`5.15.0` -> (5, 15, 0); the leading numeric part only (`2.6.0rc1` -> (2, 6, 0))."""
    out = []
    for part in version.split("."):
        digits = ""
        for ch in part:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        out.append(int(digits))
        if digits != part:
            break
    return tuple(out)


def suggest(word: str, options: Iterable[Any], cutoff: float = 0.8) -> str | None:
    """The closest option to a misspelled word, or None."""
    return _closest(str(word), isinstance(word, str), tuple(o for o in options if isinstance(o, str)), cutoff)


@functools.lru_cache(maxsize=1024)
def _closest(word: str, word_is_str: bool, strs: tuple[str, ...], cutoff: float) -> str | None:
    """suggest's answer, kept: many configs repeat the same unknown key against the same options."""
    lowered = {o.lower(): o for o in strs}
    if word_is_str and word.lower() in lowered and lowered[word.lower()] != word:
        return lowered[word.lower()]
    match = difflib.get_close_matches(word, strs, n=1, cutoff=cutoff)
    return match[0] if match else None


def entry_at(doc: Document, key_path: tuple) -> tuple[Node | None, Entry | None]:
    """The mapping holding the last key of `key_path`, and that key's entry."""
    if doc.root is None or not key_path or not isinstance(key_path[-1], str):
        return None, None
    parent = doc.root.find(tuple(key_path[:-1]))
    if parent is None or parent.kind != "mapping":
        return None, None
    return parent, parent.entry(key_path[-1])


def key_span_node(doc: Document, key_path: tuple):
    """What a finding about a key should point at: the key itself (its span), or the node."""
    _, entry = entry_at(doc, key_path)
    if entry is not None:
        return entry.key_span
    return doc.find(tuple(key_path))


def flag(node: Node | None) -> bool | None:
    """A boolean setting read leniently; None when absent or not a boolean."""
    if node is None or node.kind != "scalar":
        return None
    return as_bool(node.value)


def number(node: Node | None) -> int | None:
    if node is None or node.kind != "scalar":
        return None
    return as_int(node.value)


def is_set(node: Node | None) -> bool:
    """Present and not null/empty/false."""
    if node is None:
        return False
    if node.kind == "mapping":
        return bool(node.entries)
    if node.kind == "sequence":
        return bool(node.items)
    return node.value not in (None, False, "", "none", "None", "null")


def words(node: Node | None) -> list[str]:
    """A space-separated string or a list of strings (`fsdp: "full_shard auto_wrap"` or `[full_shard]`)."""
    if node is None:
        return []
    if node.kind == "sequence":
        return [str(i.value).strip().lower() for i in node.items if i.kind == "scalar" and i.value is not None]
    if node.kind == "scalar":
        if node.value is True:
            return ["full_shard"]
        if isinstance(node.value, str):
            return [w.lower() for w in node.value.replace(",", " ").split()]
    return []


def target_gpu(ctx):
    """The target GPU (trainlint.catalog.gpus.GPU) when one is named and its capabilities are known."""
    plan = ctx.plan
    if plan is None or not plan.gpu.value:
        return None
    gpu = find_gpu(plan.gpu.value)
    if gpu is None or not getattr(gpu, "capabilities_known", False):
        return None
    return gpu


# trainlint.context.dialect names -> the names these rules use for HF-style parsers.
CONTEXT_DIALECTS = {"hf": "transformers", "trl": "trl", "open-r1": "trl", "llamafactory": "llamafactory",
                    "open-instruct": "open-instruct", "ms-swift": "ms-swift", "firefly": "transformers"}


def hf_dialect(doc: Document, ctx=None) -> str:
    """Which HF-style parser reads the file: the run's context (`ctx.dialect`: the launch, the script it runs,
    the repository) when it knows, else a guess from the file's keys."""
    known = getattr(ctx, "dialect", None) if ctx is not None else None
    if known is not None and known.known and known.name in CONTEXT_DIALECTS:
        return CONTEXT_DIALECTS[known.name]
    return dialect(doc)


# Where a framework version comes from when the repository or the user names the framework (not the newest known
# release, nor the package installed beside trainlint).
NAMING_ORIGINS = ("cli", "directive", "project", "pin")


def reader_assumption(ctx, package: str) -> tuple[str, ...]:
    """() when the context establishes that `package`'s own parser reads the file (a declared dialect, a launch, the
    script it runs, the repository's pins or scripts, a declared or pinned `package` version), else the assumption
    the parser was guessed from the file alone (`Dialect.guess_assumption`): a verdict only that framework's own
    releases decide (a value outside its closed set, which a fork may extend) is then at most a warning."""
    known = getattr(ctx, "dialect", None)
    if known is None or not known.known or not known.guessed:
        return ()
    versions = getattr(ctx, "versions", None)
    found = versions.get(package) if versions is not None else None
    if found is not None and getattr(found, "origin", "") in NAMING_ORIGINS:
        return ()
    return known.guess_assumption()


def parser_unknown(ctx) -> tuple[str, ...]:
    """The assumption a claim about unknown keys rests on when no launch, script or pin names the parser."""
    known = getattr(ctx, "dialect", None)
    if known is not None and known.known:
        return ()
    return ("the parser that reads this file is unknown (no launch command, script or pin names it): its own "
            "dataclasses may accept the key; declare it with `# trainlint: dialect=trl` (hf, trl, llamafactory, "
            "open-instruct, open-r1, ms-swift) or `dialect = ...` in [tool.trainlint]",)


def foreign_keys_share(root: Node) -> float:
    """The share of a mapping's top-level keys that are neither a TrainingArguments/TRL field (the hf-training-args
    schema, removed fields included) nor a usual script-dataclass key: above one half, the file belongs to a script's
    own dataclass (PEFT's MetaMathQA TrainConfig JSON: model_id, batch_size, optimizer_type, use_amp, ...)."""
    try:
        known = set(schemas.known_keys("hf-training-args", ()) or ())
        known |= set(schemas.load_schema("hf-training-args").get("x-trainlint-removed") or {})
    except Exception:  # noqa: BLE001
        return 0.0
    keys = [e.key for e in root.entries if isinstance(e.key, str) and not e.key.startswith("_")]
    if not keys or not known:
        return 0.0
    return sum(1 for k in keys if k not in known and k not in SCRIPT_KEYS) / len(keys)


def lightning_trainer(doc: Document) -> tuple | None:
    """Key path of the Trainer arguments in a LightningCLI/Hydra file: ("trainer",), ("fit", "trainer"),
    or () for a Hydra `_target_: ...Trainer` file; None when there is none."""
    root = doc.root
    if root is None or root.kind != "mapping":
        return None
    target = root.get("_target_")
    if target is not None and isinstance(target.value, str) and target.value.endswith("Trainer"):
        return ()
    for sub in ("fit", "validate", "test", "predict"):
        node = root.get(sub)
        if node is not None and node.kind == "mapping" and node.get("trainer") is not None:
            return (sub, "trainer")
    trainer = root.get("trainer")
    if trainer is not None and trainer.kind == "mapping":
        return ("trainer",)
    return None


def dotted(key_path: tuple) -> str:
    return ".".join(str(k) for k in key_path)


def version_status(ctx, package: str, spec: str) -> tuple[bool | None, tuple[str, ...]]:
    """Whether the release `package` runs under satisfies the PEP 440 `spec`, as far as it is known.

    Returns (holds, assumptions): holds is True/False only for an exactly resolved version (a pin, a setting,
    the installed distribution), None otherwise; assumptions say what a finding then rests on."""
    versions = getattr(ctx, "versions", None)
    found = versions.get(package) if versions is not None else None
    name = PACKAGE_NAMES.get(package, package)
    if versions is None or found is None:
        return None, (f"{name} version unknown; declare it with `versions = {{{package} = \"X.Y.Z\"}}` in "
                      f"[tool.trainlint] or `# trainlint: {package}=X.Y.Z`",)
    holds = versions.admits(package, spec)  # a pin range decides when every release it admits agrees
    if holds is None:
        return None, (f"assumed {found.describe()}",)
    return holds, ()


H4_STOP = ("H4ArgumentParser (HfArgumentParser.parse_yaml_file) stops with \"Some keys are not used by the "
           "HfArgumentParser\"")
TRL_STOP = "TrlParser stops with \"Unknown arguments from config file\""  # when the data cannot be read


class ParserOutcome(NamedTuple):
    """What a parser does with a key it does not declare: `short` for a one-line message ("TrlParser stops"),
    `full` for its detail (the releases, the parser's own message), `silent` when it drops the key without a word."""

    short: str
    full: str
    silent: bool = False


def _upper(spec: str) -> str | None:
    """The exclusive upper bound of a range like ">=0.13.0,<0.19.0", None when open."""
    found = re.search(r"<\s*(\d[\d.]*)", spec)
    return found.group(1) if found else None


def _before(a: str, b: str) -> bool:
    def parts(v: str) -> tuple:
        return tuple(int(p) for p in v.split(".") if p.isdigit())

    return parts(a) < parts(b)


def _phrase(row: dict, label: bool) -> tuple[str, str]:
    """(short, full) for one release row of TrlParser's behaviour."""
    where = f" ({row.get('releases')})" if label and row.get("releases") else ""
    if row.get("action") == "ignored":
        return (f"TrlParser{where} drops it silently",
                f"TrlParser{where} drops the key without a word, so the setting has no effect")
    text = str(row.get("message") or "").split(":")[0]
    return f"TrlParser{where} stops", (f"TrlParser{where} stops with \"{text}\"" if text else TRL_STOP)


def _trl_command(ctx, key: str | None, since: str | None = None) -> ParserOutcome | None:
    """Under `trl <command> --config FILE` (TRL >= 0.18) the config's leftovers are `accelerate launch` arguments:
    a key that is no launch option stops its parser ("unrecognized arguments"), one that is becomes the launcher's.
    None where that does not apply."""
    launch = getattr(ctx, "launch", None)
    if getattr(launch, "launcher", "") != "trl":
        return None
    try:
        row = dialects.unknown_keys_command("trl")
        options = set((dialects.dialect("trl") or {}).get("accelerate_launch_options") or ())
    except Exception:  # noqa: BLE001
        return None
    if not row:
        return None
    holds = version_status(ctx, "trl", row["trl_range"])[0]
    if holds is False:
        return None
    low = row["trl_range"].lstrip(">=").strip()
    where = "" if holds or (since and not _before(since, low)) else f" ({row.get('releases')})"
    if key is not None and key in options:
        return ParserOutcome(f"`accelerate launch` takes it as its own `--{key}`",
                             f"`trl <command>`{where} hands the key to `accelerate launch`, which takes it as its own "
                             "option (`--" + key + "`), not as the training argument")
    return ParserOutcome("`accelerate launch` (run by `trl <command>`) stops",
                         f"`trl <command>`{where} hands the key to `accelerate launch`, whose parser stops with "
                         f"\"{str(row.get('message') or 'unrecognized arguments').split(':')[0]}\"")


def trl_unknown_key(ctx, since: str | None = None, key: str | None = None) -> ParserOutcome:
    """What TrlParser does with a config key its dataclasses do not declare, for the TRL release in play
    (`schemas/dialects.json` trl `unknown_keys.by_version`). With the release known (a pin range all of whose
    releases agree counts), the row that holds; otherwise the current behaviour (stop) with the older releases that
    differ named (in `full`), those from `since` (the release that removed the key) on only."""
    if getattr(getattr(ctx, "launch", None), "script_parser", "") == "h4":
        # alignment-handbook's H4ArgumentParser.parse_yaml_and_args reads the YAML with parse_yaml_file
        # (allow_extra_keys=False): HfArgumentParser's stop on every TRL release.
        return ParserOutcome("H4ArgumentParser stops", H4_STOP)
    command = _trl_command(ctx, key, since)
    if command:
        return command
    try:
        rows = dialects.unknown_keys_releases("trl")
    except Exception:  # noqa: BLE001
        rows = []
    for row in rows:
        if version_status(ctx, "trl", row["trl"])[0] is True:
            return ParserOutcome(*_phrase(row, label=row is not rows[-1]), silent=row.get("action") == "ignored")
    if not rows:
        return ParserOutcome("TrlParser stops", TRL_STOP)
    newest = rows[-1]
    older = [row for row in rows[:-1] if row.get("action") != newest.get("action") or row.get("message") !=
             newest.get("message")]
    older = [row for row in older
             if since is None or ((upper := _upper(row["trl"])) is not None and _before(since, upper))]
    short, phrase = _phrase(newest, label=bool(older))
    if older:
        said = "; ".join(f"{row.get('releases')}: " + ("dropped without a word" if row.get("action") == "ignored"
                                                        else f"\"{str(row.get('message') or '').split(':')[0]}\"")
                         for row in older)
        phrase += f" ({said})"
    return ParserOutcome(short, phrase)


_PROJECT_NAME = compile_later(r"""^\s*name\s*=\s*["']([A-Za-z0-9_.\-]+)["']""", re.MULTILINE)


def runs_own_source(doc: Document, package: str) -> bool:
    """Whether the file lives in a checkout of `package` itself (the framework's repository or a fork of it: a
    project root whose pyproject.toml names the project `package` and that holds the `package/` folder): its own
    source decides what the file may say, not the releases trainlint read (pytorch/torchtune's recipes run its main
    branch; calvintwr/litgpt's setup() has arguments upstream lacks)."""
    try:
        start = Path(doc.path).resolve().parent
    except (OSError, RuntimeError, ValueError):
        return False
    return _own_source(str(repo_root(start)), package)


@functools.lru_cache(maxsize=256)
def _own_source(root: str, package: str) -> bool:
    folder = Path(root)
    if not (folder / package).is_dir():
        return False
    try:
        text = (folder / "pyproject.toml").read_text(encoding="utf-8", errors="replace")[:20000]
    except OSError:
        return False
    match = _PROJECT_NAME.search(text)
    return match is not None and match.group(1).replace("-", "_").lower() == package.lower()
