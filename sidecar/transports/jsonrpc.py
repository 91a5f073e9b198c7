"""A pure JSON-RPC 2.0 codec: strings in, strings out, no sockets and no event loop.

Keeping the protocol apart from the wire lets every malformed message be tested without a
socket, and lets the Unix socket, the CLI and any future transport share one set of semantics.
The only concurrency primitive is ``await dispatch(...)``; batch members are dispatched one after
another so the codec stays loop-agnostic (batches are rare for our clients; a client that wants
parallelism sends separate lines, which the socket server runs concurrently).

Deviations from a maximal reading of the spec, on purpose:

* Params must be given by name (an object). An array gets -32602 with a message saying so,
  because every method is described by a params model with named fields.
* ``NaN``/``Infinity`` in input are a parse error (they are not JSON); non-finite floats in a
  result are sent as ``null`` rather than producing invalid JSON.
* An invalid request echoes its ``id`` when the id itself was valid, else ``null``.
* A batch is capped in length and in the total size of its replies (``BatchLimits``), as
  go-ethereum caps them: a 55 KB line holding 1,000 ``graph.export`` calls took the daemon past
  4 GB. Once the replies pass the size cap, that member and the rest are answered with -32600
  instead of being run.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from sidecar.errors import SidecarError, UsageError, error_from_dict

Dispatch = Callable[[str, dict[str, Any]], Awaitable[Any]]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

_MAX_DETAIL = 2000  # characters of an exception message sent back in an internal error
_ABSENT: Any = object()
_log = logging.getLogger(__name__)


class _Invalid(Exception):
    """A request object that cannot be dispatched; carries the error object to send back."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.error = {"code": code, "message": message}


@dataclass(frozen=True, slots=True)
class BatchLimits:
    max_batch: int = 100  # limits.max_batch
    max_reply_bytes: int = 25_000_000  # limits.max_batch_reply_bytes


DEFAULT_BATCH = BatchLimits()


@dataclass(frozen=True, slots=True)
class Encoded:
    """A result already serialised, by ``encode_result`` on the worker thread that computed
    it: a big reply (``graph.export`` of 1,000 notes) encoded on the event loop held it for
    its whole length, so nothing else was answered, not even a dropped client noticed."""

    json: str


def encode_result(result: Any) -> Encoded:
    """Serialise a result the way a reply would; raises for what cannot be JSON."""
    return Encoded(_encode(result))


@dataclass(frozen=True, slots=True)
class Response:
    """A decoded response: exactly one of ``result`` / ``error`` is meaningful."""

    id: Any
    result: Any = None
    error: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Notification:
    """A server-initiated message without an id (an event)."""

    method: str
    params: dict[str, Any]


# ---------------------------------------------------------------- server side


async def handle_line(
    line: str | bytes, dispatch: Dispatch, limits: BatchLimits = DEFAULT_BATCH
) -> str | None:
    """Answer one NDJSON line; ``None`` when nothing must be sent (notifications only).

    Never raises for anything a peer can send: every failure becomes an error response. The
    returned text always encodes to valid UTF-8 and carries no trailing newline.
    """
    try:
        message = decode(line)
    except MalformedMessage as exc:
        return exc.reply
    return await handle_message(message, dispatch, limits)


class MalformedMessage(ValueError):
    """Text that is not JSON; ``reply`` is the parse error to send back."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.reply = _dumps(
            _error(None, {"code": PARSE_ERROR, "message": f"parse error: {detail}"})
        )


def decode(text: str | bytes) -> Any:
    """The JSON value of one message, for a transport that looks at it before answering (the
    language server routes the client's responses itself); raises ``MalformedMessage``."""
    try:
        return json.loads(
            text.decode("utf-8") if isinstance(text, bytes) else text,
            parse_constant=_reject_constant,
        )
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise MalformedMessage(str(exc)) from None


async def handle_message(
    message: Any, dispatch: Dispatch, limits: BatchLimits = DEFAULT_BATCH
) -> str | None:
    """``handle_line`` for a message already decoded."""
    if not isinstance(message, list):
        reply = await _handle_one(message, dispatch)
        return None if reply is None else _dumps(reply)
    if not message:
        return _dumps(_error(None, {"code": INVALID_REQUEST, "message": "empty batch"}))
    if len(message) > limits.max_batch:
        why = f"batch too large: {len(message)} requests, at most {limits.max_batch} (limits.max_batch)"
        return _dumps(_error(None, {"code": INVALID_REQUEST, "message": why}))
    encoded: list[str] = []
    size, full = 0, False
    for item in message:
        reply = None if full else await _handle_one(item, dispatch)
        out = None if reply is None else _dumps(reply)
        if full or (out is not None and size + len(out) > limits.max_reply_bytes):
            full = True  # this member's reply and every later one: refused, not run
            over = _too_much(item, limits.max_reply_bytes)
            out = None if over is None else _dumps(over)
        if out is not None:
            encoded.append(out)
            size += len(out)
    return "[" + ",".join(encoded) + "]" if encoded else None


def answer_now(message: Any, call: Callable[[str, dict[str, Any]], Any]) -> str | None:
    """``handle_message`` for a caller without an event loop: ``call`` answers synchronously,
    so the coroutine finishes on its first step (the language server runs its handlers on a
    thread of its own, and importing asyncio would cost it start-up time for nothing)."""

    async def dispatch(method: str, params: dict[str, Any]) -> Any:
        return call(method, params)

    step = handle_message(message, dispatch)
    try:
        step.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    step.close()
    raise RuntimeError("a synchronous dispatch suspended")


def _too_much(item: Any, cap: int) -> dict[str, Any] | None:
    """The reply for a batch member left unrun because the batch's replies passed ``cap``."""
    ident = item.get("id", _ABSENT) if isinstance(item, dict) else None
    if ident is _ABSENT:
        return None
    message = (
        f"batch response too large: replies may total {cap} bytes (limits.max_batch_reply_bytes)"
    )
    return _error(
        ident if _valid_id(ident) else None, {"code": INVALID_REQUEST, "message": message}
    )


async def _handle_one(message: Any, dispatch: Dispatch) -> dict[str, Any] | None:
    """Validate and dispatch one request object; the reply dict, or None for a notification."""
    ident = message.get("id", _ABSENT) if isinstance(message, dict) else _ABSENT
    reply_id = ident if _valid_id(ident) else None
    try:
        method, params = _validate(message)
    except _Invalid as exc:
        if ident is _ABSENT and exc.error["code"] == INVALID_PARAMS:
            return None  # a well-formed notification with bad params: nobody to tell
        return _error(reply_id, exc.error)
    try:
        result = await dispatch(method, params)
    except SidecarError as exc:
        outcome = _error(reply_id, exc.to_dict())
    except Exception as exc:
        _log.exception("internal error in %s", method)
        outcome = _error(reply_id, _internal(exc))
    else:
        outcome = {"jsonrpc": "2.0", "id": reply_id, "result": result}
    if ident is _ABSENT:
        if "error" in outcome:
            _log.warning("notification %s failed: %s", method, outcome["error"]["message"])
        return None
    return outcome


def _validate(message: Any) -> tuple[str, dict[str, Any]]:
    if not isinstance(message, dict):
        raise _Invalid(INVALID_REQUEST, "invalid request: expected a JSON object")
    if message.get("jsonrpc") != "2.0":
        raise _Invalid(INVALID_REQUEST, 'invalid request: "jsonrpc" must be "2.0"')
    if not isinstance(message.get("method"), str):
        raise _Invalid(INVALID_REQUEST, 'invalid request: "method" must be a string')
    if "id" in message and not _valid_id(message["id"]):
        raise _Invalid(INVALID_REQUEST, 'invalid request: "id" must be a string, number or null')
    params = message.get("params", _ABSENT)
    if params is _ABSENT:
        return message["method"], {}
    if isinstance(params, list):
        raise _Invalid(
            INVALID_PARAMS, "invalid params: params must be given by name (an object), not a list"
        )
    if not isinstance(params, dict):
        raise _Invalid(INVALID_REQUEST, 'invalid request: "params" must be an object')
    return message["method"], params


def _valid_id(ident: Any) -> bool:
    return ident is None or (isinstance(ident, int | float | str) and not isinstance(ident, bool))


def _internal(exc: Exception) -> dict[str, Any]:
    detail = str(exc)[:_MAX_DETAIL]
    data = {"type": type(exc).__name__, "message": detail}
    return {"code": INTERNAL_ERROR, "message": "internal error", "data": data}


def _error(ident: Any, error: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": error}


def encode_error(ident: Any, code: int, message: str) -> str:
    """An error response line for a transport that refuses a message before parsing it."""
    return _dumps(_error(ident, {"code": code, "message": message}))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


# ---------------------------------------------------------------- serialisation


def _dumps(reply: dict[str, Any]) -> str:
    """Serialise a reply compactly; a result that cannot be JSON becomes an internal error."""
    try:
        return _encode(reply)
    except (TypeError, ValueError, RecursionError) as exc:
        _log.error("reply for id %r is not serialisable: %s", reply.get("id"), exc)
        fallback = _error(reply.get("id"), _internal(exc))
        return _encode(fallback)


def _encode(obj: Any) -> str:
    if isinstance(obj, dict) and isinstance(obj.get("result"), Encoded):
        head = _encode({k: v for k, v in obj.items() if k != "result"})
        return f'{head[:-1]},"result":{obj["result"].json}}}'
    try:
        text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError as exc:
        if "Out of range float" not in str(exc):
            raise
        text = json.dumps(_finite(obj), separators=(",", ":"), ensure_ascii=False)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate, e.g. echoed from a "\ud800" escape
            text = json.dumps(_finite(obj), separators=(",", ":"), ensure_ascii=True)
    return text


def _finite(obj: Any) -> Any:
    """Replace NaN and infinities by None, as JavaScript's JSON.stringify does."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj


# ---------------------------------------------------------------- client side


def encode_request(method: str, params: dict[str, Any] | None, id: int | str) -> str:
    """One request line (no newline). Raises UsageError when params are not JSON-able."""
    return _encode_call({"jsonrpc": "2.0", "id": id, "method": method}, params)


def encode_notification(method: str, params: dict[str, Any] | None) -> str:
    """One notification line (no newline): a request without an id, never answered."""
    return _encode_call({"jsonrpc": "2.0", "method": method}, params)


def _encode_call(head: dict[str, Any], params: dict[str, Any] | None) -> str:
    if params is not None:
        head["params"] = params
    try:
        return json.dumps(head, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise UsageError(f"params of {head['method']} are not JSON-serialisable: {exc}") from exc


def parse_message(line: str | bytes) -> Response | Notification:
    """Decode one line a server sent; raises SidecarError when it is not JSON-RPC 2.0."""
    try:
        obj = json.loads(line)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise SidecarError(f"malformed JSON-RPC message from the daemon: {exc}") from exc
    if not isinstance(obj, dict) or obj.get("jsonrpc") != "2.0":
        raise SidecarError("malformed JSON-RPC message from the daemon: not a 2.0 object")
    if "id" not in obj and isinstance(obj.get("method"), str):
        params = obj.get("params")
        return Notification(obj["method"], params if isinstance(params, dict) else {})
    error = obj.get("error")
    if error is not None:
        if not isinstance(error, dict):
            raise SidecarError("malformed JSON-RPC message from the daemon: bad error object")
        return Response(obj.get("id"), error=error)
    if "result" not in obj:
        raise SidecarError("malformed JSON-RPC message from the daemon: no result or error")
    return Response(obj.get("id"), result=obj["result"])


def decode_response(line: str | bytes) -> tuple[Any, Any]:
    """``(id, result)`` of a response line, or raise the typed SidecarError the server sent."""
    message = parse_message(line)
    if isinstance(message, Notification):
        raise SidecarError(f"expected a response, got the notification {message.method!r}")
    if message.error is not None:
        raise error_from_dict(message.error)
    return message.id, message.result
