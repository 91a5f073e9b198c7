"""The supervisor and the writer: a failing task is logged, restarted and reported; a dead
writer fails its job instead of leaving it waiting; a stop never waits past its deadline."""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import threading

import pytest

from sidecar.daemon.alarm import Alarm
from sidecar.daemon.supervise import Supervisor
from sidecar.daemon.writer import Writer
from sidecar.errors import StoreError


def run(coro: object) -> object:
    return asyncio.run(coro)  # type: ignore[arg-type]


def test_a_failing_task_is_restarted_and_reported(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[list[dict[str, object]]] = []

    async def main() -> tuple[int, list[dict[str, object]]]:
        sup = Supervisor(backoff=(0.01,), on_change=seen.append)
        runs = 0

        async def work() -> None:
            nonlocal runs
            runs += 1
            if runs < 3:
                raise RuntimeError("lance error: LanceError(IO): No space left on device "
                                   "(os error 28), /root/.cargo/x/writer.rs:191:9")  # fmt: skip
            sup.ok("embedding")

        await sup.spawn("embedding", work)
        return runs, sup.degraded

    with caplog.at_level(logging.INFO, "sidecar.daemon"):
        runs, degraded = run(main())  # type: ignore[misc]
    assert runs == 3 and degraded == []
    assert seen[0][0]["part"] == "embedding" and ".rs:" not in str(seen[0][0]["error"])
    assert seen[-1] == []
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1  # the same reason twice is logged once
    assert not any(r.exc_info for r in caplog.records if r.levelno >= logging.INFO)


@pytest.mark.parametrize("number", [errno.ENOSPC, errno.EMFILE])
def test_a_full_disk_marks_the_store_degraded_until_a_write_succeeds(number: int) -> None:
    async def main() -> list[list[dict[str, object]]]:
        states: list[list[dict[str, object]]] = []
        sup = Supervisor(on_change=states.append)
        writer = Writer(sup)
        writer.attach(sup.spawn("writer", writer.run))

        def full() -> None:
            raise OSError(number, os.strerror(number))

        with pytest.raises(StoreError, match=os.strerror(number)):
            await writer.submit(full)
        await writer.submit(lambda: None, counts_as_write=False)  # a no-op proves nothing
        assert sup.degraded and sup.degraded[0]["part"] == "store"
        await writer.submit(lambda: None)
        await writer.drain_and_stop()
        return states

    states = run(main())
    assert [len(s) for s in states] == [1, 0]  # type: ignore[arg-type]


def test_a_stop_does_not_wait_for_a_stuck_write() -> None:
    release = threading.Event()

    async def main() -> tuple[bool, bool]:
        sup = Supervisor()
        writer = Writer(sup)
        writer.attach(sup.spawn("writer", writer.run))
        stuck = asyncio.ensure_future(writer.submit(lambda: release.wait(30)))
        queued = asyncio.ensure_future(writer.submit(lambda: "never ran"))
        await asyncio.sleep(0.1)
        finished = await writer.drain_and_stop(timeout=0.3)
        await sup.stop(0.1)
        release.set()
        outcome = await asyncio.gather(stuck, queued, return_exceptions=True)
        return finished, isinstance(outcome[1], StoreError)

    assert run(main()) == (False, True)


def test_an_alarm_goes_off_once_at_the_earliest_time_and_again_if_it_rang_meanwhile() -> None:
    """Ordered by events, not by timing: the times differ by seconds, so a loaded machine's
    late loop cannot change the outcome."""

    async def main() -> list[float]:
        loop = asyncio.get_running_loop()
        runs: list[float] = []
        ran, release = asyncio.Event(), asyncio.Event()

        async def job() -> None:
            runs.append(loop.time())
            ran.set()
            if len(runs) == 2:
                await release.wait()

        alarm = Alarm(job)
        t0 = loop.time()
        alarm.at(t0 + 30)
        alarm.at(t0)  # earlier: replaces the pending one
        alarm.at(t0 + 20)  # later than the one pending: no change
        await asyncio.wait_for(ran.wait(), 10)  # long before the 20 or 30 s ones
        ran.clear()
        alarm.at(loop.time())  # the second run waits on ``release``...
        await asyncio.wait_for(ran.wait(), 10)
        alarm.at(loop.time())  # ...and this alarm rings meanwhile: one more run after it
        await asyncio.sleep(0.05)
        assert len(runs) == 2
        ran.clear()
        release.set()
        await asyncio.wait_for(ran.wait(), 10)
        alarm.at(loop.time() + 0.05)
        alarm.cancel()
        await asyncio.sleep(0.2)  # a cancelled alarm does not ring
        return [r - t0 for r in runs]

    runs = run(main())
    assert isinstance(runs, list) and len(runs) == 3, runs
    assert runs[0] < 20, runs
