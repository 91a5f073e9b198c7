"""The one place that touches LanceDB and the vault's files."""

import os

# lance's Rust logger reports "no existing dataset, creating" as a WARN on stderr; keep stderr for
# what the user needs to see (set LANCE_LOG yourself to debug the store).
os.environ.setdefault("LANCE_LOG", "error")
