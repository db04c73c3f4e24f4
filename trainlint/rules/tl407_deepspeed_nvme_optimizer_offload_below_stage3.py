"""TL407 deepspeed-nvme-optimizer-offload-below-stage3: `offload_optimizer.device: nvme` at ZeRO stage 1 or 2 offloads
to CPU RAM instead.

**What**: `zero_optimization.offload_optimizer.device` is `nvme` while `stage` is 1 or 2.

**Why**: the stage 1/2 optimizer only asks whether the device is "none": any other device, NVMe included, turns on
ZeRO-Offload to CPU (`self.cpu_offload = True`), and the optimizer states and fp32 master weights live in pinned
host RAM. NVMe offload (ZeRO-Infinity) exists only in the stage-3 optimizer. DeepSpeed says nothing (its log has
"CPU Offload: True"), so a node sized for NVMe-backed states runs out of host memory, and `nvme_path` is unused.
(Stage 0 with any optimizer offload is TL401's.)

**Evidence**: `deepspeed/runtime/zero/stage_1_and_2.py` `DeepSpeedZeroOptimizer.__init__`
(`offload_optimizer_config.device != OffloadDeviceEnum.none` → `cpu_offload`); NVMe swapping is set up only in
`deepspeed/runtime/zero/stage3.py` (`_configure_tensor_swapping`), DeepSpeed 0.6 (the `offload_optimizer` section) to
0.19.8. Silent.

**Example**: `"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "nvme", "nvme_path": "/local_nvme"}}`.

**Fix**: `"device": "cpu"` (safe: what DeepSpeed does anyway, now written down), or `"stage": 3` to really offload
to NVMe (unsafe: it changes the sharding).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL407", "deepspeed-nvme-optimizer-offload-below-stage3", Severity.WARNING,
            "NVMe optimizer offload at ZeRO stage 1 or 2 offloads to CPU RAM", flavors=ds.ALL_FLAVORS,
            framework="deepspeed", versions="",
            evidence="deepspeed/runtime/zero/stage_1_and_2.py: DeepSpeedZeroOptimizer.__init__",
            raises="")


def check(ctx: LintContext):
    for cfg in ds.ds_configs(ctx):
        stage = ds.stage(cfg)
        if stage not in (1, 2):
            continue
        device, section = ds.offload_device(cfg, "offload_optimizer")
        node = section.get("device") if section is not None else None
        if device != "nvme" or node is None:
            continue
        yield RULE.at(cfg.doc, node,
                      f"offload_optimizer device nvme at ZeRO stage {stage} offloads to CPU RAM, not NVMe; nvme_path "
                      "is unused",
                      [fix('write "cpu" (what DeepSpeed does at this stage)',
                           replace_value(cfg.doc, node, "cpu"), safe=True)],
                      detail="The stage 1/2 optimizer only knows ZeRO-Offload to the CPU, so the optimizer states and "
                             "fp32 master weights take pinned host memory and nvme_path is unused. Write \"cpu\", or "
                             "use \"stage\": 3 for NVMe offload.")
