"""The daemon's Unix-socket server: NDJSON framing and connection management, nothing else.

What a request means is the codec's business (``jsonrpc.handle_line``) and what a method does
is the dispatch callable's, so this module only has to get the operating-system details right:
a private socket (0600 in a 0700 directory, bound under a restrictive umask so there is no
window), one daemon per socket path, a peer-uid check, and clients that cannot hurt each other
or the daemon.

Policies, chosen so that a misbehaving client costs only itself (each limit is a setting):

* Each connection is read by its own task; a client that sends half a line and stalls only
  blocks its own reader, and is closed after ``idle_line_seconds`` (as is one that connects
  and never sends a whole line). Complete lines run as concurrent tasks (at most
  ``max_inflight`` per connection and ``max_requests`` in all, after which reading pauses and
  the kernel pushes back on the client); replies may come back out of order, matched by id,
  and one sender task per connection serialises the writes.
* A line longer than ``max_line_bytes`` is skipped up to its newline without being kept and
  answered with -32600 "request too large"; the connection stays usable.
* At most ``max_connections`` clients: one more gets an error line and is closed at once, so
  idle connections cannot use up the daemon's descriptors. Accepting is our own loop: when the
  process is out of descriptors anyway, it backs off (up to 5 s) and logs once a minute, where
  asyncio's loop logged ~100 tracebacks a second (668 MB of log in two minutes).
* Replies and notifications wait in a per-connection queue bounded by ``max_queued_bytes``
  (one message always fits, however large), and everything buffered (queued replies and half
  lines) across all connections by ``max_buffered_bytes``. A client that does not read until a
  bound is passed is disconnected and the event is logged: the daemon's memory must not grow
  because somebody's plugin hung.
* A dropped connection takes its work with it: its queued and running requests are cancelled
  and its unread lines are never run.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import socket
import struct
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from sidecar.errors import MethodNotFound, UsageError
from sidecar.transports.jsonrpc import (
    DEFAULT_BATCH,
    INVALID_REQUEST,
    BatchLimits,
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
SERVER_BUSY = -32000
_OUT_OF_RESOURCES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
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
        max_line_bytes: int = 16 * MiB,
        read_only_methods: set[str] | None = None,
        max_queued_bytes: int = 64 * MiB,
        max_inflight: int = 32,
        events: frozenset[str] = EVENTS,
        batch: BatchLimits = DEFAULT_BATCH,
        max_connections: int = 256,
        idle_line_seconds: float = 30.0,
        max_requests: int = 64,
        max_buffered_bytes: int = 256 * MiB,
    ) -> None:
        self.socket_path = Path(socket_path)
        self._dispatch = dispatch
        self._max_line = max_line_bytes
        self._allowed = read_only_methods
        self._max_queued = max_queued_bytes
        self._max_inflight = max_inflight
        self._events = events
        self._batch = batch
        self._max_connections = max_connections
        self._idle = idle_line_seconds
        self._max_requests = max_requests
        self._budget = _Budget(max_buffered_bytes)
        self._uid = os.getuid()
        self._sock: socket.socket | None = None
        self._acceptor: asyncio.Task[None] | None = None
        self._running: asyncio.Semaphore | None = None
        self._identity: tuple[int, int] | None = None
        self._conns: set[_Connection] = set()
        self._handlers: set[asyncio.Task[None]] = set()
        self._refusals = _RateLimited("refused %d connections: %s")
        self._accept_errors = _RateLimited("accept() failed %d times: %s; backing off")

    async def start(self) -> None:
        """Bind and listen; raises SidecarError if another daemon already serves this path."""
        sock = bind_private_socket(self.socket_path)
        try:
            sock.listen(128)
        except BaseException:
            sock.close()
            raise
        self._sock = sock
        self._running = asyncio.Semaphore(self._max_requests)
        st = os.stat(self.socket_path)
        self._identity = (st.st_dev, st.st_ino)
        self._acceptor = asyncio.get_running_loop().create_task(self._accept_loop(sock))

    async def stop(self) -> None:
        """Close every connection, cancel in-flight requests and remove our socket file."""
        sock, self._sock = self._sock, None
        if sock is None:
            return
        if self._acceptor is not None:
            self._acceptor.cancel()
            await asyncio.gather(self._acceptor, return_exceptions=True)
        sock.close()
        await asyncio.sleep(0)  # let just-accepted connections start and see that we stopped
        handlers = list(self._handlers)
        for task in handlers:
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)
        self._remove_socket_file()

    async def notify(self, event: str, params: dict[str, Any]) -> None:
        """Send the notification ``event`` to every connection subscribed to it."""
        if event not in self._events:
            raise ValueError(f"unknown event {event!r}; known: {sorted(self._events)}")
        data = encode_notification(event, params).encode() + b"\n"
        for conn in list(self._conns):
            if event in conn.events:
                conn.send(data)

    def subscribed(self, event: str) -> int:
        """How many connections are subscribed to ``event`` (call on the loop's thread)."""
        return sum(event in conn.events for conn in self._conns)

    def _remove_socket_file(self) -> None:
        """Unlink the socket only if it is still ours, not a successor daemon's."""
        try:
            st = os.lstat(self.socket_path)
        except FileNotFoundError:
            return
        if (st.st_dev, st.st_ino) == self._identity:
            self.socket_path.unlink(missing_ok=True)

    # -- accepting --------------------------------------------------------------------------

    async def _accept_loop(self, sock: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        delay = 0.0
        while True:
            try:
                client, _ = await loop.sock_accept(sock)
            except OSError as exc:
                if exc.errno not in _OUT_OF_RESOURCES:
                    raise
                delay = min(max(delay * 2, 0.05), 5.0)
                self._accept_errors.log(exc.strerror or str(exc))
                await asyncio.sleep(delay)
                continue
            delay = 0.0
            if len(self._handlers) >= self._max_connections:
                self._refuse(client)
                continue
            task = loop.create_task(self._serve_socket(client))
            self._handlers.add(task)
            task.add_done_callback(self._handlers.discard)

    def _refuse(self, client: socket.socket) -> None:
        why = f"too many connections: at most {self._max_connections} (limits.max_connections)"
        with contextlib.suppress(OSError):
            client.setblocking(False)
            client.send(encode_error(None, SERVER_BUSY, why).encode() + b"\n")
        client.close()
        self._refusals.log(why)

    async def _serve_socket(self, client: socket.socket) -> None:
        try:
            reader, writer = await asyncio.open_unix_connection(sock=client)
        except OSError:
            client.close()
            return
        await self._serve_connection(reader, writer)

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        if self._sock is None or not self._peer_allowed(writer):
            writer.close()
            return
        handler = asyncio.current_task()
        assert handler is not None, "each connection is served in a task"
        conn = _Connection(writer, handler, self._max_queued, self._budget)
        self._conns.add(conn)
        slots = asyncio.Semaphore(self._max_inflight)
        try:
            async for line in self._lines(reader, conn):
                if conn.closing:
                    break  # dropped: what it sent and we have not run yet is not run
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

    # -- framing ----------------------------------------------------------------------------

    async def _lines(self, reader: asyncio.StreamReader, conn: _Connection) -> AsyncIterator[bytes]:
        """Complete lines; an oversized one is answered -32600 and skipped through its
        newline; half a line left idle (or no line at all) closes the connection."""
        buf = bytearray()
        skipping = False  # inside an oversized line, dropping bytes until its newline
        seen_line = False
        while not conn.closing:
            waiting = bool(buf) or skipping or not seen_line
            try:
                chunk = await asyncio.wait_for(
                    reader.read(1 << 16), self._idle if waiting else None
                )
            except TimeoutError:
                if not (buf or skipping or self._crowded()):
                    continue  # connected, nothing sent yet: closed only when seats run short
                why = f"closing: half a request line idle for {self._idle:g} s (limits.idle_line_seconds)"
                conn.send(encode_error(None, INVALID_REQUEST, why).encode() + b"\n")
                return
            if not chunk:  # the client's end of the stream; a last line may lack its newline
                if buf and not skipping:
                    yield bytes(buf)
                return
            start = 0
            while (nl := chunk.find(b"\n", start)) >= 0:
                piece, start = chunk[start:nl], nl + 1
                if skipping:
                    skipping = False
                    continue
                charged = len(buf)
                if charged + len(piece) > self._max_line:
                    self._too_large(conn)
                else:
                    buf += piece
                    yield bytes(buf)
                seen_line = True
                conn.hold(-charged)
                buf.clear()
            rest = chunk[start:]
            if skipping or not rest:
                continue
            if len(buf) + len(rest) > self._max_line:
                self._too_large(conn)
                conn.hold(-len(buf))
                buf.clear()
                skipping = True
            else:
                buf += rest
                conn.hold(len(rest))

    def _crowded(self) -> bool:
        """Over half the connection seats taken: a connection that never sent a line is
        closed after ``idle_line_seconds`` (1,100 such locked every client out before)."""
        return len(self._handlers) * 2 > self._max_connections

    def _too_large(self, conn: _Connection) -> None:
        message = f"request too large: a line may hold at most {self._max_line} bytes"
        conn.send(encode_error(None, INVALID_REQUEST, message).encode() + b"\n")

    # -- answering --------------------------------------------------------------------------

    async def _answer(self, conn: _Connection, line: bytes, slots: asyncio.Semaphore) -> None:
        async def dispatch(method: str, params: dict[str, Any]) -> Any:
            return await self._route(conn, method, params)

        assert self._running is not None
        try:
            async with self._running:
                reply = await handle_line(line, dispatch, self._batch)
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


class _Budget:
    """Bytes buffered across all connections (queued replies, half lines). Over the limit,
    the connection holding the most is dropped."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self.holders: set[_Connection] = set()

    def charge(self, conn: _Connection, n: int) -> None:
        n = max(n, -conn.held)  # a dropped connection released everything at once
        conn.held += n
        self.used += n
        if n > 0 and self.used > self.limit:
            victim = max(self.holders, key=lambda c: c.held, default=conn)
            victim.drop(f"the daemon holds {self.used} buffered bytes for its clients "
                        f"(limits.max_buffered_bytes {self.limit}); this one held {victim.held}")  # fmt: skip


class _RateLimited:
    """A log line at most once a minute, with how often it happened meanwhile."""

    def __init__(self, template: str, every: float = 60.0) -> None:
        self.template = template
        self.every = every
        self._count = 0
        self._last = -every

    def log(self, detail: str) -> None:
        self._count += 1
        now = time.monotonic()
        if now - self._last >= self.every:
            _log.warning(self.template, self._count, detail)
            self._count, self._last = 0, now


class _Connection:
    """One client: its subscriptions, in-flight requests and bounded outgoing queue."""

    def __init__(self, writer: asyncio.StreamWriter, handler: asyncio.Task[Any], max_queued: int,
                 budget: _Budget) -> None:  # fmt: skip
        self.writer = writer
        self.handler = handler
        self.events: set[str] = set()
        self.tasks: set[asyncio.Task[None]] = set()
        self.held = 0  # bytes charged to the budget
        self._budget = budget
        self._max_queued = max_queued
        self._queue: list[bytes] = []
        self._queued = 0
        self._wake = asyncio.Event()
        self.closing = False
        budget.holders.add(self)
        self._sender = asyncio.create_task(self._send_loop())

    def hold(self, n: int) -> None:
        """``n`` more bytes of a half line buffered (negative: released)."""
        if n:
            self._budget.charge(self, n)

    def send(self, data: bytes) -> None:
        """Queue ``data``; drop the connection instead if its reader has fallen too far behind."""
        if self.closing:
            return
        if self._queue and self._queued + len(data) > self._max_queued:
            self.drop(f"it does not read its replies ({self._queued} bytes queued)")
            return
        self._queue.append(data)
        self._queued += len(data)
        self._budget.charge(self, len(data))
        self._wake.set()

    def drop(self, why: str) -> None:
        """Disconnect now, cancelling what it asked for: nobody will read the answers."""
        if self.closing:
            return
        _log.warning("dropping a client: %s", why)
        self.closing = True
        self._clear()
        for task in self.tasks:
            task.cancel()
        self.writer.transport.abort()

    def _clear(self) -> None:
        self._queue.clear()
        self._queued = 0
        self._budget.charge(self, -self.held)

    async def _send_loop(self) -> None:
        try:
            while not (self.closing and not self._queue):
                await self._wake.wait()
                self._wake.clear()
                batch, self._queue, self._queued = self._queue, [], 0
                for data in batch:
                    self.writer.write(data)
                    self._budget.charge(self, -len(data))
                    await self.writer.drain()
        except OSError:  # the peer went away: its remaining work is for nobody
            for task in self.tasks:
                task.cancel()
            self.closing = True

    async def finish(self) -> None:
        """The client hung up its side: let in-flight requests answer, then flush."""
        await asyncio.gather(*self.tasks, return_exceptions=True)
        self.closing = True
        self._wake.set()
        await self._sender

    async def close(self) -> None:
        self.closing = True
        pending = [*self.tasks, self._sender]
        for task in pending:
            task.cancel()
        try:
            await asyncio.gather(*pending, return_exceptions=True)
        finally:  # also when the server's stop cancels us here: the transport must close
            self._clear()
            self._budget.holders.discard(self)
            self.writer.close()
        with contextlib.suppress(OSError):
            await self.writer.wait_closed()
