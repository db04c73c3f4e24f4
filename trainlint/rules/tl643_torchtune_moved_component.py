"""TL643 torchtune-moved-component: a torchtune `_component_` path that newer torchtune releases no longer have.

**What**: a `_component_:` in a torchtune config naming a path that torchtune moved, such as
`torchtune.utils.FullModelHFCheckpointer`, `torchtune.utils.metric_logging.WandBLogger`,
`torchtune.utils.setup_torch_profiler` (all `torchtune.training.*` since 0.3.0),
`torchtune.modules.get_cosine_schedule_with_warmup` (`torchtune.training.lr_schedulers` since 0.4.0, gone from
`torchtune.modules` in 0.5.0) or `torchtune.modules.loss.DPOLoss` (`torchtune.rlhf.loss` since 0.3.1). The table
is `catalog/data/torchtune_moved.json`, read from torchtune's tags v0.1.0 - v0.6.1.

**Why**: recipes build every `_component_` with `config.instantiate`, which resolves the dotted path with
getattr and import_module (`torchtune/config/_utils.py: _get_component_from_path`) and stops with
"Error loading 'torchtune.utils.FullModelHFCheckpointer': ... Are you sure that 'FullModelHFCheckpointer' is
an attribute of 'torchtune.utils'?" on a release without it. Configs copied with `tune cp` from an older
torchtune keep the old paths; an unpinned `pip install torchtune` then installs a release that rejects them.
With the torchtune version known (a pin, a setting, the installed package) a path the release still has is
not reported and one it lacks is an error; with the version unknown or assumed, a warning naming the releases.

**Evidence**: `torchtune/config/_utils.py: _get_component_from_path`; torchtune v0.3.0 `torchtune/utils/__init__.py`
(exports get_device, get_logger, torch_version_ge only). First message: "Error loading '<path>'".

**Example**: `checkpointer: {_component_: torchtune.utils.FullModelHFCheckpointer}` →
`torchtune.training.FullModelHFCheckpointer`.

**Fix**: replace the path with its new one; safe where the new path exists on the release in use (a known
version from its `since` on), otherwise unsafe (the old release may not have it). `torchtune.utils.profiler`
(0.1) has no drop-in replacement: `torchtune.training.setup_torch_profiler` takes other arguments.
"""

from __future__ import annotations

import json
from functools import lru_cache

from trainlint.catalog.files import read_data
from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._frameworks import version_status
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL643", "torchtune-moved-component", Severity.WARNING,
            "A torchtune _component_ path that newer torchtune releases no longer have", flavors=("torchtune",),
            framework="torchtune", evidence="torchtune/config/_utils.py: _get_component_from_path",
            raises="Error loading '<path>'")


@lru_cache(maxsize=1)
def moved() -> dict:
    try:
        data = json.loads(read_data("torchtune_moved.json")).get("moved") or {}
    except Exception:  # noqa: BLE001 - no data: nothing is reported
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict) and v.get("removed")}


def _short(version: str) -> str:
    return version[:-2] if version.count(".") == 2 and version.endswith(".0") else version


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    table = moved()
    if not table:
        return
    for node in root.walk():
        if node.kind != "mapping":
            continue
        entry = node.entry("_component_")
        if entry is None or entry.value.kind != "scalar" or not isinstance(entry.value.value, str):
            continue
        path = entry.value.value.strip()
        info = table.get(path)
        if info is None:
            continue
        removed = info["removed"]
        gone, assumptions = version_status(ctx, "torchtune", f">={removed}")
        if gone is False:
            continue  # the release in use still has the path
        new, since = info.get("replacement"), info.get("since")
        where = f"; it moved to `{new}`, there since torchtune {_short(since)}" if new and since else ""
        older = "" if gone else " (older releases still have it)"
        message = f"`{path}` is not in torchtune {_short(removed)} and later: config.instantiate stops"
        detail = (f"`{path}` is not in torchtune {_short(removed)} and later{where}: on those releases the recipe's "
                  f"config.instantiate stops with \"Error loading '{path}'\"{older}.")
        fixes = []
        if new:
            note = info.get("note")
            if note:
                detail += f" Use `{new}`; {note}."
            else:
                detail += f" Use `{new}`."
                has_new, _ = version_status(ctx, "torchtune", f">={since}") if since else (None, ())
                if has_new is not False:
                    fixes.append(fix(f"use `{new}`", replace_value(doc, entry.value, new), safe=has_new is True))
        yield RULE.at(doc, entry.value, message, fixes, severity=Severity.ERROR if gone else None,
                      assumptions=assumptions, detail=detail)
