"""Where the daemon's socket lives and how it is bound: the operating-system details.

AF_UNIX paths are limited to the size of ``sun_path`` (108 bytes on Linux, 104 on macOS and the
BSDs, NUL included), deep data directories exceed that easily, and a socket in a shared place
must be private from the instant it exists. This module is the one place that knows.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import sys
from pathlib import Path

from sidecar.errors import SidecarError, UsageError

__all__ = ["bind_private_socket", "default_socket_path", "is_serving"]

SUN_PATH = 108 if sys.platform.startswith("linux") else 104
_DEFAULT_MAX = 100  # bytes: a margin below the smallest sun_path for the paths we choose


def default_socket_path(vault_id: str, data_dir: Path) -> Path:
    """Where the daemon for ``vault_id`` listens: the runtime dir, else ``data_dir``, else /tmp.

    ``data_dir`` is the vault's own data directory (``$XDG_DATA_HOME/sidecar/<vault-id>``), so
    its fallback needs no vault id and stays short. ``/tmp`` comes last because it is shared:
    the bind step refuses a directory there that is not ours and private.
    """
    candidates = []
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        candidates.append(Path(runtime) / "sidecar" / f"{vault_id}.sock")
    candidates.append(Path(data_dir) / "sock" / "s")
    candidates.append(Path("/tmp") / f"sidecar-{os.getuid()}" / f"{vault_id}.sock")
    for path in candidates:
        if len(os.fsencode(path)) < _DEFAULT_MAX:
            return path
    raise UsageError(
        f"no socket path under {_DEFAULT_MAX} bytes is possible for vault id {vault_id!r} "
        f"(AF_UNIX paths are limited to about 104 bytes); pass a shorter socket path"
    )


def is_serving(path: Path | str, timeout: float = 1.0) -> bool:
    """True when something accepts connections at ``path`` (a full backlog counts as alive)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(os.fspath(path))
    except TimeoutError:
        return True
    except OSError:
        return False
    finally:
        sock.close()
    return True


def bind_private_socket(path: Path) -> socket.socket:
    """A bound, non-blocking socket at ``path``, mode 0600 from its first instant.

    Binding ourselves instead of letting asyncio do it matters: asyncio unlinks any existing
    socket file first, which would silently steal the path from a live daemon.
    """
    if len(os.fsencode(path)) >= SUN_PATH:
        raise UsageError(
            f"socket path {path} is too long for AF_UNIX (at most {SUN_PATH - 1} bytes)"
        )
    secure_dir(path.parent)
    if os.path.lexists(path):
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            raise SidecarError(f"{path} exists and is not a socket; refusing to replace it")
        if is_serving(path):
            raise SidecarError(f"a daemon is already serving this vault at {path}")
        path.unlink(missing_ok=True)  # stale: its daemon died without cleaning up
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)
    try:
        sock.bind(os.fspath(path))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:  # another daemon won a race for the path
            raise SidecarError(f"a daemon is already serving this vault at {path}") from exc
        raise SidecarError(f"cannot bind the socket {path}: {exc.strerror or exc}") from exc
    finally:
        os.umask(old_umask)
    os.chmod(path, 0o600)
    sock.setblocking(False)
    return sock


def secure_dir(directory: Path) -> None:
    """Create the socket directory 0700, or make sure an existing one is private and ours."""
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        link = os.lstat(directory)
        st = os.stat(directory)
    except OSError as exc:
        raise SidecarError(f"cannot create the socket directory {directory}: {exc}") from exc
    uid = os.getuid()
    ours = st.st_uid == uid and link.st_uid == uid
    if not ours and (stat.S_IMODE(st.st_mode) & 0o077 or stat.S_ISLNK(link.st_mode)):
        raise SidecarError(
            f"refusing to use the socket directory {directory}: it belongs to uid {st.st_uid} "
            "and is open to others; remove it or choose another socket path"
        )
    if ours and stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(directory, 0o700)
