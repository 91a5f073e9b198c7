"""HttpEmbedder against a fake OpenAI/Ollama server on 127.0.0.1 (no external network)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import numpy as np
import pytest

from sidecar.embed import HttpEmbedder, load_embedder
from sidecar.errors import ModelError, UsageError


@dataclass
class Fake:
    """What the server does next, and what it saw."""

    url: str = ""
    mode: str = "ok"  # ok | http500 | not-json | short | wide | slow
    dim: int = 4
    seen: list[tuple[str, dict[str, str], Any]] = field(default_factory=list)

    def vectors(self, texts: list[str]) -> list[list[float]]:
        """Unnormalised rows that encode the text's length, so order mistakes show."""
        count = len(texts) - 1 if self.mode == "short" else len(texts)
        width = self.dim + 1 if self.mode == "wide" else self.dim
        return [[float(len(t) + 1)] + [1.0] * (width - 1) for t in texts[:count]]


def expected(texts: list[str], dim: int = 4) -> np.ndarray:
    rows = np.array([[len(t) + 1] + [1.0] * (dim - 1) for t in texts], dtype=np.float32)
    normalised: np.ndarray = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return normalised


class Handler(BaseHTTPRequestHandler):
    fake: Fake

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.fake.seen.append((self.path, dict(self.headers), body))
        mode = self.fake.mode
        if mode == "slow":
            time.sleep(0.5)
        if mode == "http500":
            return self.reply(500, b"model not loaded")
        if mode == "not-json":
            return self.reply(200, b"<html>")
        rows = self.fake.vectors(body["input"])
        if self.path == "/v1/embeddings":
            data = [{"object": "embedding", "index": i, "embedding": r} for i, r in enumerate(rows)]
            answer: dict[str, Any] = {"object": "list", "data": data[::-1]}  # any order
        else:
            answer = {"model": body["model"], "embeddings": rows}
        self.reply(200, json.dumps(answer).encode())

    def reply(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


class QuietServer(HTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # the slow test's client hangs up before the answer


@pytest.fixture
def fake() -> Iterator[Fake]:
    state = Fake()
    handler = type("BoundHandler", (Handler,), {"fake": state})
    server = QuietServer(("127.0.0.1", 0), handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


TEXTS = ["a", "bbb", "cc", "dddddd", ""]


def test_openai_batches_orders_normalises_and_authenticates(fake: Fake) -> None:
    embedder = HttpEmbedder(
        "openai", "text-embedding-3-small", fake.url + "/v1/", api_key_env="MY_KEY",
        batch_size=2, environ={"MY_KEY": "sekrit"},
    )  # fmt: skip
    out = embedder.embed(TEXTS)
    np.testing.assert_allclose(out, expected(TEXTS), atol=1e-6)
    assert out.dtype == np.float32
    assert [body["input"] for _, _, body in fake.seen] == [["a", "bbb"], ["cc", "dddddd"], [""]]
    path, headers, body = fake.seen[0]
    assert path == "/v1/embeddings"
    assert body["model"] == "text-embedding-3-small"
    assert headers["Authorization"] == "Bearer sekrit"
    assert embedder.model_id == "openai:text-embedding-3-small"


def test_ollama_endpoint_without_key(fake: Fake) -> None:
    embedder = load_embedder(f"ollama:nomic-embed-text:latest@{fake.url}")
    np.testing.assert_allclose(embedder.embed(TEXTS), expected(TEXTS), atol=1e-6)
    path, headers, body = fake.seen[0]
    assert (path, body["model"]) == ("/api/embed", "nomic-embed-text:latest")
    assert "Authorization" not in headers


def test_dim_is_asked_once_when_not_given(fake: Fake) -> None:
    embedder = HttpEmbedder("ollama", "m", fake.url)
    assert embedder.dim == 4
    assert embedder.embed([]).shape == (0, 4)
    assert len(fake.seen) == 1
    assert HttpEmbedder("ollama", "m", fake.url, dim=4).embed([]).shape == (0, 4)
    assert len(fake.seen) == 1


def test_a_local_server_bypasses_proxies(fake: Fake, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    assert HttpEmbedder("ollama", "m", fake.url).embed(["x"]).shape == (1, 4)


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("http500", "HTTP 500: model not loaded"),
        ("not-json", "did not answer JSON"),
        ("short", r"\(1, 4\) vectors for 2 texts"),
    ],
)
def test_server_failures_become_model_errors(fake: Fake, mode: str, message: str) -> None:
    fake.mode = mode
    with pytest.raises(ModelError, match=message):
        HttpEmbedder("openai", "m", fake.url + "/v1").embed(["a", "b"])


def test_changing_width_is_refused(fake: Fake) -> None:
    embedder = HttpEmbedder("ollama", "m", fake.url)
    embedder.embed(["a"])
    fake.mode = "wide"
    with pytest.raises(ModelError, match="5-d vectors, not 4"):
        embedder.embed(["a"])


def test_timeout_and_unreachable_server(fake: Fake) -> None:
    fake.mode = "slow"
    with pytest.raises(ModelError, match="cannot reach"):
        HttpEmbedder("ollama", "m", fake.url, timeout=0.1).embed(["a"])
    closed = HttpEmbedder("ollama", "m", "http://127.0.0.1:9")
    with pytest.raises(ModelError, match="cannot reach"):
        closed.embed(["a"])


def test_missing_key_fails_at_construction_without_leaking_it() -> None:
    with pytest.raises(ModelError, match="SIDECAR_TEST_KEY"):
        HttpEmbedder("openai", "m", api_key_env="SIDECAR_TEST_KEY", environ={})


@pytest.mark.parametrize("url", ["file:///etc/passwd", "127.0.0.1:11434", "http://"])
def test_only_http_urls(url: str) -> None:
    with pytest.raises(UsageError):
        HttpEmbedder("ollama", "m", url)


def test_max_tokens_defaults_to_512() -> None:
    assert HttpEmbedder("ollama", "m", dim=8).max_tokens == 512
