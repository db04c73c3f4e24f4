"""TL601 hf-optimizer-replaced-by-offload: HF's `optim` silently swapped for DeepSpeedCPUAdam.

**What**: an HF `optim` (Axolotl `optimizer`) such as `adamw_bnb_8bit`, `paged_adamw_8bit`,
`adafactor`, `lion_8bit` or `sgd`, with a linked DeepSpeed config that offloads the optimizer
(`offload_optimizer.device` cpu/nvme, ZeRO stage ≥ 1) and has no `optimizer` section.

**Why**: with optimizer offload and `zero_force_ds_cpu_optimizer` true (the default), Accelerate's
`accelerator.py::_prepare_deepspeed` replaces the torch optimizer by `map_pytorch_optim_to_deepspeed()`
→ `DeepSpeedCPUAdam` (Adam/L2 mode unless it was a 32-bit AdamW), without a message: 8-bit, paged or
factored states are not used, and fp32 Adam states (~12 bytes per parameter) live in host RAM.
Raw DeepSpeed would instead stop with "You are using ZeRO-Offload with a client provided optimizer
... set <"zero_force_ds_cpu_optimizer": false>".

**Example**: `optim: paged_adamw_8bit` + `deepspeed: ds_z3_offload.json`.

**Fix**: none; drop the offload, choose `adamw_torch`, or set `"zero_force_ds_cpu_optimizer": false`
in the DeepSpeed config to keep your optimizer (slow on CPU-resident states).

**Evidence**: `accelerate/accelerator.py` `Accelerator._prepare_deepspeed` (the swap when
`offload_optimizer.device != "none"` and `zero_force_ds_cpu_optimizer` is not false) and `utils/deepspeed.py`
`map_pytorch_optim_to_deepspeed` (DeepSpeedCPUAdam with `adamw_mode` only for torch AdamW or a 32-bit bnb AdamW,
DeepSpeedCPUAdagrad for Adagrad, DeepSpeedCPULion for a 32-bit bnb Lion), Accelerate 1.12 to 1.15;
`transformers/integrations/deepspeed.py` `deepspeed_optim_sched` passes HF's optimizer when the DeepSpeed config has
no `optimizer` (transformers 5.0 to 5.24). Silent apart from an info line ("Detected ZeRO Offload and
non-DeepSpeed optimizers: This combination should work as long as the custom optimizer has both CPU and GPU
implementation (except LAMB)").
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.flavors.base import as_bool, as_str
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL601", "hf-optimizer-replaced-by-offload", Severity.WARNING,
            "HF optim silently replaced by DeepSpeedCPUAdam under optimizer offload", flavors=("huggingface", "axolotl"),
            framework="accelerate", versions="",
            evidence="accelerate/accelerator.py: Accelerator._prepare_deepspeed; accelerate/utils/deepspeed.py: map_pytorch_optim_to_deepspeed",
            raises="")

# HF optim names whose optimizer Accelerate maps to the same algorithm on the CPU: torch AdamW and a 32-bit bnb
# AdamW (HF builds paged_adamw_32bit as bnb AdamW(optim_bits=32)) -> DeepSpeedCPUAdam in AdamW mode; torch Adagrad
# -> DeepSpeedCPUAdagrad; a 32-bit bnb Lion (lion_32bit, paged_lion_32bit) -> DeepSpeedCPULion.
EQUIVALENT = {"adamw_torch", "adamw_torch_fused", "adamw_hf", "adamw_apex_fused", "adamw_torch_xla",
              "adamw_torch_npu_fused", "adamw_anyprecision", "adam", "adamw", "adagrad", "adamw_bnb_32bit",
              "paged_adamw_32bit", "lion_32bit", "paged_lion_32bit"}


def optim_node(ctx: LintContext):
    key = "optimizer" if ctx.flavor == "axolotl" else "optim"
    node = ctx.document.find((key,))
    return node if node is not None and node.kind == "scalar" and as_str(node.value) else None


def check(ctx: LintContext):
    node = optim_node(ctx)
    if node is None:
        return
    name = str(node.value).strip()
    if name.lower() in EQUIVALENT:
        return
    for cfg in ds.ds_configs(ctx):
        device, _ = ds.offload_device(cfg, "offload_optimizer")
        stage = ds.stage(cfg)
        if device not in ("cpu", "nvme") or not stage or cfg.find("optimizer") is not None:
            continue
        force = cfg.find("zero_force_ds_cpu_optimizer")
        if force is not None and as_bool(force.value) is False:
            continue
        yield RULE.at(ctx.document, node,
                      f"{node.key_path[-1]}: {name} is not used: with optimizer offload to {device}, Accelerate swaps "
                      "in DeepSpeedCPUAdam",
                      detail=f"{cfg.name} offloads the optimizer to {device} and defines no optimizer, so Accelerate "
                             "silently swaps in DeepSpeedCPUAdam with fp32 states (~12 bytes per parameter of host "
                             "RAM). Drop the offload, use adamw_torch, or set \"zero_force_ds_cpu_optimizer\": false "
                             "to keep it.")
        return
