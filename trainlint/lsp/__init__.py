"""The trainlint language server (`trainlint server`): LSP over stdio on top of the engine.

Only this package imports pygls and lsprotocol. `server.py` holds the handlers (thin), `state.py` the
server object and its per-document lint state, `convert.py`
the pure conversions (positions, diagnostics, edits, markdown), `options.py` the client settings and
`features.py` hover, completion, inlay hints and suppression comments.
"""
