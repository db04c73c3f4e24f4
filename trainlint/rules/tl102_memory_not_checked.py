"""TL102 memory-not-checked: trainlint could not give a memory verdict for this config, and says why.

**What**: no estimate (the config names no model, or a model trainlint cannot size offline), or an
estimate without a verdict (the target GPU or the number of GPUs a sharded run uses is not known).

**Why**: a missing verdict is not a passing one. Naming the model (`--model`, or
`# trainlint: model=meta-llama/Llama-3.1-8B` / a local folder with its config.json), the GPU
(`--gpu`) and the GPU count (`--num-gpus`) turns it into a checked estimate. DeepSpeed and Accelerate
files never name a model; check them through the HF/Lightning config that links them, or give
`--model`.

**Fix**: none; add the missing settings.
"""

from __future__ import annotations

from trainlint.diagnostics import Severity
from trainlint.rules.base import LintContext, Rule
from trainlint.rules.memory_common import verdict_basis

RULE = Rule("TL102", "memory-not-checked", Severity.INFO, "No memory verdict could be made, and why")


def check(ctx: LintContext):
    if ctx.plan is None:
        return
    if ctx.estimate is None:
        problem = ctx.unestimable
        if problem is None:
            return
        target = problem.setting.origin.span if problem.setting is not None and \
            problem.setting.origin.path == ctx.document.path else None
        yield RULE.at(ctx.document, target, f"no memory estimate: {problem.reason}")
        return
    basis = verdict_basis(ctx)
    if basis is None:
        return
    est = ctx.estimate
    yield RULE.at(ctx.document, None,
                  f"estimated {est.total / 2**30:.1f} GiB per GPU on {est.gpu_count} GPU(s), but no fit verdict: {basis}")
