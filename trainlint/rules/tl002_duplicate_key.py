"""TL002 duplicate-key: the same key appears twice in one mapping.

**What**: a key repeated in the same mapping of a YAML or JSON config.

**Why**: when DeepSpeed reads a config file itself (`deepspeed train.py --deepspeed_config ds.json`,
`deepspeed.initialize(config="ds.json")`) it refuses duplicates at start-up ("Duplicate keys in DeepSpeed
config: ['stage']"). Everything else keeps the last value without a word: PyYAML, and `json.load` in the HF
Trainer and Accelerate (`HfDeepSpeedConfig`) and Lightning's `DeepSpeedStrategy`, which then hand DeepSpeed a
dict it does not check. Either way, what runs is not what one of the lines says. A DeepSpeed JSON checked on
its own is reported with the assumption that DeepSpeed reads it (a warning: it may be used through an
integration that silently keeps the last value); one linked from a config, or using `"auto"` (which only the
integrations fill), is a warning that says which value wins.

Files read with OmegaConf refuse duplicates too: OmegaConf's YAML loader (`omegaconf/_utils.py` (2.1 - 2.3),
`omegaconf/_yaml.py` (main): `OmegaConfLoader.construct_mapping`) raises `ConstructorError` "found duplicate key
{key}" (OmegaConf >= 2.1, the release any current install gets). torchtune loads every config with it
(`torchtune/config/_parse.py: TuneRecipeArgumentParser.parse_known_args`, `OmegaConf.load(namespace.config)`,
v0.1.0 - v0.6.1 and main), so a duplicate in a torchtune file stops `tune run` before the recipe starts: an error.
LLaMA-Factory reads its YAML with `OmegaConf.load` from 0.9.4 (`src/llamafactory/hparams/parser.py: read_args`;
`yaml.safe_load`, which keeps the last value, up to 0.9.3): an error where the release in play is 0.9.4 or later,
the silent-last-value warning where it is older, and a warning that names both where the release is not known.

**Evidence**: `deepspeed/runtime/config.py` `DeepSpeedConfig.__init__` (`hjson.load(..., object_pairs_hook=
dict_raise_error_on_duplicate_keys)`, "Duplicate keys in DeepSpeed config: {keys}", a `ValueError`; only for a
path, not a dict), DeepSpeed 0.17.0 to 0.19.8; `accelerate/utils/deepspeed.py` `HfDeepSpeedConfig.__init__`
(`json.load`), accelerate 1.13 to 1.15.

**Example**: `"stage": 3, ... "stage": 2` inside `zero_optimization`.

**Fix** (unsafe: which value was meant is a human decision): remove the earlier occurrence, keeping
the value the YAML/JSON loaders use today.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix
from trainlint.flavors.base import uses_auto
from trainlint.rules._frameworks import version_status
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL002", "duplicate-key", Severity.WARNING, "A key appears twice in the same mapping",
            framework="deepspeed", versions="",
            evidence="deepspeed/runtime/config.py: DeepSpeedConfig.__init__ (dict_raise_error_on_duplicate_keys)",
            raises="Duplicate keys in DeepSpeed config: ['stage']")



def _omegaconf_reads(ctx: LintContext, doc) -> tuple[bool | None, tuple[str, ...]]:
    """Whether OmegaConf loads this YAML file (torchtune: always; LLaMA-Factory: from 0.9.4), and what that rests
    on: (True, ()) certain, (None, assumptions) when the LLaMA-Factory release is not known, (False, ()) not."""
    if doc is not ctx.document or doc.kind != "yaml":
        return False, ()
    if ctx.flavor == "torchtune":
        return True, ()
    if ctx.dialect.name == "llamafactory":
        holds, assumptions = version_status(ctx, "llamafactory", ">=0.9.4")
        return holds, assumptions
    return False, ()


def check(ctx: LintContext):
    for doc in [ctx.document, *ctx.linked]:
        # Only DeepSpeed reading the file itself refuses duplicates; a linked file is read by the integration.
        standalone_ds = (doc is ctx.document and ctx.flavor == "deepspeed" and doc.kind == "json"
                         and not uses_auto(doc))
        for dup in doc.duplicates:
            key = ".".join(str(k) for k in dup.key_path)
            first = dup.first.start.line + 1
            assumptions: tuple[str, ...] = ()
            omegaconf, omega_assumed = _omegaconf_reads(ctx, doc)
            if omegaconf is not False:
                name = dup.key_path[-1]
                reader = "torchtune" if ctx.flavor == "torchtune" else "LLaMA-Factory"
                stops = f"{reader} stops" if omegaconf else f"{reader} >= 0.9.4 stops (older: the last value wins)"
                message = (f"`{key}` is set twice (first on line {first}): {stops}, OmegaConf refuses duplicate "
                           "keys")
                detail = (f"{reader} loads the file with OmegaConf.load, which stops with ConstructorError \"found "
                          f"duplicate key {name}\" before training starts.")
                if omegaconf is None:
                    detail += (" LLaMA-Factory 0.9.3 and older read it with yaml.safe_load instead, which keeps only "
                               "this last value without a word.")
                detail += " Keep one."
                severity = Severity.ERROR
                assumptions = omega_assumed
            elif standalone_ds:
                message = f"`{key}` is set twice (first on line {first}): DeepSpeed refuses a config with duplicate keys"
                detail = (f"DeepSpeed stops with \"Duplicate keys in DeepSpeed config: ['{dup.key_path[-1]}']\"; through "
                          "the HF Trainer, Accelerate or Lightning only this last value is used. Keep one.")
                severity = Severity.ERROR
                assumptions = ("assumed DeepSpeed reads this file itself (deepspeed --deepspeed_config); through "
                               "an integration json.load keeps the last value instead",)
            else:
                reader = "json.load in the HF Trainer / Accelerate" if doc.kind == "json" else "the YAML loader"
                message = f"`{key}` is set twice (first on line {first}): {reader} silently keeps only this last value"
                detail = "Remove the one you do not mean."
                severity = None
            fixes = []
            parent = doc.find(dup.key_path[:-1])
            if parent is not None and parent.kind == "mapping":
                earlier = next((e for e in parent.entries if e.key_span == dup.first), None)
                if earlier is not None:
                    fixes.append(fix(f"remove the earlier `{dup.key_path[-1]}` (line {first})",
                                     delete_entry(doc, parent, earlier), safe=False))
            yield RULE.at(doc, dup.duplicate, message, fixes, severity, assumptions=assumptions, detail=detail)
