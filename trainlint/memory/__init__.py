"""Stage 5, memory: plan + architecture + GPU to a per-GPU `Breakdown` (pure functions, no I/O).

`estimate` resolves a `TrainingPlan` into a `Run` and attaches the result to a lint context; `model` models
the step phase by phase, tensor by tensor; `breakdown` is the result and its JSON; `render` the table of
`trainlint estimate`. May import: `plan`, `catalog`, `diagnostics`.
"""
