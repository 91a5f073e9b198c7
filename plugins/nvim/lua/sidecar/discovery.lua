-- Which vault, and where its daemon listens, computed as the daemon computes it
-- (sidecar/config.py Settings.vault_id, sidecar/transports/unix_path.py default_socket_path):
--   vault-id = <folder name, 24 characters> .. "-" .. sha1(absolute vault path):sub(1, 10)
--   $XDG_RUNTIME_DIR/sidecar/<vault-id>.sock, <data dir>/sock/s, /tmp/sidecar-<uid>/<vault-id>.sock
-- The first existing socket wins; `sidecar where --json` is asked when none exists.
local uv = vim.uv or vim.loop
local sha1 = require("sidecar.sha1")

local M = {}

local MAX_DEFAULT_BYTES = 100

local function is_dir(path)
  local st = uv.fs_stat(path)
  return st ~= nil and st.type == "directory"
end

function M.is_socket(path)
  local st = uv.fs_stat(path)
  return st ~= nil and st.type == "socket"
end

local function realpath(path)
  return uv.fs_realpath(path) or path
end

--- The vault: the explicit one, else $SIDECAR_VAULT, else the nearest parent of `start`
--- holding .obsidian/ or .sidecar/ (the CLI's rule).
function M.find_vault(explicit, start)
  local given = explicit or vim.env.SIDECAR_VAULT
  if given and given ~= "" then
    local path = vim.fn.fnamemodify(vim.fn.expand(given), ":p"):gsub("/$", "")
    return realpath(path)
  end
  local dir = start or uv.cwd()
  while dir and dir ~= "" do
    if is_dir(dir .. "/.obsidian") or is_dir(dir .. "/.sidecar") then
      return realpath(dir)
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      break
    end
    dir = parent
  end
  return nil
end

--- First `n` UTF-8 characters of `s`, as Python's s[:n].
local function utf8_prefix(s, n)
  local count, i = 0, 1
  while i <= #s and count < n do
    local c = s:byte(i)
    i = i + (c >= 240 and 4 or c >= 224 and 3 or c >= 192 and 2 or 1)
    count = count + 1
  end
  return s:sub(1, i - 1)
end

function M.vault_id(vault)
  local name = vim.fn.fnamemodify(vault, ":t")
  local short = utf8_prefix(name, 24)
  if short == "" then
    short = "vault"
  end
  return short .. "-" .. sha1.hex(vault):sub(1, 10)
end

--- `[daemon] socket_path` and `[index] data_dir` from <vault>/.sidecar/config.toml.
function M.read_config(vault)
  local out = {}
  local ok, lines = pcall(vim.fn.readfile, vault .. "/.sidecar/config.toml")
  if not ok then
    return out
  end
  local section = ""
  for _, line in ipairs(lines) do
    local header = line:match("^%s*%[([^%]]+)%]%s*$")
    if header then
      section = vim.trim(header)
    else
      local key, value = line:match('^%s*([%w_-]+)%s*=%s*"([^"]*)"')
      if section == "daemon" and key == "socket_path" then
        out.socket_path = value
      elseif section == "index" and key == "data_dir" then
        out.data_dir = value
      end
    end
  end
  return out
end

local function expand(path)
  return (path:gsub("^~", vim.env.HOME or "~"))
end

--- Every place the daemon may listen, most likely first.
function M.candidates(vault)
  local id = M.vault_id(vault)
  local cfg = M.read_config(vault)
  local out = {}
  local function add(p)
    if p and p ~= "" and not vim.tbl_contains(out, p) then
      table.insert(out, p)
    end
  end
  add(vim.env.SIDECAR_DAEMON_SOCKET_PATH and expand(vim.env.SIDECAR_DAEMON_SOCKET_PATH))
  add(cfg.socket_path and expand(cfg.socket_path))
  local defaults = {}
  if vim.env.XDG_RUNTIME_DIR and vim.env.XDG_RUNTIME_DIR ~= "" then
    table.insert(defaults, vim.env.XDG_RUNTIME_DIR .. "/sidecar/" .. id .. ".sock")
  end
  local data_home = vim.env.XDG_DATA_HOME
  if data_home == nil or data_home == "" then
    data_home = (vim.env.HOME or "") .. "/.local/share"
  end
  for _, dir in ipairs({
    vim.env.SIDECAR_DATA_DIR,
    vim.env.SIDECAR_INDEX_DATA_DIR,
    cfg.data_dir and expand(cfg.data_dir),
    data_home .. "/sidecar/" .. id,
  }) do
    if dir and dir ~= "" then
      table.insert(defaults, dir .. "/sock/s")
    end
  end
  table.insert(defaults, "/tmp/sidecar-" .. tostring(uv.getuid and uv.getuid() or 0) .. "/" .. id .. ".sock")
  for _, p in ipairs(defaults) do
    if #p < MAX_DEFAULT_BYTES then
      add(p)
    end
  end
  return out
end

--- `sidecar where --json --vault VAULT`, or nil.
function M.where(cmd, vault)
  if cmd == nil or cmd == "" or vim.fn.executable(cmd) ~= 1 then
    return nil
  end
  local out = vim.fn.system({ cmd, "where", "--json", "--vault", vault })
  if vim.v.shell_error ~= 0 then
    return nil
  end
  local ok, parsed = pcall(vim.json.decode, out)
  return ok and type(parsed) == "table" and parsed.socket or nil
end

--- The socket to use for `vault`: explicit, else the first existing candidate, else the CLI's
--- answer, else the first candidate (the daemon may not have started yet).
function M.socket(vault, opts)
  opts = opts or {}
  if opts.socket and opts.socket ~= "" then
    return opts.socket
  end
  if vault == nil then
    return nil
  end
  local candidates = M.candidates(vault)
  for _, p in ipairs(candidates) do
    if M.is_socket(p) then
      return p
    end
  end
  return M.where(opts.sidecar_cmd, vault) or candidates[1]
end

return M
