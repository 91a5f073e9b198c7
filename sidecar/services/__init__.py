"""The behaviour, written once: indexing, graph queries, search, lint, memory."""
