"""The writer's turn lets the query after a save go first (``sidecar/daemon/queries.py``)."""

from __future__ import annotations

import threading

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
