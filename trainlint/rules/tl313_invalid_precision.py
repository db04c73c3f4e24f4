"""TL313 invalid-precision: a Lightning/LitGPT `precision` value Lightning does not accept.

**What**: a `precision` that is not one of Lightning's values (`"64-true"`, `"32-true"`, `"16-mixed"`,
`"bf16-mixed"`, `"16-true"`, `"bf16-true"`, `"transformer-engine"`, `"transformer-engine-float16"`,
or the aliases 64/32/16/"bf16"), or one that the chosen DeepSpeed/FSDP strategy does not support.

**Why**: `_convert_precision_to_unified_args` (`lightning/fabric/connector.py`, Lightning 2.0 - 2.6)
raises "Precision {p!r} is invalid. Allowed precision values: (...)" (the comparison is exact:
`BF16-mixed` and `fp16` are invalid). Under LightningCLI jsonargparse checks the value against the
Trainer's `precision` type (a Union of Literals) first and stops with `Parser key "trainer.precision":
... Does not validate against any of the Union subtypes`. The DeepSpeed and FSDP precision
plugins accept only "32-true", "16-true", "bf16-true", "16-mixed", "bf16-mixed":
"`Trainer(strategy='deepspeed', precision=...)` is not supported. `precision` must be one of: (...)"
(`pytorch/plugins/precision/deepspeed.py`), "`precision=...)` is not supported in FSDP. `precision` must
be one of: (...)" (`pytorch/plugins/precision/fsdp.py`).

**Evidence**: `lightning/fabric/connector.py: _convert_precision_to_unified_args` (stops); verified
against Lightning 2.0 - 2.6. First message: "Precision {p!r} is invalid. Allowed precision values:
(...)".

On a Lightning 1.x release known from a pin or setting (`pytorch-lightning==1.9.5`), only 64, 32, 16 and
"bf16" are valid (`pytorch_lightning/trainer/connectors/accelerator_connector.py:
_check_config_and_set_final_flags`, 1.8 - 1.9.5): "16-mixed" stops with "Precision '16-mixed' is invalid.
Allowed precision values: ('64', '32', '16', 'bf16', 64, 32, 16)" (bytedance/MVDream-threestudio#5,
RVC-Boss/GPT-SoVITS#461); the safe fix writes the 1.x name (16, bf16, 32, 64), the same run.

**Example**: `precision: fp16` → `precision: 16-mixed`; `precision: BF16-Mixed` → `bf16-mixed`.

**Fix** (unsafe): the closest valid value when there is one.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._frameworks import lightning_trainer, suggest
from trainlint.rules.base import LintContext, Rule
from trainlint.rules.tl312_legacy_precision_alias import precision_node

RULE = Rule("TL313", "invalid-precision", Severity.ERROR,
            "A precision value Lightning rejects", flavors=("lightning", "litgpt"),
            framework="lightning", evidence="lightning/fabric/connector.py: _convert_precision_to_unified_args",
            raises="Precision {p!r} is invalid. Allowed precision values: (...)")

VALID = ("transformer-engine", "transformer-engine-float16", "16-true", "16-mixed", "bf16-true", "bf16-mixed",
         "32-true", "64-true", "64", "32", "16", "bf16")
SHARDED = ("32-true", "16-true", "bf16-true", "16-mixed", "bf16-mixed")
COMMON = {"fp16": "16-mixed", "float16": "16-mixed", "half": "16-mixed", "amp": "16-mixed", "mixed": "16-mixed",
          "bfloat16": "bf16-mixed", "bf16_mixed": "bf16-mixed", "fp32": "32-true", "float32": "32-true",
          "16_mixed": "16-mixed", "bf16-amp": "bf16-mixed"}
ALIASES = {"64": "64-true", "32": "32-true", "16": "16-mixed", "bf16": "bf16-mixed"}


def _strategy(ctx: LintContext) -> str | None:
    base = lightning_trainer(ctx.document) if ctx.flavor == "lightning" else None
    if base is None:
        return None
    node = ctx.document.find(base + ("strategy",))
    if node is None:
        return None
    if node.kind == "scalar" and isinstance(node.value, str):
        name = node.value.lower()
    elif node.kind == "mapping" and (class_path := node.get("class_path")) is not None:
        name = str(class_path.value).lower()
    else:
        return None
    return "deepspeed" if "deepspeed" in name else "fsdp" if "fsdp" in name else None


def check(ctx: LintContext):
    node = precision_node(ctx)
    if node is None or node.kind != "scalar" or node.value is None:
        return
    doc = ctx.document
    value = node.value
    text = str(value) if not isinstance(value, bool) else node.raw
    if isinstance(value, float) and value.is_integer():
        text = str(int(value))
    if ctx.version_in("lightning", "<2.0.0") is True:
        yield from _lightning_1(ctx, node, text)
        return
    if isinstance(value, bool) or text not in VALID:
        guess = COMMON.get(text.lower()) or suggest(text, VALID[:8], cutoff=0.7)
        fixes = [fix(f"write {guess}", replace_value(doc, node, text=guess if not node.style else f'"{guess}"'), safe=False)] if guess else []
        yield RULE.at(doc, node, f"`precision: {node.raw}` is not a Lightning precision: the Trainer stops", fixes,
                      detail=f"The Trainer stops with \"Precision {text!r} is invalid. Allowed precision values: ...\""
                             + (" (LightningCLI's parser refuses it first: \"Does not validate against any of the "
                                "Union subtypes\")." if ctx.flavor == "lightning" and lightning_trainer(doc) else ".")
                             + (f" Did you mean {guess}?" if guess
                                else " Use 32-true, 16-mixed, bf16-mixed, 16-true or bf16-true."))
        return
    strategy = _strategy(ctx)
    unified = ALIASES.get(text, text)
    if strategy and unified not in SHARDED:
        plugin = ("`Trainer(strategy='deepspeed', precision=...)` is not supported" if strategy == "deepspeed"
                  else "`precision=...` is not supported in FSDP")
        yield RULE.at(doc, node, f"`precision: {node.raw}` does not work with the {strategy} strategy: Lightning stops",
                      detail=f"Lightning stops with \"{plugin}. `precision` must be one of: {', '.join(SHARDED)}\". "
                             "Pick one of those.")


VALID_1X = ("64", "32", "16", "bf16")  # Lightning 1.x: _PRECISION_INPUT_STR + _PRECISION_INPUT_INT
TO_1X = {"64-true": "64", "32-true": "32", "16-mixed": "16", "bf16-mixed": "bf16"}


def _lightning_1(ctx: LintContext, node, text: str):
    """Lightning 1.x (a known release before 2.0) takes only 64/32/16/"bf16": the 2.0 names ("16-mixed",
    "bf16-mixed", "32-true", ...) are refused (MVDream-threestudio#5, GPT-SoVITS#461 on pytorch-lightning 1.9)."""
    if text in VALID_1X:
        return
    doc = ctx.document
    found = ctx.version_of("lightning")
    release = found.version if found is not None else "1.x"
    old = TO_1X.get(text) or TO_1X.get(COMMON.get(text.lower(), ""))
    fixes = [fix(f"write {old}", replace_value(doc, node, text=old if not node.style else f'"{old}"'),
                 safe=text in TO_1X)] if old else []
    named = (" (the -mixed/-true names came with Lightning 2.0)" if text in VALID or text in TO_1X else "")
    allowed = ("('16', '32', '64', 'bf16')" if ctx.version_in("lightning", "<1.9.0") is True
               else "('64', '32', '16', 'bf16', 64, 32, 16)")
    yield RULE.at(doc, node, f"`precision: {node.raw}` is not a precision of Lightning {release}: the Trainer stops",
                  fixes,
                  detail=f"It is not a precision of Lightning {release}{named}: the Trainer stops with \"Precision "
                         f"{text!r} is invalid. Allowed precision values: {allowed}\"."
                         + (f" Write {old}, its 1.x name." if old
                            else " Use 32, 16 or bf16 (16-true and bf16-true need Lightning 2.0)."))
