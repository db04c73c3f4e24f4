"""TL647 axolotl-invalid-value: an Axolotl value its config schema or loader refuses.

**What**: an Axolotl config whose `adapter`, `rl`, `optimizer`, `gradient_checkpointing`, `activation_offloading`
or `tf32` has a value outside the set the Axolotl release in play accepts (`optimizer: adamw_torch_fuse`: neither
transformers' `OptimizerNames`, from the hf-training-args schema with its removed values, nor Axolotl's
`CustomSupportedOptimizers` of any release); `adapter: qlora4`, `adapter: dora` (DoRA is
`adapter: lora` with `peft_use_dora: true`), `rl: ppo`, `rl: grpo` before 0.7, `gradient_checkpointing: unsloth`
from 0.9.2, `tf32: auto` before 0.16. The sets, per release range, are data:
`catalog/data/closed_values.json` (`axolotl`), read from the tags v0.6.0 - v0.18.0 and main.

**Why**: Axolotl validates the YAML with its pydantic schema (`src/axolotl/utils/config/__init__.py:
validate_config` -> `AxolotlConfigWCapabilities`), which refuses a value outside an enum or `Literal`
(`src/axolotl/utils/schemas/enums.py: RLType`; `schemas/config.py: AxolotlInputConfig.gradient_checkpointing`,
`activation_offloading`, `tf32`; `schemas/training.py: HyperparametersConfig.optimizer`, `OptimizerNames |
CustomSupportedOptimizers` before 0.18): "Input should be 'dpo', 'gdpo', 'grpo', 'ipo', 'orpo', 'kto', 'simpo' or
'ebft'" and the run stops before the model is loaded. From 0.18 `optimizer` is a plain string that
`core/builders/base.py: TrainerBuilderBase._configure_optimizer` hands to `TrainingArguments(optim=...)` when it is no
custom optimizer: "{value} is not a valid OptimizerNames, please select one of [...]". `adapter` is a plain string in most releases: from 0.17
`schemas/peft.py: LoraConfig.validate_adapter` refuses anything but lora, qlora, llama-adapter and the adapters
plugins register ("Adapter '{value}' is not built in and was not registered by a plugin. Add the plugin that
provides this adapter to `plugins:`."); 0.15 - 0.16 type it as a `Literal`; before 0.15
`src/axolotl/loaders/adapter.py: load_adapter` raises "NotImplementedError: {value} PEFT adapter not available"
after the base model is loaded. Where the file lists `plugins:` on 0.17 or later, `adapter` is not checked (a
plugin may provide it).

The reader is established by the format: an Axolotl YAML (`base_model` with Axolotl's own sections,
`flavors/axolotl.py: detect`) is read by Axolotl's CLI alone (`axolotl train`, `python -m axolotl.cli.train`), and
the extension point Axolotl has for such values, `plugins:` (`axolotl/integrations/base.py: PluginManager`), is
written in the file itself, which the check above honours. Unlike a LLaMA-Factory YAML (HfArgumentParser's format,
read by forks that vendor and extend LLaMA-Factory's dataclasses: TL648), the file names its reader.

The value is judged at the Axolotl release the file runs under (its pins, settings or the installed package):
valid there, no finding; refused by every release in play, an error; refused only by some of the releases a
range or an unknown version leaves open, a warning that names them where the release assumed (the newest known,
or the newest the pins admit) refuses it too, and nothing where it accepts it (`tf32: auto`, refused only before
0.16, is reported only where a pin or setting says an older release). A file Axolotl refuses gets this finding and
no memory verdict: what the memory model would price (a full fine-tune for an unknown adapter) is not what runs.

**Evidence**: `axolotl/utils/schemas/peft.py: LoraConfig.validate_adapter` and `axolotl/utils/schemas/enums.py:
RLType` (stops at validation); versions 0.6.0 - 0.18.0 and main (2026-07).

**Example**: `adapter: qlora4` → `adapter: qlora`; `gradient_checkpointing: unsloth` → `offload` (0.9.2+).

**Fix** (unsafe: a guess): the closest allowed value, when one is close.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._closed_values import rejected, severity_of
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL647", "axolotl-invalid-value", Severity.ERROR,
            "An Axolotl value (adapter, rl, gradient_checkpointing, ...) its schema or loader refuses",
            flavors=("axolotl",), framework="axolotl",
            evidence="axolotl/utils/schemas/peft.py: LoraConfig.validate_adapter; "
                     "axolotl/utils/schemas/enums.py: RLType",
            raises="Adapter '{value}' is not built in and was not registered by a plugin.", misreads=True)


def check(ctx: LintContext):
    doc = ctx.document
    for r in rejected(ctx, "axolotl"):
        names = r.allowed()
        allowed = (", ".join(names) if len(names) <= 20 else ", ".join(names[:20]) + f", ... ({len(names)} in all)") \
            or "a boolean"
        fixes = []
        if r.suggestion is not None and r.suggestion in r.allowed():
            fixes = [fix(f"write {r.suggestion}", replace_value(doc, r.node, r.suggestion), safe=False)]
        releases = f" {r.release}" if r.release else "" if r.certain and not r.assumptions else f" {r.versions}"
        guess = f"; did you mean `{r.suggestion}`?" if fixes else ""
        there = " there" if releases and not r.release else ""
        yield RULE.at(doc, r.node, f"`{r.key}: {r.value}` is refused by Axolotl{releases}: the run stops{there}{guess}",
                      fixes, severity=severity_of(r), assumptions=r.assumptions,
                      detail=f"Axolotl ({r.range.get('where')}) stops {r.range.get('when')}: \"{r.message()}\". "
                             f"Allowed{releases}: {allowed}.")
