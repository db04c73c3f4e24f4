"""Stage 1, document: a file's text to a tree of nodes with exact positions.

`tree` holds the node model (`Document`, `Node`, `Entry`, the recorded problems); `yaml_parser` and
`json_parser` fill it; `reading` reads files (guards, cache, unsaved-buffer overlay) and picks the parser.
May import: `trainlint.diagnostics` only.
"""
