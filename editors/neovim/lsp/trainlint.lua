-- trainlint language server for Neovim 0.11+.
-- Copy this file to ~/.config/nvim/lsp/trainlint.lua and add `vim.lsp.enable('trainlint')`
-- to your init.lua. Requires the `trainlint` executable on $PATH (`pipx install "git+https://github.com/trainlint/trainlint"`);
-- to use a specific Python instead: cmd = { '/path/to/python', '-m', 'trainlint', 'server' }.

-- Unset (nil) values fall back to [tool.trainlint] in pyproject.toml / trainlint.toml,
-- then to what the config file itself says.
local settings = {
  -- gpu = 'H100-80GB',                 -- catalog name, alias, or a capacity such as '24GiB'
  -- numGpus = 8,                       -- total number of GPUs
  -- model = 'meta-llama/Llama-3.1-8B', -- or a local directory with a config.json
  -- seqLen = 4096,
  -- select = { 'TL1' },
  -- ignore = { 'TL201' },
  -- failLevel = 'warning',
}
if next(settings) == nil then
  settings = vim.empty_dict() -- sent as {} (a plain empty table would be sent as [])
end

return {
  cmd = { 'trainlint', 'server' },
  filetypes = { 'yaml', 'json', 'jsonc' },
  root_markers = { 'pyproject.toml', 'trainlint.toml', '.git' },
  init_options = settings,
  -- Answers workspace/configuration for the 'trainlint' section.
  settings = { trainlint = settings },
}
