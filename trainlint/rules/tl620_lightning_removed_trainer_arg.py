"""TL620 lightning-removed-trainer-arg: a Trainer argument that Lightning 2.0 removed.

**What**: a key under `trainer:` (LightningCLI YAML, also under `fit:`, or a Hydra
`_target_: ...Trainer` file) that Lightning 2.0 or 1.7 removed: `gpus`, `tpu_cores`, `ipus`,
`num_processes`, `auto_select_gpus`, `auto_lr_find`, `auto_scale_batch_size`,
`resume_from_checkpoint`, `amp_backend`, `amp_level`, `track_grad_norm`, `replace_sampler_ddp`,
`move_metrics_to_cpu`, `multiple_trainloader_mode`, `checkpoint_callback`, `weights_save_path`, ...

**Why**: `Trainer.__init__` no longer has these parameters (`src/lightning/pytorch/CHANGELOG.md`:
2.0.0 "Removed" for most of them, `replace_sampler_ddp` renamed `use_distributed_sampler` in 2.0.0,
`weights_save_path` removed in 1.8.0, `checkpoint_callback`, `flush_logs_every_n_steps`,
`log_gpu_memory`, `progress_bar_refresh_rate`, `prepare_data_per_node`, `stochastic_weight_avg`,
`terminate_on_nan` in 1.7.0, `reload_dataloaders_every_epoch` in 1.6.0). LightningCLI builds its parser
from the Trainer's signature and jsonargparse rejects the key before training (`_core.py`,
`ArgumentParser.validate`): "Group 'trainer' does not accept option 'gpus'" (jsonargparse >= 4.44;
4.29 - 4.43: "... does not accept nested key 'gpus'"; older: 'No action for key "trainer.gpus" to check
its value.'); a Trainer built in code fails with "Trainer.__init__() got an unexpected keyword
argument 'gpus'". The Lightning release is not known to trainlint, hence a warning. Real cases:
catalys1/mae-pytorch `multigpu.yaml` (`gpus: 8`), kouyk/pytorch-lightning-slurm `fit.yaml`
(`auto_lr_find: true`).

**Evidence**: `jsonargparse/_core.py: ArgumentParser.validate (LightningCLI)` (stops (LightningCLI));
verified against Lightning 1.6 - 2.6 (per key: the release in the table). First message: "Group
'trainer' does not accept option '{key}'".

**Example**: `gpus: 8` → `accelerator: gpu` + `devices: 8`; `replace_sampler_ddp: false` →
`use_distributed_sampler: false`; `precision: 16` with `amp_backend: native` → drop `amp_backend`.

**Fix**: mechanical renames are safe (`gpus` → `devices` with `accelerator: gpu`, `tpu_cores` →
`devices` with `accelerator: tpu`, `replace_sampler_ddp` → `use_distributed_sampler`,
`checkpoint_callback` → `enable_checkpointing`, `amp_backend: native` removed). Removing a feature
(`auto_lr_find`, `track_grad_norm`, ...) or moving `resume_from_checkpoint` to `ckpt_path` is unsafe:
the replacement is code (the `Tuner`) or a different place.
"""

from __future__ import annotations

from trainlint.catalog import schemas
from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix, insert_entry, rename_key
from trainlint.rules._frameworks import lightning_trainer
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL620", "lightning-removed-trainer-arg", Severity.WARNING,
            "A Trainer argument removed in Lightning 2.0 (jsonargparse rejects it)", flavors=("lightning",),
            framework="lightning", evidence="jsonargparse/_core.py: ArgumentParser.validate (LightningCLI)",
            raises="Group 'trainer' does not accept option '{key}'")

# key -> (since, replacement advice). The schema's x-trainlint-removed list is used when present.
REMOVED = {
    "gpus": ("2.0", "use `accelerator: gpu` with `devices`"),
    "tpu_cores": ("2.0", "use `accelerator: tpu` with `devices`"),
    "ipus": ("2.0", "IPU support moved out of Lightning"),
    "num_processes": ("2.0", "use `devices`"),
    "auto_select_gpus": ("2.0", "`devices: auto` picks free GPUs"),
    "auto_lr_find": ("2.0", "call `Tuner(trainer).lr_find(model)` in code instead"),
    "auto_scale_batch_size": ("2.0", "call `Tuner(trainer).scale_batch_size(model)` in code instead"),
    "resume_from_checkpoint": ("2.0", "pass `ckpt_path` to fit (top-level `ckpt_path:` in a LightningCLI file)"),
    "amp_backend": ("2.0", "native torch AMP is the only backend; `precision` alone chooses it"),
    "amp_level": ("2.0", "apex opt levels are gone; use `precision`"),
    "track_grad_norm": ("2.0", "log gradient norms from a callback or the LightningModule"),
    "replace_sampler_ddp": ("2.0", "renamed `use_distributed_sampler`"),
    "move_metrics_to_cpu": ("2.0", "remove it"),
    "multiple_trainloader_mode": ("2.0", "use CombinedLoader's mode"),
    "weights_save_path": ("1.8", "use `default_root_dir`"),
    "checkpoint_callback": ("1.7", "renamed `enable_checkpointing`"),
    "flush_logs_every_n_steps": ("1.7", "remove it"),
    "log_gpu_memory": ("1.7", "use the DeviceStatsMonitor callback"),
    "progress_bar_refresh_rate": ("1.7", "use `enable_progress_bar` or a TQDMProgressBar callback"),
    "prepare_data_per_node": ("1.7", "set it on the LightningModule/DataModule"),
    "stochastic_weight_avg": ("1.7", "use the StochasticWeightAveraging callback"),
    "terminate_on_nan": ("1.7", "use `detect_anomaly`"),
    "reload_dataloaders_every_epoch": ("1.6", "use `reload_dataloaders_every_n_epochs: 1`"),
}
SAFE_RENAMES = {"replace_sampler_ddp": "use_distributed_sampler", "checkpoint_callback": "enable_checkpointing"}
DEVICE_KEYS = {"gpus": "gpu", "tpu_cores": "tpu"}


def _removed_keys() -> dict:
    keys = dict(REMOVED)
    try:
        listed = (schemas.property_schema("lightning", ("trainer",)) or {}).get("x-trainlint-removed") or {}
        for key, entry in listed.items():
            if key not in keys and isinstance(entry, dict):
                since = str(entry.get("since") or "").replace("Lightning ", "")
                advice = entry.get("hint") or (f"use `{entry['replacement']}`" if entry.get("replacement") else "remove it")
                keys[key] = (since or "2.0", advice)
    except Exception:  # noqa: BLE001 - the schema is optional here
        pass
    return keys


def check(ctx: LintContext):
    doc = ctx.document
    base = lightning_trainer(doc)
    if base is None or doc.root is None:
        return
    trainer = doc.root.find(base)
    if trainer is None or trainer.kind != "mapping":
        return
    removed = _removed_keys()
    for entry in trainer.entries:
        if entry.key not in removed:
            continue
        since, advice = removed[entry.key]
        if since and ctx.version_in("lightning", f">={since}") is False:
            continue  # the pinned Lightning (e.g. pytorch-lightning~=1.9.3) still has the argument
        fixes = list(_fixes(doc, trainer, entry, base))
        value = entry.value.raw if entry.value.kind == "scalar" else "..."
        yield RULE.at(doc, entry.key_span,
                      f"`{entry.key}` was removed from the Lightning Trainer in {since}: the run does not start",
                      fixes,
                      detail=f"On Lightning >= {since} LightningCLI rejects `trainer.{entry.key}: {value}` and the run "
                             f"does not start; {advice}.")


def _fixes(doc, trainer, entry, base):
    key = entry.key
    node = entry.value
    if key == "resume_from_checkpoint" and base and node.kind == "scalar" and node.value:
        section = doc.root.find(base[:-1])
        if section is not None and section.kind == "mapping" and section.get("ckpt_path") is None:
            yield fix(f"move it to `ckpt_path` {'at the top level' if len(base) == 1 else 'under ' + base[0] + ':'}",
                      delete_entry(doc, trainer, entry),
                      insert_entry(doc, section, "ckpt_path", doc.text[node.span.start.offset:node.span.end.offset],
                                   after=_anchor(section)), safe=False)
            return
    if key in DEVICE_KEYS:
        if node.kind == "scalar" and (node.value in (0, None, "0") or node.value is False):
            yield fix(f"remove `{key}: {node.raw}` (no {DEVICE_KEYS[key]}s: the CPU)", delete_entry(doc, trainer, entry),
                      safe=False)
            return
        if trainer.get("devices") is not None:
            yield fix(f"remove `{key}` (`devices` is already set)", delete_entry(doc, trainer, entry), safe=False)
            return
        edits = [rename_key(doc, entry, "devices")]
        accelerator = trainer.get("accelerator")
        if accelerator is None:
            edits.append(insert_entry(doc, trainer, "accelerator", DEVICE_KEYS[key], after=entry))
        elif not (isinstance(accelerator.value, str) and accelerator.value.lower() in (DEVICE_KEYS[key], "cuda", "auto")):
            return
        title = f"write `devices: {node.raw if node.kind == 'scalar' else '...'}`" + (
            f" with `accelerator: {DEVICE_KEYS[key]}`" if accelerator is None else "")
        yield fix(title, *edits, safe=True)
        return
    if key in SAFE_RENAMES and trainer.get(SAFE_RENAMES[key]) is None:
        yield fix(f"rename to `{SAFE_RENAMES[key]}`", rename_key(doc, entry, SAFE_RENAMES[key]), safe=True)
        return
    if key == "amp_backend" and node.kind == "scalar" and str(node.value).lower() == "native":
        yield fix("remove `amp_backend: native` (native AMP is the only backend)", delete_entry(doc, trainer, entry),
                  safe=True)
        return
    yield fix(f"remove `{key}`", delete_entry(doc, trainer, entry), safe=False)



def _anchor(mapping):
    """Insert after the last scalar entry when there is one (a nested block collection's end is not
    always where its last line ends), else after the last entry."""
    scalars = [e for e in mapping.entries if e.value.kind == "scalar"]
    return scalars[-1] if scalars else None
