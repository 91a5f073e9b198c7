"""``sidecar lsp``: a Language Server over the daemon (links, backlinks, lint in any editor)."""
