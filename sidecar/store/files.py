"""Files beneath a root, reached without following symlinks: every read, write, rename and
unlink under the memory folder and the data dir, and the notes ``lint --fix`` rewrites.

The memory folder lies inside the vault, so a cloned or synced vault can ship symlinks there
(``.history/<id> -> ~``), and a check of the path before the call is not enough: the link can
appear between the two. So every operation starts from the root's descriptor and opens one
component at a time with ``O_NOFOLLOW`` (``openat``-style; ``openat2(RESOLVE_BENEATH |
RESOLVE_NO_SYMLINKS)`` does the same in one call, on Linux only), then acts on the last name
relative to its folder's descriptor. A symlink anywhere on the way, or as the file itself, and
anything but a regular file where one is expected, is refused with ``UnsafePath``; ``..``,
absolute paths and NUL never reach the kernel.

Writes are atomic (temp file in the same folder, fsync, rename, fsync the folder): a crash leaves
the old file or the new one. Temp names carry a marker (``.NAME.sidecar-XXXXXXXX.tmp``) so the
next start removes the ones a crash left in the memory folder, and only those
(``is_temp_name``).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sidecar.errors import StoreError

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_TEMP = re.compile(r"\..+\.(sidecar-[0-9a-f]{8}|[a-z0-9_]{8})\.tmp")  # ours; before: mkstemp's


class UnsafePath(OSError):
    """A symlink, a special file or a path escaping the root: refused, never followed."""

    def __init__(self, path: Path | str, why: str) -> None:
        super().__init__(errno.ELOOP, f"refusing {why}: {path}")
        self.path = str(path)
        self.why = why

    def __str__(self) -> str:
        return f"refusing {self.why}: {self.path}"


def is_temp_name(name: str) -> bool:
    """A temp file of our atomic writes (``.x.md.sidecar-1a2b3c4d.tmp``, or mkstemp's
    ``.x.md.k3j_9x2a.tmp`` from before), which a crash may have left behind."""
    return _TEMP.fullmatch(name) is not None


def is_our_temp_name(name: str) -> bool:
    """Only a temp name with our marker: in the vault, mkstemp's shape may be another app's."""
    m = _TEMP.fullmatch(name)
    return m is not None and m.group(1).startswith("sidecar-")


class Beneath:
    """The folder ``anchor/sub``, whose contents are only ever reached without symlinks.

    ``anchor`` is trusted as given (the vault the user named, their data dir): it may itself
    lie behind a symlink. Everything from ``sub`` down is walked component by component.
    ``dir_mode`` is the mode of folders created on the way; ``create_anchor`` lets a write
    create the anchor too (the data dir), where a missing vault must stay missing.
    """

    def __init__(self, anchor: Path, sub: str = "", *, dir_mode: int = 0o700,
                 create_anchor: bool = False) -> None:  # fmt: skip
        self.anchor = anchor
        self.sub = _parts(sub, anchor)
        self.root = anchor.joinpath(*self.sub)
        self.dir_mode = dir_mode
        self.create_anchor = create_anchor

    def path(self, rel: str = "") -> Path:
        """For messages and identity only; never opened by that name."""
        return self.root.joinpath(*_parts(rel, self.root))

    def child(self, rel: str) -> Beneath:
        """The folder ``rel`` below this one, with the same anchor and modes."""
        sub = "/".join([*self.sub, *_parts(rel, self.root)])
        return Beneath(self.anchor, sub, dir_mode=self.dir_mode, create_anchor=self.create_anchor)

    # -- reads ------------------------------------------------------------------------------

    def read_bytes(self, rel: str, limit: int | None = None) -> bytes:
        """The file's bytes (at most ``limit + 1``); FileNotFoundError when it is missing."""
        *folder, name = self._split(rel)
        with self._dir(folder) as dfd:
            fd = self._open_file(dfd, name, os.O_RDONLY | os.O_NONBLOCK, rel)
            with os.fdopen(fd, "rb") as fh:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode):
                    raise UnsafePath(self.path(rel), "a file that is not a regular file")
                want = st.st_size + 1 if limit is None else min(st.st_size + 1, limit + 1)
                data = fh.read(want)
                while limit is None and len(data) >= want:  # it grew since fstat
                    more = fh.read(1 << 20)
                    if not more:
                        break
                    data += more
                return data

    def read_text(self, rel: str) -> str:
        return self.read_bytes(rel).decode("utf-8-sig", "replace")

    def stat(self, rel: str) -> os.stat_result | None:
        """The entry's own stat (a symlink is not followed), None when it or a folder on the
        way is missing; a symlinked folder on the way is refused."""
        *folder, name = self._split(rel)
        try:
            with self._dir(folder) as dfd:
                return os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def is_dir(self, rel: str = "") -> bool:
        """Whether ``rel`` is a real folder reached without symlinks."""
        try:
            with self._dir(self._split(rel) if rel else []):
                return True
        except (FileNotFoundError, NotADirectoryError, UnsafePath):
            return False

    def files(self, rel: str = "") -> list[tuple[str, os.stat_result]]:
        """``(name, stat)`` of the regular files in folder ``rel``, [] when it is missing.
        Symlinks, folders and special files are left out."""
        return [(n, st) for n, st in self.entries(rel) if stat.S_ISREG(st.st_mode)]

    def entries(self, rel: str = "") -> list[tuple[str, os.stat_result]]:
        """``(name, lstat)`` of everything in folder ``rel``, [] when it is missing."""
        try:
            with self._dir(self._split(rel) if rel else []) as dfd:
                out = []
                for name in os.listdir(dfd):
                    with contextlib.suppress(FileNotFoundError):  # gone since the listing
                        out.append((name, os.stat(name, dir_fd=dfd, follow_symlinks=False)))
                return out
        except FileNotFoundError:
            return []

    # -- writes -----------------------------------------------------------------------------

    def write(self, rel: str, data: bytes, mode: int = 0o600) -> os.stat_result:
        """Replace the file atomically (creating missing folders); its new stat. A symlink or
        special file in its place is refused, not replaced."""
        *folder, name = self._split(rel)
        with self._dir(folder, create=True) as dfd:
            self._check_replaceable(dfd, name, rel)
            tmp = f".{name[:200]}.sidecar-{secrets.token_hex(4)}.tmp"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(tmp, flags, 0o600, dir_fd=dfd)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fchmod(fh.fileno(), mode)
                    os.fsync(fh.fileno())
                os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=dfd)
                raise
            os.fsync(dfd)
            return os.stat(name, dir_fd=dfd, follow_symlinks=False)

    def unlink(self, rel: str) -> bool:
        """Remove a regular file; False when it was not there. Anything else is refused."""
        *folder, name = self._split(rel)
        try:
            with self._dir(folder) as dfd:
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                if not stat.S_ISREG(st.st_mode):
                    raise UnsafePath(self.path(rel), "to remove what is not a regular file")
                os.unlink(name, dir_fd=dfd)
                return True
        except FileNotFoundError:
            return False

    def rename(self, src: str, dst: str) -> None:
        """Move a regular file to ``dst`` (creating its folders), which must not exist yet."""
        *src_folder, src_name = self._split(src)
        *dst_folder, dst_name = self._split(dst)
        with self._dir(src_folder) as sfd, self._dir(dst_folder, create=True) as dfd:
            st = os.stat(src_name, dir_fd=sfd, follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode):
                raise UnsafePath(self.path(src), "to move what is not a regular file")
            if _lexists(dfd, dst_name):
                raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(self.path(dst)))
            os.rename(src_name, dst_name, src_dir_fd=sfd, dst_dir_fd=dfd)
            os.fsync(dfd)
            os.fsync(sfd)

    def open_lock(self, rel: str) -> int:
        """A read-write descriptor on a lock file (created 0600), for ``flock``."""
        *folder, name = self._split(rel)
        with self._dir(folder, create=True) as dfd:
            return self._open_file(dfd, name, os.O_RDWR | os.O_CREAT, rel)

    # -- the walk ---------------------------------------------------------------------------

    def _split(self, rel: str) -> list[str]:
        parts = _parts(rel, self.root)
        if not parts:
            raise UnsafePath(self.path(rel), "an empty file name")
        return parts

    @contextlib.contextmanager
    def _dir(self, rel_parts: list[str], *, create: bool = False) -> Iterator[int]:
        """A descriptor on ``root/rel_parts``, every component opened without following."""
        if create and self.create_anchor:
            _make_dirs(self.anchor, self.dir_mode)
        fd = os.open(self.anchor, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            walked = self.anchor
            for part in [*self.sub, *rel_parts]:
                walked = walked / part
                parent, fd = fd, -1
                fd = self._step(parent, part, walked, create)  # closes ``parent``
            yield fd
        finally:
            if fd >= 0:
                os.close(fd)

    def _step(self, fd: int, part: str, walked: Path, create: bool) -> int:
        """Open ``part`` below ``fd`` (closing ``fd``); refuse a symlink."""
        try:
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, self.dir_mode, dir_fd=fd)
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(fd, part):
                raise UnsafePath(walked, "to follow a symlink") from None
            raise
        finally:
            os.close(fd)
        return nxt

    def _open_file(self, dfd: int, name: str, flags: int, rel: str) -> int:
        try:
            return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dfd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafePath(self.path(rel), "to follow a symlink") from None
            if exc.errno == errno.ENXIO:  # a FIFO or socket with nobody on the other end
                raise UnsafePath(self.path(rel), "a file that is not a regular file") from None
            raise

    def _check_replaceable(self, dfd: int, name: str, rel: str) -> None:
        try:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            return
        if stat.S_ISLNK(st.st_mode):
            raise UnsafePath(self.path(rel), "to replace a symlink")
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePath(self.path(rel), "to replace what is not a regular file")


def _parts(rel: str, where: Path) -> list[str]:
    """The components of a relative path; anything that could step out is refused."""
    if "\x00" in rel or rel.startswith(("/", "\\")) or "\\" in rel:
        raise UnsafePath(where / rel.replace("\x00", "\\0"), "a path outside its folder")
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise UnsafePath(where / rel, "a path outside its folder")
    return parts


def _lexists(dfd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _is_link(dfd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _make_dirs(path: Path, mode: int) -> None:
    """``mkdir -p`` where every folder created gets ``mode`` (umask aside, it is chmodded)."""
    missing = []
    for p in (path, *path.parents):
        if p.is_dir():
            break
        missing.append(p)
    for p in reversed(missing):
        with contextlib.suppress(FileExistsError):
            p.mkdir(mode)
            os.chmod(p, mode)


def private_data_dir(data_dir: Path) -> Beneath:
    """The data dir, created 0700, and tightened to 0700 if an older version left it (or the
    ``sidecar/`` folder of every vault's data dir) open: their names are the vaults' names."""
    try:
        _make_dirs(data_dir, 0o700)
        for folder in (data_dir, data_dir.parent):
            st = os.stat(folder)
            if (
                st.st_uid == os.getuid()
                and st.st_mode & 0o077
                and (folder == data_dir or folder.name == "sidecar")
            ):
                os.chmod(folder, 0o700)
    except OSError:
        pass  # read-only or foreign: the first write reports it
    return Beneath(data_dir, create_anchor=True)


# -- JSON files in the data dir ------------------------------------------------------------------


def atomic_write(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Atomically replace one of the user's own files outside the vault and the data dir (an
    agent's settings): nothing a vault ships can reach it, so it is written by path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.sidecar-{secrets.token_hex(4)}.tmp"
    try:
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def write_json(folder: Beneath, name: str, value: Any) -> None:
    try:
        folder.write(name, json.dumps(value, indent=1, sort_keys=True).encode("utf-8"))
    except OSError as exc:
        raise StoreError(f"cannot write {folder.path(name)}: {describe(exc)}") from exc


def describe(exc: OSError) -> str:
    """One line for an OSError: ours says what it refused, the kernel's its strerror."""
    return str(exc) if isinstance(exc, UnsafePath) else (exc.strerror or str(exc))


def read_json(folder: Beneath, name: str, default: Any) -> Any:
    try:
        return json.loads(folder.read_bytes(name))
    except (OSError, ValueError):
        return default
