"""A cold embedding's reads and writes of the chunks table, done by a child process.

Through a backlog (a cold start embeds every chunk: 22k at 10k notes, 223k at 100k) each batch
of vectors is written by a LanceDB ``merge_insert`` that reads the table it joins against, and
the next batch is found by a scan of the vector column. A daemon that ran them itself stayed
22 MiB above one that only appended the same vectors, for the rest of its life: code paged in
and heap fragmented below what ``malloc_trim`` returns. (One-off probes in the manner of
``bench/heap_probe.py``, not kept, on the generated 10k-note vault with a stand-in model: 347
vs 325 MiB resident; a delete and an add per batch instead of the merge: 347; one 512-row
merge paged in 12 MiB of LanceDB's code.) With this child the daemon
ended a cold 10k-note start at 383 MiB instead of 400 (``bench/scale.py``; with the merges of
its first two batches left in the daemon it stayed at 400: hence every merge comes here).

So the daemon's embedding loop hands those two jobs, and the compactions between them, to this
child while a backlog lasts: ``python -m sidecar.daemon.backlog DATA_DIR DIM PID``. The model
still runs in the daemon (queries need it anyway). The child only acts when asked, and the
daemon asks from its writer's turn for every write, so there is still one writer at a time;
after each write the daemon looks at the tables' latest versions. Messages are pickled frames
on the child's stdin and stdout (the two ends are the same program). The child dies with the
daemon (``PR_SET_PDEATHSIG``), and exits when its stdin closes: at the end of the backlog.
A save's few vectors never come here: they go in by ``update`` in the daemon (7 ms a row).
"""

from __future__ import annotations

import logging
import os
import pickle
import struct
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from sidecar import logs
from sidecar.daemon.heap import tune_allocators
from sidecar.services.children import die_with
from sidecar.store.chunk_search import commit_vectors, pending_chunks
from sidecar.store.faults import storage_error
from sidecar.store.lance import IndexStore

_log = logging.getLogger("sidecar.daemon")

_HEADER = struct.Struct("!I")


def _send(stream: IO[bytes], message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError("the other end closed the pipe")
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the other end closed the pipe mid-message")
    return pickle.loads(data)


class BacklogChild:
    """The daemon's end, for the daemon's ``store``: started on first use, stopped by
    ``close``. After each write the store's tables are moved to their newest versions, so the
    daemon reads what the child wrote. Thread-safe (the pending lookup runs beside the writer).
    Any failure raises ``RuntimeError`` and stops the child; the caller then does the job."""

    def __init__(self, store: IndexStore) -> None:
        self.store = store
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self._proc is not None

    def pending(self, limit: int) -> list[dict[str, Any]] | None:
        """Chunks without a vector, looked up by the child; None when it is not running (a
        lookup alone never starts it: a daemon with nothing pending would start it for nothing)."""
        rows: list[dict[str, Any]] | None = self._ask(
            {"op": "pending", "limit": limit}, start=False
        )
        return rows

    def write(self, rows: Sequence[tuple[str, str, np.ndarray]]) -> tuple[int, dict[str, str]]:
        """``commit_vectors`` there: how many landed, and the content hash of every chunk
        asked about. Call in the writer's turn."""
        written, hashes = self._ask({"op": "write", "rows": list(rows)})
        self.store.see_latest()
        return int(written), dict(hashes)

    def optimize(self) -> None:
        """Compact the tables there. Call in the writer's turn."""
        self._ask({"op": "optimize"})
        self.store.see_latest()

    def _ask(self, message: dict[str, Any], start: bool = True) -> Any:
        with self._lock:
            if self._proc is None and not start:
                return None
            try:
                proc = self._proc or self._start()
                assert proc.stdin is not None and proc.stdout is not None
                _send(proc.stdin, message)
                reply = _receive(proc.stdout)
            except (OSError, EOFError, pickle.PickleError) as exc:
                self._stop()
                raise RuntimeError(f"the backlog child failed: {exc}") from exc
        if "error" in reply:
            self.close()
            raise RuntimeError(f"the backlog child failed: {reply['error']}")
        return reply["result"]

    def _start(self) -> subprocess.Popen[bytes]:
        argv = [sys.executable, "-m", "sidecar.daemon.backlog", str(self.store.directory),
                str(self.store.dim), str(os.getpid())]  # fmt: skip
        self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        _log.info("backlog child started (pid %d)", self._proc.pid)
        return self._proc

    def terminate(self) -> None:
        """SIGTERM: end a request that is still running (it fails; nothing was acknowledged)."""
        proc = self._proc
        if proc is not None:
            proc.terminate()

    def close(self) -> None:
        """Let the child go (its memory with it); the next request starts another."""
        with self._lock:
            self._stop()

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.close()
            proc.wait(timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        finally:
            proc.stdout.close()
        _log.info("backlog child stopped (exit %s)", proc.returncode)


def _serve(store: IndexStore, request: dict[str, Any]) -> Any:
    store.see_latest()  # the daemon wrote since (saves, note rows)
    op = request["op"]
    if op == "pending":
        return pending_chunks(store, int(request["limit"]))
    if op == "write":
        return commit_vectors(store, request["rows"])
    if op == "optimize":
        store.optimize()
        return None
    raise ValueError(f"unknown request {op!r}")


def main(argv: list[str]) -> int:
    """``argv``: the data dir, the vector size, the daemon's pid."""
    die_with(int(argv[2]))
    logs.to_stderr("%(asctime)s %(levelname)s sidecar.backlog: %(message)s")
    tune_allocators()
    # The replies get their own copy of stdout; whatever a library prints goes to the log.
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    store = IndexStore(Path(argv[0]), dim=int(argv[1]))
    requests = sys.stdin.buffer
    while True:
        try:
            request = _receive(requests)
        except EOFError:
            return 0
        try:
            reply = {"result": _serve(store, request)}
        except Exception as exc:  # the daemon logs it and does the job itself
            if storage_error(exc) is None:  # a bug: its traceback; a full disk: one line
                logging.exception("request %s failed", request.get("op"))
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        _send(replies, reply)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
