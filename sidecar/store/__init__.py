"""The one place that touches LanceDB and the vault's files."""

from __future__ import annotations

import importlib.util
import sys
import types

REST_CLIENT = "lance_namespace_urllib3_client"


def _skip_rest_client_api() -> None:
    """Let LanceDB import its REST namespace client's models without the client's API modules.

    ``import lancedb`` imports that generated client (lancedb 0.40), whose package ``__init__``
    imports every API module, each method wrapped by pydantic: 13 MiB resident and 0.45 s at
    start-up (129 -> 116 MiB after ``import lancedb``), for a REST server a local store never
    calls. Registered without running its ``__init__``, the package still imports each model
    from its own module. A REST connection would fail; we open none.
    """
    if REST_CLIENT in sys.modules:
        return
    spec = importlib.util.find_spec(REST_CLIENT)
    if spec is None or spec.submodule_search_locations is None:
        return
    package = types.ModuleType(REST_CLIENT, "LanceDB's REST namespace client, without its API")
    package.__spec__ = spec
    package.__path__ = list(spec.submodule_search_locations)
    sys.modules[REST_CLIENT] = package


_skip_rest_client_api()
