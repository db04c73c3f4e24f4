"""A real editor: headless Neovim (Debian's 0.7.2, `apt-get install neovim`) drives `trainlint server`
with its built-in LSP client, receives the diagnostics, asks for a hover and for the code actions at the finding and
applies the preferred one to the buffer. Neovim 0.7 has no pull diagnostics and sends no
Diagnostic.data, so this checks the push path and fixes computed from the current text."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, TRAIN_YAML

NVIM = shutil.which("nvim")

LUA = r"""
local out, e = {}, os.getenv
local function emit(s) table.insert(out, s) end
local ok, err = pcall(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(e('DOC')))
  local buf = vim.api.nvim_get_current_buf()
  local id = vim.lsp.start_client({ name = 'trainlint', cmd = { e('PY'), '-m', 'trainlint.lsp' },
                                    root_dir = e('ROOT'), init_options = { numGpus = 8 } })
  vim.lsp.buf_attach_client(buf, id)
  emit('diagnostics_arrived=' .. tostring(vim.wait(30000, function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.user_data and d.user_data.lsp and d.user_data.lsp.code == 'TL004' then return true end
    end
    return false
  end, 50)))
  -- The hover `K` shows on the save_strategy key (line 7), as Neovim's floating window gets it.
  local hover = vim.lsp.buf_request_sync(buf, 'textDocument/hover', {
    textDocument = { uri = vim.uri_from_bufnr(buf) }, position = { line = 7, character = 3 } }, 20000)
  local contents = hover and hover[id] and hover[id].result and hover[id].result.contents
  if contents then
    emit('hover_kind=' .. tostring(contents.kind))
    local lines = vim.lsp.util.convert_input_to_markdown_lines(contents)
    emit('hover_key=' .. tostring(table.concat(lines, '\n'):find('save_strategy', 1, true) ~= nil))
  end
  local target
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    emit(string.format('diag %d:%d %s', d.lnum, d.col, d.user_data.lsp.code))
    if d.user_data.lsp.code == 'TL004' then target = d end
  end
  local res = vim.lsp.buf_request_sync(buf, 'textDocument/codeAction', {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = { start = { line = target.lnum, character = target.col },
              ['end'] = { line = target.end_lnum, character = target.end_col } },
    context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(buf, target.lnum) } }, 20000)
  local chosen
  for _, action in ipairs(res[id].result or {}) do
    emit('action ' .. action.title)
    if action.isPreferred and not chosen then chosen = action end
  end
  vim.lsp.util.apply_workspace_edit(chosen.edit, 'utf-16')
  emit('line=' .. vim.api.nvim_buf_get_lines(buf, target.lnum, target.lnum + 1, false)[1])
  vim.lsp.stop_client(id)
end)
if not ok then emit('error ' .. tostring(err)) end
vim.fn.writefile(out, e('OUT'))
vim.cmd('qa!')
"""


@pytest.mark.skipif(NVIM is None, reason="nvim not found on PATH (Debian: apt-get install -y neovim)")
def test_headless_neovim_diagnostic_and_code_action(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    doc = root / "train.yaml"
    doc.write_text(TRAIN_YAML, encoding="utf-8")
    (root / "ds_zero2.json").write_text('{"zero_optimization": {"stage": 2}}\n', encoding="utf-8")
    script = tmp_path / "drive.lua"
    script.write_text(LUA, encoding="utf-8")
    out = tmp_path / "out.txt"
    env = {**os.environ, "DOC": str(doc), "ROOT": str(root), "PY": sys.executable, "OUT": str(out),
           "PYTHONPATH": str(REPO), "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    subprocess.run([NVIM, "--headless", "--clean", "-u", "NONE", "-c", f"luafile {script}"], env=env, cwd=str(root),
                   timeout=120, check=True, capture_output=True)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert "diagnostics_arrived=true" in lines, lines
    assert not any(line.startswith("error") for line in lines), lines
    assert "diag 7:15 TL004" in lines, lines
    assert "hover_kind=markdown" in lines and "hover_key=true" in lines, lines  # Neovim asks for markdown first
    assert any(line.startswith("action ") and "disable TL004 on this line" in line for line in lines), lines
    assert 'line=save_strategy: "no"' in lines, lines
    assert doc.read_text(encoding="utf-8") == TRAIN_YAML, "the buffer changed, not the file"
