"""A copy of a kept store whose stand-in vectors are filed under another model's id.

    python bench/relabel_vectors.py SRC_STATE DST_STATE [--model minilm] [--check]

``SRC_STATE`` is a ``bench/scale.py --keep`` state (``vault/`` and ``data/``) built with a
stand-in embedder at the real dimension (``SIDECAR_EMBED_MODEL=tiny:384``). Embedding 322k
chunks at 100k notes with the real model takes 1-3 hours on two cores; relabelled, the store
lets a daemon with the real model restart on it with every chunk's vector present, so that a
restart's memory can be measured with the real model's session loaded (a hybrid query embeds
its text) and nothing queued to embed.

The vectors are stand-in values under the real model's id: search results mean nothing, but
the memory layout is the real one (the same rows, the same dimension, float16 on disk, int16
in RAM). Vectors are keyed by ``(model, content_hash)`` (``sidecar/store/lance.py``,
``IndexStore.vector_batches``); the ``vectors`` table is rewritten with the new model id in one
overwrite, its ``content_hash`` B-tree rebuilt and the old version's files deleted, as the
daemon's compaction leaves it. The link contexts' vectors (``edge-vectors.npz``) and memory
entries' vectors carry a model id too and are relabelled the same way.

``--check`` then starts a daemon with the real model on the copy and fails unless
``index.status`` reports nothing pending: a daemon that re-embeds would make the measurement
invalid.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import os
import shutil
import sys
import time
import warnings
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from lancedb.index import BTree

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from sidecar.config import model_cache_dir
from sidecar.embed import load_embedder
from sidecar.store.edge_cache import FILE as EDGE_FILE
from tests.daemon_harness import daemon_env, start


def real_model_id(spec: str) -> tuple[str, int]:
    """The id and dimension a daemon with this ``embed.model`` files its vectors under, built
    as ``Services.from_settings`` builds its embedder (the requantised copy in the user's
    cache): the id names the file's hash and the recipe, so no model is loaded."""
    embedder = load_embedder(spec, cache_dir=model_cache_dir(os.environ))
    return embedder.model_id, embedder.dim


def relabel_vectors(lance_dir: Path, to: str, dim: int) -> dict[str, int]:
    db = lancedb.connect(str(lance_dir))
    table = db.open_table("vectors")
    if table.schema.field("vector").type.list_size != dim:
        raise SystemExit(f"the stored vectors are not {dim}-d: {table.schema.field('vector')}")
    data = table.to_arrow()
    counts = pc.value_counts(data["model"].combine_chunks()).to_pylist()
    models = {str(c["values"]): int(c["counts"]) for c in counts}
    data = data.set_column(
        data.schema.get_field_index("model"),
        data.schema.field("model"),
        pa.array([to] * len(data), pa.string()),
    )
    # one overwrite with the table's own schema (its metadata: the schema version)
    table = db.create_table("vectors", data=data, schema=table.schema, mode="overwrite")
    table.create_index("content_hash", config=BTree())
    with warnings.catch_warnings():  # a copy no other process has open
        warnings.simplefilter("ignore", UserWarning)
        table.optimize(cleanup_older_than=dt.timedelta(0))
    return models


def relabel_memory(lance_dir: Path, to: str) -> int:
    db = lancedb.connect(str(lance_dir))
    if "memory" not in db.list_tables().tables:
        return 0
    table = db.open_table("memory")
    n = table.count_rows("model != ''")
    if n:
        table.update(where="model != ''", values={"model": to})
    return int(n)


def relabel_edges(data_dir: Path, to: str) -> int:
    path = data_dir / EDGE_FILE
    if not path.exists():
        return 0
    with np.load(path, allow_pickle=False) as z:
        hashes, vectors = z["hashes"], z["vectors"]
    buf = io.BytesIO()
    np.savez(buf, model=np.array(to), hashes=hashes, vectors=vectors)
    path.write_bytes(buf.getvalue())
    return len(hashes)


def check(state: Path, spec: str) -> dict[str, object]:
    """A daemon with the real model on the copy: its status once it serves."""
    env = {**daemon_env(state, model=spec), "XDG_CACHE_HOME": str(Path.home() / ".cache")}
    t0 = time.perf_counter()
    d = start(state / "vault", env, wait=3600)
    try:
        ready = time.perf_counter() - t0
        time.sleep(5)  # a reconcile's queue would show by now
        with d.client(timeout=None) as c:
            status = c.call("index.status")
        keep = ("notes", "chunks", "vectors", "pending", "model", "embedder", "daemon")
        return {"ready_s": round(ready, 1), "status": {k: status.get(k) for k in keep}}
    finally:
        d.stop(timeout=600)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src", type=Path, help="a scale.py --keep state (vault/, data/)")
    ap.add_argument("dst", type=Path, help="where the copy goes (must not exist)")
    ap.add_argument("--model", default="minilm", help="the embed.model to relabel for")
    ap.add_argument("--check", action="store_true", help="start a daemon on the copy after")
    args = ap.parse_args()
    if args.dst.exists():
        raise SystemExit(f"{args.dst} exists")
    to, dim = real_model_id(args.model)
    t0 = time.perf_counter()
    args.dst.mkdir(parents=True)
    shutil.copytree(args.src / "vault", args.dst / "vault", symlinks=True)
    shutil.copytree(args.src / "data", args.dst / "data", symlinks=True,
                    ignore=shutil.ignore_patterns("writer.lock"))  # fmt: skip
    data = args.dst / "data"
    out: dict[str, object] = {
        "src": str(args.src.resolve()),
        "dst": str(args.dst.resolve()),
        "to": to,
        "vectors_before": relabel_vectors(data / "lance", to, dim),
        "memory_rows": relabel_memory(data / "lance", to),
        "edge_vectors": relabel_edges(data, to),
        "seconds": 0.0,
    }
    out["seconds"] = round(time.perf_counter() - t0, 1)
    print(json.dumps(out), flush=True)
    if args.check:
        got = check(args.dst, args.model)
        status = got["status"]
        assert isinstance(status, dict)
        print(json.dumps(got), flush=True)
        if status.get("pending"):
            raise SystemExit(f"{status['pending']} chunks pending: the daemon would re-embed")
        print(f"ok: nothing pending under {to}")
    os.sync()


if __name__ == "__main__":
    main()
