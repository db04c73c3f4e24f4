"""TL011 unusable-number: a count that no run can have (infinite, NaN, fractional, negative, zero or beyond any run).

**What**: a value trainlint reads as a count of the run (micro-batch, accumulation steps, sequence length, GPU and node
counts, parallel sizes, ZeRO stage, LoRA rank, image count and size) that is not a whole number within its bounds:
`.inf`, `-.inf`, `.nan`, `1e+308`, `2.5`, `-3`, `0` where at least 1 is needed, or more than 2,147,483,647
(`plan.COUNT_BOUNDS`: the one place every config value passes before it reaches the estimate).

**Why**: the frameworks cannot run it. PyTorch's DataLoader takes the micro-batch as its `batch_size` and stops
with "batch_size should be a positive integer value, but got batch_size=inf" (`torch/utils/data/sampler.py:
BatchSampler.__init__`); a rank, a GPU count or an accumulation count of that kind fails where the framework
first uses it. trainlint leaves the value out of the memory estimate (the field keeps its default, which the
finding names) and checks the rest of the file.

**Evidence**: `torch/utils/data/sampler.py: BatchSampler.__init__` ("batch_size should be a positive integer value,
but got batch_size={batch_size}"), for the micro-batch; the bounds of the other counts are the frameworks' own
minimums (TL522 and TL200 name the framework messages for the zero and negative batch sizes they check).

**Example**: `micro_batch_size: .inf` → "`micro_batch_size: .inf` is not a micro-batch size a run can have (not a
finite number)".

**Fix**: none automatic: the intended number is unknown.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.flavors.base import NUMBER_LIMIT
from trainlint.plan import COUNT_BOUNDS, COUNT_LABELS, COUNT_LIMIT, RANK_BOUNDS, Rejected, count_problem
from trainlint.rules.base import LintContext, Rule

RULE = Rule("TL011", "unusable-number", Severity.WARNING,
            "A count no run can have (infinite, NaN, fractional, negative, zero, or beyond any run)",
            framework="torch", evidence="torch/utils/data/sampler.py: BatchSampler.__init__",
            raises="batch_size should be a positive integer value, but got batch_size={batch_size}")

_RANK_KEYS = (("lora_r",), ("lora_rank",), ("model", "lora_rank"), ("peft", "r"), ("r",))


def check(ctx: LintContext):
    plan = ctx.plan
    if plan is None:
        return
    seen: set = set()
    for rejected in plan.rejected:
        found = _where(ctx, rejected)
        if found is None:
            continue
        doc, span, key = found
        if (doc.path, span) in seen:
            continue
        seen.add((doc.path, span))
        written = doc.text[span.start.offset:span.end.offset].strip() or str(rejected.value)
        if len(written) > 40:
            written = written[:20] + f"... ({len(written)} characters)"
        label = COUNT_LABELS.get(rejected.field, rejected.field)
        problem = _problem(doc, span, rejected)
        detail = (f"trainlint leaves it out of the memory estimate and checks the rest; a count is a whole number up to "
                  f"{COUNT_LIMIT:,}.")
        if rejected.field == "micro_batch":
            detail += (" PyTorch's DataLoader stops on it: \"batch_size should be a positive integer value, but got "
                       f"batch_size={written}\" (torch/utils/data/sampler.py: BatchSampler.__init__).")
        article = "an" if label[:1] in "aeiou" else "a"
        yield RULE.diagnostic(doc.path, span, f"`{key}: {written}` cannot be {article} {label} ({problem})",
                              detail=detail)


def _problem(doc, span, rejected: Rejected) -> str:
    """What is wrong with the value as written (the plan holds UNUSABLE_COUNT for a number that is no integer)."""
    node = next((n for n in doc.root.walk() if n.kind == "scalar" and n.span == span), None) \
        if doc.root is not None else None
    value = node.value if node is not None else rejected.value
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return rejected.problem
    if isinstance(value, float) and value.is_integer() and abs(value) <= NUMBER_LIMIT:
        value = int(value)
    bounds = RANK_BOUNDS if rejected.field == "peft.rank" else COUNT_BOUNDS.get(rejected.field, RANK_BOUNDS)
    return count_problem(value, bounds) or rejected.problem


def _where(ctx: LintContext, rejected: Rejected):
    """The document, span and key of a rejected value: where its origin says, or for a LoRA rank the rank's key."""
    origin = rejected.origin
    if origin.kind not in ("config", "linked") or not origin.path:
        return None
    doc = ctx.document if origin.path == ctx.document.path else next(
        (d for d in ctx.linked if d.path == origin.path), None)
    if doc is None:
        return None
    if rejected.field == "peft.rank":
        for path in _RANK_KEYS:
            node = doc.find(path)
            if node is not None and node.kind == "scalar":
                return doc, node.span, ".".join(path)
        return None
    if origin.span is None:
        return None
    return doc, origin.span, ".".join(str(k) for k in origin.key_path)
