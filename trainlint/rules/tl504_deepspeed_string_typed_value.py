"""TL504 deepspeed-string-typed-value: a number or boolean written as a string in a DeepSpeed config.

**What**: `"8"`, `"1e-4"`, `"true"`, `"false"` (quoted) where DeepSpeed expects a number or a
boolean, including the optimizer and scheduler `params`.

**Why**: the integrations compare DeepSpeed values with their own strictly: HF Trainer's
`fill_match` records a mismatch when `ds_val != hf_val`, and `"false" != False`, so the run stops with
"Please correct the following DeepSpeed config values that mismatch TrainingArguments values:
- ds gradient_accumulation_steps=8 vs hf gradient_accumulation_steps=8" (LLaMA-Factory#1116;
string booleans in LLaMA-Factory#3493's `ds_config3.json`); Accelerate's `is_true`/`is_false` take
`bool("false")` as true. Keys DeepSpeed reads without pydantic (`train_batch_size`, `gradient_clipping`,
optimizer params) get the string itself and fail in arithmetic. Pydantic sections of a raw DeepSpeed
run convert `"8"`, `"true"` and `"0.5"`, hence a warning there unless HF compares the key; but they
refuse an exponent or a fraction in an integer field (`"reduce_bucket_size": "5e8"`: "Input should be
a valid integer, unable to parse string as an integer"), an error.

**Example**: `"bf16": {"enabled": "true"}`.

**Fix** (safe): write the JSON number or boolean.

**Evidence**: `transformers/integrations/deepspeed.py` `HfTrainerDeepSpeedConfig.fill_match` (`ds_val != hf_val`,
transformers 5.0 to 5.24): "Please correct the following DeepSpeed config values that mismatch
TrainingArguments values: - ds gradient_accumulation_steps=8 vs hf gradient_accumulation_steps=8" (ValueError,
a stop); `accelerate/utils/deepspeed.py` `HfDeepSpeedConfig.is_true` (`bool(value)`, Accelerate 1.12 to 1.15);
`deepspeed/runtime/config_utils.py` `DeepSpeedConfigModel` (pydantic lax mode; DeepSpeed 0.17.1 to 0.19.8 for
fp16/bf16, 0.17.0 to 0.19.8 for zero_optimization); `runtime/config.py` `_batch_assertion` for the raw keys
("'>' not supported between instances of 'str' and 'int'").
"""

from __future__ import annotations

import re

from trainlint._patterns import compile_later
from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value, scalar_text
from trainlint.flavors.base import may_be_number
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule
from trainlint.catalog.schemas import describe

RULE = Rule("TL504", "deepspeed-string-typed-value", Severity.ERROR,
            "A DeepSpeed number or boolean written as a string", flavors=ds.ALL_FLAVORS,
            framework="transformers", versions="",
            evidence="transformers/integrations/deepspeed.py: HfTrainerDeepSpeedConfig.fill_match; deepspeed/runtime/config_utils.py: DeepSpeedConfigModel",
            raises="Please correct the following DeepSpeed config values that mismatch TrainingArguments values: - ds gradient_accumulation_steps=8 vs hf gradient_accumulation_steps=8")

NUMBER = compile_later(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
PARAMS = (("optimizer", "params"), ("scheduler", "params"))


def check(ctx: LintContext):
    for cfg in ds.ds_configs(ctx):
        root = cfg.root
        if root is None:
            continue
        integrated = ds.looks_integrated(cfg)
        for node in root.walk():
            if node.kind != "scalar" or not isinstance(node.value, str) or not node.key_path:
                continue
            if cfg.doc.kind != "json" and node.style not in ('"', "'"):
                continue  # a plain YAML scalar that reads as text is TL003's
            text = node.value.strip()
            path = tuple(node.key_path)
            is_bool = text.lower() in ("true", "false")
            is_number = may_be_number(text) and bool(NUMBER.fullmatch(text))
            if not (is_bool or is_number) or not _expects(path, is_bool):
                continue
            value: bool | int | float
            if is_bool:
                value = text.lower() == "true"
                new = scalar_text(cfg.doc, value)
            else:
                number = float(text)
                value = int(number) if number.is_integer() and re.fullmatch(r"[-+]?\d+", text) else number
                new = text.lstrip("+") if cfg.doc.kind == "json" and _json_number(text) else ds.number_text(cfg.doc, value)
            key = ds.key_name(path)
            severity = None
            assumptions: tuple[str, ...] = ()
            compared = ds.normalized(path) in ds.HF_FILLED
            if cfg.host is None and integrated:
                # On its own, only the "auto" values say that the HF Trainer or Accelerate reads it.
                assumptions = ("assumed the file is used through the HF Trainer or Accelerate, as its \"auto\" values "
                               "say; DeepSpeed alone converts the string",)
            if compared and (cfg.host in ds.HF_HOSTS or integrated):
                short = "HF Trainer stops on the mismatch"
                why = (f"HF Trainer compares it strictly (\"{text}\" != {value!r}) and stops with \"Please correct the "
                       f"following DeepSpeed config values that mismatch TrainingArguments values\""
                       + ("; Accelerate's is_true/is_false reads the string \"false\" as true"
                          if text.lower() == "false" else ""))
            elif is_bool and path[-1] == "enabled" and integrated:
                short = "Accelerate tests it as text"
                why = "Accelerate's is_true/is_false test it as text (the string \"false\" counts as true)"
            elif ds.in_pydantic_section(path) and not is_bool and _integer_only(path) and not PYDANTIC_INT.fullmatch(text):
                short = "DeepSpeed refuses it"
                why = ("DeepSpeed's pydantic model refuses it: \"Input should be a valid integer, unable to parse string "
                       "as an integer [type=int_parsing ...]\" (a quoted exponent or fraction is not an integer)")
            elif ds.in_pydantic_section(path):
                severity = Severity.WARNING
                short = "HF Trainer and Accelerate read it as text"
                why = ("DeepSpeed's pydantic model converts it, but integrations that read the dict before DeepSpeed "
                       "(HF Trainer, Accelerate) see text")
            else:
                short = "DeepSpeed passes the string on unconverted"
                why = "DeepSpeed reads this key without conversion, so the string reaches the code that uses it"
            # A number the field cannot hold (a fraction where DeepSpeed takes an integer: `2e-5` as a micro-batch)
            # is no fix: written unquoted it is still refused (TL011 reports it then).
            unusable = not is_bool and _integer_only(path) and not float(value).is_integer()
            fixes = [] if unusable else [fix(f"write {new}", replace_value(cfg.doc, node, text=new))]
            yield RULE.at(cfg.doc, node, f"`{key}` is the string \"{text}\", not {'a boolean' if is_bool else 'a number'}: "
                                         f"{short}",
                          fixes, severity=severity,
                          assumptions=assumptions if (compared or is_bool) and cfg.host is None else (),
                          detail=f"{why[0].upper()}{why[1:]}. Write {new}.")


# What pydantic v2 (lax mode) turns into an int from a string: digits, an optional sign, underscores, ".0".
PYDANTIC_INT = compile_later(r"\s*[-+]?\d[\d_]*(\.0*)?\s*")


def _integer_only(path: tuple) -> bool:
    info = describe("deepspeed", path)
    return info is not None and "integer" in info.types and "number" not in info.types


def _json_number(text: str) -> bool:
    return bool(re.fullmatch(r"-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?", text.lstrip("+")))


def _expects(path: tuple, is_bool: bool) -> bool:
    if any(path[:2] == p and len(path) >= 3 for p in PARAMS):
        return not is_bool or path[-1] in ("amsgrad", "bias_correction", "adam_w_mode", "nesterov")
    info = describe("deepspeed", path)
    if info is None:
        return False
    wanted = {"boolean"} if is_bool else {"integer", "number"}
    return bool(wanted & set(info.types))
