"""TL624 lightning-strategy-accelerator-mismatch: a Lightning strategy that the chosen accelerator cannot run.

**What**: a Lightning Trainer whose `strategy` needs GPUs while `accelerator` names something else:
`deepspeed*` with `accelerator: cpu`/`mps`/`tpu`/`hpu`, `fsdp*` with anything but `gpu`/`cuda`, or a DDP-family
or DeepSpeed/FSDP strategy with `accelerator: mps`.

**Why**: `pytorch/trainer/connectors/accelerator_connector.py` and the strategies check the pair:
"The strategy `fsdp` requires a GPU accelerator, but received `accelerator='cpu'`" (`accelerator_connector.py`), "The DeepSpeed
strategy is only supported on CUDA GPUs but `...` is used." (`strategies/deepspeed.py`), "You set
`strategy=...` but strategies from the DDP family are not supported on the MPS accelerator. Either
explicitly set `accelerator='cpu'` or change the strategy." (`_check_config_and_set_final_flags`, where
MPS is available; the FSDP check comes after it but FSDP strings are not of the DDP family, so FSDP on
MPS gets the FSDP message). Lightning 2.6. The run stops at setup.

**Evidence**: `lightning/pytorch/trainer/connectors/accelerator_connector.py:
_AcceleratorConnector._check_config_and_set_final_flags` (stops); verified against Lightning 2.6. First
message: "The strategy `fsdp` requires a GPU accelerator, but received `accelerator='cpu'`.".

**Example**: `accelerator: cpu` + `strategy: deepspeed_stage_2`.

**Fix**: none automatic: use `accelerator: gpu`, or a strategy the device supports (`ddp` on CPU).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules._frameworks import lightning_trainer
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL624", "lightning-strategy-accelerator-mismatch", Severity.ERROR,
            "A strategy the chosen accelerator cannot run (FSDP/DeepSpeed off CUDA, DDP on MPS)", flavors=("lightning",),
            framework="lightning", evidence="lightning/pytorch/trainer/connectors/accelerator_connector.py: "
                                            "_AcceleratorConnector._check_config_and_set_final_flags",
            raises="The strategy `fsdp` requires a GPU accelerator, but received `accelerator='cpu'`.")


CLASSES = {"cpu": "CPUAccelerator", "mps": "MPSAccelerator", "tpu": "XLAAccelerator", "hpu": "HPUAccelerator"}


def _strategy_name(node) -> str | None:
    if node is None:
        return None
    if node.kind == "scalar" and isinstance(node.value, str):
        return node.value.strip().lower()
    if node.kind == "mapping" and node.get("class_path") is not None:
        return str(node.get("class_path").value).rsplit(".", 1)[-1].lower()
    return None


def check(ctx: LintContext):
    doc = ctx.document
    base = lightning_trainer(doc)
    if base is None:
        return
    accel_node = doc.find(tuple(base) + ("accelerator",))
    strategy_node = doc.find(tuple(base) + ("strategy",))
    strategy = _strategy_name(strategy_node)
    if accel_node is None or accel_node.kind != "scalar" or not isinstance(accel_node.value, str) or not strategy \
            or strategy_node is None:
        return
    accel = accel_node.value.strip().lower()
    if accel in ("auto", "gpu", "cuda"):
        return
    class_path = strategy_node.get("class_path") if strategy_node.kind == "mapping" else None
    shown = (strategy_node.raw if strategy_node.kind == "scalar"
             else "{class_path: " + str(class_path.value if class_path is not None else None).rsplit(".", 1)[-1] + "}")
    parallel = any(word in strategy for word in ("ddp", "deepspeed", "fsdp", "modelparallel"))
    message = f"`strategy: {shown}` with `accelerator: {accel_node.raw}`: Lightning stops"
    if "fsdp" in strategy:
        detail = (f"Lightning stops with \"The strategy `fsdp` requires a GPU accelerator, but received "
                  f"`accelerator={accel!r}`\".")
    elif accel == "mps" and parallel:
        message = f"`strategy: {shown}` with `accelerator: mps`: Lightning stops"
        detail = ("Lightning stops with \"You set `strategy=...` but strategies from the DDP family are not supported "
                  "on the MPS accelerator.\"")
    elif "deepspeed" in strategy and accel in CLASSES:
        message = f"`strategy: {shown}` with `accelerator: {accel_node.raw}`: DeepSpeed runs on CUDA GPUs only"
        detail = (f"DeepSpeed runs on CUDA GPUs only and Lightning stops with \"The DeepSpeed strategy is only "
                  f"supported on CUDA GPUs but `{CLASSES[accel]}` is used.\"")
    else:
        return
    yield RULE.at(doc, strategy_node, message,
                  detail=detail + " Use `accelerator: gpu` or a strategy this device supports.")
