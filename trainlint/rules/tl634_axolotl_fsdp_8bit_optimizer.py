"""TL634 axolotl-fsdp-8bit-optimizer: an 8-bit bitsandbytes optimizer with FSDP offload or FSDP2.

**What**: an Axolotl config with an `fsdp_config` and an 8-bit optimizer: any optimizer whose name
contains `8bit` with FSDP1 parameter offload (`fsdp_config.offload_params` / `fsdp_offload_params`),
or `adamw_bnb_8bit` / `adamw_8bit` with `fsdp_version: 2`.

**Why**: bitsandbytes keeps its 8-bit states on the GPU and cannot step CPU-offloaded or DTensor
(FSDP2) parameters. Axolotl's validation stops with "FSDP Offload not compatible with {optimizer}"
and "FSDP2 not compatible with {optimizer}, use `adamw_torch_8bit` instead".

**Evidence**: axolotl `src/axolotl/utils/schemas/validation.py`, `check_fsdp_offload_w_8bit_optimizer` (since
v0.5.0, 2024-04) and `check_fsdp2_w_8bit_optimizer` (since v0.8.1, 2025-04), both `model_validator(mode="after")`,
so the `fsdp_` prefix is already stripped (`fsdp_offload_params` counts) and the version is resolved: top-level
`fsdp_version`, else `fsdp_config.fsdp_version` / `fsdp_config.version`, else 1 (`check_fsdp_version_in_fsdp_config`).

**Example**: `fsdp_version: 2` + `optimizer: adamw_bnb_8bit` → `optimizer: adamw_torch_8bit`.

**Fix** (unsafe: another optimizer implementation): FSDP2 → `adamw_torch_8bit` (torchao).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._frameworks import flag, is_set, number
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL634", "axolotl-fsdp-8bit-optimizer", Severity.ERROR,
            "8-bit optimizer with FSDP offload, or bnb 8-bit AdamW with FSDP2", flavors=("axolotl",),
            framework="axolotl", versions="",
            evidence="axolotl/utils/schemas/validation.py: check_fsdp_offload_w_8bit_optimizer, check_fsdp2_w_8bit_optimizer",
            raises="FSDP Offload not compatible with {optimizer}")

FSDP2_REFUSED = {"adamw_bnb_8bit", "adamw_8bit"}


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    opt = root.get("optimizer")
    if opt is None or opt.kind != "scalar" or "8bit" not in str(opt.value):
        return
    config = root.get("fsdp_config")
    config = config if config is not None and config.kind == "mapping" else None
    version = number(root.get("fsdp_version")) or (number(config.get("fsdp_version")) if config is not None else None) \
        or (number(config.get("version")) if config is not None else None)
    if config is None or not is_set(config):
        return
    if version == 2 and str(opt.value) in FSDP2_REFUSED:
        yield RULE.at(doc, opt,
                      f"`optimizer: {opt.raw}` with FSDP2: Axolotl stops; use `adamw_torch_8bit`",
                      [fix("use adamw_torch_8bit", replace_value(doc, opt, "adamw_torch_8bit"), safe=False)],
                      detail=f"Axolotl stops with \"FSDP2 not compatible with {opt.value}, use `adamw_torch_8bit` "
                             "instead\" (bitsandbytes cannot step sharded DTensor parameters).")
        return
    offload = flag(config.get("fsdp_offload_params")) or flag(config.get("offload_params"))
    if version != 2 and offload:
        yield RULE.at(doc, opt,
                      f"`optimizer: {opt.raw}` with FSDP parameter offload: Axolotl stops",
                      detail=f"Axolotl stops with \"FSDP Offload not compatible with {opt.value}\" (8-bit optimizer "
                             "states cannot follow parameters offloaded to the CPU). Use a 32-bit optimizer "
                             "(adamw_torch_fused) or turn offload off.")
