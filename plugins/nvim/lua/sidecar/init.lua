-- Vault Sidecar for Neovim: backlinks, typed relations, search and reminders in a picker, graph
-- lint in the quickfix list, over the daemon's socket. See :help sidecar.
local client_mod = require("sidecar.client")
local discovery = require("sidecar.discovery")
local format = require("sidecar.format")
local picker = require("sidecar.picker")

local uv = vim.uv or vim.loop

local M = {}

M.config = {
  vault = nil, -- default: $SIDECAR_VAULT, else the nearest parent holding .obsidian/ or .sidecar/
  socket = nil, -- default: discovered as the daemon computes it
  sidecar_cmd = "sidecar", -- asked with `sidecar where --json` when no socket is found
  timeout = 30000,
  telescope = true, -- use telescope when installed
  events = true, -- keep a connection to receive index.changed / reminder.due (User autocmds)
  search_mode = "hybrid",
  search_limit = 30,
  open_quickfix = true,
}

--- Every method this plugin calls; :checkhealth and the tests check them against methods.lua.
M.USED_METHODS = { "index.status", "note.backlinks", "note.links", "search", "lint.run", "reminders.due" }

local clients = {}
local retry = { attempt = 0 }

function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", M.config, opts or {})
  for _, c in pairs(clients) do
    c:close()
  end
  clients = {}
end

local function buffer_dir()
  local name = vim.api.nvim_buf_get_name(0)
  if name ~= "" then
    return vim.fn.fnamemodify(name, ":p:h")
  end
  return uv.cwd()
end

function M.vault()
  return discovery.find_vault(M.config.vault, buffer_dir())
end

local EVENTS = {
  ["index.changed"] = "SidecarIndexChanged",
  ["lint.completed"] = "SidecarLintCompleted",
  ["reminder.due"] = "SidecarReminderDue",
}

local function on_notification(method, params)
  if method == "reminder.due" then
    vim.notify(("sidecar: reminder due: %s"):format(params.title or params.id or "?"), vim.log.levels.WARN)
  end
  local pattern = EVENTS[method]
  if pattern then
    vim.api.nvim_exec_autocmds("User", { pattern = pattern, data = params, modeline = false })
  end
end

local function subscribe(c)
  if not M.config.events then
    return
  end
  retry.attempt = 0
  c:request("events.subscribe", { events = vim.tbl_keys(EVENTS) }, function() end)
end

--- Reconnect with backoff while events are wanted (0.5 s doubling to 30 s).
local function schedule_reconnect(c)
  if not M.config.events then
    return
  end
  local delay = math.min(30000, 500 * 2 ^ retry.attempt)
  retry.attempt = retry.attempt + 1
  vim.defer_fn(function()
    if c.state == "down" then
      c.path = discovery.socket(c.vault, M.config) or c.path
      c:connect(function(err)
        if err then
          schedule_reconnect(c)
        end
      end)
    end
  end, delay)
end

--- The client for `vault` (default: the current buffer's vault), created on first use.
function M.client(vault)
  vault = vault or M.vault()
  if vault == nil then
    return nil, "not inside a vault: set require('sidecar').setup({ vault = ... }) or $SIDECAR_VAULT"
  end
  local c = clients[vault]
  if c == nil or c.state == "closed" then
    c = client_mod.new({
      path = discovery.socket(vault, M.config),
      timeout = M.config.timeout,
      on_notification = on_notification,
      on_connect = subscribe,
    })
    c.on_lost = function()
      schedule_reconnect(c)
    end
    c.vault = vault
    clients[vault] = c
  elseif c.state == "down" then
    c.path = discovery.socket(vault, M.config) or c.path -- the daemon may have moved
  end
  return c
end

--- Async call: cb(err, result) on the main loop; err is a JSON-RPC error object.
function M.call(method, params, cb)
  local c, problem = M.client()
  if c == nil then
    return cb({ code = -32001, message = problem }, nil)
  end
  c:request(method, params, cb)
end

--- Blocking call (scripts, tests): result, err.
function M.call_sync(method, params, timeout)
  local c, problem = M.client()
  if c == nil then
    return nil, { code = -32001, message = problem }
  end
  return c:request_sync(method, params, timeout)
end

local function fail(what, err)
  vim.notify(("sidecar: %s: %s"):format(what, err.message or vim.inspect(err)), vim.log.levels.ERROR)
end

--- The current buffer as a vault-relative note path (the daemon also accepts names).
function M.current_note()
  local vault = M.vault()
  local file = vim.api.nvim_buf_get_name(0)
  if vault == nil or file == "" then
    return nil
  end
  file = uv.fs_realpath(file) or file
  if file:sub(1, #vault + 1) ~= vault .. "/" then
    return nil
  end
  return file:sub(#vault + 2)
end

local function note_arg(arg)
  if arg and arg ~= "" then
    return arg
  end
  local note = M.current_note()
  if note == nil then
    vim.notify("sidecar: name a note, or open one inside the vault", vim.log.levels.WARN)
  end
  return note
end

local function pick(title, items)
  picker.pick(title, items, nil, { telescope = M.config.telescope })
end

-- ------------------------------------------------------------------------------ commands

function M.backlinks(arg)
  local note = note_arg(arg)
  if note == nil then
    return
  end
  local vault = M.vault()
  M.call("note.backlinks", { note = note }, function(err, result)
    if err then
      return fail("backlinks", err)
    end
    pick("Backlinks: " .. result.path, format.backlinks(vault, result))
  end)
end

function M.relations(arg)
  local note = note_arg(arg)
  if note == nil then
    return
  end
  local vault = M.vault()
  M.call("note.links", { note = note }, function(err, result)
    if err then
      return fail("relations", err)
    end
    pick("Relations: " .. result.path, format.relations(vault, result))
  end)
end

function M.search(input)
  if input == nil or vim.trim(input) == "" then
    return vim.ui.input({ prompt = "Sidecar search (/l /s /h for a mode): " }, function(text)
      if text and vim.trim(text) ~= "" then
        M.search(text)
      end
    end)
  end
  local mode, query = format.search_input(input, M.config.search_mode)
  local vault = M.vault()
  M.call("search", { query = query, mode = mode, limit = M.config.search_limit }, function(err, result)
    if err then
      return fail("search", err)
    end
    pick(("Search (%s): %s"):format(mode, query), format.search(vault, result))
  end)
end

--- Graph lint into the quickfix list; `done(entries)` is called after (tests use it).
function M.lint(done)
  local vault = M.vault()
  M.call("lint.run", { fail_on = "never" }, function(err, result)
    if err then
      return fail("lint", err)
    end
    local entries = format.quickfix(vault, result)
    vim.fn.setqflist({}, " ", { title = "Sidecar graph lint", items = entries })
    if M.config.open_quickfix and #entries > 0 then
      vim.cmd("copen")
    end
    vim.notify(("sidecar: %d lint findings"):format(#entries), vim.log.levels.INFO)
    if done then
      done(entries)
    end
  end)
end

function M.reminders()
  local vault = M.vault()
  M.call("reminders.due", {}, function(err, result)
    if err then
      return fail("reminders", err)
    end
    pick("Reminders", format.reminders(vault, result))
  end)
end

function M.status()
  M.call("index.status", {}, function(err, s)
    if err then
      return fail("status", err)
    end
    local pending = s.pending > 0 and (", %d chunks to embed"):format(s.pending) or ""
    vim.notify(("sidecar: %d notes, %d chunks%s; model %s"):format(s.notes, s.chunks, pending, s.model or "?"))
  end)
end

M.subcommands = {
  backlinks = M.backlinks,
  relations = M.relations,
  search = M.search,
  lint = function()
    M.lint()
  end,
  reminders = M.reminders,
  status = M.status,
}

--- :Sidecar {subcommand} [args]
function M.command(opts)
  local sub, rest = (opts.args or ""):match("^%s*(%S*)%s*(.-)%s*$")
  local fn = M.subcommands[sub]
  if fn == nil then
    return vim.notify("sidecar: usage: :Sidecar " .. table.concat(vim.tbl_keys(M.subcommands), "|"), vim.log.levels.ERROR)
  end
  fn(rest ~= "" and rest or nil)
end

function M.complete(arglead, cmdline)
  if cmdline:match("^%s*%S+%s+%S+%s") then
    return {}
  end
  local names = vim.tbl_keys(M.subcommands)
  table.sort(names)
  return vim.tbl_filter(function(n)
    return n:sub(1, #arglead) == arglead
  end, names)
end

return M
