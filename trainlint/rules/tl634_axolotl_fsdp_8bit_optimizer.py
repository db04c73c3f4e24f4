"""TL634 axolotl-fsdp-8bit-optimizer: an 8-bit bitsandbytes optimizer with FSDP offload or FSDP2.

**What**: an Axolotl config with FSDP and a bitsandbytes 8-bit optimizer (`adamw_bnb_8bit`,
`adamw_8bit`, `paged_adamw_8bit`, ...): with FSDP1 parameter offload (`fsdp_config.offload_params` /
`fsdp_offload_params`), or with `fsdp_version: 2`.

**Why**: bitsandbytes keeps its 8-bit states on the GPU and cannot step CPU-offloaded or DTensor
(FSDP2) parameters. Axolotl's validation stops with "FSDP Offload not compatible with {optimizer}"
and "FSDP2 not compatible with {optimizer}, use `adamw_torch_8bit` instead"
(`utils/schemas/validation.py`).

**Example**: `fsdp_version: 2` + `optimizer: adamw_bnb_8bit` → `optimizer: adamw_torch_8bit`.

**Fix** (unsafe: another optimizer implementation): FSDP2 → `adamw_torch_8bit` (torchao).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.edits import fix, replace_value
from trainlint.rules._frameworks import flag, is_set, number, words
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL634", "axolotl-fsdp-8bit-optimizer", Severity.ERROR,
            "bitsandbytes 8-bit optimizer with FSDP offload or FSDP2", flavors=("axolotl",))

BNB_8BIT = {"adamw_bnb_8bit", "adamw_8bit", "paged_adamw_8bit", "lion_8bit", "paged_lion_8bit", "ademamix_8bit",
            "paged_ademamix_8bit", "rmsprop_bnb_8bit"}


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    opt = root.get("optimizer")
    if opt is None or opt.kind != "scalar" or str(opt.value) not in BNB_8BIT:
        return
    config = root.get("fsdp_config")
    config = config if config is not None and config.kind == "mapping" else None
    version = number(root.get("fsdp_version")) or (number(config.get("fsdp_version")) if config is not None else None) \
        or (number(config.get("version")) if config is not None else None)
    fsdp_on = bool(words(root.get("fsdp"))) or is_set(config)
    if not fsdp_on:
        return
    if version == 2:
        yield RULE.at(doc, opt,
                      f"`optimizer: {opt.raw}` with FSDP2: Axolotl stops with \"FSDP2 not compatible with {opt.value}, use "
                      f"`adamw_torch_8bit` instead\" (bitsandbytes cannot step sharded DTensor parameters).",
                      [fix("use adamw_torch_8bit", replace_value(doc, opt, "adamw_torch_8bit"), safe=False)])
        return
    offload = "offload" in words(root.get("fsdp")) or (config is not None and (
        flag(config.get("fsdp_offload_params")) or flag(config.get("offload_params"))))
    if offload:
        yield RULE.at(doc, opt,
                      f"`optimizer: {opt.raw}` with FSDP parameter offload: Axolotl stops with \"FSDP Offload not "
                      f"compatible with {opt.value}\" (its 8-bit states live on the GPU). Use a 32-bit optimizer "
                      f"(adamw_torch_fused) or turn offload off.")
