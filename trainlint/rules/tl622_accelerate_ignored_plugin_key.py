"""TL622 accelerate-ignored-plugin-key: a key inside `deepspeed_config` / `fsdp_config` that Accelerate ignores.

**What**: a key under `deepspeed_config:` or `fsdp_config:` of an Accelerate config file that is not
one of the plugin's launch arguments: a DeepSpeed JSON key (`zero_optimization`, `train_batch_size`,
`fp16`, `seq_parallel_communication_data_type`, ...) or a misspelled plugin key.

**Why**: `accelerate launch` copies these nested mappings onto its launch arguments without checking
them (`commands/launch.py`, `_validate_launch_command`), and the DeepSpeed/FSDP plugins read only the
arguments they know (`deepspeed_config_file`, `zero_stage`, `offload_optimizer_device`,
`offload_param_device`, `gradient_accumulation_steps`, `gradient_clipping`, `zero3_init_flag`,
`zero3_save_16bit_model`, ...; `fsdp_*`, where a missing `fsdp_` prefix is added). Anything else is
silently dropped: the setting you wrote has no effect (accelerate's `commands/launch.py` copies these
sections onto the launch arguments without validating them; TRL's
`alst_ulysses_4gpu.yaml` has `seq_parallel_communication_data_type` here).

A key set to null (`fsdp_ignored_modules: null`, as `accelerate config` writes unset keys) is not reported:
there is nothing to lose. A plugin key newer than the accelerate in use (the schema's `x-trainlint-since`:
`fsdp_ignored_modules`, read since 1.10.0) is reported only when that accelerate is known to be older.

**Evidence**: `accelerate/commands/launch.py: _validate_launch_command` (silent); verified against
accelerate 1.13 - 1.15.

**Example**: `deepspeed_config: {zero_stage: 3, stage3_gather_16bit_weights_on_model_save: true}`.

**Fix**: a misspelled plugin key is renamed (unsafe: a guess). A DeepSpeed JSON key has no automatic
fix: move it into a DeepSpeed JSON file and name that file with `deepspeed_config_file`.
"""

from __future__ import annotations

from trainlint.catalog import schemas
from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, rename_key
from trainlint.rules._frameworks import suggest, version_status
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL622", "accelerate-ignored-plugin-key", Severity.WARNING,
            "A deepspeed_config/fsdp_config key that Accelerate silently ignores", flavors=("accelerate",),
            framework="accelerate", evidence="accelerate/commands/launch.py: _validate_launch_command")

SECTIONS = ("deepspeed_config", "fsdp_config")
FALLBACK = {
    "deepspeed_config": {"deepspeed_config_file", "zero_stage", "offload_optimizer_device", "offload_param_device",
                         "offload_optimizer_nvme_path", "offload_param_nvme_path", "gradient_accumulation_steps",
                         "gradient_clipping", "zero3_init_flag", "zero3_save_16bit_model", "deepspeed_hostfile",
                         "deepspeed_exclusion_filter", "deepspeed_inclusion_filter", "deepspeed_multinode_launcher",
                         "deepspeed_moe_layer_cls_names"},
}


def known(section: str) -> set[str] | None:
    try:
        keys = schemas.known_keys("accelerate", (section,))
    except Exception:  # noqa: BLE001
        keys = None
    return keys or FALLBACK.get(section)


def _since(section: str, key: str) -> str | None:
    """The first accelerate release that reads a plugin key (the schema's `x-trainlint-since`), None if always."""
    try:
        prop = schemas.load_schema("accelerate")["properties"][section]["properties"][key]
        return (prop.get("x-trainlint-since") or {}).get("accelerate")
    except Exception:  # noqa: BLE001 - no schema data: judged as a plugin key of every release
        return None


def check(ctx: LintContext):
    doc = ctx.document
    for section in SECTIONS:
        node = doc.find((section,))
        keys = known(section)
        if node is None or node.kind != "mapping" or not keys:
            continue
        for entry in node.entries:
            key = entry.key
            if entry.value.kind == "scalar" and entry.value.value is None:
                continue  # `key: null` (as `accelerate config` writes unset keys) sets nothing to lose
            name = key if key in keys else (f"fsdp_{key}" if section == "fsdp_config" and f"fsdp_{key}" in keys
                                            else None)
            if name is not None:
                since = _since(section, name)
                if since is None or version_status(ctx, "accelerate", f"<{since}")[0] is not True:
                    continue  # a plugin setting (on the release in use, or possibly so)
                yield RULE.at(doc, entry.key_span,
                              f"`{section}.{key}` is read by accelerate {since} and later only: this release ignores it",
                              detail="The accelerate this runs under drops it without a word, so it has no effect. "
                                     "Upgrade accelerate, or remove it.")
                continue
            guess = suggest(key, keys) or (suggest(f"fsdp_{key}", keys) if section == "fsdp_config" else None)
            if guess is not None and node.get(guess) is None:
                yield RULE.at(doc, entry.key_span,
                              f"`{section}.{key}` is not a plugin setting and is ignored; did you mean `{guess}`?",
                              [fix(f"rename to `{guess}`", rename_key(doc, entry, guess), safe=False)],
                              detail="`accelerate launch` silently ignores it, so it has no effect.")
                continue
            where = ("a DeepSpeed JSON file named by `deepspeed_config_file`" if section == "deepspeed_config"
                     else "the FSDP plugin's own settings (`fsdp_*` keys)")
            yield RULE.at(doc, entry.key_span,
                          f"`{section}.{key}` is not an Accelerate plugin setting and is ignored",
                          detail=f"`accelerate launch` drops it without a word, so it has no effect. Put it in {where}.")
