"""TL401 deepspeed-offload-optimizer-without-zero: optimizer offload with ZeRO off.

**What**: `zero_optimization.offload_optimizer` with `device` `cpu` or `nvme` while `stage` is 0
(or missing).

**Why**: DeepSpeed decides whether to use a CPU optimizer from `offload_optimizer.device` alone, not
from the stage, but only the ZeRO optimizers move the optimizer states to the CPU. With ZeRO off the
run therefore stops, in one of two places:

- the config's `optimizer` is Adam/AdamW (without `torch_adam`), Adagrad or Lion, or the host is HF
  Trainer, Axolotl or Accelerate (Accelerate swaps the training script's optimizer for
  `DeepSpeedCPUAdam` whenever the device is not `none`): DeepSpeed builds the CPU optimizer over
  parameters that stay on the GPU, and the first step fails with "CPUAdam param is on cuda:0 and must
  be 'cpu', make sure you enabled 'offload_optimizer': 'cpu' in your ZeRO config.";
- raw DeepSpeed or Lightning with the script's own optimizer: `deepspeed.initialize` refuses it:
  "You are using ZeRO-Offload with a client provided optimizer (...) which in most cases will yield
  poor performance. ...".

Only with another optimizer type, `torch_adam: true` or `"zero_force_ds_cpu_optimizer": false` does
the run start, and then the offload does nothing: the fp32 optimizer states stay on the GPU (a
warning then).

**Example**: `"zero_optimization": {"offload_optimizer": {"device": "cpu"}}` (no `stage`).

**Fix** (unsafe): set `"stage"` to 1 or higher, or remove `offload_optimizer`.

**Evidence**: `deepspeed/runtime/engine.py` `DeepSpeedEngine.zero_use_cpu_optimizer` (device only),
`_configure_basic_optimizer` and `_configure_optimizer`, `deepspeed/ops/adam/cpu_adam.py`
`DeepSpeedCPUAdam.step` (DeepSpeed 0.17.0 to 0.19.8); `accelerate/accelerator.py`
`Accelerator._prepare_deepspeed` → `map_pytorch_optim_to_deepspeed` (Accelerate 1.12 to 1.15). First message:
"CPUAdam param is on cuda:0 and must be 'cpu', make sure you enabled 'offload_optimizer': 'cpu' in your ZeRO
config." (assert at the first step) or "You are using ZeRO-Offload with a client provided optimizer ..."
(`ZeRORuntimeException` at start-up); both stops.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix
from trainlint.flavors.base import as_bool, as_str
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL401", "deepspeed-offload-optimizer-without-zero", Severity.ERROR,
            "offload_optimizer with ZeRO stage 0 stops the run (or does nothing)", flavors=ds.ALL_FLAVORS,
            framework="deepspeed", versions="",
            evidence="deepspeed/runtime/engine.py: DeepSpeedEngine.zero_use_cpu_optimizer, _configure_basic_optimizer, _configure_optimizer; deepspeed/ops/adam/cpu_adam.py: DeepSpeedCPUAdam.step",
            raises="CPUAdam param is on cuda:0 and must be 'cpu', make sure you enabled 'offload_optimizer': 'cpu' in your ZeRO config.")

# DeepSpeed optimizer types that get a CPU implementation when offload_optimizer names a device.
CPU_VARIANTS = {"adam": "CPUAdam", "adamw": "CPUAdam", "adagrad": "CPUAdagrad", "lion": "CPULion"}
CPU_ASSERT = ("{cls} param is on cuda:0 and must be 'cpu', make sure you enabled 'offload_optimizer': 'cpu' in your "
              "ZeRO config.")
CLIENT_REFUSED = "You are using ZeRO-Offload with a client provided optimizer (...) which in most cases will yield poor performance."


def outcome(cfg: ds.DSConfig) -> tuple[str | None, str]:
    """(first stop or None, what happens) for offload_optimizer with ZeRO off."""
    optimizer = cfg.find("optimizer")
    force = cfg.find("zero_force_ds_cpu_optimizer")
    forced = not (force is not None and force.kind == "scalar" and as_bool(force.value) is False)
    if optimizer is not None and optimizer.kind == "mapping":
        kind_node = optimizer.get("type")
        kind = (as_str(kind_node.value) or "").lower() if kind_node is not None and kind_node.kind == "scalar" else ""
        torch_adam = cfg.find("optimizer", "params", "torch_adam")
        if kind in CPU_VARIANTS and not (kind in ("adam", "adamw") and torch_adam is not None
                                         and as_bool(torch_adam.value) is True):
            cls = CPU_VARIANTS[kind]
            return (CPU_ASSERT.format(cls=cls),
                    f"DeepSpeed builds DeepSpeed{cls} for the `{kind_node.value if kind_node is not None else '?'}` optimizer over parameters that stay "
                    "on the GPU, and the first optimizer step fails")
        return None, f"the `{kind_node.value if kind_node is not None else '?'}` optimizer has no CPU version, so it runs on the GPU"
    if not forced:
        return None, "with zero_force_ds_cpu_optimizer false the script's own optimizer runs on the GPU"
    if cfg.host in ds.FILLING_HOSTS or (cfg.host is None and ds.looks_integrated(cfg)):
        return (CPU_ASSERT.format(cls="CPUAdam"),
                "Accelerate (HF Trainer runs inside it) swaps the optimizer for DeepSpeedCPUAdam over parameters that "
                "stay on the GPU, and the first optimizer step fails")
    return (CLIENT_REFUSED,
            "DeepSpeed refuses the training script's own optimizer at deepspeed.initialize (a DeepSpeedCPUAdam passed "
            "instead fails at the first step)")


def check(ctx: LintContext):
    for cfg in ds.ds_configs(ctx):
        if ds.stage(cfg) != 0:
            continue
        device, section = ds.offload_device(cfg, "offload_optimizer")
        if device not in ("cpu", "nvme"):
            continue
        zero = cfg.find("zero_optimization")
        entry = zero.entry("offload_optimizer") if zero is not None else None
        if zero is None or entry is None:
            continue  # offload_device found the section: not reached
        stage_node = zero.get("stage")
        fixes = []
        if stage_node is not None and stage_node.kind == "scalar":
            fixes.append(fix("set ZeRO stage 2", ds.replace_text(cfg.doc, stage_node, 2), safe=False))
        fixes.append(fix("remove offload_optimizer (ZeRO is off)", delete_entry(cfg.doc, zero, entry), safe=False))
        stop, what = outcome(cfg)
        if stop is not None:
            headline = ("the first optimizer step fails" if "first optimizer step" in what
                        else "DeepSpeed refuses the script's optimizer at deepspeed.initialize")
            yield RULE.at(cfg.doc, entry.key_span,
                          f"offload_optimizer (device {device}) with ZeRO stage 0: {headline}", fixes,
                          detail=f"{what[0].upper()}{what[1:]} (\"{stop}\"). Only the ZeRO optimizers move optimizer "
                                 "states off the GPU: set \"stage\" to 1, 2 or 3, or remove it.")
        else:
            yield RULE.at(cfg.doc, entry.key_span,
                          f"offload_optimizer (device {device}) has no effect with ZeRO stage 0: the fp32 optimizer "
                          "states stay on the GPU",
                          fixes, severity=Severity.WARNING,
                          detail=f"{what[0].upper()}{what[1:]}, and the fp32 optimizer states stay on the GPU. Set "
                                 "\"stage\" to 1, 2 or 3, or remove it.")
