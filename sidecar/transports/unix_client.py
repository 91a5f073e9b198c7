"""The synchronous socket client used by the CLI, the tests and anything without an event loop.

Plain ``socket`` on purpose: a CLI call must start fast and must not drag in asyncio. Errors
the daemon sends come back as the same typed ``SidecarError`` in-process code would raise, so
callers cannot tell (and need not care) which way a method was reached.
"""

from __future__ import annotations

import itertools
import os
import socket
from collections import deque
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from sidecar.errors import DaemonUnreachable, error_from_dict
from sidecar.transports.jsonrpc import Notification, Response, encode_request, parse_message

__all__ = ["RpcClient"]

_CHUNK = 1 << 20


class RpcClient:
    """One connection to the daemon; connects at construction. Not thread-safe.

    ``timeout`` bounds each wait for the daemon (``None`` waits forever: use it for calls that
    legitimately take long, such as a full reindex). Exceeding it raises DaemonUnreachable.
    """

    def __init__(self, path: Path | str, timeout: float | None = 30.0) -> None:
        self.path = Path(path)
        self._timeout = timeout
        self._ids = itertools.count(1)
        self._buffer = bytearray()
        self._scanned = 0  # bytes of _buffer already known to hold no newline
        self._notifications: deque[Notification] = deque()
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(timeout)
        try:
            self._sock.connect(os.fspath(self.path))
        except OSError as exc:
            self._sock.close()
            raise DaemonUnreachable(
                f"no daemon is serving at {self.path}: {exc.strerror or exc}",
                {"socket": str(self.path)},
            ) from exc

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """The method's result, or raise the typed error the daemon sent."""
        ident = next(self._ids)
        self._send(encode_request(method, params, ident))
        while True:
            try:
                message = self._receive(self._timeout)
            except TimeoutError as exc:
                raise DaemonUnreachable(
                    f"the daemon at {self.path} did not answer {method} within {self._timeout} s"
                ) from exc
            if isinstance(message, Notification):
                self._notifications.append(message)
            elif message.id == ident or message.id is None:
                if message.error is not None:
                    raise error_from_dict(message.error)
                return message.result
            # else: a late answer to an earlier call that timed out; skip it

    def subscribe(
        self, events: Iterable[str] | None = None, *, timeout: float | None = None
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """Subscribe now (errors raise here), then iterate ``(event, params)`` notifications.

        The iterator ends when the daemon closes the connection, or when ``timeout`` seconds
        pass without a notification.
        """
        params = {} if events is None else {"events": list(events)}
        self.call("events.subscribe", params)
        return self._notifications_until(timeout)

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> RpcClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _notifications_until(self, timeout: float | None) -> Iterator[tuple[str, dict[str, Any]]]:
        while True:
            while self._notifications:
                note = self._notifications.popleft()
                yield note.method, note.params
            try:
                message = self._receive(timeout)
            except (TimeoutError, DaemonUnreachable):
                return
            if isinstance(message, Notification):
                yield message.method, message.params

    def _send(self, line: str) -> None:
        try:
            self._sock.sendall(line.encode() + b"\n")
        except OSError as exc:
            raise DaemonUnreachable(f"lost the connection to the daemon at {self.path}") from exc

    def _receive(self, timeout: float | None) -> Response | Notification:
        """The next message; TimeoutError after ``timeout`` s, DaemonUnreachable at EOF."""
        self._sock.settimeout(timeout)
        while True:
            newline = self._buffer.find(b"\n", self._scanned)
            if newline >= 0:
                line = bytes(self._buffer[:newline])
                del self._buffer[: newline + 1]
                self._scanned = 0
                if line.strip():
                    return parse_message(line)
                continue
            self._scanned = len(self._buffer)
            try:
                chunk = self._sock.recv(_CHUNK)
            except TimeoutError:
                raise
            except OSError as exc:
                raise DaemonUnreachable(
                    f"lost the connection to the daemon at {self.path}"
                ) from exc
            if not chunk:
                raise DaemonUnreachable(f"the daemon at {self.path} closed the connection")
            self._buffer += chunk
