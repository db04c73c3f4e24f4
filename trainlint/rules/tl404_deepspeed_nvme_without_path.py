"""TL404 deepspeed-nvme-without-path: NVMe offload at ZeRO stage 3 without `nvme_path`.

**What**: at ZeRO stage 3, `offload_param` or `offload_optimizer` with `"device": "nvme"` and no
`nvme_path` (or null).

**Why**: DeepSpeed needs a directory for the swap files. For parameters, `zero.Init` (run by HF's
`from_pretrained` under ZeRO-3 and by the engine) stops: '"nvme_path" in DeepSpeed Config cannot be
None if remote device is OffloadDeviceEnum.nvme' (Python 3.10 and older print `nvme` instead of
`OffloadDeviceEnum.nvme`). For optimizer states the stage-3 optimizer joins the path with its folder
name and stops with "TypeError: expected str, bytes or os.PathLike object, not NoneType". Below stage
3 nothing stops: `offload_param` is ignored (TL400) and stages 1 and 2 treat an nvme optimizer offload
as CPU offload. Accelerate fills the path only where it is written `"auto"` (from its own
`offload_*_nvme_path`).

**Example**: `"stage": 3, "offload_param": {"device": "nvme"}`.

**Fix**: none: add `"nvme_path": "/local_nvme"` (a fast local disk of yours).

**Evidence**: `deepspeed/runtime/zero/partition_parameters.py` `Init._validate_remote_device` (assert, a stop),
`deepspeed/runtime/zero/stage3.py` `DeepSpeedZeroOptimizer_Stage3._configure_tensor_swapping` (TypeError, a
stop), `deepspeed/runtime/zero/stage_1_and_2.py` `DeepSpeedZeroOptimizer.__init__` (any device but none is CPU
offload); DeepSpeed 0.17.0 to 0.19.8. First message for parameters: '"nvme_path" in DeepSpeed Config cannot be
None if remote device is OffloadDeviceEnum.nvme'.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL404", "deepspeed-nvme-without-path", Severity.ERROR,
            "NVMe offload at ZeRO-3 without nvme_path", flavors=ds.ALL_FLAVORS,
            framework="deepspeed", versions="",
            evidence="deepspeed/runtime/zero/partition_parameters.py: Init._validate_remote_device; deepspeed/runtime/zero/stage3.py: DeepSpeedZeroOptimizer_Stage3._configure_tensor_swapping",
            raises="\"nvme_path\" in DeepSpeed Config cannot be None if remote device is OffloadDeviceEnum.nvme")


def check(ctx: LintContext):
    for cfg in ds.ds_configs(ctx):
        if ds.stage(cfg) != 3:
            continue  # below stage 3 no swap folder is used (TL400: offload_param is ignored)
        for section_name in ("offload_param", "offload_optimizer"):
            device, section = ds.offload_device(cfg, section_name)
            if device != "nvme" or section is None:
                continue
            path = section.get("nvme_path")
            if path is not None and (ds.is_auto(path) or (path.kind == "scalar" and path.value not in (None, ""))):
                continue
            stop = ("'\"nvme_path\" in DeepSpeed Config cannot be None if remote device is OffloadDeviceEnum.nvme'"
                    if section_name == "offload_param" else
                    "\"TypeError: expected str, bytes or os.PathLike object, not NoneType\" (the stage-3 optimizer "
                    "joins nvme_path with its swap folder)")
            yield RULE.at(cfg.doc, section.get("device"),
                          f"{section_name} offloads to nvme but has no nvme_path: DeepSpeed stops",
                          detail=f"DeepSpeed stops with {stop}. Add \"nvme_path\" with a directory on a local NVMe "
                                 "disk.")
