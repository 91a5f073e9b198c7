"""Embeddings from a server the user already runs: OpenAI-compatible or Ollama.

Never the default: it sends note text over the network, which a local sidecar should only do
when asked. Only the standard library is used, so the option costs no dependency. Both APIs
take a list of inputs per request; we send ``batch_size`` texts at a time and re-normalise
whatever comes back, since servers differ on whether they do.

- ``openai``: ``POST {base_url}/embeddings`` with ``{"model", "input"}``; ``base_url`` is the
  API root including its version, as in the OpenAI SDK (``https://api.openai.com/v1``).
- ``ollama``: ``POST {base_url}/api/embed`` with ``{"model", "input"}``.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

from sidecar.embed.base import Vectors, l2_normalise
from sidecar.errors import ModelError, UsageError

Kind = Literal["openai", "ollama"]
DEFAULT_URLS: dict[str, str] = {
    "openai": "https://api.openai.com/v1",
    "ollama": "http://127.0.0.1:11434",
}
_PATHS = {"openai": "/embeddings", "ollama": "/api/embed"}
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


class HttpEmbedder:
    """``model_id`` is ``<kind>:<model>``; ``dim`` is asked of the server once if not given.

    ``api_key_env`` names the environment variable holding the key (read here, never logged),
    so the key stays out of config files.
    """

    def __init__(
        self,
        kind: Kind,
        model: str,
        base_url: str | None = None,
        *,
        api_key_env: str | None = None,
        dim: int | None = None,
        max_tokens: int = 512,
        batch_size: int = 64,
        timeout: float = 60.0,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        if kind not in _PATHS:
            raise UsageError(f"unknown embedding server kind {kind!r}: use openai or ollama")
        if not model:
            raise UsageError("an embedding server needs a model name")
        base = (base_url or DEFAULT_URLS[kind]).rstrip("/")
        parts = urllib.parse.urlsplit(base)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"embedding server URL must be http(s)://host[:port][/path]: {base!r}")
        self.kind = kind
        self.model = model
        self.url = base + _PATHS[kind]
        self.model_id = f"{kind}:{model}"
        self.max_tokens = max_tokens
        self.batch_size = max(1, batch_size)
        self.timeout = timeout
        self._dim = dim
        self._headers = {"Content-Type": "application/json", "User-Agent": "vault-sidecar"}
        if api_key_env:
            key = (os.environ if environ is None else environ).get(api_key_env, "")
            if not key:
                raise ModelError(f"environment variable {api_key_env} (the API key) is not set")
            self._headers["Authorization"] = f"Bearer {key}"
        # A proxy from the environment must not capture requests to a server on this machine.
        handlers = [urllib.request.ProxyHandler({})] if parts.hostname in _LOOPBACK else []
        self._opener = urllib.request.build_opener(*handlers)

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [
            self._embed_batch(list(texts[i : i + self.batch_size]))
            for i in range(0, len(texts), self.batch_size)
        ]
        return np.concatenate(parts)

    def _embed_batch(self, texts: list[str]) -> Vectors:
        answer = self._post({"model": self.model, "input": texts})
        try:
            if self.kind == "openai":
                items = sorted(answer["data"], key=lambda d: int(d["index"]))
                rows = [item["embedding"] for item in items]
            else:
                rows = answer["embeddings"]
            matrix = np.asarray(rows, dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelError(f"{self.url} answered an unexpected shape: {exc!r}") from exc
        if matrix.ndim != 2 or matrix.shape[0] != len(texts) or matrix.shape[1] == 0:
            raise ModelError(f"{self.url} returned {matrix.shape} vectors for {len(texts)} texts")
        if self._dim not in (None, matrix.shape[1]):
            raise ModelError(f"{self.url} returned {matrix.shape[1]}-d vectors, not {self._dim}")
        if not np.isfinite(matrix).all():
            raise ModelError(f"{self.url} returned non-finite numbers")
        self._dim = matrix.shape[1]
        return l2_normalise(matrix)

    def _post(self, payload: dict[str, Any]) -> Any:
        request = urllib.request.Request(
            self.url, data=json.dumps(payload).encode("utf-8"), headers=self._headers
        )
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            try:
                detail = exc.read(300).decode("utf-8", "replace").strip()
            finally:
                exc.close()
            raise ModelError(f"{self.url} answered HTTP {exc.code}: {detail}") from exc
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ModelError(f"cannot reach embedding server {self.url}: {reason}") from exc
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise ModelError(f"{self.url} did not answer JSON: {raw[:120]!r}") from exc
