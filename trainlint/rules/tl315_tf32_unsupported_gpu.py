"""TL315 tf32-unsupported-gpu: `tf32: true` for a GPU older than Ampere.

**What**: TrainingArguments (HF, TRL, LLaMA-Factory) or Axolotl `tf32: true` when the target GPU
(`--gpu`, a `# trainlint: gpu=...` comment or `[tool.trainlint]`) has no TF32 tensor cores (V100, T4,
P100: the same GPUs that lack bf16).

**Why**: `TrainingArguments.__post_init__` checks the device and stops: "--tf32 requires Ampere or a
newer GPU arch, cuda>=11 and torch>=1.7" (transformers `training_args.py`). Axolotl passes `tf32` on
to TrainingArguments; its `tf32: auto` enables TF32 only where it exists and is not reported.

**Evidence**: `transformers/training_args.py: TrainingArguments.__post_init__` (stops); verified against
transformers 4.52 - 5.24. First message: "--tf32 requires Ampere or a newer GPU arch, cuda>=11 and
torch>=1.7".

**Example**: `tf32: true` with `--gpu V100-32GB` → `tf32: false`.

**Fix** (safe: the GPU cannot use TF32 anyway, so matmuls run in fp32 either way): `tf32: false`.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.fixes.edits import fix, replace_value
from trainlint.rules._frameworks import flag, target_gpu
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL315", "tf32-unsupported-gpu", Severity.ERROR,
            "tf32 on a GPU older than Ampere", flavors=("huggingface", "axolotl"),
            framework="transformers", evidence="transformers/training_args.py: TrainingArguments.__post_init__",
            raises="--tf32 requires Ampere or a newer GPU arch, cuda>=11 and torch>=1.7")


def check(ctx: LintContext):
    gpu = target_gpu(ctx)
    doc = ctx.document
    if gpu is None or gpu.bf16 or doc.root is None or doc.root.kind != "mapping":
        return
    entry = doc.root.entry("tf32")
    if entry is None or flag(entry.value) is not True:
        return
    yield RULE.at(doc, entry.key_span,
                  f"`tf32: {entry.value.raw}` but the target {gpu.name} has no TF32 tensor cores: TrainingArguments stops",
                  [fix("write `tf32: false`", replace_value(doc, entry.value, False), safe=True)],
                  detail="TF32 needs an Ampere or newer GPU: TrainingArguments stops with \"--tf32 requires Ampere or a "
                         "newer GPU arch, cuda>=11 and torch>=1.7\". Write `tf32: false`.")
