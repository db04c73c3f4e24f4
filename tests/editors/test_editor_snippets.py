"""The editor snippets under editors/ parse and start the server as `trainlint server`."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EDITORS = REPO / "editors"
GIT_URL = "git+https://github.com/trainlint/trainlint"  # trainlint is not on PyPI
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
    assert f'pip install "{GIT_URL}"' in vscode and f'pipx install "{GIT_URL}"' in vscode


# --- Real editors against the stub server (tests/editors/conftest.py), where installed ------------

NVIM = shutil.which("nvim")
EMACS = shutil.which("emacs")

NVIM_DRIVER = r"""
vim.cmd('filetype on')
local out = {}
local project = os.getenv('PROJECT')
local function open_and_wait(file)
  vim.cmd('edit ' .. vim.fn.fnameescape(project .. '/' .. file))
  local buf = vim.api.nvim_get_current_buf()
  local ok = vim.wait(10000, function() return #vim.diagnostic.get(buf) > 0 end, 50)
  table.insert(out, file .. ' filetype=' .. vim.bo.filetype .. ' diagnostics=' .. tostring(ok))
  return buf
end
local buf = open_and_wait('configs/ds_config.yaml')
open_and_wait('configs/zero3.json')
if vim.fn.has('nvim-0.8') == 1 and os.getenv('FIX_ALL') == '1' then
  vim.cmd('buffer ' .. buf)
  vim.lsp.buf.code_action({ context = { only = { 'source.fixAll.trainlint' } }, apply = true })
  vim.wait(5000, function() return vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == '# fixed' end, 50)
  table.insert(out, 'first_line=' .. vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1])
end
vim.fn.writefile(out, os.getenv('OUT'))
vim.cmd('qa!')
"""


def nvim_version() -> tuple[int, int]:
    first = subprocess.run([NVIM, "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]
    major, minor = re.search(r"v(\d+)\.(\d+)", first).groups()
    return int(major), int(minor)


def make_project(root: Path) -> Path:
    project = root / "project"
    (project / "configs").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[tool.trainlint]\n", encoding="utf-8")
    (project / "configs" / "ds_config.yaml").write_text("train_micro_batch_size_per_gpu: 4\n", encoding="utf-8")
    (project / "configs" / "zero3.json").write_text('{"zero_optimization": {"stage": 3}}\n', encoding="utf-8")
    return project


def run_nvim(tmp_path, lsp_stub, args, fix_all=False):
    project = make_project(tmp_path)
    driver = tmp_path / "driver.lua"
    driver.write_text(NVIM_DRIVER, encoding="utf-8")
    out = tmp_path / "out.txt"
    env = lsp_stub.env(
        PROJECT=str(project),
        OUT=str(out),
        FIX_ALL="1" if fix_all else "0",
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_STATE_HOME=str(tmp_path / "state"),
    )
    subprocess.run(
        [NVIM, "--headless", *args, "-c", f"luafile {driver}"],
        cwd=project, env=env, capture_output=True, text=True, timeout=60, check=True,
    )
    lines = out.read_text(encoding="utf-8").splitlines()
    assert "configs/ds_config.yaml filetype=yaml diagnostics=true" in lines, lines
    assert "configs/zero3.json filetype=json diagnostics=true" in lines, lines
    (server,) = lsp_stub.records()
    assert server["via"] == "path" and server["orig_argv"][-1] == "server"
    assert server["rootUri"] == project.as_uri()
    assert {language for _, language in server["opened"]} == {"yaml", "json"}
    return server, lines


@pytest.mark.skipif(NVIM is None, reason="nvim is not installed")
@pytest.mark.parametrize("style", ["lsp-folder", "init-lua"])
def test_neovim_011_lsp_config_attaches(tmp_path, lsp_stub, style):
    if nvim_version() < (0, 11):
        pytest.skip(f"vim.lsp.config needs Neovim 0.11+, found {'.'.join(map(str, nvim_version()))}")
    config = tmp_path / "config" / "nvim"
    (config / "lsp").mkdir(parents=True)
    if style == "lsp-folder":
        shutil.copy(EDITORS / "neovim" / "lsp" / "trainlint.lua", config / "lsp" / "trainlint.lua")
        (config / "init.lua").write_text("vim.lsp.enable('trainlint')\n", encoding="utf-8")
    else:
        readme = (EDITORS / "neovim" / "README.md").read_text(encoding="utf-8")
        (block,) = [b for b in re.findall(r"```lua\n(.*?)```", readme, re.S) if "vim.lsp.config(" in b]
        (config / "init.lua").write_text(block, encoding="utf-8")
    server, lines = run_nvim(tmp_path, lsp_stub, [], fix_all=True)
    assert "first_line=# fixed" in lines
    expected = {"gpu": "H100-80GB", "numGpus": 8} if style == "init-lua" else {}
    assert server["initializationOptions"] == expected
    assert server["configuration"] == [expected]
    assert server["didChangeConfiguration"] == [{"settings": {"trainlint": expected}}]


@pytest.mark.skipif(NVIM is None, reason="nvim is not installed")
def test_neovim_start_client_snippet_attaches(tmp_path, lsp_stub):
    readme = (EDITORS / "neovim" / "README.md").read_text(encoding="utf-8")
    (snippet,) = [b for b in re.findall(r"```lua\n(.*?)```", readme, re.S) if "vim.lsp.start_client(" in b]
    init = tmp_path / "init.lua"
    init.write_text(snippet, encoding="utf-8")
    server, _ = run_nvim(tmp_path, lsp_stub, ["--clean", "-u", str(init)])
    assert server["initializationOptions"] == {"gpu": "H100-80GB", "numGpus": 8}
    assert server["configuration"] == [{"gpu": "H100-80GB", "numGpus": 8}]


EMACS_DRIVER = r"""
(require 'eglot)
(unless (fboundp 'yaml-mode)  ; not built in before Emacs 29; a stand-in is enough here
  (define-derived-mode yaml-mode text-mode "YAML")
  (add-to-list 'auto-mode-alist '("\\.ya?ml\\'" . yaml-mode)))
(load (getenv "SNIPPET"))
(setq trainlint-eglot-settings '(:gpu "H100-80GB" :numGpus 8 :select ["TL1"]))
(eval (car (read-from-string (getenv "FIX_ON_SAVE"))))
(find-file (concat (getenv "PROJECT") "/configs/ds_config.yaml"))
(eglot-ensure)
(run-hooks 'post-command-hook)  ; eglot-ensure connects after the current command
(let ((n 0))
  (while (and (< n 100) (null (flymake-diagnostics)))
    (accept-process-output nil 0.1)
    (setq n (1+ n))))
(let ((summary (format "mode=%s server=%s diagnostics=%S\n" major-mode (and (eglot-current-server) t)
                       (mapcar #'flymake-diagnostic-text (flymake-diagnostics)))))
  (with-temp-file (getenv "OUT") (insert summary)))
(goto-char (point-max))
(insert "gradient_accumulation_steps: 2\n")
(save-buffer)
(eglot-shutdown (eglot-current-server))
"""


@pytest.mark.skipif(EMACS is None, reason="emacs is not installed")
def test_emacs_eglot_snippet_connects(tmp_path, lsp_stub):
    probe = subprocess.run([EMACS, "--batch", "-q", "--eval", "(require 'eglot)"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("eglot is not available to emacs --batch")
    readme = (EDITORS / "emacs" / "README.md").read_text(encoding="utf-8")
    (fix_on_save,) = [b for b in re.findall(r"```elisp\n(.*?)```", readme, re.S) if "before-save-hook" in b]
    project = make_project(tmp_path)
    driver = tmp_path / "driver.el"
    driver.write_text(EMACS_DRIVER, encoding="utf-8")
    out = tmp_path / "out.txt"
    env = lsp_stub.env(
        PROJECT=str(project),
        OUT=str(out),
        SNIPPET=str(EDITORS / "emacs" / "trainlint-eglot.el"),
        FIX_ON_SAVE=fix_on_save,
        HOME=str(tmp_path),
    )
    proc = subprocess.run(
        [EMACS, "--batch", "-q", "-l", str(driver)], cwd=project, env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert out.read_text(encoding="utf-8").startswith("mode=yaml-mode server=t diagnostics=(")
    assert "stub diagnostic" in out.read_text(encoding="utf-8")
    (server,) = lsp_stub.records()
    assert server["via"] == "path" and server["orig_argv"][-1] == "server"
    settings = {"gpu": "H100-80GB", "numGpus": 8, "select": ["TL1"]}
    assert server["initializationOptions"] == settings
    assert server["configuration"] == [settings]
    assert server["didChangeConfiguration"] == [{"settings": {"trainlint": settings}}]
    # The README's fix-on-save hook applied the server's source.fixAll.trainlint edit.
    assert (project / "configs" / "ds_config.yaml").read_text(encoding="utf-8").startswith("# fixed\n")
