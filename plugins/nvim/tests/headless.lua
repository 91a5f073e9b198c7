-- Drives the plugin headless against the real daemon; tests/test_plugins.py runs it with
--   nvim --headless -u NONE -i NONE --cmd "set rtp^=plugins/nvim" -c "luafile plugins/nvim/tests/headless.lua"
-- and SIDECAR_VAULT (a served vault copy) and SIDECAR_OUT (where to write what happened, as JSON;
-- the Python test asserts on it). Any Lua error is written there too and exits non-zero.
local out_path = assert(vim.env.SIDECAR_OUT, "SIDECAR_OUT is not set")
local vault = assert(vim.env.SIDECAR_VAULT, "SIDECAR_VAULT is not set")
local report = {}

local function wait(what, cond, ms)
  if not vim.wait(ms or 20000, cond, 20) then
    error("timed out waiting for " .. what)
  end
end

local function run()
  vim.cmd("runtime plugin/sidecar.lua")
  report.command_defined = vim.fn.exists(":Sidecar") == 2
  local sidecar = require("sidecar")
  sidecar.setup({ vault = vault, telescope = false, open_quickfix = true, sidecar_cmd = vim.env.SIDECAR_BIN })
  local methods = require("sidecar.methods")
  report.unknown_methods = vim.tbl_filter(function(m)
    return methods[m] == nil
  end, sidecar.USED_METHODS)
  report.socket = require("sidecar.discovery").socket(sidecar.vault(), { sidecar_cmd = "" })

  -- a blocking call
  local back, err = sidecar.call_sync("note.backlinks", { note = "auth" })
  assert(err == nil, vim.inspect(err))
  report.backlinks_path = back.path
  report.backlinks_sources = vim.tbl_map(function(b)
    return b.source
  end, back.backlinks)

  -- errors: the plugin refuses unknown methods and params itself; the daemon's come through
  local _, e1 = sidecar.call_sync("note.backlink", { note = "auth" })
  local _, e2 = sidecar.call_sync("note.backlinks", { note = "auth", depth = 2 })
  local _, e3 = sidecar.call_sync("note.backlinks", { note = "No Such Note Anywhere" })
  report.errors = { e1 and e1.message, e2 and e2.message, e3 and e3.code }

  -- :Sidecar backlinks from the note's buffer, through vim.ui.select; choose Welcome.md
  local offered
  vim.ui.select = function(items, opts, on_choice)
    offered = { prompt = opts.prompt, labels = vim.tbl_map(opts.format_item, items) }
    for _, item in ipairs(items) do
      if item.path and item.path:match("Welcome%.md$") then
        return on_choice(item)
      end
    end
    on_choice(nil)
  end
  vim.cmd("edit " .. vim.fn.fnameescape(vault .. "/services/Auth Service.md"))
  report.current_note = sidecar.current_note()
  vim.cmd("Sidecar backlinks")
  wait("the backlinks picker", function()
    return offered ~= nil and vim.api.nvim_buf_get_name(0):match("Welcome%.md$") ~= nil
  end)
  report.backlinks_picker = offered
  report.opened = { file = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(0), ":t"), line = vim.api.nvim_win_get_cursor(0)[1] }

  -- relations of a superseded decision
  offered = nil
  vim.cmd("Sidecar relations decisions/ADR-6 Sessions in Memcached.md")
  wait("the relations picker", function()
    return offered ~= nil
  end)
  report.relations = offered.labels

  -- search with a mode prefix
  offered = nil
  vim.cmd("Sidecar search /l memcached restart")
  wait("the search picker", function()
    return offered ~= nil
  end)
  report.search = offered

  -- reminders (an empty list is fine: the picker says so)
  local reminders, rerr = sidecar.call_sync("reminders.due", {})
  report.reminders = rerr == nil and type(reminders.due) == "table"

  -- lint into the quickfix list
  vim.fn.setqflist({}, "r")
  vim.cmd("Sidecar lint")
  wait("the quickfix list", function()
    return #vim.fn.getqflist() > 0
  end)
  report.quickfix_title = vim.fn.getqflist({ title = 1 }).title
  report.quickfix = vim.tbl_map(function(q)
    return { file = vim.fn.bufname(q.bufnr), lnum = q.lnum, type = q.type, text = q.text }
  end, vim.fn.getqflist())
  report.quickfix_open = vim.fn.getwininfo()[1] ~= nil
    and #vim.tbl_filter(function(w)
        return w.quickfix == 1
      end, vim.fn.getwininfo())
      > 0

  -- index.changed arrives as a User autocmd
  local changed
  vim.api.nvim_create_autocmd("User", {
    pattern = "SidecarIndexChanged",
    callback = function(ev)
      if vim.tbl_contains(ev.data.paths or {}, "Nvim note.md") then
        changed = ev.data
      end
    end,
  })
  vim.fn.writefile({ "# Nvim note", "", "Written from Neovim; see [[Alice]]." }, vault .. "/Nvim note.md")
  wait("SidecarIndexChanged", function()
    return changed ~= nil
  end)
  report.index_changed = changed

  -- :checkhealth sidecar
  vim.cmd("checkhealth sidecar")
  report.health = vim.api.nvim_buf_get_lines(0, 0, -1, false)
end

local ok, problem = xpcall(run, debug.traceback)
if not ok then
  report.error = problem
end
vim.fn.writefile({ vim.json.encode(report) }, out_path)
vim.cmd(ok and "qall!" or "cquit! 1")
