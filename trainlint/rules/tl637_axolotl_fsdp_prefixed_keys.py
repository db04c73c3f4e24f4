"""TL637 axolotl-fsdp-prefixed-keys: Axolotl `fsdp_config` keys written with the old `fsdp_` prefix.

**What**: keys inside an Axolotl `fsdp_config` that start with `fsdp_` (`fsdp_offload_params`,
`fsdp_state_dict_type`, ...), other than `fsdp_version`.

**Why**: current Axolotl takes the plain names (`offload_params`, `state_dict_type`, ...). It still
strips the prefix for you, with a warning: "Configuring FSDP fields with the `fsdp_` prefix is
deprecated. Please omit the `fsdp_` prefix from the any fields in `fsdp_config`.", so the prefixed spelling
is on its way out.

**Evidence**: axolotl `src/axolotl/utils/schemas/validation.py`, `check_fsdp_config_kwargs_prefix`
(`model_validator(mode="before")`, a warning, not an error), since v0.12.0 (2025-07) to main (2026-07).

**Example**: `fsdp_config: {fsdp_offload_params: true}` → `fsdp_config: {offload_params: true}`.

**Fix** (unsafe: Axolotl releases from before the rename only know the prefixed names): drop the
prefix from every key.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, rename_key
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL637", "axolotl-fsdp-prefixed-keys", Severity.INFO,
            "fsdp_config keys with the deprecated fsdp_ prefix", flavors=("axolotl",),
            framework="axolotl", versions=">=0.12.0",
            evidence="axolotl/utils/schemas/validation.py: check_fsdp_config_kwargs_prefix",
            raises="Configuring FSDP fields with the `fsdp_` prefix is deprecated.")


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    holder = root.entry("fsdp_config")
    if holder is None or holder.value.kind != "mapping":
        return
    config = holder.value
    prefixed = [e for e in config.entries if e.key.startswith("fsdp_") and e.key != "fsdp_version"]
    clashing = [e for e in prefixed if config.get(e.key[len("fsdp_"):]) is not None]
    if not prefixed:
        return
    edits = [rename_key(doc, e, e.key[len("fsdp_"):]) for e in prefixed if e not in clashing]
    names = ", ".join(f"`{e.key}`" for e in prefixed[:4]) + (", ..." if len(prefixed) > 4 else "")
    first = f"`{prefixed[0].key}`" + (", ..." if len(prefixed) > 1 else "")
    yield RULE.at(doc, prefixed[0].key_span,
                  f"{len(prefixed)} `fsdp_config` key{'s' if len(prefixed) > 1 else ''} with the deprecated `fsdp_` "
                  f"prefix ({first}): Axolotl strips it",
                  [fix("drop the `fsdp_` prefix", *edits, safe=False)] if edits else [],
                  detail=f"The keys: {names}. Axolotl warns \"Configuring FSDP fields with the `fsdp_` prefix is deprecated\" and strips "
                         "it. Write the plain names.")
