"""The editor snippets under editors/ parse and start the server as `trainlint server`."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EDITORS = REPO / "editors"
SERVER_SETTINGS = ["gpu", "numGpus", "model", "seqLen", "select", "ignore", "failLevel"]


def squash(text: str) -> str:
    """Collapse quotes, commas and whitespace so `{ 'trainlint', 'server' }` reads `trainlint server`."""
    return re.sub(r"[\s'\",]+", " ", text)


def test_helix_languages_toml():
    config = tomllib.loads((EDITORS / "helix" / "languages.toml").read_text(encoding="utf-8"))
    server = config["language-server"]["trainlint"]
    assert [server["command"], *server["args"]] == ["trainlint", "server"]
    languages = {entry["name"]: entry["language-servers"] for entry in config["language"]}
    for name in ("yaml", "json", "jsonc"):
        assert "trainlint" in languages[name]
        assert len(languages[name]) > 1, f"{name}: keep the default servers next to trainlint"
    for line in (EDITORS / "helix" / "languages.toml").read_text(encoding="utf-8").splitlines():
        if line.startswith("# ") and " = " in line:
            key = line[2:].split(" = ", 1)[0]
            if key in SERVER_SETTINGS:
                tomllib.loads(line[2:].split("#", 1)[0])  # the commented examples are valid TOML


def test_neovim_config_starts_trainlint_server():
    lua = (EDITORS / "neovim" / "lsp" / "trainlint.lua").read_text(encoding="utf-8")
    assert "cmd = { 'trainlint', 'server' }" in lua
    assert "trainlint server" in squash(lua)
    assert "filetypes = { 'yaml', 'json', 'jsonc' }" in lua
    assert "root_markers = { 'pyproject.toml', 'trainlint.toml', '.git' }" in lua
    assert "init_options = settings" in lua
    assert "settings = { trainlint = settings }" in lua
    for key in SERVER_SETTINGS:
        assert f"-- {key} = " in lua, key


def test_neovim_readme_snippets_start_trainlint_server():
    readme = (EDITORS / "neovim" / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```lua\n(.*?)```", readme, re.S)
    for api in ("vim.lsp.config(", "vim.lsp.enable(", "configs.trainlint", "vim.lsp.start_client(", "buf_attach_client"):
        assert any(api in block for block in blocks), api
    for block in blocks:
        if "cmd =" in block:
            assert "cmd = { 'trainlint', 'server' }" in block
    assert "vim.lsp.buf.code_action(" in readme
    assert "vim.lsp.buf.hover()" in readme


def test_emacs_eglot_snippet_starts_trainlint_server():
    elisp = (EDITORS / "emacs" / "trainlint-eglot.el").read_text(encoding="utf-8")
    assert '("trainlint" "server"' in elisp
    assert "trainlint server" in squash(elisp)
    assert "eglot-server-programs" in elisp
    assert ":initializationOptions" in elisp
    assert "eglot-workspace-configuration" in elisp
    for mode in ("yaml-mode", "yaml-ts-mode", "json-mode", "json-ts-mode"):
        assert mode in elisp
    assert elisp.count("(") == elisp.count(")")


def test_readmes_exist_and_link_each_editor():
    index = (EDITORS / "README.md").read_text(encoding="utf-8")
    for folder in ("vscode", "neovim", "helix", "emacs"):
        assert (EDITORS / folder / "README.md").is_file()
        assert f"({folder}/)" in index
    assert "trainlint server" in index
    for key in SERVER_SETTINGS:
        assert f"`{key}`" in index
    vscode = (EDITORS / "vscode" / "README.md").read_text(encoding="utf-8")
    assert "code --install-extension" in vscode
    assert '"source.fixAll.trainlint": "explicit"' in vscode
    assert "pip install trainlint" in vscode
