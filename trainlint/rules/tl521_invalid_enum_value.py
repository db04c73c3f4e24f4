"""TL521 invalid-enum-value: a value outside the set the framework accepts.

**What**: a value that is not one of the allowed choices of its key: TrainingArguments `optim`,
`save_strategy`, `eval_strategy`, `lr_scheduler_type`, `report_to`, ... (transformers' ExplicitEnums),
Lightning `trainer.accelerator` and `gradient_clip_algorithm`, Accelerate `distributed_type`,
`mixed_precision`, `deepspeed_config.zero_stage`, offload devices, `fsdp_config.fsdp_sharding_strategy`,
`fsdp_auto_wrap_policy`, ... Allowed values come from the JSON Schemas (schemas/) plus the plugin
values listed in accelerate's `utils/dataclasses.py`.

**Why**: enum conversion fails at startup: transformers' `ExplicitEnum._missing_` (`utils/generic.py`,
called from `TrainingArguments.__post_init__`) "step is not a valid SaveStrategy, please select one of
['no', 'steps', 'epoch', 'best']"; Accelerate's `ClusterConfig.__post_init__` builds
`DistributedType(...)` (a ValueError for an unknown name), `prepare_simple_launcher_cmd_env` says
"Unknown mixed_precision mode: {m}. Choose between [...]" and `FullyShardedDataParallelPlugin` "Invalid
auto wrap policy: {p}. Must be one of [...]"; Lightning's `_AcceleratorConnector` "You selected an
invalid accelerator name: `accelerator='gpus'`. Available names are: auto, ...". Lightning `precision`
and `strategy` have their own rules (TL313, TL621).

**Evidence**: `transformers/utils/generic.py: ExplicitEnum._missing_` (stops); verified against
transformers 4.52 - 5.24, accelerate 1.13 - 1.15, Lightning 2.6. First message: "{value} is not a valid
{Enum}, please select one of [...]".

Values an older transformers accepted (the schema's `x-trainlint-removed-values`: `optim: adamw_hf`, removed in
4.50; `optim: adamw_apex_fused`, removed in 5.8) are checked against the release the file runs under: not
reported where the pins or settings say a release that has the value (Firefly, ChatGLM-era repositories pin
transformers 4.3x with `optim: adamw_hf`), an error where the release lacks it, a warning naming the removal
where the release is not known. TRL's `packing_strategy: ffd` (SFTConfig 0.19.0 - 0.19.1, renamed `bfd` in 0.20.0) is
judged the same way, and only with `packing: true`: `trl/data_utils.py: pack_dataset` is what refuses it ("Invalid
packing strategy: ffd. Use 'bfd' or 'wrapped'."), and it runs only when SFTTrainer packs.

A file this rule reports as refused (an error) gets no memory verdict (TL100, TL101, TL103, TL104): the plan they
would price is a reading of a file the framework does not start with (`Rule.misreads`).

**Example**: `save_strategy: step` → `save_strategy: steps`; `optim: adamw_8bits` → `adamw_8bit`.

**Fix** (unsafe: a guess): the closest allowed value, when one is close.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._schema_checks import findings
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL521", "invalid-enum-value", Severity.ERROR,
            "A value outside the allowed set (optim, save_strategy, distributed_type, ...)",
            flavors=("huggingface", "lightning", "accelerate"),
            framework="transformers", evidence="transformers/utils/generic.py: ExplicitEnum._missing_",
            raises="{value} is not a valid {Enum}, please select one of [...]", misreads=True)


def check(ctx: LintContext):
    doc = ctx.document
    for f in findings(ctx):
        if f.kind != "enum":
            continue
        fixes = []
        if f.suggestion is not None and f.node.kind == "scalar":
            value = f.suggestion
            if isinstance(f.node.value, int) and not isinstance(f.node.value, bool) and str(value).isdigit():
                value = int(str(value))
            fixes = [fix(f"write {value}", replace_value(doc, f.node, value), safe=False)]
        base, said, guess = f.message.partition("; did you mean ")
        message = f"{base.rstrip('.')}: refused at startup" + (f"; did you mean {guess}" if said else "")
        if f.removed is not None:
            removed = f.removed["removed"].removesuffix(".0")
            package = "TRL" if f.removed["package"] == "trl" else f.removed["package"]
            older = "" if f.certain else "; older releases accept it"
            hint = f" {f.removed['hint']}" if f.removed.get("hint") else ""
            key = ".".join(str(k) for k in f.key_path)
            refused_by = f.removed.get("refused_by") or "TrainingArguments"
            raises = f.removed.get("raises") or f"{f.node.value} is not a valid OptimizerNames"
            when = f.removed.get("when")
            switch = doc.find((when,)) if when else None
            if when and (switch is None or switch.value is not True):
                continue  # only that switch reads the value (TRL packs only with `packing: true`)
            refuses = f"{refused_by.split(' (')[0]} refuses it" if f.removed.get("refused_by") else \
                "TrainingArguments refuses it at startup"
            yield RULE.at(doc, f.node, f"`{key}: {f.node.value}` was removed in {package} {removed}: {refuses}", fixes,
                          severity=None if f.certain else Severity.WARNING, assumptions=f.assumptions,
                          detail=f"On {package} >= {removed} {refused_by} refuses it (\"{raises}\"){older}.{hint}")
            continue
        yield RULE.at(doc, f.node, message, fixes,
                      detail=f"The framework refuses the value at startup. {f.detail}".rstrip())
