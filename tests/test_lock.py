"""The writer lock: one holder at a time, lent to a child process only explicitly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sidecar.errors import StoreLocked
from sidecar.store.lock import LENT_FD, WriterLock

pytestmark = pytest.mark.e2e  # child processes take the lock

TRY = """
import sys
from sidecar.errors import StoreLocked
from sidecar.store.lock import WriterLock

try:
    WriterLock(__import__("pathlib").Path(sys.argv[1])).acquire().release()
except StoreLocked:
    sys.exit(3)
"""


def attempt(path: Path, env: dict[str, str] | None = None, fds: tuple[int, ...] = ()) -> int:
    return subprocess.run(
        [sys.executable, "-c", TRY, str(path)], env={**os.environ, **(env or {})},
        pass_fds=fds, timeout=60,
    ).returncode  # fmt: skip


def test_a_lent_lock_is_shared_with_the_child_and_stays_held(tmp_path: Path) -> None:
    path = tmp_path / "writer.lock"
    lock = WriterLock(path).acquire()
    try:
        assert attempt(path) == 3  # another process: refused
        assert attempt(path, lock.lend(), (lock.fd,)) == 0  # the child it was lent to: allowed
        assert attempt(path) == 3  # the child's release did not unlock the lender's lock
        with pytest.raises(StoreLocked):
            WriterLock(path).acquire()
        # A lent number that is not this lock's file is ignored: the lock is still refused.
        other = os.open(tmp_path / "other", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            assert attempt(path, {LENT_FD: str(other)}, (other,)) == 3
        finally:
            os.close(other)
        assert attempt(path, {LENT_FD: "999"}) == 3  # not open in the child at all
    finally:
        lock.release()
    assert attempt(path) == 0  # free once the lender lets go
