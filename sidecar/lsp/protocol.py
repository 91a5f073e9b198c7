"""The language server's connection: Content-Length framing over a pair of byte streams, the
lifecycle (initialize, shutdown, exit), cancellation, and requests to the client.

Messages are JSON-RPC 2.0, answered by our codec (``transports.jsonrpc``), so errors mean the
same as over the daemon's socket. One worker thread runs the handlers in the order messages
came, so a request always sees the edits sent before it; the reading thread only routes, so
``$/cancelRequest`` and the client's responses are seen while a handler waits on the daemon.

Lifecycle, as the specification says: a request before ``initialize`` gets -32002, one after
``shutdown`` gets -32600; ``exit`` ends with status 0 after ``shutdown``, else 1 (end of input
counts as ``exit``). A cancelled request is answered -32800 at once, whether it waits its turn
or runs (a handler waiting on the daemon cannot be interrupted; its answer is dropped).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Mapping
from typing import IO, Any, Protocol

from sidecar.errors import MethodNotFound, SidecarError, UsageError, error_from_dict
from sidecar.lsp.types import REQUEST_CANCELLED, SERVER_NOT_INITIALIZED, Json
from sidecar.transports.jsonrpc import (
    INVALID_REQUEST,
    PARSE_ERROR,
    MalformedMessage,
    answer_now,
    decode,
    encode_error,
    encode_notification,
    encode_request,
)

log = logging.getLogger(__name__)
MAX_FRAME = 256 * 1024 * 1024  # bytes of one message; a larger Content-Length is refused
_ABSENT: Any = object()


class Handler(Protocol):
    """What the connection serves: ``initialize`` and the other methods, by name."""

    @property
    def methods(self) -> Mapping[str, Callable[[Json], Any]]: ...

    def initialize(self, params: Json) -> Json: ...


class FramingError(Exception):
    """A header block the connection cannot use; the stream goes on at the next block."""


def read_frame(stream: IO[bytes]) -> bytes | None:
    """The body of the next message; None at the end of input."""
    length: int | None = None
    while True:
        line = stream.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                raise FramingError(f"bad Content-Length: {value.strip()[:40]!r}") from None
    if length is None or not 0 <= length <= MAX_FRAME:
        raise FramingError("a message needs a Content-Length header (at most 256 MiB)")
    body = stream.read(length)
    return body if len(body) == length else None


def frame(text: str) -> bytes:
    body = text.encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class _Waiter:
    """A request to the client, until its response comes."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.reply: Json = {}


class Connection:
    def __init__(self, reader: IO[bytes], writer: IO[bytes]) -> None:
        self._in, self._out = reader, writer
        self._write = threading.Lock()
        self._lock = threading.Lock()  # guards the fields below
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._queued: set[Any] = set()  # ids of the requests taken and not yet run
        self._dropped: set[Any] = set()  # ids answered "cancelled" whose answers are dropped
        self._running: Any = _ABSENT
        self._waiting: dict[str, _Waiter] = {}
        self._sent = 0
        self.initialized = False
        self.shut_down = False

    # -- the client's messages -----------------------------------------------------------------

    def run(self, handler: Handler) -> int:
        """Serve until ``exit`` or the end of input; the exit status."""
        threading.Thread(target=self._work, name="lsp-handlers", daemon=True).start()
        while True:
            try:
                body = read_frame(self._in)
            except FramingError as exc:
                self._send(encode_error(None, PARSE_ERROR, f"parse error: {exc}"))
                continue
            if body is None or self._route(body, handler):
                return 0 if self.shut_down else 1

    def _route(self, body: bytes, handler: Handler) -> bool:
        """Take one message; True when it is ``exit``."""
        try:
            message = decode(body)
        except MalformedMessage as exc:
            self._send(exc.reply)
            return False
        if not isinstance(message, dict):  # a batch or garbage: the codec answers it
            self._jobs.put(lambda: self._answer(message, handler))
            return False
        method, ident = message.get("method"), _key(message.get("id", _ABSENT))
        if method is None and ident is not _ABSENT:
            self._resolve(message)
            return False
        if method == "exit":
            return True
        if method == "$/cancelRequest":
            self._cancel(_id_of(message.get("params")))
            return False
        if ident is not _ABSENT and method != "initialize" and not self.initialized:
            self._send(encode_error(ident, SERVER_NOT_INITIALIZED, "the server is not initialized"))
            return False
        if ident is _ABSENT and not self.initialized:
            return False  # notifications before initialize are dropped
        if ident is not _ABSENT and self.shut_down:
            self._send(encode_error(ident, INVALID_REQUEST, "the server is shutting down"))
            return False
        if method == "initialize":
            if self.initialized:
                self._send(encode_error(ident, INVALID_REQUEST, "the server is initialized"))
                return False
            self.initialized = True
        self.shut_down = self.shut_down or method == "shutdown"
        if ident is not _ABSENT and method != "shutdown":
            with self._lock:
                self._queued.add(ident)
        self._jobs.put(lambda: self._answer(message, handler))
        return False

    def _cancel(self, ident: Any) -> None:
        with self._lock:
            if ident not in self._queued and (ident is _ABSENT or ident != self._running):
                return  # answered already (or never asked)
            self._queued.discard(ident)
            self._dropped.add(ident)
        self._send(encode_error(ident, REQUEST_CANCELLED, "the request was cancelled"))

    def _answer(self, message: Any, handler: Handler) -> None:
        ident = _key(message.get("id", _ABSENT)) if isinstance(message, dict) else _ABSENT
        with self._lock:
            self._queued.discard(ident)
            if ident is not _ABSENT and ident in self._dropped:
                self._dropped.discard(ident)
                return
            self._running = ident
        request = ident is not _ABSENT
        reply = answer_now(message, lambda method, params: self._call(handler, method, params,
                                                                      request))  # fmt: skip
        with self._lock:
            self._running = _ABSENT
            if ident is not _ABSENT and ident in self._dropped:
                self._dropped.discard(ident)
                return
        if reply is not None:
            self._send(reply)

    def _call(self, handler: Handler, method: str, params: Json, request: bool) -> Any:
        if method == "initialize":
            return handler.initialize(params)
        if method == "shutdown":
            return None
        fn = handler.methods.get(method)
        if fn is None:
            if not request:  # didChangeConfiguration, $/setTrace, ...: nothing to do here
                log.debug("ignored the notification %s", method)
                return None
            raise MethodNotFound(f"method not found: {method}")
        try:
            return fn(params)
        except (KeyError, TypeError) as exc:  # a field missing or of the wrong type
            raise UsageError(f"invalid params for {method}: {exc!r}") from None

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                job()
            except Exception:  # a job must not end the worker: the editor keeps its server
                log.exception("a language server job failed")

    # -- the server's messages -----------------------------------------------------------------

    def submit(self, job: Callable[[], None]) -> None:
        """Run ``job`` on the handlers' thread, after the messages already taken."""
        self._jobs.put(job)

    def notify(self, method: str, params: Json) -> None:
        self._send(encode_notification(method, params))

    def request(self, method: str, params: Json, timeout: float = 30.0) -> Any:
        """Ask the client and wait for its answer (never from the reading thread); raises
        ``SidecarError`` for an error reply or no reply in time."""
        waiter = _Waiter()
        with self._lock:
            self._sent += 1
            ident = f"sidecar-{self._sent}"
            self._waiting[ident] = waiter
        self._send(encode_request(method, params, ident))
        if not waiter.done.wait(timeout):
            with self._lock:
                self._waiting.pop(ident, None)
            raise SidecarError(f"the editor did not answer {method} in {timeout:g} s")
        if "error" in waiter.reply:
            error = waiter.reply["error"]
            raise error_from_dict(error if isinstance(error, dict) else {"message": str(error)})
        return waiter.reply.get("result")

    def _resolve(self, reply: Json) -> None:
        with self._lock:
            waiter = self._waiting.pop(str(reply.get("id")), None)
        if waiter is None:
            log.warning("a response to no request of ours: %r", reply.get("id"))
            return
        waiter.reply = reply
        waiter.done.set()

    def _send(self, text: str) -> None:
        data = frame(text)
        with self._write:
            try:
                self._out.write(data)
                self._out.flush()
            except (OSError, ValueError):  # the editor went away; reading ends on its own
                log.warning("the editor closed the connection")


def _id_of(params: Any) -> Any:
    return _key(params.get("id", _ABSENT)) if isinstance(params, dict) else _ABSENT


def _key(ident: Any) -> Any:
    """A request's id as a set member; an id of no valid type counts as none here (the codec
    answers that request "invalid")."""
    valid = ident is None or (isinstance(ident, int | float | str) and not isinstance(ident, bool))
    return ident if valid else _ABSENT
