"""Where the daemon's socket lives and how it is bound: the operating-system details.

AF_UNIX paths are limited to the size of ``sun_path`` (108 bytes on Linux, 104 on macOS and the
BSDs, NUL included), deep data directories exceed that easily, and a socket in a shared place
must be private from the instant it exists. This module is the one place that knows.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from sidecar.config import Settings
from sidecar.errors import AlreadyServing, SidecarError, UsageError, unwritable_folder

if TYPE_CHECKING:
    import socket

__all__ = [
    "bind_private_socket",
    "default_socket_path",
    "find_daemon",
    "is_serving",
    "runtime_dir",
    "socket_candidates",
    "socket_path_for",
]

SUN_PATH = 108 if sys.platform.startswith("linux") else 104
_DEFAULT_MAX = 100  # bytes: a margin below the smallest sun_path for the paths we choose
SOCKET_SETTING = "set daemon.socket_path (or XDG_RUNTIME_DIR) to a folder you can write"


def runtime_dir(env: Mapping[str, str], run_user: Path = Path("/run/user")) -> Path | None:
    """``$XDG_RUNTIME_DIR``, else ``/run/user/<uid>`` when it exists and is ours.

    That directory is the one systemd-logind makes and names in ``XDG_RUNTIME_DIR``, so a client
    started without the variable (the MCP SDK passes only HOME, PATH, SHELL and TERM to its
    servers) still finds the daemon a login shell or the user's service manager started.
    """
    if env.get("XDG_RUNTIME_DIR"):
        return Path(env["XDG_RUNTIME_DIR"])
    user = run_user / str(os.getuid())
    try:
        st = os.stat(user)
    except OSError:
        return None
    return user if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() else None


def socket_candidates(vault_id: str, env: Mapping[str, str]) -> list[Path]:
    """Where the daemon for ``vault_id`` may listen, in order: the runtime dir, then a folder
    derived from HOME alone (not ``$XDG_DATA_HOME``, which a client may not have), then
    ``/tmp``. The daemon binds the first; a client takes the first that answers. Paths too
    long for AF_UNIX are left out.

    ``/tmp`` comes last because it is shared: the bind step refuses a directory there that is
    not ours and private.
    """
    candidates = []
    runtime = runtime_dir(env)
    if runtime is not None:
        candidates.append(runtime / "sidecar" / f"{vault_id}.sock")
    home = Path(env.get("HOME") or Path.home())
    candidates.append(home / ".local" / "share" / "sidecar" / vault_id / "sock" / "s")
    candidates.append(Path("/tmp") / f"sidecar-{os.getuid()}" / f"{vault_id}.sock")
    return [p for p in candidates if len(os.fsencode(p)) < _DEFAULT_MAX]


def default_socket_path(vault_id: str, env: Mapping[str, str]) -> Path:
    """Where the daemon for ``vault_id`` binds: the first candidate."""
    candidates = socket_candidates(vault_id, env)
    if not candidates:
        raise UsageError(
            f"no socket path under {_DEFAULT_MAX} bytes is possible for vault id {vault_id!r} "
            "(AF_UNIX paths are limited to about 104 bytes); set daemon.socket_path"
        )
    return candidates[0]


def socket_path_for(settings: Settings, env: Mapping[str, str]) -> Path:
    """Where this vault's daemon binds: ``daemon.socket_path`` if set, else the default."""
    configured = str(settings["daemon.socket_path"])
    if configured:
        return Path(configured).expanduser()
    return default_socket_path(settings.vault_id, env)


def find_daemon(settings: Settings, env: Mapping[str, str]) -> Path | None:
    """The socket of a daemon serving this vault, or None. A socket file whose daemon died
    refuses at once (ECONNREFUSED), so a stale one costs microseconds, never a wait."""
    configured = str(settings["daemon.socket_path"])
    if configured:
        candidates = [Path(configured).expanduser()]
    else:
        candidates = socket_candidates(settings.vault_id, env)
    return next((p for p in candidates if is_serving(p)), None)


def is_serving(path: Path | str, timeout: float = 1.0) -> bool:
    """True when something accepts connections at ``path`` (a full backlog counts as alive)."""
    import socket  # here: most who import this module only compute a path

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
            raise AlreadyServing(f"a daemon is already serving this vault at {path}")
        path.unlink(missing_ok=True)  # stale: its daemon died without cleaning up
    import socket

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)
    try:
        sock.bind(os.fspath(path))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:  # another daemon won a race for the path
            raise AlreadyServing(f"a daemon is already serving this vault at {path}") from exc
        raise unwritable_folder(exc, "the socket", path, SOCKET_SETTING) from exc
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
        raise unwritable_folder(exc, "the socket's folder", directory, SOCKET_SETTING) from exc
    uid = os.getuid()
    ours = st.st_uid == uid and link.st_uid == uid
    if not ours and (stat.S_IMODE(st.st_mode) & 0o077 or stat.S_ISLNK(link.st_mode)):
        raise SidecarError(
            f"refusing to use the socket directory {directory}: it belongs to uid {st.st_uid} "
            "and is open to others; remove it or choose another socket path"
        )
    if ours and stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(directory, 0o700)
