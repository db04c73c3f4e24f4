"""TL525 accelerate-unknown-key: a top-level key that `accelerate launch` does not know.

**What**: a top-level key of an Accelerate config file (`default_config.yaml`, `--config_file`)
that is not a field of accelerate's ClusterConfig/SageMakerConfig (for instance a typo such as
`num_process`, or a DeepSpeed JSON key such as `zero_optimization` at the top level).

**Why**: `commands/config/config_args.py` (`BaseConfig.from_yaml_file`) rejects the file:
"The config file at {file} had unknown keys ({extra_keys}), please try upgrading your `accelerate`
version or fix (and potentially remove) these keys from your config file." - the launch stops.
Known keys come from the accelerate schema (schemas/accelerate.schema.json, accelerate 1.15).

**Evidence**: `accelerate/commands/config/config_args.py: BaseConfig.from_yaml_file` (stops); verified
against accelerate 1.13 - 1.15. First message: "The config file at {file} had unknown keys
({extra_keys}), please try upgrading your `accelerate` version or fix (and potentially remove) these
keys from your config file.".

**Example**: `num_process: 8` → `num_processes: 8`.

**Fix** (unsafe): rename to the closest known key when there is one, else remove the key.
"""

from __future__ import annotations

from trainlint.catalog import schemas
from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix, rename_key
from trainlint.rules._frameworks import suggest
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL525", "accelerate-unknown-key", Severity.ERROR,
            "A top-level key accelerate's config loader rejects", flavors=("accelerate",),
            framework="accelerate", evidence="accelerate/commands/config/config_args.py: BaseConfig.from_yaml_file",
            raises="The config file at {file} had unknown keys ({extra_keys}), please try upgrading your `accelerate` version or fix (and potentially remove) these keys from your config file.")


def known() -> set[str] | None:
    try:
        return schemas.known_keys("accelerate", ())
    except Exception:  # noqa: BLE001
        return None


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    keys = known()
    if root is None or root.kind != "mapping" or not keys:
        return
    for entry in root.entries:
        if entry.key in keys:
            continue
        guess = suggest(entry.key, keys)
        if guess is not None and root.get(guess) is None:
            fixes = [fix(f"rename to `{guess}`", rename_key(doc, entry, guess), safe=False)]
            hint = f"Did you mean `{guess}`?"
            short = f"; did you mean `{guess}`?"
        else:
            short = ""
            fixes = [fix(f"remove `{entry.key}`", delete_entry(doc, root, entry), safe=False)]
            hint = "Remove it" + (" (DeepSpeed settings belong in `deepspeed_config` or a DeepSpeed JSON file)."
                                  if entry.key in DEEPSPEED_JSON_KEYS else ".")
        yield RULE.at(doc, entry.key_span,
                      f"`{entry.key}` is not an Accelerate config key: `accelerate launch` stops{short}", fixes,
                      detail=f"`accelerate launch` stops with \"The config file at ... had unknown keys "
                             f"(['{entry.key}'])\"." + ("" if short else f" {hint}"))


DEEPSPEED_JSON_KEYS = {"zero_optimization", "train_batch_size", "train_micro_batch_size_per_gpu", "fp16", "bf16",
                       "gradient_accumulation_steps", "gradient_clipping", "optimizer", "scheduler", "zero_stage"}
