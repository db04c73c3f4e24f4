"""trainlint: lint deep-learning training configs and predict their per-GPU memory.

The packages are the pipeline, in order: `document` (text to a positioned tree) -> `flavors` (a reader per
format) -> `plan` (the normalized run) with its `context` (settings, suppressions, launch, versions) ->
`catalog` (GPUs, models, schemas) -> `memory` (the estimate) -> `rules` -> `fixes`. `engine` runs it for one
file; `cli`, `output` and `lsp` are the shells around it.
"""

__version__ = "0.1.0"
