"""TL528 prefetch-factor-without-workers: `dataloader_prefetch_factor` with no worker processes.

**What**: TrainingArguments `dataloader_prefetch_factor` set while `dataloader_num_workers` is 0 or
absent (its default is 0).

**Why**: prefetching happens in worker processes; TrainingArguments refuses the combination:
"--dataloader_prefetch_factor can only be set when data is loaded in a different process, i.e. when
--dataloader_num_workers > 0." (transformers `training_args.py`).

**Evidence**: `transformers/training_args.py: TrainingArguments.__post_init__` (stops); verified against
transformers 4.52 - 5.24. First message: "--dataloader_prefetch_factor can only be set when data is
loaded in a different process, i.e. when --dataloader_num_workers > 0.".

**Example**: `dataloader_prefetch_factor: 4` without `dataloader_num_workers`.

**Fix** (unsafe: it starts worker processes, which use host RAM): set `dataloader_num_workers: 2`;
or remove the prefetch factor.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix, insert_entry, replace_value
from trainlint.rules._frameworks import number
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL528", "prefetch-factor-without-workers", Severity.ERROR,
            "dataloader_prefetch_factor needs dataloader_num_workers > 0", flavors=("huggingface",),
            framework="transformers", evidence="transformers/training_args.py: TrainingArguments.__post_init__",
            raises="--dataloader_prefetch_factor can only be set when data is loaded in a different process, i.e. when --dataloader_num_workers > 0.")


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    prefetch = root.entry("dataloader_prefetch_factor")
    if prefetch is None or prefetch.value.kind != "scalar" or prefetch.value.value is None:
        return
    workers = root.entry("dataloader_num_workers")
    count = number(workers.value) if workers is not None else 0
    if count is None or count > 0:
        return
    shown = f"`dataloader_num_workers: {workers.value.raw}`" if workers is not None else "no `dataloader_num_workers` (0)"
    add = (replace_value(doc, workers.value, 2) if workers is not None
           else insert_entry(doc, root, "dataloader_num_workers", "2", after=prefetch))
    yield RULE.at(doc, prefetch.key_span,
                  f"`dataloader_prefetch_factor` with {shown}: TrainingArguments stops",
                  [fix("load data in 2 worker processes", add, safe=False),
                   fix("remove `dataloader_prefetch_factor`", delete_entry(doc, root, prefetch), safe=False)],
                  detail="TrainingArguments stops with \"--dataloader_prefetch_factor can only be set when data is "
                         "loaded in a different process, i.e. when --dataloader_num_workers > 0.\" Set "
                         "`dataloader_num_workers`, or remove the prefetch factor.")
