"""Vault Sidecar: a local knowledge-graph sidecar for Markdown vaults."""

__version__ = "0.1.0"
