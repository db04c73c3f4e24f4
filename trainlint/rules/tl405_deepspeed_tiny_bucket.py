"""TL405 deepspeed-tiny-bucket: ZeRO communication buckets so small that every step crawls.

**What**: `reduce_bucket_size` or `allgather_bucket_size` below 100,000 elements (default 5e8), and at
stage 3 `stage3_prefetch_bucket_size`, `stage3_max_live_parameters` or `stage3_max_reuse_distance`
below 100,000 (defaults 5e7, 1e9, 1e9; 0 switches prefetching and parameter reuse off).

**Why**: ZeRO reduces gradients and gathers parameters bucket by bucket (`runtime/zero/
stage_1_and_2.py`, `stage3.py`, `partitioned_param_coordinator.py`): a 100-element bucket means one
collective call per 100 gradients, and a prefetch bucket or live-parameter budget of 0 makes every
layer wait for its own all-gather and release it right away. Training runs, but at a fraction of
the throughput (sahil280114/codealpaca's config: `reduce_bucket_size` 100, the three stage-3 knobs 0).

**Example**: `"reduce_bucket_size": 100`.

**Fix** (unsafe: larger buckets use more GPU memory): the DeepSpeed default, or `"auto"` under HF Trainer.

**Evidence**: defaults and `ge=0` bounds in `deepspeed/runtime/zero/config.py` `DeepSpeedZeroConfig`
(reduce_bucket_size and allgather_bucket_size 5e8, stage3_prefetch_bucket_size 5e7, stage3_max_live_parameters
and stage3_max_reuse_distance 1e9); used by `zero/stage_1_and_2.py`, `zero/stage3.py` and
`zero/partitioned_param_coordinator.py` (DeepSpeed 0.17.0 to 0.19.8). Silent: the run is only slower, so this
is never an error.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix
from trainlint.flavors.base import as_float
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL405", "deepspeed-tiny-bucket", Severity.WARNING,
            "ZeRO bucket sizes of 0 or a few elements throttle throughput", flavors=ds.ALL_FLAVORS,
            framework="deepspeed", versions="",
            evidence="deepspeed/runtime/zero/config.py: DeepSpeedZeroConfig (defaults); deepspeed/runtime/zero/stage_1_and_2.py, stage3.py, partitioned_param_coordinator.py",
            raises="")

TINY = 100_000
# key (and alias) -> (default, stages where it matters, HF fills "auto")
KNOBS = {
    "reduce_bucket_size": (500_000_000, (1, 2, 3), True),
    "allgather_bucket_size": (500_000_000, (1, 2), False),
    "stage3_prefetch_bucket_size": (50_000_000, (3,), True),
    "prefetch_bucket_size": (50_000_000, (3,), False),
    "stage3_max_live_parameters": (1_000_000_000, (3,), False),
    "max_live_parameters": (1_000_000_000, (3,), False),
    "stage3_max_reuse_distance": (1_000_000_000, (3,), False),
    "max_reuse_distance": (1_000_000_000, (3,), False),
}
WHAT = {
    "reduce_bucket_size": "gradients are reduced in buckets of {v} elements, one collective call each",
    "allgather_bucket_size": "updated partitions are all-gathered in buckets of {v} elements, one call each",
    "prefetch_bucket_size": "{v} elements of parameters are prefetched, so each layer waits for its own all-gather",
    "max_live_parameters": "at most {v} gathered parameters stay resident, so each is released and re-gathered at once",
    "max_reuse_distance": "parameters reused within {v} elements are still released, so they are gathered again",
}


def check(ctx: LintContext):
    for cfg in ds.ds_configs(ctx):
        stage = ds.stage(cfg)
        zero = cfg.find("zero_optimization")
        if stage is None or stage == 0 or zero is None or zero.kind != "mapping":
            continue
        for entry in zero.entries:
            if entry.key not in KNOBS:
                continue
            default, stages, hf_auto = KNOBS[entry.key]
            value = ds.scalar(entry.value)
            number = as_float(value) if value is not None and not isinstance(value, bool) else None
            if number is None or number >= TINY or stage not in stages:
                continue
            short = entry.key.removeprefix("stage3_")
            fixes = []
            if hf_auto and cfg.host in ds.HF_HOSTS:
                fixes.append(fix(f'set {entry.key} to "auto" (HF sizes it from the model)',
                                 ds.replace_text(cfg.doc, entry.value, "auto"), safe=False))
            fixes.append(fix(f"set {entry.key} to the DeepSpeed default {default:,}",
                             ds.replace_text(cfg.doc, entry.value, default), safe=False))
            default_text = f"{default:.0e}".replace("e+0", "e")
            what = WHAT[short].format(v=f"{number:g}")
            if short in ("max_live_parameters", "max_reuse_distance") and \
                    ds.offload_device(cfg, "offload_param")[0] in ("cpu", "nvme"):
                # With parameters offloaded, a small live budget is a deliberate memory-for-speed trade.
                yield RULE.at(cfg.doc, entry.value,
                              f"{entry.key} is {number:g} (default {default_text}): with offloaded parameters each "
                              "re-gather crosses PCIe again", fixes, severity=Severity.INFO,
                              detail=f"{what[0].upper()}{what[1:]}, and with offloaded parameters each "
                                     "re-gather crosses PCIe again; fine when GPU memory is the goal, slow otherwise "
                                     f"(DeepSpeed's default is {default_text}).")
                continue
            yield RULE.at(cfg.doc, entry.value,
                          f"{entry.key} is {number:g} (default {default_text}): this costs most of the throughput",
                          fixes,
                          detail=f"{what[0].upper()}{what[1:]}, which costs most of the throughput "
                                 f"(DeepSpeed's default is {default_text}). Use the default"
                                 + (' or "auto"' if hf_auto and ds.looks_integrated(cfg) else "") + ".")
