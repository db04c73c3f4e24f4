"""TL623 accelerate-deepspeed-file-with-plugin-keys: `deepspeed_config_file` together with plugin settings.

**What**: an Accelerate config whose `deepspeed_config` names a `deepspeed_config_file` and also sets
`gradient_accumulation_steps`, `gradient_clipping`, `zero_stage`, `offload_optimizer_device`,
`offload_param_device`, `offload_optimizer_nvme_path`, `offload_param_nvme_path` or
`zero3_save_16bit_model`, or has a top-level `mixed_precision` (any value, "no" included).

**Why**: with a DeepSpeed JSON file, those values come from the file. Accelerate's DeepSpeedPlugin
refuses to start when the YAML sets them too (`utils/dataclasses.py`,
`DeepSpeedPlugin._deepspeed_config_checks`, accelerate 1.13 - 1.15): "When using `deepspeed_config_file`,
the following accelerate config variables will be ignored: ['gradient_accumulation_steps',
'gradient_clipping', 'zero_stage', 'offload_optimizer_device', 'offload_param_device',
'offload_param_nvme_path', 'offload_optimizer_nvme_path', 'zero3_save_16bit_model', 'mixed_precision'].
Please specify them appropriately in the DeepSpeed config file." (the list is always the whole list, not
the offending key). Accelerate's own template says it:
"set the mixed precision now instead of in the deepspeed config file ... requires the `fp16` and
`bf16` options to be set to `auto`". `accelerate launch` passes every key of `deepspeed_config`, plus
`mixed_precision` whenever the file sets it, to that check (`commands/launch.py`), and the
`accelerate config` questionnaire writes no `mixed_precision` when a DeepSpeed file is chosen. A
`--mixed_precision` that every launch running the file gives itself keeps the file's value out of that list
(`launch_command` adds it only when it came from the config: `mp_from_config_flag`), so the top-level
`mixed_precision` is then not reported; the `deepspeed_config` keys are passed whatever the command line says.

**Evidence**: `accelerate/utils/dataclasses.py: DeepSpeedPlugin._deepspeed_config_checks` (stops);
verified against accelerate 1.13 - 1.15. First message: "When using `deepspeed_config_file`, the
following accelerate config variables will be ignored: [...]".

**Example**: `deepspeed_config: {deepspeed_config_file: ds.json, zero_stage: 3}`.

**Fix** (unsafe): remove the key from the YAML and make sure the DeepSpeed JSON says what you meant.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix
from trainlint.rules._schema_checks import launch_sets
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL623", "accelerate-deepspeed-file-with-plugin-keys", Severity.ERROR,
            "deepspeed_config_file plus plugin keys: accelerate refuses the config", flavors=("accelerate",),
            framework="accelerate", evidence="accelerate/utils/dataclasses.py: DeepSpeedPlugin._deepspeed_config_checks",
            raises="When using `deepspeed_config_file`, the following accelerate config variables will be ignored: [...]")

IGNORED = ("gradient_accumulation_steps", "gradient_clipping", "zero_stage", "offload_optimizer_device",
           "offload_param_device", "offload_optimizer_nvme_path", "offload_param_nvme_path", "zero3_save_16bit_model")


def check(ctx: LintContext):
    doc = ctx.document
    section = doc.find(("deepspeed_config",))
    if section is None or section.kind != "mapping":
        return
    file_node = section.get("deepspeed_config_file")
    if file_node is None or file_node.kind != "scalar" or not file_node.value or str(file_node.value).lower() == "none":
        return
    for entry in section.entries:
        if entry.key in IGNORED:
            yield RULE.at(doc, entry.key_span,
                          f"`deepspeed_config.{entry.key}` is set together with `deepspeed_config_file`: Accelerate "
                          "stops",
                          [fix(f"remove `{entry.key}`", delete_entry(doc, section, entry), safe=False)],
                          detail="Accelerate stops with \"When using `deepspeed_config_file`, the following accelerate "
                                 "config variables will be ignored: ['gradient_accumulation_steps', "
                                 f"'gradient_clipping', 'zero_stage', ...]\" (`{entry.key}` is one of them). Set it in "
                                 "the DeepSpeed JSON file instead and remove it here.")
    root = doc.root
    mp = root.entry("mixed_precision") if root is not None else None
    if root is not None and mp is not None and mp.value.kind == "scalar" and mp.value.value is not None and \
            not launch_sets(ctx, ("mixed_precision",)):  # a --mixed_precision the launch gives keeps it out
        yield RULE.at(doc, mp.key_span,
                      f"`mixed_precision: {mp.value.raw}` is set together with `deepspeed_config_file`: Accelerate "
                      "stops",
                      [fix("remove `mixed_precision`", delete_entry(doc, root, mp), safe=False)],
                      detail="Accelerate stops with \"When using `deepspeed_config_file`, the following accelerate "
                             "config variables will be ignored: [..., 'mixed_precision']\" (whatever its value). "
                             "Enable fp16/bf16 in the DeepSpeed JSON (or set them to \"auto\" there) and remove it "
                             "here.")
