-- Neovim's own LSP client (0.7+) drives `rwgate lsp` over the buffer nvim was started on:
-- wait for the diagnostics of the first pass, cite a retracted work in the buffer (unsaved),
-- remove it, cite it again and :write. After each step the buffer's diagnostics are written,
-- as JSON lines, to the file RWGATE_NVIM_OUT names. Every wait is on the diagnostics; the
-- limit only stops a run that would otherwise hang.
local out = assert(io.open(os.getenv("RWGATE_NVIM_OUT"), "w"))
local rwgate = os.getenv("RWGATE_NVIM_SERVER")
local key = os.getenv("RWGATE_NVIM_KEY")
local added = os.getenv("RWGATE_NVIM_ADDED")
local hang = 120000

local buf = vim.api.nvim_get_current_buf()
local client = vim.lsp.start_client({
  name = "rwgate",
  cmd = { rwgate, "lsp" },
  root_dir = vim.fn.expand("%:p:h"),
})
vim.lsp.buf_attach_client(buf, client)

local function cites(wanted)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local lsp = (d.user_data or {}).lsp or {}
    if ((lsp.data or {}).key) == wanted then
      return true
    end
  end
  return false
end

local function record(step)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local lsp = (d.user_data or {}).lsp or {}
    local line = vim.api.nvim_buf_get_lines(buf, d.lnum, d.lnum + 1, false)[1] or ""
    out:write(vim.fn.json_encode({
      step = step,
      key = (lsp.data or {}).key or vim.NIL,
      code = lsp.code or vim.NIL,
      tags = lsp.tags or {},
      severity = d.severity,
      message = d.message,
      text = string.sub(line, d.col + 1, d.end_col),
    }) .. "\n")
  end
  out:flush()
end

local function step(name, ok)
  if not vim.wait(hang, ok, 20) then
    out:write(vim.fn.json_encode({ step = name, timeout = true }) .. "\n")
  end
  record(name)
end

step("open", function() return cites("wakefield1998") end)
local last = vim.api.nvim_buf_line_count(buf)
vim.api.nvim_buf_set_lines(buf, last, last, false, { "", added })
step("cited", function() return cites(key) end)
vim.api.nvim_buf_set_lines(buf, last, last + 2, false, {})
step("removed", function() return not cites(key) end)
vim.api.nvim_buf_set_lines(buf, last, last, false, { "", added })
vim.cmd("write")
step("saved", function() return cites(key) end)
out:close()
vim.lsp.stop_client(client)
vim.wait(5000, function() return vim.lsp.get_client_by_id(client) == nil end, 50)
vim.cmd("qall!")
