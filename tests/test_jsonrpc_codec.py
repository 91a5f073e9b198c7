"""The JSON-RPC codec on its own: every malformed message class, no socket involved."""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.errors import (
    ERROR_CLASSES,
    MethodNotFound,
    NoteNotFound,
    SidecarError,
    UsageError,
)
from sidecar.transports.jsonrpc import (
    Notification,
    Response,
    decode_response,
    encode_notification,
    encode_request,
    handle_line,
    parse_message,
)

calls: list[tuple[str, dict[str, Any]]] = []


async def dispatch(method: str, params: dict[str, Any]) -> Any:
    calls.append((method, params))
    if method == "echo":
        return params
    if method == "fail":
        raise NoteNotFound("no note matches 'x'", {"query": "x"})
    if method == "usage":
        raise UsageError("limit must be positive")
    if method == "boom":
        raise ZeroDivisionError("division by zero")
    if method == "nan":
        return {"score": math.nan, "list": [math.inf, -math.inf, 1.5]}
    if method == "unserialisable":
        return {"x": object()}
    raise MethodNotFound(f"no method {method!r}")


def answer(line: str | bytes) -> Any:
    reply = asyncio.run(handle_line(line, dispatch))
    return None if reply is None else json.loads(reply)


def request(method: str, params: Any = None, id: Any = 1) -> str:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "id": id}
    if params is not None:
        msg["params"] = params
    return json.dumps(msg)


@pytest.fixture(autouse=True)
def _reset_calls() -> None:
    calls.clear()


def test_echo_round_trip_is_compact() -> None:
    reply = asyncio.run(handle_line(request("echo", {"a": [1, 2]}, id=7), dispatch))
    assert reply == '{"jsonrpc":"2.0","id":7,"result":{"a":[1,2]}}'


def test_absent_params_become_an_empty_dict() -> None:
    assert answer('{"jsonrpc":"2.0","method":"echo","id":1}')["result"] == {}


@pytest.mark.parametrize(
    "line",
    [
        "{",
        "not json",
        '{"jsonrpc":"2.0",}',
        "",
        "   ",
        "NaN",
        '{"a": Infinity}',
        "[1,]",
        "\ufeff{}",
    ],
)
def test_parse_error(line: str) -> None:
    reply = answer(line)
    assert reply["id"] is None
    assert reply["error"]["code"] == -32700
    assert calls == []


def test_non_utf8_bytes_are_a_parse_error() -> None:
    assert (
        answer(b'{"jsonrpc":"2.0","method":"echo","params":{"a":"\xff"},"id":1}')["error"]["code"]
        == -32700
    )


def test_deep_nesting_is_a_parse_error_not_a_crash() -> None:
    assert answer("[" * 100_000 + "]" * 100_000)["error"]["code"] == -32700


@pytest.mark.parametrize(
    ("message", "echoed_id"),
    [
        ({"method": "echo", "id": 1}, 1),  # no jsonrpc member
        ({"jsonrpc": "1.0", "method": "echo", "id": 1}, 1),
        ({"jsonrpc": 2.0, "method": "echo", "id": 1}, 1),
        ({"jsonrpc": "2.0", "method": 1, "id": 1}, 1),
        ({"jsonrpc": "2.0", "id": 1}, 1),  # no method
        ({"jsonrpc": "2.0", "method": "echo", "id": {"a": 1}}, None),
        ({"jsonrpc": "2.0", "method": "echo", "id": [1]}, None),
        ({"jsonrpc": "2.0", "method": "echo", "id": True}, None),
        ({"jsonrpc": "2.0", "method": "echo", "params": "bar", "id": 1}, 1),
        ({"jsonrpc": "2.0", "method": "echo", "params": 3}, None),
        ({"jsonrpc": "2.0", "method": "echo", "params": None, "id": 2}, 2),
    ],
)
def test_invalid_request(message: dict[str, Any], echoed_id: Any) -> None:
    reply = answer(json.dumps(message))
    assert reply["error"]["code"] == -32600
    assert reply["id"] == echoed_id
    assert calls == []


@pytest.mark.parametrize("line", ["1", '"x"', "null", "true"])
def test_non_object_request_is_invalid(line: str) -> None:
    assert answer(line) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "invalid request: expected a JSON object"},
    }


def test_empty_batch_is_a_single_error() -> None:
    reply = answer("[]")
    assert isinstance(reply, dict)
    assert reply["error"]["code"] == -32600
    assert reply["id"] is None


def test_batch_of_mixed_valid_and_invalid() -> None:
    batch = [
        {"jsonrpc": "2.0", "method": "echo", "params": {"n": 1}, "id": "a"},
        {"jsonrpc": "2.0", "method": "echo", "params": {"n": 2}},  # notification
        {"foo": "boo"},
        1,
        {"jsonrpc": "2.0", "method": "nope", "id": "b"},
        {"jsonrpc": "2.0", "method": "fail", "id": "c"},
        {"jsonrpc": "2.0", "method": "echo", "params": [1], "id": "d"},
    ]
    reply = answer(json.dumps(batch))
    assert [r["id"] for r in reply] == ["a", None, None, "b", "c", "d"]
    assert reply[0]["result"] == {"n": 1}
    assert [r.get("error", {}).get("code") for r in reply] == [
        None,
        -32600,
        -32600,
        -32601,
        NoteNotFound.code,
        -32602,
    ]
    assert ("echo", {"n": 2}) in calls  # the notification was still dispatched


def test_batch_of_invalid_scalars_gives_one_error_each() -> None:
    reply = answer("[1,2,3]")
    assert len(reply) == 3
    assert all(r["error"]["code"] == -32600 for r in reply)


def test_notification_gives_no_response_even_on_failure() -> None:
    assert answer('{"jsonrpc":"2.0","method":"echo","params":{"a":1}}') is None
    assert answer('{"jsonrpc":"2.0","method":"boom"}') is None
    assert answer('{"jsonrpc":"2.0","method":"nope"}') is None
    assert calls == [("echo", {"a": 1}), ("boom", {}), ("nope", {})]


def test_all_notification_batch_gives_no_response() -> None:
    batch = [{"jsonrpc": "2.0", "method": "echo"}, {"jsonrpc": "2.0", "method": "fail"}]
    assert answer(json.dumps(batch)) is None
    assert len(calls) == 2


def test_params_by_position_are_refused_with_a_clear_message() -> None:
    reply = answer(request("echo", [1, 2]))
    assert reply["error"]["code"] == -32602
    assert "by name" in reply["error"]["message"]
    assert calls == []


def test_unknown_method() -> None:
    reply = answer(request("does.not.exist"))
    assert reply["error"] == {"code": -32601, "message": "no method 'does.not.exist'"}


def test_app_errors_carry_their_code_and_data() -> None:
    reply = answer(request("fail", id="x"))
    assert reply == {
        "jsonrpc": "2.0",
        "id": "x",
        "error": NoteNotFound("no note matches 'x'", {"query": "x"}).to_dict(),
    }
    assert answer(request("usage"))["error"]["code"] == -32602


def test_internal_error_names_the_exception_without_a_traceback() -> None:
    reply = answer(request("boom"))
    error = reply["error"]
    assert error["code"] == -32603
    assert error["message"] == "internal error"
    assert error["data"] == {"type": "ZeroDivisionError", "message": "division by zero"}
    assert "Traceback" not in json.dumps(reply)


def test_unserialisable_result_becomes_an_internal_error() -> None:
    reply = answer(request("unserialisable", id=5))
    assert reply["id"] == 5
    assert reply["error"]["code"] == -32603
    assert reply["error"]["data"]["type"] == "TypeError"


def test_non_finite_floats_are_sent_as_null() -> None:
    raw = asyncio.run(handle_line(request("nan"), dispatch))
    assert raw is not None
    assert "NaN" not in raw and "Infinity" not in raw
    assert json.loads(raw)["result"] == {"score": None, "list": [None, None, 1.5]}


@pytest.mark.parametrize(
    "ident",
    [
        0,
        -1,
        10**30,
        -(10**200),
        1.5,
        "",
        "ünïcødé ✓ 🚀",
        "\u2028",
        "a" * 10_000,
        None,
    ],
)
def test_ids_are_echoed_verbatim(ident: Any) -> None:
    reply = answer(request("echo", {"text": "日本語 🚀 \u0000"}, id=ident))
    assert reply["id"] == ident
    assert type(reply["id"]) is type(ident)
    assert reply["result"] == {"text": "日本語 🚀 \u0000"}


def test_lone_surrogate_still_yields_valid_utf8() -> None:
    raw = asyncio.run(handle_line(request("echo", {"s": "\ud800"}), dispatch))
    assert raw is not None
    raw.encode("utf-8")
    assert json.loads(raw)["result"] == {"s": "\ud800"}


def test_bytes_and_str_are_equivalent() -> None:
    line = request("echo", {"é": "ü"})
    assert answer(line) == answer(line.encode())


def test_client_helpers_round_trip() -> None:
    line = encode_request("echo", {"q": "ü"}, 3)
    assert json.loads(line) == {"jsonrpc": "2.0", "id": 3, "method": "echo", "params": {"q": "ü"}}
    assert "params" not in json.loads(encode_request("status", None, 4))
    assert json.loads(encode_notification("index.changed", {"paths": ["a.md"]})) == {
        "jsonrpc": "2.0",
        "method": "index.changed",
        "params": {"paths": ["a.md"]},
    }
    reply = asyncio.run(handle_line(line, dispatch))
    assert reply is not None
    assert decode_response(reply) == (3, {"q": "ü"})


def test_encode_request_refuses_non_json_params() -> None:
    with pytest.raises(UsageError):
        encode_request("echo", {"x": object()}, 1)
    with pytest.raises(UsageError):
        encode_request("echo", {"x": math.nan}, 1)


@pytest.mark.parametrize("cls", ERROR_CLASSES)
def test_decode_response_rebuilds_each_error_class(cls: type[SidecarError]) -> None:
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "error": cls("msg", {"k": 1}).to_dict()})
    with pytest.raises(cls) as info:
        decode_response(line)
    assert type(info.value) is cls
    assert info.value.data == {"k": 1}


def test_parse_message_tells_notifications_from_responses() -> None:
    assert parse_message('{"jsonrpc":"2.0","method":"reminder.due","params":{"id":"r"}}') == (
        Notification("reminder.due", {"id": "r"})
    )
    assert parse_message('{"jsonrpc":"2.0","id":2,"result":null}') == Response(2, None)
    for bad in ["{", "[]", '{"jsonrpc":"2.0","id":1}', '{"jsonrpc":"2.0","id":1,"error":3}']:
        with pytest.raises(SidecarError):
            parse_message(bad)


# ---------------------------------------------------------------- fuzzing

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
request_like = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0", 2]) | json_values,
        "method": st.sampled_from(["echo", "fail", "boom", "usage", "nan", "unserialisable", "x"])
        | json_values,
        "params": json_values,
        "id": json_values,
    },
)
messages = request_like | st.lists(request_like | json_values, max_size=5) | json_values


def assert_valid_reply(reply: str | None) -> None:
    if reply is None:
        return
    reply.encode("utf-8")  # always sendable
    assert "\n" not in reply
    decoded = json.loads(reply, parse_constant=lambda c: pytest.fail(f"emitted {c}"))
    items = decoded if isinstance(decoded, list) else [decoded]
    assert items
    for item in items:
        assert item["jsonrpc"] == "2.0"
        assert "id" in item
        assert ("result" in item) != ("error" in item)
        if "error" in item:
            assert isinstance(item["error"]["code"], int)
            assert isinstance(item["error"]["message"], str)


@settings(max_examples=300, deadline=None, database=None)
@given(st.text())
def test_fuzz_arbitrary_text(text: str) -> None:
    assert_valid_reply(asyncio.run(handle_line(text, dispatch)))


@settings(max_examples=300, deadline=None, database=None)
@given(st.binary())
def test_fuzz_arbitrary_bytes(data: bytes) -> None:
    assert_valid_reply(asyncio.run(handle_line(data, dispatch)))


@settings(max_examples=400, deadline=None, database=None)
@given(messages)
def test_fuzz_structured_messages(message: Any) -> None:
    line = json.dumps(message)
    assert_valid_reply(asyncio.run(handle_line(line, dispatch)))
    assert_valid_reply(asyncio.run(handle_line(line.encode("utf-8", "surrogatepass"), dispatch)))
