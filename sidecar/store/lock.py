"""The writer lock: exactly one process opens the LanceDB store for writing.

An ``flock`` on a file in the data dir is released by the kernel when the holder dies, even by
``kill -9``, so a crashed daemon never leaves a stale lock behind.

A holder may lend its lock to a child process it waits for (the daemon's bulk index): the child
inherits the locked descriptor and finds its number in ``SIDECAR_WRITER_LOCK_FD``. A flock
belongs to the open file description, which parent and child then share, so the child holds the
lock too; it never unlocks it, only closes its copy.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from sidecar.errors import StoreError, StoreLocked
from sidecar.store.files import Beneath

LENT_FD = "SIDECAR_WRITER_LOCK_FD"


class WriterLock:
    def __init__(self, path: Path, folder: Beneath | None = None) -> None:
        """``folder``: the data dir the lock file is opened in without following symlinks."""
        self.folder = folder or Beneath(path.parent, create_anchor=True)
        self.name = path.name
        self.path = path
        self._fd: int | None = None
        self._borrowed = False

    def lend(self) -> dict[str, str]:
        """The environment entry that hands this held lock to a child (pass the fd too)."""
        assert self._fd is not None, "not held"
        return {LENT_FD: str(self._fd)}

    @property
    def fd(self) -> int:
        assert self._fd is not None, "not held"
        return self._fd

    def _borrow(self) -> bool:
        """Take the lock a parent lent, if it is this lock's file; False when none was lent."""
        lent = os.environ.pop(LENT_FD, "")
        if not lent.isdigit():
            return False
        fd = int(lent)
        try:
            st = self.folder.stat(self.name)
            if st is None or not os.path.samestat(os.fstat(fd), st):
                return False
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # ours already, if it was lent
        except OSError:
            return False
        self._fd, self._borrowed = fd, True
        return True

    def acquire(self) -> WriterLock:
        if self._borrow():
            return self
        try:
            fd = self.folder.open_lock(self.name)
        except OSError as exc:
            raise StoreError(f"cannot open the writer lock {self.path}: {exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "?"
            os.close(fd)
            raise StoreLocked(
                f"the index is locked by another sidecar process (pid {holder}); "
                "stop it or talk to it through its socket",
                {"pid": holder, "lock": str(self.path)},
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            if not self._borrowed:  # unlocking a lent lock would release the lender's too
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> WriterLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
