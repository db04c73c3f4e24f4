"""TL503 deepspeed-unfilled-auto: an `"auto"` value that no integration fills.

**What**: `"auto"` in a DeepSpeed key that neither HF Trainer nor Accelerate replaces (their fill
lists: batch keys, `gradient_clipping`, optimizer `lr`/`betas`/`eps`/`weight_decay`, scheduler warmup
and step counts, `fp16`/`bf16` `enabled`, the three ZeRO bucket sizes, Accelerate's ZeRO stage and
offload devices), and under Lightning any `"auto"` (Lightning fills missing keys, never `"auto"`).
A DeepSpeed file on its own may hold `"auto"` in the filled keys: it is written for an integration. A file named
by an accelerate config's `deepspeed_config_file` counts as filled by HF Trainer too when the launch runs an HF
Trainer script (its parser is HfArgumentParser, TRL, LLaMA-Factory, ...: `Trainer.propagate_args_to_deepspeed`
fills `optimizer.params.betas` / `eps` there, which plain Accelerate does not; BELLE's reward-model run).

**Why**: inside pydantic sections DeepSpeed drops `"auto"` (`DeepSpeedConfigModel.__init__`: `data =
{k: v for k, v in data.items() if (v != "auto" or k == "replace_method")}`), so the value silently
becomes the default; elsewhere the string `"auto"` reaches the code that uses the value (arithmetic
on the batch keys, `steps_per_print`, the optimizer constructor) and the run crashes. Accelerate
refuses some outright: "`{ds_key_long}` not found in kwargs. Please specify `{ds_key_long}` without
`auto` (set to correct value) in the DeepSpeed config file or pass it in kwargs."

**Example**: `"fp16": {"enabled": "auto", "auto_cast": "auto"}` (`auto_cast` is never filled:
it becomes false; sahil280114/codealpaca).

**Fix**: inside pydantic sections, write the default DeepSpeed falls back to (safe: same behaviour);
elsewhere none: write the value.

**Evidence**: `deepspeed/runtime/config_utils.py` `DeepSpeedConfigModel.__init__` drops "auto" (nested sections
too: pydantic calls the custom `__init__`), DeepSpeed 0.17.0 to 0.19.8: silent there;
`transformers/integrations/deepspeed.py` `HfTrainerDeepSpeedConfig.trainer_config_process` /
`trainer_config_finalize` (transformers 5.0 to 5.24; 4.x also filled `amp.enabled` / `amp.opt_level`) and
`accelerate/utils/dataclasses.py` `DeepSpeedPlugin.fill_match` (Accelerate 1.12 to 1.15) fill the listed keys.
First message outside pydantic sections under Accelerate: "`{key}` not found in kwargs. Please specify `{key}`
without `auto` (set to correct value) in the DeepSpeed config file or pass it in kwargs." (ValueError, a stop).
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule
from trainlint.catalog.schemas import describe

RULE = Rule("TL503", "deepspeed-unfilled-auto", Severity.WARNING,
            '"auto" in a DeepSpeed key that no integration fills', flavors=ds.ALL_FLAVORS,
            framework="deepspeed", versions="",
            evidence="deepspeed/runtime/config_utils.py: DeepSpeedConfigModel.__init__; transformers/integrations/deepspeed.py: HfTrainerDeepSpeedConfig.trainer_config_process; accelerate/utils/dataclasses.py: DeepSpeedPlugin.fill_match",
            raises="`{key}` not found in kwargs. Please specify `{key}` without `auto` (set to correct value) in the DeepSpeed config file or pass it in kwargs.")

ZERO3_ONLY_FILLS = {("zero_optimization", "stage3_prefetch_bucket_size"),
                    ("zero_optimization", "stage3_param_persistence_threshold")}


def check(ctx: LintContext):
    for cfg in ds.ds_configs(ctx):
        root = cfg.root
        if root is None:
            continue
        filled = ds.filled_for(ctx, cfg)
        hf_run = filled is not cfg.filled
        stage = ds.stage(cfg)
        for node in root.walk():
            if not ds.is_auto(node) or not node.key_path or not isinstance(node.key_path[-1], str) or \
                    node.key_path[-1] == "replace_method":
                continue
            path = tuple(node.key_path)
            norm = ds.normalized(path)
            if norm in filled:
                continue
            if norm in ZERO3_ONLY_FILLS and stage is not None and stage < 3:
                continue  # TL402 reports stage-3 keys below stage 3
            key = ds.key_name(path)
            who = (f"{ds.HOST_NAMES[cfg.host]} does not fill it" if cfg.host and not hf_run
                   else "neither HF Trainer nor Accelerate fills it")
            if ds.in_pydantic_section(path):
                info = describe("deepspeed", path)
                default = info.default if info is not None and info.has_default else None
                fixes = []
                if default is not None and not isinstance(default, (dict, list)):
                    fixes.append(fix(f"write the default {ds.fmt(default)}", ds.replace_text(cfg.doc, node, default)))
                shown = ds.fmt(default) if default is not None else "its default"
                yield RULE.at(cfg.doc, node,
                              f"`{key}` is \"auto\" but nothing fills it: it silently becomes {shown}", fixes,
                              detail=f"{who[0].upper()}{who[1:]}: DeepSpeed drops \"auto\" in this section, so it "
                                     f"silently becomes {shown}. Write the value you want.")
            else:
                yield RULE.at(cfg.doc, node,
                              f"`{key}` is \"auto\" but nothing fills it: DeepSpeed fails where it uses the value",
                              severity=Severity.ERROR,
                              detail=f"{who[0].upper()}{who[1:]}: DeepSpeed receives the string \"auto\" and fails "
                                     "where it uses the value. Write the value you want.")
