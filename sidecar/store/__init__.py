"""The one place that touches LanceDB and the vault's files."""
