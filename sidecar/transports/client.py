"""What a transport needs of a client of the methods, and one that reconnects when it drops."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, Protocol

from sidecar.errors import DaemonUnreachable


class Client(Protocol):
    def call(self, method: str, params: dict[str, Any] | None = None) -> Any: ...

    def close(self) -> None: ...


class Reconnecting:
    """A client from ``connect``, opened at the first call and reopened once per call when its
    connection drops (the daemon restarted). Not thread-safe."""

    def __init__(self, connect: Callable[[], Client]) -> None:
        self._connect = connect
        self._client: Client | None = None

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        try:
            if self._client is None:
                self._client = self._connect()
            return self._client.call(method, params)
        except DaemonUnreachable:
            self.close()
            self._client = self._connect()
            return self._client.call(method, params)

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()
