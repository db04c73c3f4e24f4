"""TL505 deepspeed-torch-scheduler: a torch LR scheduler named in `scheduler.type` while DeepSpeed wraps the optimizer.

**What**: a DeepSpeed config whose `scheduler.type` is not one of DeepSpeed's own schedules (`LRRangeTest`,
`OneCycle`, `WarmupLR`, `WarmupDecayLR`, `WarmupCosineLR`) but a `torch.optim.lr_scheduler`
class (`CosineAnnealingLR`, `StepLR`, `LinearLR`, `OneCycleLR`, ...), with ZeRO (stage 1-3) or fp16/bf16 on.

**Why**: `DeepSpeedEngine._scheduler_from_config(self.optimizer)` looks the name up in `deepspeed.runtime.lr_schedules`
and, failing that, in `torch.optim.lr_scheduler`, then builds it on `self.optimizer`: with ZeRO or fp16/bf16 that is
DeepSpeed's wrapper (`DeepSpeedZeroOptimizer`, `DeepSpeedZeroOptimizer_Stage3`, `BF16_Optimizer`, `FP16_Optimizer`),
not a `torch.optim.Optimizer`, and torch's `LRScheduler.__init__` raises "TypeError: DeepSpeedZeroOptimizer is not an
Optimizer" during `deepspeed.initialize` (DeepSpeed#6992). Without ZeRO and mixed precision the torch scheduler
works. A name that is neither stops with "DeepSpeed does not recognize LR scheduler ...".

**Evidence**: `deepspeed/runtime/engine.py: DeepSpeedEngine._scheduler_from_config` (called by
`_configure_lr_scheduler` with `self.optimizer`); torch `torch/optim/lr_scheduler.py: LRScheduler.__init__`
(`f"{type(optimizer).__name__} is not an Optimizer"`). DeepSpeed 0.12 - 0.19.8.

**Example**: `"scheduler": {"type": "CosineAnnealingLR", "params": {"T_max": 1000}}` with `"zero_optimization":
{"stage": 2}` → `"scheduler": {"type": "WarmupCosineLR", "params": {"total_num_steps": 1000}}`.

**Fix**: none automatic (the parameters differ): use DeepSpeed's `WarmupCosineLR` / `WarmupDecayLR` / `WarmupLR`, or
drop the `scheduler` section and create the torch scheduler in code on `engine.optimizer`'s inner optimizer / let the
HF Trainer build it (`lr_scheduler_type`).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL505", "deepspeed-torch-scheduler", Severity.ERROR,
            "A torch LR scheduler in DeepSpeed's scheduler.type with ZeRO or fp16/bf16", flavors=ds.ALL_FLAVORS,
            framework="deepspeed", versions="",
            evidence="deepspeed/runtime/engine.py: DeepSpeedEngine._scheduler_from_config",
            raises="TypeError: DeepSpeedZeroOptimizer is not an Optimizer")

DEEPSPEED_SCHEDULES = {"LRRangeTest", "OneCycle", "WarmupLR", "WarmupDecayLR", "WarmupCosineLR"}
TORCH_SCHEDULERS = {"LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
                    "SequentialLR", "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau", "CyclicLR",
                    "CosineAnnealingWarmRestarts", "OneCycleLR", "PolynomialLR"}
SUGGEST = {"CosineAnnealingLR": "WarmupCosineLR", "CosineAnnealingWarmRestarts": "WarmupCosineLR",
           "LinearLR": "WarmupDecayLR", "OneCycleLR": "OneCycle", "CyclicLR": "OneCycle", "ConstantLR": "WarmupLR"}


def _enabled(cfg, section: str) -> bool | None:
    node = cfg.find(section, "enabled")
    if node is None:
        return False if cfg.find(section) is None else False
    if ds.is_auto(node):
        return None
    value = ds.scalar(node)
    return value is True or (isinstance(value, str) and value.lower() == "true")


def check(ctx: LintContext):
    for cfg in ds.ds_configs(ctx):
        node = cfg.find("scheduler", "type")
        name = ds.scalar(node)
        if not isinstance(name, str) or name in DEEPSPEED_SCHEDULES or name not in TORCH_SCHEDULERS:
            continue
        stage = ds.stage(cfg)
        wrapped = [w for w, on in (("ZeRO stage " + str(stage), bool(stage)), ("fp16", _enabled(cfg, "fp16")),
                                   ("bf16", _enabled(cfg, "bf16") or _enabled(cfg, "bfloat16"))) if on]
        unknown = [s for s in ("fp16", "bf16") if _enabled(cfg, s) is None]
        if not wrapped and not unknown:
            continue  # a plain torch optimizer: the torch scheduler works
        wrapper = ("DeepSpeedZeroOptimizer_Stage3" if stage == 3 else "DeepSpeedZeroOptimizer" if stage else
                   "BF16_Optimizer" if "bf16" in wrapped else "FP16_Optimizer")
        assumptions = []
        if not wrapped:
            assumptions.append(f"{' and '.join(unknown)} `enabled` is \"auto\": this holds when the integration turns "
                               "it on (HF Trainer / Accelerate with bf16 or fp16)")
        better = SUGGEST.get(name, "WarmupCosineLR")
        yield RULE.at(cfg.doc, node,
                      f"`scheduler.type: {name}` is a torch scheduler: deepspeed.initialize stops; use `{better}`",
                      assumptions=assumptions,
                      detail=f"DeepSpeed builds it on its own optimizer wrapper ({', '.join(wrapped) or 'mixed precision'}), "
                             f"and torch stops with \"TypeError: {wrapper} is not an Optimizer\" in "
                             f"deepspeed.initialize. Use a DeepSpeed schedule (`{better}`) or build the scheduler in "
                             "code.")
