"""TL644 axolotl-batch-size-fields: an Axolotl config that sets fewer than two of the three batch-size keys.

**What**: an Axolotl config where fewer than two of `micro_batch_size`, `gradient_accumulation_steps` and
`batch_size` are set to a non-zero value (in the file or on the launch's command line: `--micro-batch-size=2`),
such as one that sets only `gradient_accumulation_steps` and leaves `micro_batch_size` to its documented
default of 1.

**Why**: Axolotl's `check_batch_size_fields` runs before the field defaults are applied
(`model_validator(mode="before")`), so it counts only the keys the file has and stops with "At least two of
micro_batch_size, gradient_accumulation_steps, batch_size must be set" (axolotl#3836, with the minimal repro
`base_model`, `datasets`, `gradient_accumulation_steps: 4`). A fix that counts the defaults was proposed in
July 2026 (axolotl#3837) and is in no release up to 0.18.0.

**Evidence**: axolotl `src/axolotl/utils/schemas/validation.py: TrainingValidationMixin.check_batch_size_fields`
(`src/axolotl/utils/config/models/input/v0_4_1/__init__.py` in 0.5.x, `utils/schemas/config.py` in 0.8),
from v0.5.0 (the pydantic config, 2024) to v0.18.0 (2026-07-17); v0.4.0 and older crashed on a missing
`micro_batch_size` in `normalize_config` instead. First message: "At least two of micro_batch_size,
gradient_accumulation_steps, batch_size must be set".

**Severity**: an error on an Axolotl release known to be in that range (a pin, a setting); a warning that says
so when the release is assumed (a later release may count the defaults).

**Example**: `gradient_accumulation_steps: 4` alone → add `micro_batch_size: 1`.

**Fix** (safe: it writes the default Axolotl documents, so the run is the one the file meant): add
`micro_batch_size: 1` (or `gradient_accumulation_steps: 1` when only `micro_batch_size` or `batch_size` is set).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, insert_entry
from trainlint.rules._frameworks import number, version_status
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL644", "axolotl-batch-size-fields", Severity.ERROR,
            "Fewer than two of micro_batch_size, gradient_accumulation_steps, batch_size set", flavors=("axolotl",),
            framework="axolotl", versions=">=0.5.0",
            evidence="axolotl/utils/schemas/validation.py: TrainingValidationMixin.check_batch_size_fields",
            raises="At least two of micro_batch_size, gradient_accumulation_steps, batch_size must be set")

FIELDS = ("micro_batch_size", "gradient_accumulation_steps", "batch_size")
LAST_CHECKED = "0.18.0"  # the newest release read: it still counts only the keys the file sets


def _given(ctx: LintContext, root, key: str) -> bool | None:
    """Whether the run sets `key` to a truthy value: the command line first (None: a shell variable left it
    unknown), then the file."""
    launch = getattr(ctx, "launch", None)
    arg = launch.argument(key) if launch is not None else None
    if arg is not None:
        value = arg.value
        if value is None:
            return None
        try:
            return float(str(value)) != 0
        except ValueError:
            return bool(str(value).strip())
    node = root.get(key)
    if node is None or node.kind != "scalar":
        return node is not None and node.kind != "scalar"
    if node.value is None or node.value is False:
        return False
    if isinstance(node.value, str) and not node.value.strip():
        return False
    n = number(node)
    return n != 0 if n is not None else bool(node.value)


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping" or root.get("base_model") is None:
        return
    given = {key: _given(ctx, root, key) for key in FIELDS}
    if any(v is None for v in given.values()):
        return  # the command line sets one from a shell variable: unknown
    count = sum(1 for v in given.values() if v)
    if count >= 2:
        return
    holds, assumptions = version_status(ctx, "axolotl", f"<={LAST_CHECKED}")
    if holds is False:
        return  # a release after the last one read: it may count the defaults
    missing = "micro_batch_size" if not given["micro_batch_size"] else "gradient_accumulation_steps"
    present = [k for k in FIELDS if given[k]]
    anchor = root.entry(present[0]) if present and root.entry(present[0]) is not None else None
    span = anchor.key_span if anchor is not None else root.entries[0].key_span if root.entries else None
    if span is None:
        return
    which = f"only `{present[0]}` is" if present else "none of them is"
    if assumptions:
        assumptions = (f"assumed an Axolotl release up to {LAST_CHECKED} (every one from 0.5.0 counts only the keys "
                       f"the file sets; a later release may count the defaults): {assumptions[0]}",)
    adds = [missing] if present else ["micro_batch_size", "gradient_accumulation_steps"]
    written = " and ".join(f"`{key}: 1`" for key in adds)
    edits = [insert_entry(doc, root, key, "1", after=anchor) for key in adds]
    yield RULE.at(doc, span,
                  f"{which} set of micro_batch_size, gradient_accumulation_steps and batch_size: Axolotl stops",
                  [fix(f"add {written}", *edits, safe=True)],
                  severity=None if not assumptions else Severity.WARNING, assumptions=assumptions,
                  detail="Axolotl checks them before applying the defaults and stops with \"At least two of "
                         "micro_batch_size, gradient_accumulation_steps, batch_size must be set\". Add "
                         f"{written} ({'their' if len(adds) > 1 else 'its'} default).")
