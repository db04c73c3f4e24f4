"""TL524 hf-removed-argument: a TrainingArguments / TRL field that newer transformers or TRL removed.

**What**: a key of an HF TrainingArguments-style YAML/JSON (HfArgumentParser, TrlParser,
LLaMA-Factory) that transformers 5 or TRL no longer has: `evaluation_strategy` (→ `eval_strategy`,
gone in 4.46), `per_gpu_*_batch_size` (→ `per_device_*`), `no_cuda` (→ `use_cpu`), `adafactor: true`
(→ `optim: adafactor`), `overwrite_output_dir`, `group_by_length` (→ `train_sampling_strategy`),
`save_safetensors`, `fp16_backend`/`half_precision_backend`, `warmup_ratio` (→ `warmup_steps` below 1,
transformers 5.2), and on TRL: `max_seq_length` (→ `max_length`, renamed in TRL 0.16, removed in
0.20), `max_prompt_length` (DPO, TRL 1.x), `torch_dtype` (→ `dtype`, TRL 1.x ModelConfig).
The list comes from the hf-training-args schema (`x-trainlint-removed`).

**Why**: HfArgumentParser only accepts dataclass fields: "Some keys are not used by the
HfArgumentParser: [...]"; TrlParser: "Unknown arguments from config file: [...]. Please remove them,
add them to the dataclass, or set `fail_with_unknown_args=False`." The config works on the old
version and stops on the new one (research/config-formats.md §2.6). open-instruct files are skipped:
its own dataclass defines `max_seq_length`, `warmup_ratio`, ...

**Example**: `evaluation_strategy: steps` → `eval_strategy: steps`; `warmup_ratio: 0.1` →
`warmup_steps: 0.1`.

**Fix**: renames whose meaning is identical and whose new name exists on every maintained version
are safe (`evaluation_strategy`, `per_gpu_*`, `no_cuda`, `max_seq_length`, `push_to_hub_*`,
`adafactor`). `warmup_ratio` → `warmup_steps` and `torch_dtype` → `dtype` are unsafe (the new
spelling is rejected by transformers 4 / older TRL), and so is removing a key that did something.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import delete_entry, fix, rename_key, replace_value
from trainlint.flavors.base import as_bool, as_float
from trainlint.rules._frameworks import hf_dialect
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL524", "hf-removed-argument", Severity.WARNING,
            "A TrainingArguments/TRL field removed in transformers 5 or TRL", flavors=("huggingface",))

TRL_ONLY = {"max_seq_length", "max_prompt_length", "torch_dtype"}
SAFE_RENAMES = {"evaluation_strategy", "per_gpu_train_batch_size", "per_gpu_eval_batch_size", "no_cuda",
                "max_seq_length", "push_to_hub_model_id", "push_to_hub_token"}
FALLBACK = {
    "evaluation_strategy": {"replacement": "eval_strategy", "since": "transformers 4.46"},
    "per_gpu_train_batch_size": {"replacement": "per_device_train_batch_size", "since": "transformers 5.0"},
    "per_gpu_eval_batch_size": {"replacement": "per_device_eval_batch_size", "since": "transformers 5.0"},
    "no_cuda": {"replacement": "use_cpu", "since": "transformers 5.0"},
    "adafactor": {"replacement": "optim", "since": "transformers 5.0", "hint": "write `optim: adafactor`"},
    "overwrite_output_dir": {"replacement": None, "since": "transformers 5.0"},
    "warmup_ratio": {"replacement": "warmup_steps", "since": "transformers 5.2",
                     "hint": "a warmup_steps value below 1 is read as a ratio of the total steps"},
    "max_seq_length": {"replacement": "max_length", "since": "TRL 0.20 (SFTConfig)"},
}


def removed_table() -> dict:
    try:
        from trainlint.catalog import schemas

        table = schemas.load_schema("hf-training-args").get("x-trainlint-removed")
        if isinstance(table, dict) and table:
            return table
    except Exception:  # noqa: BLE001
        pass
    return FALLBACK


def check(ctx: LintContext):
    doc = ctx.document
    root = doc.root
    if root is None or root.kind != "mapping":
        return
    dialect = hf_dialect(doc)
    if dialect == "open-instruct":
        return
    table = removed_table()
    for entry in root.entries:
        info = table.get(entry.key)
        if not isinstance(info, dict):
            continue
        if entry.key in TRL_ONLY and dialect != "trl":
            continue
        since = info.get("since") or "transformers 5"
        replacement = info.get("replacement")
        hint = info.get("hint")
        parser = "TrlParser stops with \"Unknown arguments from config file\"" if dialect == "trl" else \
            "HfArgumentParser stops with \"Some keys are not used by the HfArgumentParser\""
        todo = (f"use `{replacement}`" + (f" ({hint})" if hint else "")) if replacement else (hint or "remove it")
        yield RULE.at(doc, entry.key_span,
                      f"`{entry.key}` was removed in {since}: on that version and later {parser}. {todo[0].upper()}{todo[1:]}.",
                      list(_fixes(doc, root, entry, replacement)))


def _fixes(doc, root, entry, replacement):
    key, node = entry.key, entry.value
    if key == "adafactor":
        on = as_bool(node.value) if node.kind == "scalar" else None
        if on is False:
            yield fix("remove `adafactor: false`", delete_entry(doc, root, entry), safe=True)
        elif on and root.get("optim") is None:
            yield fix("write `optim: adafactor`", rename_key(doc, entry, "optim"),
                      replace_value(doc, node, "adafactor"), safe=True)
        return
    if key == "group_by_length":
        on = as_bool(node.value) if node.kind == "scalar" else None
        if on is False:
            yield fix("remove `group_by_length: false`", delete_entry(doc, root, entry), safe=True)
        elif on and root.get("train_sampling_strategy") is None:
            yield fix("write `train_sampling_strategy: group_by_length`", rename_key(doc, entry, "train_sampling_strategy"),
                      replace_value(doc, node, "group_by_length"), safe=False)
        return
    if key == "warmup_ratio":
        ratio = as_float(node.value) if node.kind == "scalar" else None
        if ratio is not None and 0 <= ratio < 1 and root.get("warmup_steps") is None:
            yield fix(f"write `warmup_steps: {node.raw}` (below 1 it is a ratio)", rename_key(doc, entry, "warmup_steps"),
                      safe=False)
        return
    if replacement and "." not in replacement and key not in ("include_inputs_for_metrics", "push_to_hub_organization",
                                                              "sharded_ddp", "amp_backend"):
        if root.get(replacement) is None:
            yield fix(f"rename to `{replacement}`", rename_key(doc, entry, replacement), safe=key in SAFE_RENAMES)
        else:
            yield fix(f"remove `{key}` (`{replacement}` is already set)", delete_entry(doc, root, entry), safe=False)
        return
    if not replacement:
        yield fix(f"remove `{key}`", delete_entry(doc, root, entry), safe=False)
