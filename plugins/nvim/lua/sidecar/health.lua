-- :checkhealth sidecar — Neovim version, vault, socket, daemon, and the generated method table.
local M = {}

local health = vim.health or require("health")
local start = health.start or health.report_start
local ok = health.ok or health.report_ok
local warn = health.warn or health.report_warn
local error = health.error or health.report_error
local info = health.info or health.report_info

function M.check()
  start("sidecar: Neovim")
  if vim.uv then
    ok("vim.uv is available (Neovim " .. tostring(vim.version()) .. ")")
  elseif vim.loop then
    warn("vim.uv is missing; using vim.loop. Neovim 0.10 or newer is recommended.")
  else
    error("neither vim.uv nor vim.loop: this Neovim cannot open sockets")
    return
  end

  start("sidecar: method table")
  local methods = require("sidecar.methods")
  local sidecar = require("sidecar")
  local missing = {}
  for _, name in ipairs(sidecar.USED_METHODS) do
    if methods[name] == nil then
      table.insert(missing, name)
    end
  end
  if #missing == 0 then
    ok(("all %d methods the plugin calls are in methods.lua"):format(#sidecar.USED_METHODS))
  else
    error("methods.lua lacks: " .. table.concat(missing, ", "), { "regenerate it: python -m sidecar.api.typegen" })
  end

  start("sidecar: vault and daemon")
  local vault = sidecar.vault()
  if vault == nil then
    warn("no vault for the current buffer", {
      "open a note inside a folder holding .obsidian/ or .sidecar/",
      "or set require('sidecar').setup({ vault = '~/notes' }) or $SIDECAR_VAULT",
    })
    return
  end
  ok("vault: " .. vault)
  local discovery = require("sidecar.discovery")
  local socket = discovery.socket(vault, sidecar.config)
  if socket == nil then
    error("no socket path could be computed")
    return
  end
  if discovery.is_socket(socket) then
    ok("socket: " .. socket)
  else
    error("no daemon socket at " .. socket, { "start the daemon: sidecar serve --vault " .. vault })
    info("candidates: " .. table.concat(discovery.candidates(vault), ", "))
    return
  end
  local status, err = sidecar.call_sync("index.status", {}, 5000)
  if err then
    error("index.status failed: " .. (err.message or vim.inspect(err)))
    return
  end
  ok(("daemon answers: %d notes, %d chunks, %d pending, model %s"):format(status.notes, status.chunks, status.pending, tostring(status.model)))

  start("sidecar: optional")
  if pcall(require, "telescope") then
    ok("telescope found: results open in a telescope picker")
  else
    info("telescope not found: results use vim.ui.select")
  end
end

return M
