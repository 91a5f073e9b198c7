"""The daemon's Unix-socket server: NDJSON framing and connection management, nothing else.

What a request means is the codec's business (``jsonrpc.handle_line``) and what a method does
is the dispatch callable's, so this module only has to get the operating-system details right:
a private socket (0600 in a 0700 directory, bound under a restrictive umask so there is no
window), one daemon per socket path, a peer-uid check, and clients that cannot hurt each other.

Policies, chosen so that a misbehaving client costs only itself:

* Each connection is read by its own task; a client that sends half a line and stalls only
  blocks its own reader. Complete lines run as concurrent tasks (at most ``max_inflight`` per
  connection, after which reading pauses and the kernel pushes back on the client); replies
  may come back out of order, matched by id, and one sender task per connection serialises
  the writes.
* A line longer than ``max_line_bytes`` is skipped up to its newline without being kept and
  answered with -32600 "request too large"; the connection stays usable.
* Replies and notifications wait in a per-connection queue bounded by ``max_queued_bytes``
  (one message always fits, however large). A client that does not read until the queue
  overflows is disconnected and the event is logged: the daemon's memory must not grow
  because somebody's plugin hung.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import struct
from pathlib import Path
from typing import Any

from sidecar.errors import MethodNotFound, UsageError
from sidecar.transports.jsonrpc import (
    INVALID_REQUEST,
    Dispatch,
    encode_error,
    encode_notification,
    handle_line,
)
from sidecar.transports.unix_client import RpcClient
from sidecar.transports.unix_path import bind_private_socket, default_socket_path, is_serving

__all__ = ["EVENTS", "RpcClient", "RpcServer", "default_socket_path", "is_serving"]

EVENTS = frozenset({"index.changed", "lint.completed", "reminder.due"})
MiB = 1024 * 1024
_log = logging.getLogger(__name__)


class RpcServer:
    """JSON-RPC 2.0 over a Unix socket, with ``events.subscribe``/``unsubscribe`` built in.

    ``read_only_methods``, when given, is an allow-list: any other method answers -32601, so a
    read-only endpoint can be exposed without the dispatch callable knowing about it.
    """

    def __init__(
        self,
        socket_path: Path,
        dispatch: Dispatch,
        *,
        max_line_bytes: int = 64 * MiB,
        read_only_methods: set[str] | None = None,
        max_queued_bytes: int = 64 * MiB,
        max_inflight: int = 32,
        events: frozenset[str] = EVENTS,
    ) -> None:
        self.socket_path = Path(socket_path)
        self._dispatch = dispatch
        self._max_line = max_line_bytes
        self._allowed = read_only_methods
        self._max_queued = max_queued_bytes
        self._max_inflight = max_inflight
        self._events = events
        self._uid = os.getuid()
        self._server: asyncio.Server | None = None
        self._identity: tuple[int, int] | None = None
        self._conns: set[_Connection] = set()

    async def start(self) -> None:
        """Bind and listen; raises SidecarError if another daemon already serves this path."""
        sock = bind_private_socket(self.socket_path)
        try:
            self._server = await asyncio.start_unix_server(
                self._serve_connection, sock=sock, limit=self._max_line
            )
        except BaseException:
            sock.close()
            raise
        st = os.stat(self.socket_path)
        self._identity = (st.st_dev, st.st_ino)

    async def stop(self) -> None:
        """Close every connection, cancel in-flight requests and remove our socket file."""
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        await asyncio.sleep(0)  # let just-accepted connections start and see that we stopped
        handlers = [c.handler for c in self._conns]
        for task in handlers:
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)
        await server.wait_closed()
        self._remove_socket_file()

    async def notify(self, event: str, params: dict[str, Any]) -> None:
        """Send the notification ``event`` to every connection subscribed to it."""
        if event not in self._events:
            raise ValueError(f"unknown event {event!r}; known: {sorted(self._events)}")
        data = encode_notification(event, params).encode() + b"\n"
        for conn in list(self._conns):
            if event in conn.events:
                conn.send(data)

    def _remove_socket_file(self) -> None:
        """Unlink the socket only if it is still ours, not a successor daemon's."""
        try:
            st = os.lstat(self.socket_path)
        except FileNotFoundError:
            return
        if (st.st_dev, st.st_ino) == self._identity:
            self.socket_path.unlink(missing_ok=True)

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        if self._server is None or not self._peer_allowed(writer):
            writer.close()
            return
        handler = asyncio.current_task()
        assert handler is not None, "asyncio serves each connection in a task"
        conn = _Connection(writer, handler, self._max_queued)
        self._conns.add(conn)
        slots = asyncio.Semaphore(self._max_inflight)
        try:
            while (line := await self._next_line(reader, conn)) is not None:
                if not line.strip():
                    continue
                await slots.acquire()
                task = asyncio.create_task(self._answer(conn, line, slots))
                conn.tasks.add(task)
                task.add_done_callback(conn.tasks.discard)
            await conn.finish()
        except OSError:
            pass
        finally:
            self._conns.discard(conn)
            await conn.close()

    async def _next_line(self, reader: asyncio.StreamReader, conn: _Connection) -> bytes | None:
        """The next line, ``None`` at end of stream; oversized lines are skipped and refused."""
        while True:
            try:
                return await reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as exc:
                return exc.partial or None  # be lenient with a last line lacking its newline
            except asyncio.LimitOverrunError as exc:
                if not await _skip_line(reader, exc.consumed):
                    return None
                message = f"request too large: a line may hold at most {self._max_line} bytes"
                conn.send(encode_error(None, INVALID_REQUEST, message).encode() + b"\n")

    async def _answer(self, conn: _Connection, line: bytes, slots: asyncio.Semaphore) -> None:
        async def dispatch(method: str, params: dict[str, Any]) -> Any:
            return await self._route(conn, method, params)

        try:
            reply = await handle_line(line, dispatch)
            if reply is not None:
                conn.send(reply.encode() + b"\n")
        except Exception:  # handle_line answers everything; this is a bug, keep serving
            _log.exception("unexpected failure answering a request")
        finally:
            slots.release()

    async def _route(self, conn: _Connection, method: str, params: dict[str, Any]) -> Any:
        if method == "events.subscribe":
            conn.events |= self._event_names(params)
            return {"subscribed": sorted(conn.events)}
        if method == "events.unsubscribe":
            conn.events -= self._event_names(params)
            return {"subscribed": sorted(conn.events)}
        if self._allowed is not None and method not in self._allowed:
            raise MethodNotFound(f"method {method!r} is not available on this read-only socket")
        return await self._dispatch(method, params)

    def _event_names(self, params: dict[str, Any]) -> set[str]:
        names = params.get("events")
        if names is None:
            return set(self._events)
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise UsageError('"events" must be a list of event names')
        unknown = sorted(set(names) - self._events)
        if unknown:
            known = {"known": sorted(self._events)}
            raise UsageError(f"unknown event(s): {', '.join(unknown)}", known)
        return set(names)

    def _peer_allowed(self, writer: asyncio.StreamWriter) -> bool:
        """Refuse other users even if the socket's mode were loosened (Linux SO_PEERCRED)."""
        sock = writer.get_extra_info("socket")
        if sock is None or not hasattr(socket, "SO_PEERCRED"):
            return True
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", raw)
        if uid != self._uid:
            _log.warning("refused a connection from uid %d on %s", uid, self.socket_path)
            return False
        return True


class _Connection:
    """One client: its subscriptions, in-flight requests and bounded outgoing queue."""

    def __init__(
        self, writer: asyncio.StreamWriter, handler: asyncio.Task[Any], max_queued: int
    ) -> None:
        self.writer = writer
        self.handler = handler
        self.events: set[str] = set()
        self.tasks: set[asyncio.Task[None]] = set()
        self._max_queued = max_queued
        self._queue: list[bytes] = []
        self._queued = 0
        self._wake = asyncio.Event()
        self._closing = False
        self._sender = asyncio.create_task(self._send_loop())

    def send(self, data: bytes) -> None:
        """Queue ``data``; drop the connection instead if its reader has fallen too far behind."""
        if self._closing:
            return
        if self._queue and self._queued + len(data) > self._max_queued:
            _log.warning(
                "dropping a client that does not read its replies (%d bytes queued)", self._queued
            )
            self._closing = True
            self._queue.clear()
            for task in self.tasks:
                task.cancel()
            self.writer.transport.abort()
            return
        self._queue.append(data)
        self._queued += len(data)
        self._wake.set()

    async def _send_loop(self) -> None:
        try:
            while not (self._closing and not self._queue):
                await self._wake.wait()
                self._wake.clear()
                batch, self._queue, self._queued = self._queue, [], 0
                for data in batch:
                    self.writer.write(data)
                    await self.writer.drain()
        except OSError:  # the peer went away; the reader side notices and cleans up
            self._closing = True

    async def finish(self) -> None:
        """The client hung up its side: let in-flight requests answer, then flush."""
        await asyncio.gather(*self.tasks, return_exceptions=True)
        self._closing = True
        self._wake.set()
        await self._sender

    async def close(self) -> None:
        self._closing = True
        pending = [*self.tasks, self._sender]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        self.writer.close()
        with contextlib.suppress(OSError):
            await self.writer.wait_closed()


async def _skip_line(reader: asyncio.StreamReader, consumed: int) -> bool:
    """Discard an oversized line through its newline; False if the stream ended first."""
    try:
        while True:
            await reader.readexactly(consumed)
            try:
                await reader.readuntil(b"\n")
                return True
            except asyncio.LimitOverrunError as exc:
                consumed = exc.consumed
    except asyncio.IncompleteReadError:
        return False
