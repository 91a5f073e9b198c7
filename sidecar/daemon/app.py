"""``sidecar serve``: the composition root of the daemon.

Queries run on worker threads under the state lock and answer from memory; anything that writes
goes through the single ``Writer``. The watcher feeds a per-path debouncer (a note is due soon
after its writer closes or renames it, else after a quiet time); due paths become one reindex job; the job's changes go out as ``index.changed`` to subscribers. APScheduler runs the
periodic reconcile, idle compaction and a health check that notices a vault folder vanishing
and coming back.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from sidecar.api import Registry
from sidecar.api.relation_methods import taxonomy_of
from sidecar.config import Settings
from sidecar.daemon import lint_job
from sidecar.daemon.alarm import Alarm
from sidecar.daemon.debounce import CHANGED, Debouncer, Kind
from sidecar.daemon.heap import freeze_long_lived, release_free_memory
from sidecar.daemon.memory_jobs import RESCAN_SECONDS, MemoryJobs
from sidecar.daemon.notify import sd_notify
from sidecar.daemon.progress_log import EmbedProgress, ready_hint
from sidecar.daemon.queries import Queries
from sidecar.daemon.supervise import Supervisor, exit_deadline
from sidecar.daemon.watcher import VaultWatcher
from sidecar.daemon.writer import Writer
from sidecar.errors import SidecarError
from sidecar.services.context import Services
from sidecar.services.indexer import IndexReport
from sidecar.store.faults import storage_error
from sidecar.store.vaultfs import RULE_FILES
from sidecar.transports.jsonrpc import BatchLimits, Dispatch, encode_result
from sidecar.transports.unix import RpcServer
from sidecar.transports.unix_path import socket_path_for

_log = logging.getLogger("sidecar.daemon")

RELEASE_AFTER_SECONDS = 5  # quiet this long after a burst of work: give its memory back
# After a save is announced, the writer's turn waits this long for a told client's query to
# start (it starts at once unless the machine is loaded), and at most QUERIES_FIRST_CAP_S for
# the queries running to end, before the work that nothing reads (``Queries``).
QUERY_GRACE_S = 0.02
QUERIES_FIRST_CAP_S = 0.15
EMBED_WAIT_CAP = 5  # saves that never pause still get their vectors, after 5 embed delays
CHUNKS_QUIET_S = 2.0  # no write and no request for this long: the chunks table may be compacted
# (doubled after each compaction that had to give way, up to 8 times)


def warm(services: Services) -> None:
    """Build what queries derive from the whole index, so no user's first query waits for it:
    the typed facts (2 s at 100k notes) and the title matcher (0.3 s). Both are then kept up
    to date per change."""
    with services.state.lock:
        services.state.titles()
        services.state.facts(taxonomy_of(services))


def raise_open_files(wanted: int = 8192) -> None:
    """Outside the service units (which set LimitNOFILE), lift the soft descriptor limit
    toward ``wanted``: 1024 is less than the index's files and a few hundred clients."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def server_for(path: Path, dispatch: Dispatch, settings: Settings) -> RpcServer:
    """The socket server with the ``limits.*`` settings."""

    def limit(key: str) -> int:
        return int(settings[f"limits.{key}"])

    return RpcServer(
        path, dispatch, max_line_bytes=limit("max_line_bytes"),
        batch=BatchLimits(limit("max_batch"), limit("max_batch_reply_bytes")),
        max_connections=limit("max_connections"), idle_line_seconds=limit("idle_line_seconds"),
        max_requests=limit("max_requests"), max_buffered_bytes=limit("max_buffered_bytes"),
    )  # fmt: skip


class Daemon:
    def __init__(self, settings: Settings, registry: Registry) -> None:
        """Composes the daemon: its ``Services`` (the writer lock is taken here) and the loops
        around them."""
        self.settings = settings
        self.registry = registry
        self.socket_path = socket_path_for(settings, os.environ)
        self.runtime: dict[str, Any] = {"pid": os.getpid(), "socket": str(self.socket_path),
                                        "watching": False, "ready": False}  # fmt: skip
        self.services = Services.from_settings(settings, runtime=self.runtime)
        self.debouncer = Debouncer(0, time.monotonic)
        self._debounce(settings)
        self.supervisor = Supervisor(on_change=self._on_faults)
        self.writer = Writer(self.supervisor)
        self._retry: set[str] | None = set()  # saves whose reindex failed; None: a full rescan
        self._failed = False
        self.server = server_for(self.socket_path, self.dispatch, settings)
        registry.max_string = int(settings["limits.max_string_chars"])
        self.watcher = VaultWatcher(self.services.vault.root, self._on_path, self._on_dir)
        self.scheduler = AsyncIOScheduler()
        self._stop = asyncio.Event()
        self._wake = asyncio.Event()
        self._embed_wake = asyncio.Event()
        self._idle_embedding = asyncio.Event()
        self.embedded = 0
        self.embed_batch = 256
        self.embed_delay = 1.0
        self._saved = False  # a save woke the embedding: hold it back for the person's query
        self._saves_uncompacted = 0  # saves since the chunks table was last compacted
        self._chunks_stops = 0  # compactions of it stopped since: each doubles the quiet wanted
        self._chunks_alarm = Alarm(self.supervisor.guard("chunks compaction", self._compact_chunks))
        self._memory: MemoryJobs | None = None  # from _schedule, once the server can notify
        self.embed_progress = EmbedProgress()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._child: subprocess.Popen[str] | None = None  # the bulk-index child, while it runs
        self._last_request = time.monotonic()
        self.queries = Queries()
        self._released = time.monotonic()
        self.started = time.time()
        self._deadline: threading.Timer | None = None

    def close(self) -> None:
        self.services.close()

    # -- requests ---------------------------------------------------------------------------

    async def dispatch(self, method: str, params: dict[str, Any]) -> Any:
        self._last_request = time.monotonic()
        spec, model = self.registry.validate(method, params)
        if spec.read_only:
            self.queries.begin()
            try:  # encoded on the worker thread too: a big reply must not hold the loop
                return await asyncio.to_thread(
                    lambda: encode_result(spec.handler(self.services, model))
                )
            except Exception as exc:  # a read that writes (a first search builds its index)
                raise storage_error(exc) or exc from None
            finally:
                self.queries.end()
        if method != "index.reindex":
            out = await self.writer.submit(lambda: spec.handler(self.services, model))
            self._embed_wake.set()  # it may have written chunks that want vectors
            if self._memory is not None:  # or a reminder; a failure here is not the write's:
                with contextlib.suppress(Exception):  # the 5-s pass arms again and reports it
                    self._memory.arm()
            return out
        # Parse in the writer; vectors come from the embedding loop, which we wait for if asked,
        # so other writes are never stuck behind the model.
        wanted = bool(getattr(model, "embed", False))
        quick = model.model_copy(update={"embed": False})
        result: dict[str, Any] = await self.writer.submit(
            lambda: spec.handler(self.services, quick)
        )
        await self._announce(result)
        if wanted:
            before = self.embedded
            self._embed_wake.set()
            await self._embedded_all()
            result["embedded"] = self.embedded - before
        return result

    async def _announce(self, report: dict[str, Any] | IndexReport) -> None:
        r = report.to_dict() if isinstance(report, IndexReport) else report
        if r.get("changed_paths") or r.get("deleted_paths"):
            await self._changed(r["changed_paths"], r["deleted_paths"], r["notes"])

    async def _changed(self, paths: list[str], deleted: list[str], notes: int) -> int:
        """Send ``index.changed``; how many connections were told."""
        await self.server.notify(
            "index.changed", {"paths": paths, "deleted": deleted, "notes": notes}
        )
        return self.server.subscribed("index.changed")

    def _on_faults(self, faults: list[dict[str, Any]]) -> None:
        self.runtime["degraded"] = faults

    # -- embedding --------------------------------------------------------------------------

    async def _embed_loop(self) -> None:
        """Vectors for the waiting hashes, a batch at a time: the model runs on a worker thread
        outside the writer; only the append of each batch goes through it."""
        stage = self.services.embed_stage
        while not self._stop.is_set():
            self._embed_wake.clear()  # before looking: a write from now on wakes us again
            try:
                batch = await asyncio.to_thread(stage.compute, self.embed_batch)
            except Exception as exc:
                self.supervisor.fail("embedding", exc)  # tried again at the next change
                batch = None
            if batch is None:
                if not self._idle_embedding.is_set():
                    self.embed_progress.idle()  # the end of a burst of embedding
                self._idle_embedding.set()
                await self._embed_wake.wait()
                if self._saved:
                    self._saved = False
                    await self._after_saves()
                continue
            self._idle_embedding.clear()
            filled = await self.writer.submit(lambda b=batch: stage.commit(b))  # type: ignore[misc]
            self.embedded += 0 if batch.stored else filled  # by the model, not read from the store
            self.supervisor.ok("embedding")
            await asyncio.to_thread(self.embed_progress.batch, len(batch.hashes), stage.pending)

    async def _open_model(self) -> None:
        """Open the model while nobody waits for it: after a restart with nothing to embed,
        the first hybrid query or recall would otherwise open it (~200 ms)."""
        try:
            await asyncio.to_thread(self.services.embedder.embed, ["open"])
        except Exception as exc:  # reported as the embedding stage reports a broken model
            self.supervisor.fail("embedding", exc)

    async def _after_saves(self) -> None:
        """A save just landed: the person is likely to search for it next. Let those queries
        have both cores (lexical finds the new words already): embed once no save has come
        for ``embed_delay`` (each starts the wait again, so the model does not run into the
        query after the next save), and at the latest ``EMBED_WAIT_CAP`` delays after the
        first."""
        deadline = time.monotonic() + EMBED_WAIT_CAP * self.embed_delay
        while not self._stop.is_set():
            self._embed_wake.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                return
            woke = asyncio.ensure_future(self._embed_wake.wait())
            stop = asyncio.ensure_future(self._stop.wait())
            done, pending = await asyncio.wait(
                {woke, stop}, timeout=min(self.embed_delay, left),
                return_when=asyncio.FIRST_COMPLETED,
            )  # fmt: skip
            for task in pending:
                task.cancel()
            if woke not in done:
                return  # quiet for a delay (or stopping)

    async def _compact_now(self) -> None:
        """Drop unused vectors and compact the tables, in the writer's turn."""
        t0 = time.monotonic()
        _log.info("compacting the tables")
        dropped = await self.writer.submit(self.services.compact, counts_as_write=False)
        _log.info("tables compacted in %.1f s (%d unused vectors dropped); store caches: "
                  "%.1f MiB", time.monotonic() - t0, dropped,
                  self.services.store.cache_bytes() / 2**20)  # fmt: skip

    async def _embedded_all(self) -> None:
        self._idle_embedding.clear()
        await self._idle_embedding.wait()

    # -- watching ---------------------------------------------------------------------------

    def _debounce(self, settings: Settings) -> None:
        d = self.debouncer
        d.delay = int(settings["watch.debounce_ms"]) / 1000
        d.settle = int(settings["watch.settle_ms"]) / 1000
        d.closes = bool(settings["watch.close_events"]) and VaultWatcher.reports_closes()

    def _on_path(self, rel: str, kind: Kind) -> None:  # watchdog's thread
        if self._loop is None:
            return
        if rel in RULE_FILES:
            self._loop.call_soon_threadsafe(self._rules_changed)
        elif self.services.vault.is_note(rel) or self.services.vault.is_attachment(rel):
            # an attachment coming or going fixes or breaks the links that name it
            self._loop.call_soon_threadsafe(self._touch, rel, kind)

    def _rules_changed(self) -> None:
        """``.sidecarignore`` or ``.obsidian/app.json`` changed: a full scan adds the notes
        no longer excluded and drops the newly excluded ones."""
        if self.services.vault.reload_rules():
            _log.info("ignore rules changed: %s", self.services.vault.obsidian.to_dict())
            self._touch(None)

    def _on_dir(self) -> None:  # watchdog's thread
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._touch, None)

    def _touch(self, rel: str | None, kind: Kind = CHANGED) -> None:
        if rel is None:
            self.debouncer.request_rescan()
        else:
            self.debouncer.add(rel, kind)
        self._wake.set()

    async def _flush_loop(self) -> None:
        while not self._stop.is_set():
            delay = self.debouncer.next_due()
            self._wake.clear()
            if delay is None or delay > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=delay)
                continue
            paths, rescan = self.debouncer.take_due()
            if paths or rescan:
                await self._reindex(None if rescan else paths)

    async def _reindex(self, paths: list[str] | None) -> bool:
        """Reindex ``paths`` (None: the whole vault); one that fails is retried by ``_health``
        (a full disk: once the store is writable again). ``index.changed`` goes out as soon as
        search finds the changes, before the notes' rows are written; the queries of the
        clients told of them go first."""
        loop = asyncio.get_running_loop()
        told: list[bool] = []

        def searchable(changed: list[str], deleted: list[str]) -> None:  # the writer's thread
            with self.services.state.lock:
                notes = len(self.services.state.notes)
            told.append(True)
            if loop.is_closed():  # a stop that could not wait for this write: nobody listens,
                return  # and the note's row must still be written
            sent = asyncio.run_coroutine_threadsafe(self._changed(changed, deleted, notes), loop)
            with contextlib.suppress(Exception):  # a loop stopping: the row is still written
                if sent.result(timeout=QUERY_GRACE_S):
                    self.queries.go_first(QUERY_GRACE_S, QUERIES_FIRST_CAP_S)

        try:
            report = await self.writer.submit(
                lambda: self.services.reindex(paths=paths, searchable=searchable)
            )
        except Exception as exc:
            self._remember_failed(paths)
            message = exc.message if isinstance(exc, SidecarError) else None
            self.supervisor.fail("reindex", message or exc)
            return False
        self.supervisor.ok("reindex")
        for err in report.errors:
            _log.warning("%s: %s", err["path"], err["error"])
        if not told:
            await self._announce(report)
        # Not only when notes changed: a re-index that failed part-way (a full disk) wrote
        # chunks whose vectors wait, and this run, finding those notes current, changes none.
        # The start-up reconcile is not a save: nobody is about to query a note just written,
        # and recall finds no note until the vectors are in.
        self._saved = self._saved or paths is not None
        self._saves_uncompacted += paths is not None
        self._arm_chunks()
        self._embed_wake.set()
        return True

    def _remember_failed(self, paths: list[str] | None) -> None:
        self._failed = True
        if paths is None or self._retry is None:
            self._retry = None
        else:
            self._retry.update(paths)

    def _retry_failed(self) -> None:
        """Hand the saves whose reindex failed back to the debouncer, and run a failed lint
        again (every health check)."""
        if not self._failed:
            return
        retry, self._retry, self._failed = self._retry, set(), False
        if "lint" in self.supervisor.faults and self._loop is not None:
            self._loop.create_task(self._lint(), name="sidecar-lint")
        if retry is None:
            self.debouncer.request_rescan()
        else:
            for path in retry:
                self.debouncer.add(path)
        self._wake.set()

    # -- periodic jobs ----------------------------------------------------------------------

    async def _startup_reconcile(self) -> None:
        """Catch up with everything that changed while no daemon ran; then say ``ready``."""
        bulk = int(self.settings["daemon.bulk_index_notes"])
        if (
            bulk
            and self.services.vault.root.is_dir()
            and await asyncio.to_thread(self.services.indexer.backlog) >= bulk
        ):
            await self._bulk_index()
        done = await self._reindex(None)  # what the child left, or all of it if it failed
        await asyncio.to_thread(warm, self.services)
        self.runtime["ready"] = True
        freeze_long_lived()  # the index as loaded lives as long as the daemon (one collection)
        release_free_memory()  # a cold index is the largest burst of all; cheap once frozen
        notes = len(self.services.state.notes)
        if done:
            _log.info("index up to date: %d notes", notes)
        else:
            _log.warning("serving %d notes; the start-up reindex is retried", notes)
        (_log.info if notes else _log.warning)(ready_hint(self.services.vault.root, notes))
        await self._open_model()
        cron = str(self.settings["lint.schedule"])
        if lint_job.missed(cron, self.services.meta.get("lint_last_run"), self.services.clock()):
            await self._lint()  # a nightly run was missed (first start, or asleep): catch up

    async def _bulk_index(self) -> None:
        """A big start-up backlog (a cold index) is indexed by a child process holding our lent
        writer lock (``sidecar/daemon/bulk.py`` says why); then the index is loaded from the store
        as at a restart. Queries meanwhile see the index as it was."""
        try:
            report = await self.writer.submit(self._run_bulk_child)
        except Exception as exc:
            self.supervisor.fail("bulk index", exc)
            _log.warning("indexing in the daemon instead")
            return
        if report is not None:
            await self._announce(report)
            if report.get("changed_paths"):
                self._embed_wake.set()

    def _run_bulk_child(self) -> dict[str, Any] | None:  # in the writer's turn
        lock = self.services.lock
        argv = [sys.executable, "-m", "sidecar.daemon.bulk", str(self.services.vault.root),
                str(os.getpid())]  # fmt: skip
        t0 = time.monotonic()
        self._child = subprocess.Popen(
            argv, env={**os.environ, **lock.lend()}, pass_fds=(lock.fd,),
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        out, _ = self._child.communicate()
        code, self._child = self._child.returncode, None
        self.services.reload()  # whatever the child got to, the store may have changed
        lines = out.strip().splitlines()
        report: dict[str, Any] = json.loads(lines[-1]) if code == 0 and lines else {}
        if "changed_paths" not in report:
            _log.warning("bulk index exited %s: %s", code, report.get("error", "no report"))
            return None
        _log.info("bulk index in a child process: %d notes in %.1f s",
                  report["changed"], time.monotonic() - t0)  # fmt: skip
        return report

    async def _health(self) -> None:
        present = self.services.vault.root.is_dir()
        if present and not self.watcher.alive:
            _log.info("watching %s", self.services.vault.root)
            was_watching = self.runtime["ready"]
            self.watcher.start()
            if was_watching:
                self._touch(None)  # the folder came back: reconcile
        elif not present and self.watcher.alive:
            _log.warning("vault folder vanished: %s; waiting for it", self.services.vault.root)
            self.watcher.stop()
        if present:
            self.supervisor.ok("vault")
        else:  # status says so; writes into it are refused where they happen
            self.supervisor.fail("vault", f"the vault folder is missing: "
                                 f"{self.services.vault.root}")  # fmt: skip
        self.runtime.update(watching=self.watcher.alive, queue=self.writer.pending)
        self._retry_failed()
        # One release after each burst of work (a cold index, a backlog, a run of queries or
        # saves), once it has been quiet a while: glibc keeps what they freed (at 100k notes,
        # 200 hybrid searches left the daemon 270 MiB larger until something trimmed).
        last = max(self._last_request, self.writer.last_write)
        quiet = time.monotonic() - last >= RELEASE_AFTER_SECONDS and not self.writer.busy
        if self.runtime["ready"] and last > self._released and quiet:
            self._released = time.monotonic()
            await asyncio.to_thread(release_free_memory)

    async def _lint(self) -> None:
        try:
            result = await self.writer.submit(lambda: lint_job.run_scheduled(self.services))
        except Exception as exc:
            self.supervisor.fail("lint", exc)
            self._failed = True  # run again by the health check
            return
        self.supervisor.ok("lint")
        await self.server.notify("lint.completed", {"ran_at": result["ran_at"],
                                                    "summary": result["summary"]})  # fmt: skip

    async def _compact(self) -> None:
        idle = time.monotonic() - self.writer.last_write
        limit = int(self.settings["daemon.compact_idle_seconds"])
        if self.writer.writes_since_compact and idle >= limit and not self.writer.busy:
            await self._compact_now()
            self.writer.writes_since_compact = 0
            self._saves_uncompacted = 0

    async def _compact_chunks(self) -> None:
        """After ``daemon.compact_saves`` saves, compact the chunks table in a quiet moment: a
        person editing never leaves the idle compaction's minute, and each save's fragment
        slows every search, read by id and delete after it. It gives way to a save or a
        query (``_give_way``) and is tried again in a quiet moment twice as long (at 10k
        notes it takes ~1 s, which people editing may never leave it)."""
        due = self._chunks_due()
        if due is None:
            return
        if due > time.monotonic():
            self._chunks_alarm.at(due)  # wait for the end of the quiet spell
            return
        t0, saves = time.monotonic(), self._saves_uncompacted
        ran = await self.writer.submit(
            lambda: self.services.compact_chunks(self._give_way), counts_as_write=False
        )
        if ran:
            self._saves_uncompacted -= saves  # those that came meanwhile still count
        self._chunks_stops = 0 if ran else self._chunks_stops + 1
        _log.info("chunks table %s after %.2f s (%d saves)",
                  "compacted" if ran else "compaction stopped for a save or a query",
                  time.monotonic() - t0, saves)  # fmt: skip
        self._arm_chunks()

    def _arm_chunks(self) -> None:
        due = self._chunks_due()
        if due is not None:
            self._chunks_alarm.at(due)

    def _chunks_due(self) -> float | None:
        """When the chunks table may be compacted: at the end of the quiet spell after the last
        write or request; None while too few saves wait."""
        wanted = int(self.settings["daemon.compact_saves"])
        if not wanted or self._saves_uncompacted < wanted:
            return None
        quiet = CHUNKS_QUIET_S * float(2 ** min(self._chunks_stops, 3))
        if self.writer.busy or self.writer.pending or not self.runtime["ready"]:
            return time.monotonic() + quiet
        return max(self.writer.last_write, self._last_request) + quiet

    def _give_way(self) -> bool:  # the writer's thread, while it compacts the chunks table
        return bool(self.writer.pending or self.debouncer.waiting or self.queries.running)

    def _schedule(self) -> None:
        guard = self.supervisor.guard
        self.scheduler.add_job(guard("health check", self._health), "interval", seconds=5,
                               id="health")  # fmt: skip
        idle = int(self.settings["daemon.compact_idle_seconds"])
        self.scheduler.add_job(guard("compaction", self._compact), "interval",
                               seconds=max(1, min(30, idle)), id="compact")  # fmt: skip
        self._memory = MemoryJobs(self.services, self.writer, self.server.notify, self.supervisor)
        self._memory.arm()
        self.scheduler.add_job(guard("memory", self._memory.tick), "interval",
                               seconds=RESCAN_SECONDS, id="memory")  # fmt: skip
        self.scheduler.add_job(guard("lint", self._lint),
                               lint_job.trigger(str(self.settings["lint.schedule"])), id="lint")  # fmt: skip
        minutes = int(self.settings["watch.rescan_minutes"])
        if minutes > 0:
            self.scheduler.add_job(
                self._touch, "interval", minutes=minutes, args=[None], id="rescan"
            )
        self.scheduler.start()

    # -- lifecycle --------------------------------------------------------------------------

    def request_stop(self) -> None:
        if self._child is not None:
            self._child.terminate()  # a cold index stopped half-way resumes at the next start
        if not self._stop.is_set():
            budget = float(self.settings["daemon.stop_seconds"])
            self._deadline = exit_deadline(budget + 2, self._still_running)
        self._stop.set()
        self._wake.set()

    def _still_running(self) -> str:
        return f"writer busy: {self.writer.busy}, {self.writer.pending} queued"

    def reload(self) -> None:
        """SIGHUP: re-read the settings that can change without a restart."""
        from sidecar.config import load_settings

        try:
            fresh = load_settings(self.settings.vault, os.environ)
        except SidecarError as exc:
            _log.warning("config not reloaded: %s", exc.message)
            return
        self.settings = fresh
        self.services.reconfigure(fresh)
        self._debounce(fresh)
        _log.info("config reloaded (debounce %s ms, settle %s ms, close events %s)",
                  fresh["watch.debounce_ms"], fresh["watch.settle_ms"],
                  "on" if self.debouncer.closes else "off")  # fmt: skip

    async def run(self) -> None:
        self._loop = asyncio.get_running_loop()
        raise_open_files()
        for sig in (signal.SIGTERM, signal.SIGINT):
            self._loop.add_signal_handler(sig, self.request_stop)
        self._loop.add_signal_handler(signal.SIGHUP, self.reload)
        await self.server.start()
        await self.supervisor.guard("health check", self._health)()  # starts the watcher
        # before the reconcile, so no save is missed
        self._schedule()
        spawn = self.supervisor.spawn
        self.writer.attach(spawn("writer", self.writer.run))
        spawn("start-up reconcile", self._startup_reconcile)
        spawn("flush", self._flush_loop)
        spawn("embedding", self._embed_loop)
        _log.info("serving %s on %s", self.services.vault.root, self.socket_path)
        sd_notify("READY=1")
        try:
            await self._stop.wait()
        finally:
            sd_notify("STOPPING=1")
            _log.info("stopping: draining the write queue")
            self.scheduler.shutdown(wait=False)
            self._chunks_alarm.cancel()
            if self._memory is not None:
                self._memory.stop()
            self.watcher.stop()
            self._embed_wake.set()
            await self._stop_within(float(self.settings["daemon.stop_seconds"]))
            await self.server.stop()
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                self._loop.remove_signal_handler(sig)
            if self._deadline is not None:
                self._deadline.cancel()

    async def _stop_within(self, budget: float) -> None:
        """The loops end, then queued writes finish, all within ``budget`` seconds; whatever
        is still queued after that was never acknowledged and is refused."""
        t0 = time.monotonic()
        writer = self.writer.drain_and_stop  # the writer stops last: the loops submit to it
        await self.supervisor.stop(budget / 2, keep=("writer",))
        if not await writer(max(0.5, budget - (time.monotonic() - t0))):
            _log.warning("stopped with a write still running (it resumes at the next start)")
        await self.supervisor.stop(0.5)
