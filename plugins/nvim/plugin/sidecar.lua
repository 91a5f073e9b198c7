-- :Sidecar backlinks|relations|search|lint|reminders|status — see :help sidecar.
if vim.g.loaded_sidecar then
  return
end
vim.g.loaded_sidecar = true

vim.api.nvim_create_user_command("Sidecar", function(opts)
  require("sidecar").command(opts)
end, {
  nargs = "*",
  desc = "Vault Sidecar: backlinks, relations, search, lint, reminders, status",
  complete = function(arglead, cmdline)
    return require("sidecar").complete(arglead, cmdline)
  end,
})
