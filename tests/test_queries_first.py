"""The query after a save goes first: the writer's turn waits for it
(``sidecar/daemon/queries.py``), and the embedding waits until saves pause."""

from __future__ import annotations

import asyncio
import threading
from types import SimpleNamespace

from sidecar.daemon.app import EMBED_WAIT_CAP, Daemon
from sidecar.daemon.queries import Queries


def test_the_writer_waits_for_a_query_that_starts_in_its_grace_until_it_ends() -> None:
    queries = Queries()
    events: list[str] = []
    ask, answer = threading.Event(), threading.Event()

    def client() -> None:
        ask.wait()
        queries.begin()
        events.append("query started")
        answer.wait()
        events.append("query ended")
        queries.end()

    thread = threading.Thread(target=client)
    thread.start()
    waiting = threading.Thread(target=lambda: (queries.go_first(60, 60), events.append("row")))
    waiting.start()
    ask.set()
    while "query started" not in events:
        thread.join(0.001)
    assert "row" not in events  # the query runs: the writer still waits
    answer.set()
    waiting.join(60)
    thread.join(60)
    assert events == ["query started", "query ended", "row"]


def test_without_a_query_the_writer_waits_only_its_grace_and_never_past_its_cap() -> None:
    queries = Queries()
    queries.go_first(0.001, 60)  # nobody asks: back after the grace
    queries.begin()  # a query that does not end (a client gone quiet)
    queries.go_first(60, 0.01)  # returns at the cap
    assert queries.running == 1
    queries.end()
    assert queries.running == 0


def test_the_embedding_waits_until_saves_pause_and_at_most_its_cap() -> None:
    """The model runs ``embed_delay`` after the last save, not after the first: else it ran
    into the query after the next save. Saves that never pause wait ``EMBED_WAIT_CAP``
    delays."""

    async def run(delay: float, saving_for: float) -> tuple[float, float]:
        loop = asyncio.get_running_loop()
        daemon = SimpleNamespace(_stop=asyncio.Event(), _embed_wake=asyncio.Event(),
                                 embed_delay=delay)  # fmt: skip
        last = [loop.time()]

        async def saves() -> None:
            end = loop.time() + saving_for
            while loop.time() < end:
                daemon._embed_wake.set()
                last[0] = loop.time()
                await asyncio.sleep(delay / 10)

        saver = asyncio.ensure_future(saves())
        t0 = loop.time()
        await Daemon._after_saves(daemon)  # type: ignore[arg-type]
        waited = loop.time() - t0
        saver.cancel()
        return waited, last[0] - t0

    waited, saving = asyncio.run(run(0.5, 1.0))
    assert waited >= saving + 0.5 * 0.9  # a delay after the last save
    waited, _ = asyncio.run(run(0.1, 60))
    assert waited < 60 and waited >= EMBED_WAIT_CAP * 0.1 * 0.9  # the cap, saves going on
