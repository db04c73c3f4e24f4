"""TL526 lightning-unknown-trainer-arg: a `trainer:` key that is not a Lightning Trainer argument.

**What**: a key under `trainer:` in a LightningCLI YAML (also under `fit:` etc.) that is not a
parameter of `lightning.pytorch.Trainer.__init__` (Lightning 2.6 schema) and is not one of the
removed 1.x arguments (those are TL620).

**Why**: LightningCLI builds its parser from the Trainer's signature (jsonargparse), and unknown keys
are rejected before training starts (`jsonargparse/_core.py`, `ArgumentParser.validate`): "Group
'trainer' does not accept option 'max_epoch'" (jsonargparse >= 4.44; 4.29 - 4.43: "Group 'trainer' does
not accept nested key 'max_epoch'"; older: 'No action for key "trainer.max_epoch" to check its value.').
A script that builds the Trainer with `**config` fails with "Trainer.__init__() got an unexpected
keyword argument 'max_epoch'". Known arguments: Lightning 2.6.6's `Trainer.__init__`, and the `__init__`
parameters of the repository's own `trainer_class` where its LightningCLI passes one (LightningCLI adds the
trainer group from `trainer_class`'s signature: `lightning/pytorch/cli.py: LightningCLI._add_arguments` ->
`add_class_arguments`); read from the launched script, or with no launch from every LightningCLI script of the
repository. A `trainer_class` whose class cannot be read, or a file with no LightningCLI script in its repository
(linted alone), makes the finding a warning that says so, except for a near miss of a Trainer argument
(`max_epoch`), which is a misspelling whichever trainer_class reads it.

**Evidence**: `jsonargparse/_core.py: ArgumentParser.validate (LightningCLI)` (stops); verified against
Lightning 2.6 with jsonargparse 4.x. First message: "Group 'trainer' does not accept option '{key}'".

**Example**: `max_epoch: 10` → `max_epochs: 10`.

**Fix** (unsafe: a guess): rename to the closest Trainer argument.
"""

from __future__ import annotations

from trainlint.catalog import schemas
from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, rename_key
from trainlint.rules._frameworks import lightning_trainer, suggest
from trainlint.rules.base import LintContext, Rule
from trainlint.rules.tl620_lightning_removed_trainer_arg import _removed_keys

RULE = Rule("TL526", "lightning-unknown-trainer-arg", Severity.ERROR,
            "A trainer key that is not a Lightning Trainer argument", flavors=("lightning",),
            framework="lightning", evidence="jsonargparse/_core.py: ArgumentParser.validate (LightningCLI)",
            raises="Group 'trainer' does not accept option '{key}'")


def known() -> set[str] | None:
    try:
        return schemas.known_keys("lightning", ("trainer",))
    except Exception:  # noqa: BLE001
        return None


def check(ctx: LintContext):
    doc = ctx.document
    base = lightning_trainer(doc)
    if not base:  # None, or a Hydra `_target_` file whose root mixes other keys
        return
    trainer = doc.find(base)
    keys = known()
    if trainer is None or trainer.kind != "mapping" or not keys:
        return
    removed = _removed_keys()
    # LightningCLI(trainer_class=...) of the repository: its __init__ parameters are trainer keys too
    # (context/argclasses.py); where its class could not be read, the claim rests on that
    assumptions = ctx.dialect.own_assumption()
    for entry in trainer.entries:
        key = entry.key
        if key in keys or key in removed or key.startswith("_") or ctx.dialect.declares(key):
            continue
        guess = suggest(key, keys, cutoff=0.75)
        fixes = ([fix(f"rename to `{guess}`", rename_key(doc, entry, guess), safe=False)]
                 if guess and trainer.get(guess) is None else [])
        # a near miss of a Trainer argument (`max_epoch`) is a misspelling whichever trainer_class reads it; another
        # key may be an argument of a trainer_class trainlint could not read
        yield RULE.at(doc, entry.key_span,
                      f"`trainer.{key}` is not a Lightning Trainer argument: LightningCLI stops"
                      + (f"; did you mean `{guess}`?" if guess else ""), fixes, assumptions=() if guess else assumptions,
                      detail=f"LightningCLI stops with \"Group 'trainer' does not accept option '{key}'\"."
                             + ("" if guess else " Remove it or move it to the model/data section."))
