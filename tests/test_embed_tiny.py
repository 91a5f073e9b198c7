"""TinyEmbedder (the test stand-in), the shared helpers, and spec parsing in load_embedder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sidecar.embed import (
    Embedder,
    HttpEmbedder,
    OnnxEmbedder,
    TinyEmbedder,
    l2_normalise,
    load_embedder,
)
from sidecar.errors import UsageError

PASSWORD = "How do I reset my password?"
PASSWORD_2 = "Steps to reset a forgotten password"
CAT = "The cat sat on the mat"


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_shape_dtype_and_unit_rows() -> None:
    vectors = TinyEmbedder().embed([PASSWORD, PASSWORD_2, CAT, ""])
    assert vectors.shape == (4, 64)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_empty_list_keeps_the_width() -> None:
    assert TinyEmbedder(dim=32).embed([]).shape == (0, 32)


def test_similar_texts_are_closer_than_unrelated_ones() -> None:
    a, b, c = TinyEmbedder(dim=256).embed([PASSWORD, PASSWORD_2, CAT])
    assert cos(a, b) > cos(a, c) + 0.2
    assert cos(b, c) < 0.3


def test_trigrams_make_spelling_variants_close() -> None:
    a, b, c = TinyEmbedder(dim=256).embed(["passwords", "password", "kitchen"])
    assert cos(a, b) > 0.5
    assert cos(a, b) > cos(a, c) + 0.3


def test_case_and_punctuation_do_not_matter_but_words_do() -> None:
    a, b, c = TinyEmbedder().embed(["Reset the Password!", "reset the password", "reset a token"])
    np.testing.assert_allclose(a, b, atol=1e-7)
    assert cos(a, c) < 0.99


@pytest.mark.e2e
def test_same_vectors_in_another_process() -> None:
    """Features must be hashed stably: Python's hash() would differ with PYTHONHASHSEED."""
    here = TinyEmbedder().embed([PASSWORD])[0]
    code = (
        "from sidecar.embed import TinyEmbedder; import sys; "
        f"sys.stdout.write(TinyEmbedder().embed([{PASSWORD!r}])[0].tobytes().hex())"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    np.testing.assert_array_equal(np.frombuffer(bytes.fromhex(out), dtype=np.float32), here)


def test_texts_without_words_get_one_shared_unit_vector() -> None:
    a, b = TinyEmbedder().embed(["", "  ...  "])
    np.testing.assert_allclose(np.linalg.norm(a), 1.0, atol=1e-6)
    np.testing.assert_array_equal(a, b)


def test_identity_and_protocol() -> None:
    tiny = TinyEmbedder(dim=128, max_tokens=100)
    assert (tiny.model_id, tiny.dim, tiny.max_tokens) == ("tiny-hash-128", 128, 100)
    assert isinstance(tiny, Embedder)
    with pytest.raises(UsageError):
        TinyEmbedder(dim=1)


def test_l2_normalise_leaves_zero_rows_zero() -> None:
    out = l2_normalise(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]])


def test_load_embedder_specs() -> None:
    assert load_embedder("tiny").model_id == "tiny-hash-64"
    assert load_embedder("tiny:16").dim == 16
    assert isinstance(load_embedder(), OnnxEmbedder)
    assert isinstance(load_embedder("minilm"), OnnxEmbedder)
    onnx = load_embedder("onnx:/models/e5/model.onnx:/models/e5/tokenizer.json", sha256="ab" * 32)
    assert isinstance(onnx, OnnxEmbedder)
    assert onnx.model_id == "e5@abababababab"  # name from the folder; no cache_dir, no +dq
    http = load_embedder("ollama:nomic-embed-text:latest@http://127.0.0.1:11434", dim=768)
    assert isinstance(http, HttpEmbedder)
    assert (http.model, http.url) == ("nomic-embed-text:latest", "http://127.0.0.1:11434/api/embed")
    openai = load_embedder("openai:text-embedding-3-small", dim=1536)
    assert isinstance(openai, HttpEmbedder)
    assert openai.url == "https://api.openai.com/v1/embeddings"


def test_load_embedder_drops_shared_options_but_not_typos(tmp_path: Path) -> None:
    shared = {"batch_size": 8, "threads": 1, "cache_dir": tmp_path, "quantize": "dynamic"}
    assert load_embedder("tiny", **shared).model_id == "tiny-hash-64"
    minilm = load_embedder("minilm", **shared)
    assert minilm.model_id.endswith("+dq2")
    with pytest.raises(UsageError, match="thread"):
        load_embedder("tiny", thread=2)


@pytest.mark.parametrize("spec", ["", "bert", "tiny:x", "onnx", "onnx:", "openai", "minilm:x"])
def test_load_embedder_rejects_bad_specs(spec: str) -> None:
    with pytest.raises(UsageError):
        load_embedder(spec)
