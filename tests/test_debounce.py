"""The debouncer's rule on a fake clock: a path whose writer is done waits ``settle``, anything
else (and every path in a burst) the quiet time ``delay``."""

from __future__ import annotations

import pytest

from sidecar.daemon.debounce import BURST, BURST_CAP, CHANGED, DONE, Debouncer


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def debouncer(closes: bool = True) -> tuple[Debouncer, Clock]:
    clock = Clock()
    return Debouncer(0.3, clock, settle=0.04, closes=closes), clock


def test_a_closed_or_renamed_onto_path_waits_only_the_settle_window() -> None:
    d, clock = debouncer()
    d.add("a.md", CHANGED)  # the write
    d.add("a.md", DONE)  # its close
    assert d.next_due() == pytest.approx(0.04)
    clock.now += 0.04
    assert d.take_due() == (["a.md"], False)
    assert d.next_due() is None


def test_a_write_after_the_close_falls_back_to_the_quiet_time() -> None:
    d, clock = debouncer()
    d.add("a.md", DONE)
    clock.now += 0.01
    d.add("a.md", CHANGED)  # still being modified
    clock.now += 0.04
    assert d.take_due() == ([], False)
    clock.now += 0.26
    assert d.take_due() == (["a.md"], False)


def test_without_close_events_every_change_waits_the_debounce() -> None:
    d, clock = debouncer(closes=False)
    d.add("a.md", DONE)
    clock.now += 0.299
    assert d.take_due() == ([], False)
    clock.now += 0.001
    assert d.take_due() == (["a.md"], False)


def test_a_burst_is_one_batch_once_quiet_and_the_cap_bounds_an_endless_one() -> None:
    d, clock = debouncer()
    paths = [f"n{i}.md" for i in range(BURST + 5)]
    for p in paths:
        d.add(p, DONE)
        clock.now += 0.01
    assert d.take_due() == ([], False)  # each was closed 40 ms ago, but the burst goes on
    clock.now += 0.3
    assert d.take_due() == (sorted(paths), False)
    waited = 0.0
    while not (due := d.take_due()[0]):  # a sync tool that never pauses for 0.3 s
        for i in range(20):
            d.add(f"m{i}.md", DONE)
        clock.now += 0.05
        waited += 0.05
    assert len(due) == 20 and waited == pytest.approx(BURST_CAP * 0.3, abs=0.06)


def test_a_rescan_request_is_handed_on_once() -> None:
    d, clock = debouncer()
    d.request_rescan()
    d.request_rescan()
    clock.now += 0.3
    assert d.take_due() == ([], True)
    assert d.take_due() == ([], False)
