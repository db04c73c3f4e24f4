"""Stage 7, fixes: minimal text edits, applying them, and the memory planner.

`edits` makes edits that keep comments, order and formatting (replace a value, insert, rename or delete a
key in YAML and JSON); `apply` applies fixes for `--fix` / `--diff` (re-lint until settled, atomic writes);
`planner` searches knob changes that make a run fit, each re-estimated; `knobs` knows where each flavor keeps
a setting. May import: `document`, `plan`, `memory`, `catalog`, `diagnostics`.
"""
