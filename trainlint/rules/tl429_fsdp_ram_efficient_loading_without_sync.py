"""TL429 fsdp-ram-efficient-loading-without-sync: `cpu_ram_efficient_loading` with `sync_module_states: false`.

**What**: an HF TrainingArguments `fsdp_config` with `cpu_ram_efficient_loading: true` and
`sync_module_states: false` (with or without the `fsdp_` prefix).

**Why**: with RAM-efficient loading only rank 0 reads the checkpoint; under FSDP1 the other ranks
hold empty weights until FSDP broadcasts rank 0's, which is what `sync_module_states` does. Up to
transformers 5.9 `TrainingArguments.__post_init__` (`training_args.py`) refuses the pair:
'`sync_module_states` must be `"True"` if `cpu_ram_efficient_loading` is `"True"`'. From 5.10 the
setting reaches Accelerate only for FSDP1, whose plugin fixes it with a warning ("sync_module_states
cannot be False since efficient cpu ram loading enabled. Setting sync_module_states to True.",
`FullyShardedDataParallelPlugin.__post_init__`), and FSDP2 (the default) does not use it. The rule holds
for transformers < 5.10: a warning that says so while the release is unknown; not run on 5.10 and later.

**Evidence**: `transformers/training_args.py: TrainingArguments.__post_init__` (stops); verified against
transformers < 5.10; from 5.10 FSDP2 ignores the key and FSDP1 corrects it with a warning. First
message: "`sync_module_states` must be `"True"` if `cpu_ram_efficient_loading` is `"True"`".

**Example**: `fsdp_config: {cpu_ram_efficient_loading: true, sync_module_states: false}`.

**Fix** (safe: the only working combination): `sync_module_states: true`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._frameworks import flag
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL429", "fsdp-ram-efficient-loading-without-sync", Severity.ERROR,
            "cpu_ram_efficient_loading needs sync_module_states", flavors=("huggingface",),
            framework="transformers", versions="<5.10", evidence="transformers/training_args.py: TrainingArguments.__post_init__",
            raises='`sync_module_states` must be `"True"` if `cpu_ram_efficient_loading` is `"True"`')


def check(ctx: LintContext):
    doc = ctx.document
    config = doc.find(("fsdp_config",))
    if config is None or config.kind != "mapping":
        return
    ram = config.entry("cpu_ram_efficient_loading") or config.entry("fsdp_cpu_ram_efficient_loading")
    sync = config.entry("sync_module_states") or config.entry("fsdp_sync_module_states")
    if ram is None or sync is None or flag(ram.value) is not True or flag(sync.value) is not False:
        return
    yield RULE.at(doc, sync.key_span,
                  f"`{sync.key}: {sync.value.raw}` with `{ram.key}: true`: TrainingArguments stops "
                  "(transformers < 5.10)",
                  [fix(f"set `{sync.key}: true`", replace_value(doc, sync.value, True), safe=True)],
                  detail="Only rank 0 loads the weights and the others wait for its broadcast, so TrainingArguments "
                         "(transformers < 5.10) stops with \"`sync_module_states` must be `\"True\"` if "
                         "`cpu_ram_efficient_loading` is `\"True\"`\". Set it to true.")
