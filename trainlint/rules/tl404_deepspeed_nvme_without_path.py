"""TL404 deepspeed-nvme-without-path: NVMe offload without `nvme_path`.

**What**: `offload_param` or `offload_optimizer` with `"device": "nvme"` and no `nvme_path` (or null).

**Why**: DeepSpeed needs a directory for the swap files and stops:
'"nvme_path" in DeepSpeed Config cannot be None if remote device is nvme'
(`runtime/zero/partition_parameters.py`; the optimizer swapper fails the same way). Accelerate
fills the path only where it is written `"auto"` and its own config names one.

**Example**: `"offload_param": {"device": "nvme"}`.

**Fix**: none: add `"nvme_path": "/local_nvme"` (a fast local disk of yours).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL404", "deepspeed-nvme-without-path", Severity.ERROR,
            "NVMe offload without nvme_path", flavors=ds.ALL_FLAVORS)


def check(ctx: LintContext):
    for cfg in ds.ds_configs(ctx):
        for section_name in ("offload_param", "offload_optimizer"):
            device, section = ds.offload_device(cfg, section_name)
            if device != "nvme":
                continue
            path = section.get("nvme_path")
            if path is not None and (ds.is_auto(path) or (path.kind == "scalar" and path.value not in (None, ""))):
                continue
            yield RULE.at(cfg.doc, section.get("device"),
                          f"{section_name} offloads to nvme but has no nvme_path: DeepSpeed stops with '\"nvme_path\" in "
                          "DeepSpeed Config cannot be None if remote device is nvme'. Add \"nvme_path\" with a directory "
                          "on a local NVMe disk.")
