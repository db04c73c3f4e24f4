"""TL621 lightning-unknown-strategy: a Lightning `strategy` name that is not in the strategy registry.

**What**: `trainer.strategy` given as a string that Lightning's StrategyRegistry does not know, for
instance a typo (`deepspeed_stage3`, `ddp_spwan`) or a strategy removed in 2.0 (`ddp_sharded`,
`horovod`, `tpu_spawn`, `dp`, `ddp2`, `fsdp_native`).

**Why**: `pytorch/trainer/connectors/accelerator_connector.py` stops with "You selected an invalid
strategy name: `strategy='...'`. It must be either a string or an instance of
`lightning.pytorch.strategies.Strategy`. Example choices: auto, ddp, ddp_spawn, deepspeed, ...".
Names are compared lower-cased. Registry (`lightning.pytorch.strategies.StrategyRegistry`, which each
strategy class fills in its `register_strategies`): auto, ddp and its
`_spawn`/`_fork`/`_notebook` and `_find_unused_parameters_{true,false}` variants, deepspeed,
deepspeed_stage_{1,2,2_offload,3,3_offload,3_offload_nvme}, fsdp, fsdp_cpu_offload, xla, xla_debug,
single_xla, single_device (and the HPU names the lightning-habana plugin registers).
Strategies given as `class_path` objects are not checked.

**Evidence**: `lightning/pytorch/trainer/connectors/accelerator_connector.py:
_AcceleratorConnector._check_config_and_set_final_flags` (stops); verified against Lightning 2.0 - 2.6.
First message: "You selected an invalid strategy name: `strategy='...'`. It must be either a string or
an instance of `lightning.pytorch.strategies.Strategy`.".

**Example**: `strategy: deepspeed_stage3` → `strategy: deepspeed_stage_3`.

**Fix** (unsafe: a guess): the closest registered name; `ddp_sharded` → `fsdp`, `tpu_spawn` → `xla`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._frameworks import lightning_trainer, suggest
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL621", "lightning-unknown-strategy", Severity.ERROR,
            "A strategy name Lightning's registry does not know", flavors=("lightning",),
            framework="lightning", evidence="lightning/pytorch/trainer/connectors/accelerator_connector.py: _AcceleratorConnector._check_config_and_set_final_flags",
            raises="You selected an invalid strategy name: `strategy='...'`. It must be either a string or an instance of `lightning.pytorch.strategies.Strategy`.")

_DDP = ["ddp", "ddp_spawn", "ddp_fork", "ddp_notebook"]
REGISTRY = (["auto", "deepspeed", "deepspeed_stage_1", "deepspeed_stage_2", "deepspeed_stage_2_offload",
             "deepspeed_stage_3", "deepspeed_stage_3_offload", "deepspeed_stage_3_offload_nvme", "fsdp",
             "fsdp_cpu_offload", "xla", "xla_debug", "single_xla", "single_device",
             # registered by the lightning-habana plugin
             "hpu_parallel", "hpu_deepspeed", "hpu_fsdp", "single_hpu"]
            + _DDP + [f"ddp_find_unused_parameters_{b}" for b in ("true", "false")]
            + [f"ddp_{kind}_find_unused_parameters_{b}" for kind in ("spawn", "fork", "notebook") for b in ("true", "false")])
REMOVED = {"ddp_sharded": "fsdp", "ddp_sharded_spawn": "fsdp", "ddp_fully_sharded": "fsdp", "fsdp_native": "fsdp",
           "fsdp_full_shard_offload": "fsdp_cpu_offload", "tpu_spawn": "xla", "tpu_spawn_debug": "xla_debug",
           "horovod": None, "dp": "ddp", "ddp2": "ddp", "ddp_cpu": "ddp", "bagua": None, "colossalai": None,
           "ddp_fully_sharded_spawn": "fsdp", "ipu": None, "ipu_strategy": None}


def check(ctx: LintContext):
    doc = ctx.document
    base = lightning_trainer(doc)
    if base is None:
        return
    node = doc.find(base + ("strategy",))
    if node is None or node.kind != "scalar" or not isinstance(node.value, str) or node.value.startswith("${"):
        return
    name = node.value.strip().lower()
    if name in REGISTRY:
        return
    if name in REMOVED:
        replacement = REMOVED[name]
        msg = f"`strategy: {node.raw}` was removed from Lightning (2.0 and earlier): the Trainer stops" + (
            f"; use `{replacement}`" if replacement else "")
        detail = (f"The Trainer stops with \"You selected an invalid strategy name: `strategy='{node.value}'`\"."
                  + ("" if replacement else " Pick a strategy from the registry (ddp, fsdp, deepspeed, ...)."))
    else:
        replacement = suggest(name, REGISTRY, cutoff=0.75)
        msg = f"`strategy: {node.raw}` is not a registered Lightning strategy: the Trainer stops" + (
            f"; did you mean `{replacement}`?" if replacement else "")
        detail = (f"The Trainer stops with \"You selected an invalid strategy name: `strategy='{node.value}'`\"."
                  + ("" if replacement else " Use auto, ddp, fsdp, deepspeed_stage_2, ..."))
    fixes = [fix(f"write {replacement}", replace_value(doc, node, replacement), safe=False)] if replacement else []
    yield RULE.at(doc, node, msg, fixes, detail=detail)
