"""`python -m trainlint.lsp`: the language server over stdio."""

from trainlint.lsp.server import run

if __name__ == "__main__":
    run()
