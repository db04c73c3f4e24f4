"""TL600 hf-deepspeed-mismatch: a DeepSpeed value that HF Trainer finds different from TrainingArguments.

**What**: in a DeepSpeed config used by HF Trainer (`deepspeed:` in a TrainingArguments, TRL,
LLaMA-Factory or Axolotl config, a path or an inline mapping), a hard-coded value that differs from
the training argument HF compares it with, counting the arguments' defaults:
`train_micro_batch_size_per_gpu` ↔ `per_device_train_batch_size` (default 8),
`gradient_accumulation_steps` ↔ `gradient_accumulation_steps` (1),
`train_batch_size` ↔ world size × micro × accumulation (when the world size is known),
`gradient_clipping` ↔ `max_grad_norm` (1.0), `optimizer.params.lr` and
`scheduler.params.warmup_max_lr` ↔ `learning_rate` (5e-5), `betas` ↔ `[adam_beta1, adam_beta2]`,
`eps` ↔ `adam_epsilon`, `weight_decay` ↔ `weight_decay` (0.0), `scheduler.params.warmup_num_steps` ↔
`warmup_steps` (0), `fp16.enabled` / `bf16.enabled` ↔ `fp16` / `bf16` (TRL: bf16 unless fp16).

**Why**: `transformers/integrations/deepspeed.py::HfTrainerDeepSpeedConfig.fill_match` records every
`ds_val != hf_val` and stops the run: "Please correct the following DeepSpeed config values that
mismatch TrainingArguments values:\\n- ds train_batch_size=32 vs hf train_batch_size (calculated)=4\\n
The easiest method is to set these DeepSpeed config values to 'auto'." (trlx#376, hendrycks/apps#9).

**Example**: `"train_micro_batch_size_per_gpu": 4` with `per_device_train_batch_size` unset (8).

The training arguments are the run's: a launch's command-line argument where the script's parser lets it
override the config (`--gradient_accumulation_steps 8` after TrlParser's `--config`), named with its script line;
a DeepSpeed file a launch passes as `--deepspeed X` to an HF Trainer script that reads the command line alone
(`deepspeed run_glue.py --deepspeed ds.json --per_device_train_batch_size 64`) is compared with those arguments and
the TrainingArguments defaults. Keys the DeepSpeed autotuner writes (`deepspeed --autotuning`) are not compared.

**Fix** (safe): set the DeepSpeed value to `"auto"` so HF fills it from the training arguments.

**Evidence**: `transformers/integrations/deepspeed.py` `HfTrainerDeepSpeedConfig.fill_match`,
`trainer_config_process` and `trainer_config_finalize` (transformers 5.0 to 5.24; the defaults from
`training_args.py` `TrainingArguments`): "Please correct the following DeepSpeed config values that mismatch
TrainingArguments values: - ds train_micro_batch_size_per_gpu=4 vs hf per_device_train_batch_size=8 The easiest
method is to set these DeepSpeed config values to 'auto'." (ValueError from `deepspeed_init`, a stop before
DeepSpeed starts). transformers 4.x labelled fp16 "fp16|fp16_full_eval+fp16_backend(amp)" and also compared
`amp.enabled` / `amp.opt_level`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix
from trainlint.flavors.base import as_bool, as_float
from trainlint.rules import dscommon as ds
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL600", "hf-deepspeed-mismatch", Severity.ERROR,
            "A DeepSpeed value that differs from the HF TrainingArguments value it must match",
            flavors=("huggingface", "axolotl", "deepspeed"),
            framework="transformers", versions="",
            evidence="transformers/integrations/deepspeed.py: HfTrainerDeepSpeedConfig.fill_match, trainer_config_finalize",
            raises="Please correct the following DeepSpeed config values that mismatch TrainingArguments values: - ds train_micro_batch_size_per_gpu=4 vs hf per_device_train_batch_size=8")

COMPARED = [
    (("train_micro_batch_size_per_gpu",), "micro"),
    (("gradient_accumulation_steps",), "gas"),
    (("gradient_clipping",), "clip"),
    (("optimizer", "params", "lr"), "lr"),
    (("optimizer", "params", "betas"), "betas"),
    (("optimizer", "params", "eps"), "eps"),
    (("optimizer", "params", "weight_decay"), "wd"),
    (("scheduler", "params", "warmup_max_lr"), "lr"),
    (("scheduler", "params", "warmup_num_steps"), "warmup"),
    (("fp16", "enabled"), "fp16"),
    (("bf16", "enabled"), "bf16"),
]

# How transformers names the argument in its mismatch line (the third argument of fill_match).
# transformers 5.0-5.24 label fp16 "fp16|fp16_full_eval" (4.x: "fp16|fp16_full_eval+fp16_backend(amp)").
HF_KEYS = {"betas": "adam_beta1+adam_beta2", "fp16": "fp16|fp16_full_eval", "bf16": "bf16|bf16_full_eval"}


def check(ctx: LintContext):
    for cfg in ds.ds_configs(ctx):
        if cfg.host not in ds.HF_HOSTS or cfg.root is None:
            continue
        if cfg.host_doc is not None:
            auto_find = cfg.host_doc.find(("auto_find_batch_size",))
            skip_micro = auto_find is not None and as_bool(auto_find.value)
        else:  # a DeepSpeed file the launch passes as `--deepspeed X`: the command line is the TrainingArguments
            arg = cfg.launch.argument("auto_find_batch_size") if cfg.launch is not None else None
            skip_micro = arg is not None and (arg.value is None or as_bool(arg.value) is not False)
        for path, what in COMPARED:
            if what == "micro" and skip_micro:
                continue
            if cfg.autotuner_writes(path):
                continue  # `deepspeed --autotuning`: each experiment sets it, and the matching script argument
            node = cfg.find(*path)
            if node is None or ds.is_auto(node):
                continue
            ds_value = _read(node, what)
            if ds_value is None:
                continue
            if what == "betas":
                b1, b2 = ds.host_value(cfg, "beta1"), ds.host_value(cfg, "beta2")
                if b1 is None or b2 is None:
                    continue
                hf = ds.HostValue([b1.value, b2.value], b1.node or b2.node, "adam_beta1+adam_beta2",
                                  "the TrainingArguments defaults")
            else:
                found = ds.host_value(cfg, what)
                if found is None:
                    continue
                hf = found
            if _equal(ds_value, hf.value):
                continue
            label = HF_KEYS.get(what, hf.label)
            if what == "fp16" and ctx.version_in("transformers", "<5") is True:
                label = "fp16|fp16_full_eval+fp16_backend(amp)"
            yield _finding(cfg, node, path, ds_value, hf, label)
        yield from _train_batch(cfg, ctx)


def _read(node, what):
    if what == "betas":
        if node.kind != "sequence" or len(node.items) != 2:
            return None
        values = [as_float(i.value) if i.kind == "scalar" else None for i in node.items]
        return None if None in values else values
    if node.kind != "scalar":
        return None
    if what in ("fp16", "bf16"):
        return as_bool(node.value)
    return as_float(node.value)


def _equal(a, b) -> bool:
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and \
            all(float(x) == float(y) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool):
        return bool(a) == bool(b)
    return float(a) == float(b)


def _finding(cfg, node, path, ds_value, hf: ds.HostValue, hf_label: str):
    key = ds.key_name(path)
    line = f"- ds {key}={_py(ds_value, node)} vs hf {hf_label}={hf.value}"
    described = hf.describe(cfg.host_doc)
    return RULE.at(cfg.doc, node,
                   f"`{key}` is {ds.fmt(ds_value)} but {hf.key} is {ds.fmt(hf.value)}: HF Trainer stops; set it to "
                   "\"auto\"",
                   [fix(f'set {key} to "auto"', ds.replace_text(cfg.doc, node, "auto"))],
                   detail=f"{described}: HF Trainer stops with \"Please correct the "
                          f"following DeepSpeed config values that mismatch TrainingArguments values: {line}\". "
                          "Set it to \"auto\" so HF fills it.")


def _py(value, node):
    """How HF prints the DeepSpeed value in its mismatch line (Python's str of what the loader read)."""
    if node.kind == "scalar" and not isinstance(node.value, str):
        return str(node.value)
    return str(value)


def _train_batch(cfg, ctx):
    if cfg.autotuner_writes(("train_batch_size",)):
        return
    node = cfg.find("train_batch_size")
    tb = ds.ds_int(node)
    world = ds.known_world(ctx.plan)
    if tb is None or world is None:
        return
    micro, gas = ds.host_value(cfg, "micro"), ds.host_value(cfg, "gas")
    if micro is None or gas is None:
        return
    expected = world * micro.value * gas.value
    if tb == expected:
        return
    yield RULE.at(cfg.doc, node,
                  f"`train_batch_size` is {tb} but HF computes {world} × {micro.value} × {gas.value} = {expected}: "
                  "HF Trainer stops; set it to \"auto\"",
                  [fix('set train_batch_size to "auto"', ds.replace_text(cfg.doc, node, "auto"))],
                  detail=f"HF computes world size {world} × per_device_train_batch_size {micro.value} × "
                         f"gradient_accumulation_steps {gas.value} = {expected}: HF Trainer stops with \"Please correct "
                         f"the following DeepSpeed config values that mismatch TrainingArguments values: - ds "
                         f"train_batch_size={tb} vs hf train_batch_size (calculated)={expected}\". Set it to \"auto\".")
