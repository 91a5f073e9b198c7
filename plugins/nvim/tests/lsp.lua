-- Neovim as a user runs it with the `sidecar lsp` snippet of docs/lsp.md, no plugin loaded.
-- tests/test_lsp_neovim.py runs
--   nvim --headless -u NONE -i NONE -c "luafile plugins/nvim/tests/lsp.lua"
-- in a folder outside the vault, with SIDECAR_LSP_SNIPPET (the snippet, copied verbatim from the
-- docs into a file), SIDECAR_NOTE (a note whose path has a space) and SIDECAR_OUT (a JSON report).
-- It opens the note, types a broken link, waits for its diagnostic, applies the preferred code
-- action and reports the buffer, then asks for the note's references and reports each item as
-- Neovim lists it (its line, and the text its range covers, cut in the negotiated encoding).
-- Any Lua error is written to the report and exits non-zero.
local out_path = assert(vim.env.SIDECAR_OUT, "SIDECAR_OUT is not set")
local report = { steps = {} }

local function wait(what, cond, ms)
  if not vim.wait(ms or 30000, cond, 20) then
    error("timed out waiting for " .. what)
  end
  table.insert(report.steps, what)
end

local function run()
  dofile(assert(vim.env.SIDECAR_LSP_SNIPPET, "SIDECAR_LSP_SNIPPET is not set"))
  vim.cmd("filetype on")
  local note = assert(vim.env.SIDECAR_NOTE, "SIDECAR_NOTE is not set")
  vim.cmd.edit(vim.fn.fnameescape(note))
  local buf = vim.api.nvim_get_current_buf()
  report.filetype = vim.bo[buf].filetype
  wait("the server attached", function()
    return #vim.lsp.get_clients({ bufnr = buf, name = "sidecar" }) > 0
  end)
  local client = vim.lsp.get_clients({ bufnr = buf, name = "sidecar" })[1]
  report.root_dir = client.root_dir
  wait("the first diagnostics", function()
    return vim.diagnostic.get(buf) ~= nil and client.initialized
  end)
  local last = vim.api.nvim_buf_line_count(buf)
  vim.api.nvim_buf_set_lines(buf, last, last, false, { "", "Typed: see [[Sesion Store]] now." })
  local typed = last + 1
  local broken
  wait("the broken link's diagnostic", function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.message:find("Sesion Store", 1, true) then
        broken = d
        return true
      end
    end
    return false
  end)
  report.diagnostic = { lnum = broken.lnum, col = broken.col, code = broken.code, message = broken.message }
  vim.api.nvim_win_set_cursor(0, { typed + 1, broken.col + 3 })
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      return action.isPreferred == true
    end,
  })
  wait("the preferred fix applied", function()
    return vim.api.nvim_buf_get_lines(buf, typed, typed + 1, false)[1]:find("[[Session Store]]", 1, true) ~= nil
  end)
  report.line = vim.api.nvim_buf_get_lines(buf, typed, typed + 1, false)[1]
  report.modified = vim.bo[buf].modified
  -- what `vim.lsp.buf.references()` puts in the quickfix list, asked from line 1 (the note)
  local res = client:request_sync("textDocument/references", {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = 0, character = 0 },
    context = { includeDeclaration = false },
  }, 30000, buf)
  assert(res and not res.err, "references failed: " .. vim.inspect(res))
  report.encoding = client.offset_encoding
  report.references = {}
  for _, item in ipairs(vim.lsp.util.locations_to_items(res.result or {}, client.offset_encoding)) do
    table.insert(report.references, {
      file = item.filename,
      lnum = item.lnum,
      covered = item.text:sub(item.col, item.end_col - 1),
    })
  end
end

local ok, err = xpcall(run, debug.traceback)
if not ok then
  report.error = err
end
local f = assert(io.open(out_path, "w"))
f:write(vim.json.encode(report))
f:close()
vim.cmd(ok and "qall!" or "cquit! 1")
