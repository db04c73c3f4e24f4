"""TL003 yaml-number-as-string: a number written like `2e-5` that YAML reads as text.

**What**: a plain scalar such as `learning_rate: 2e-5` or `max_steps: 1e4` in a YAML file read by
`yaml.safe_load` without type conversion: `HfArgumentParser.parse_yaml_file` (transformers
`hf_argparser.py`, `parse_dict` builds the dataclasses with `dtype(**inputs)`) or Accelerate's config
loader (`commands/config/config_args.py`, `BaseConfig.from_yaml_file`).

**Why**: PyYAML implements YAML 1.1, where a float needs a dot in its mantissa: `2e-5` is the
string `"2e-5"`. Neither loader converts it, so nothing is said at load time and the string fails
later (torch's optimizer compares the "learning rate" with a float: a TypeError at the first step).
Files read otherwise are not flagged: TrlParser (TRL `scripts/utils.py`) makes each YAML value an
argparse default, and argparse converts a string default through the option's type (`float`,
`int`), so `2e-5` becomes 2e-05; OmegaConf (LLaMA-Factory, torchtune) reads `2e-5` as a float;
pydantic (Axolotl) and jsonargparse (Lightning) convert it. The finding assumes the file is read
without conversion (a script could load it otherwise), hence a warning. Holds for every transformers
release read (4.40 - 5.24) and accelerate 1.13 - 1.15.

In an Accelerate config, a value under a `deepspeed_config` / `fsdp_config` key that is no plugin setting is not
reported: `accelerate launch` drops the whole key (TL622), so the string never reaches DeepSpeed.

**Evidence**: `transformers/hf_argparser.py: HfArgumentParser.parse_dict` (silent at load: the string
fails later); verified against transformers 4.40 - 5.24, accelerate 1.13 - 1.15.

**Example**: `learning_rate: 2e-5` → `learning_rate: 2.0e-5`.

**Fix** (safe): write the number so that every YAML reader sees a float.
"""

from __future__ import annotations

import re

from trainlint._patterns import compile_later
from trainlint.catalog import schemas
from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.flavors.huggingface import dialect
from trainlint.rules._frameworks import Claim, lightning_trainer
from trainlint.rules._schema_checks import SCHEMA_FOR
from trainlint.rules.base import LintContext, Rule
from trainlint.rules.tl622_accelerate_ignored_plugin_key import known

RULE = Rule("TL003", "yaml-number-as-string", Severity.WARNING,
            "A number like 2e-5 that PyYAML reads as a string", flavors=("huggingface", "accelerate"),
            framework="transformers", evidence="transformers/hf_argparser.py: HfArgumentParser.parse_dict")

CLAIMS = (
    Claim("transformers", "hf_argparser.py HfArgumentParser.parse_dict", "", "silent"),
    Claim("accelerate", "commands/config/config_args.py BaseConfig.from_yaml_file", "", "silent"),
)

_YAML11_MISSED_FLOAT = compile_later(r"[-+]?(\d[\d_]*)(\.\d*)?[eE][-+]?\d+")


def yaml11_number(raw: str, value: float) -> str:
    """The same number written so that YAML 1.1 reads it as one: whole numbers as integers (`1e4` →
    `10000`), others with a dot in the mantissa and a signed exponent (`2e-5` → `2.0e-5`, `1.5e3` →
    `1.5e+3`)."""
    mantissa, letter, exponent = re.split(r"([eE])", raw.replace("_", ""), maxsplit=1)
    if "." not in mantissa and value.is_integer() and abs(value) < 1e18:
        return str(int(value))
    if "." not in mantissa:
        mantissa += ".0"
    if exponent[0] not in "+-":
        exponent = "+" + exponent
    return f"{mantissa}{letter}{exponent}"


def check(ctx: LintContext):
    doc = ctx.document
    if doc.kind != "yaml" or doc.root is None:
        return
    if ctx.flavor == "huggingface" and dialect(doc) in ("trl", "llamafactory"):
        return
    for node in doc.root.walk():
        if node.kind != "scalar" or node.style is not None or not isinstance(node.value, str):
            continue
        if not _YAML11_MISSED_FLOAT.fullmatch(node.raw):
            continue
        if ctx.flavor == "accelerate" and _dropped_by_accelerate(node.key_path):
            continue  # TL622: `accelerate launch` drops the enclosing key, so the value reaches nothing
        value = float(node.raw.replace("_", ""))
        fixed = yaml11_number(node.raw, value)
        key = ".".join(str(k) for k in node.key_path)
        # no number where the field takes none (`same_network: 2e-5`, a boolean): the edit would trade this finding
        # for TL520's, so the value is left to be corrected by hand
        fixes = [fix(f"write {fixed}", replace_value(doc, node, text=fixed))] if _takes_a_number(ctx, node) else []
        yield RULE.at(doc, node,
                      f"`{key}: {node.raw}` is read by YAML 1.1 (PyYAML) as the string {node.raw!r}, not the number "
                      f"{value:g}",
                      fixes,
                      detail=f"This loader does not convert it, so the run fails or misbehaves. Write {fixed}.")


def _takes_a_number(ctx: LintContext, node) -> bool:
    """Whether the field may hold a number: its schema (the flavor's, when it declares the key) names "number" or
    "integer" among its types, or says nothing of it."""
    name = SCHEMA_FOR.get(ctx.flavor)
    if name is None:
        return True
    path = tuple(node.key_path)
    if ctx.flavor == "lightning":
        base = lightning_trainer(ctx.document)
        if not base or path[:len(base)] != tuple(base):
            return True
        path = ("trainer",) + path[len(base):]
    try:
        info = schemas.describe(name, path)
    except Exception:  # noqa: BLE001 - no schema: nothing says the field takes no number
        return True
    return info is None or not info.types or bool({"number", "integer"} & set(info.types))


def _dropped_by_accelerate(key_path: tuple) -> bool:
    """A value under a `deepspeed_config` / `fsdp_config` key that is no Accelerate plugin setting (TL622)."""
    if len(key_path) < 2 or key_path[0] not in ("deepspeed_config", "fsdp_config") or not isinstance(key_path[1], str):
        return False
    keys = known(key_path[0])
    if not keys:
        return False
    return key_path[1] not in keys and not (key_path[0] == "fsdp_config" and f"fsdp_{key_path[1]}" in keys)
