"""Re-quantise an ONNX embedding model to dynamic int8 once, into a cache directory.

Why: the shipped all-MiniLM-L6-v2 file stores int8 weights but dequantises them to fp32
before every MatMul, so it runs at fp32 speed. Folding those constants and re-quantising the
MatMuls (int8 weights, uint8 activations quantised at run time) made it 1.6-2x faster on 2
cores at a mean cosine of 0.991 to the original, with the same neighbours on our retrieval
checks (``bench/embed_throughput.py``). Two settings matter:

- ``per_channel=True``: per-tensor weight scales (the ORT default) measured cosine 0.94.
- ``reduce_range=True`` (7-bit weights): x86 CPUs without VNNI multiply uint8 x int8 pairs
  into saturating int16 sums; 7-bit weights cannot overflow there. It costs 0.003 of cosine
  on VNNI machines and buys one recipe, hence one model id, on every CPU.
- ``Gather`` quantised too (recipe dq2): folding turned the int8 word-embedding table into
  47 MB of fp32 that every daemon kept resident; as int8 the file is 21 MB instead of 55 MB
  and the daemon ~34 MB smaller, at a mean cosine to the original of 0.9878 (dq1: 0.9887) on
  200 dendron-site notes.

The recipe name is part of the cache file name; change ``RECIPE`` whenever the steps change
so no stale file is reused; the model id ends with the recipe, so old vectors are re-embedded.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from pathlib import Path

from sidecar.errors import ModelError, ModelMissing

RECIPE = "dq2"
_log = logging.getLogger("sidecar.embed")


def cached_requantised(source: Path, source_sha256: str, cache_dir: Path) -> Path:
    """The requantised copy of ``source`` in ``cache_dir``, built on first use.

    The file is keyed by the source's hash and written under a temporary name then renamed,
    so two processes racing on a cold cache both end up with a complete file.
    """
    target = cache_dir / f"{source_sha256[:16]}-{RECIPE}.onnx"
    if not target.is_file():
        _log.info("preparing the embedding model, once: requantising it into %s (about 20 s)",
                  cache_dir)  # fmt: skip
        started = time.monotonic()
        build_requantised(source, target)
        _log.info("embedding model ready in %.1f s", time.monotonic() - started)
    return target


def build_requantised(source: Path, target: Path) -> None:
    """Fold constant weights, then ``quantize_dynamic`` the MatMuls and the embedding table;
    ``target`` appears whole."""
    try:
        import onnxruntime as ort
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise ModelMissing(
            f"requantising the embedding model needs the 'onnx' package ({exc}); "
            "install it (pip install onnx) or use quantize='none'"
        ) from exc
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=".dq-") as tmp:
            folded = Path(tmp) / "folded.onnx"
            # ORT's basic level folds Cast+Mul on int8 initializers into plain fp32 weights, so
            # each MatMul gets the constant B that MatMulConstBOnly requires.
            options = ort.SessionOptions()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
            options.optimized_model_filepath = str(folded)
            options.log_severity_level = 3
            ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
            out = Path(tmp) / "dq.onnx"
            hint = _DropPreprocessHint()
            logging.getLogger().addFilter(hint)
            try:
                quantize_dynamic(
                    folded,
                    out,
                    op_types_to_quantize=["MatMul", "Gather"],
                    per_channel=True,
                    reduce_range=True,
                    weight_type=QuantType.QInt8,
                    extra_options={"MatMulConstBOnly": True},
                )
            finally:
                logging.getLogger().removeFilter(hint)
            os.replace(out, target)
    except ModelError:
        raise
    except Exception as exc:  # ORT and onnx raise many unrelated types; report them as one.
        raise ModelError(f"could not requantise {source} into {target.parent}: {exc}") from exc


class _DropPreprocessHint(logging.Filter):
    """The quantizer tells the root logger to run pre-processing, which we just did (folding)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()
