"""The one error tree of the sidecar.

Every error the sidecar raises on purpose is a ``SidecarError``. Each class carries the JSON-RPC
error code a transport sends and the exit status the CLI returns, so the translation happens in
exactly one place per edge (the RPC codec, the CLI) and nowhere else::

    SidecarError                 -32000  exit 1
    ├── UsageError               -32602  exit 2   bad parameters or flags
    ├── VaultNotFound            -32001  exit 2   no vault given or discoverable
    ├── NoteNotFound             -32002  exit 1   a NOTE argument matched nothing (or too much)
    ├── PathOutsideVault         -32003  exit 2   a request named a path outside the vault
    ├── StoreLocked              -32004  exit 1   another process holds the writer lock
    │   └── AlreadyServing       -32009  exit 4   a daemon already serves this vault
    ├── StoreError               -32005  exit 1   LanceDB failed; the message says how
    │   └── StorageUnavailable   -32010  exit 5   a folder we must write is read-only, full, denied
    ├── DaemonUnreachable        -32006  exit 3   a daemon was required and did not answer
    ├── ModelError               -32007  exit 1   the embedding model could not load or run
    │   └── ModelMissing         -32011  exit 6   the model's package is not installed
    ├── UnsupportedPlatform      -32012  exit 6   no Unix sockets or file locks here (Windows)
    ├── WriteConflict            -32008  exit 1   a note changed since it was read, or exists
    └── MethodNotFound           -32601  exit 2   no such RPC method

``EXIT_STATUSES`` is the CLI's table of those exit statuses (docs/cli.md is generated from it);
``NO_RESTART`` are the ones a service manager must not retry, since retrying cannot help (the
systemd unit's ``RestartPreventExitStatus``, checked by a test).

Third-party exceptions (LanceDB, ONNX, YAML, OSError) are converted where those libraries are
called, never further up.
"""

from __future__ import annotations

from typing import Any, ClassVar


class SidecarError(Exception):
    """Base class; ``code`` is the JSON-RPC error code, ``exit_status`` the CLI's."""

    code: ClassVar[int] = -32000
    exit_status: ClassVar[int] = 1

    def __init__(self, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data or {}

    def to_dict(self) -> dict[str, Any]:
        """The JSON-RPC ``error`` object for this error."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data:
            out["data"] = self.data
        return out


class UsageError(SidecarError):
    code = -32602
    exit_status = 2


class VaultNotFound(SidecarError):
    code = -32001
    exit_status = 2


class NoteNotFound(SidecarError):
    code = -32002
    exit_status = 1


class PathOutsideVault(SidecarError):
    code = -32003
    exit_status = 2


class StoreLocked(SidecarError):
    code = -32004
    exit_status = 1


class StoreError(SidecarError):
    code = -32005
    exit_status = 1


class DaemonUnreachable(SidecarError):
    code = -32006
    exit_status = 3


class ModelError(SidecarError):
    code = -32007
    exit_status = 1


class WriteConflict(SidecarError):
    """A write would replace text its writer has not seen: the note changed since its hash was
    read, or exists and neither ``expected_hash`` nor ``overwrite`` was given. ``data.hash`` is
    the note's hash now."""

    code = -32008
    exit_status = 1


class MethodNotFound(SidecarError):
    code = -32601
    exit_status = 2


class AlreadyServing(StoreLocked):
    code = -32009
    exit_status = 4


class StorageUnavailable(StoreError):
    code = -32010
    exit_status = 5


class ModelMissing(ModelError):
    code = -32011
    exit_status = 6


class UnsupportedPlatform(SidecarError):
    code = -32012
    exit_status = 6


EXIT_STATUSES: dict[int, str] = {
    0: "ok (a query with no results included)",
    1: "failure: lint findings at --fail-on, a note not found, an operation that failed",
    2: "usage: a bad flag or parameter, an unknown method, relation, rule or filter key, "
    "no vault found, an unreadable config",
    3: "no daemon answered where one was required",
    4: "a daemon already serves this vault (`sidecar serve`)",
    5: "a folder the sidecar must write (the index's data dir, the socket's folder) is "
    "read-only, full or not ours; the message names it and the setting that moves it",
    6: "the installation lacks a part: the model package, or a platform with Unix sockets",
}
NO_RESTART: tuple[int, ...] = (2, 4, 6)  # a full disk (5) may clear; retrying the rest cannot help


def unwritable_folder(exc: OSError, what: str, path: object, setting: str) -> StorageUnavailable:
    """One line for a folder we cannot write: which folder, why, and what moves it."""
    reason = exc.strerror or str(exc)
    return StorageUnavailable(f"cannot write {what} {path}: {reason.lower()}; {setting}",
                              {"path": str(path), "errno": exc.errno})  # fmt: skip


ERROR_CLASSES: tuple[type[SidecarError], ...] = (
    SidecarError,
    UsageError,
    VaultNotFound,
    NoteNotFound,
    PathOutsideVault,
    StoreLocked,
    StoreError,
    DaemonUnreachable,
    ModelError,
    WriteConflict,
    MethodNotFound,
    AlreadyServing,
    StorageUnavailable,
    ModelMissing,
    UnsupportedPlatform,
)


def error_from_dict(obj: dict[str, Any]) -> SidecarError:
    """Rebuild the typed error a peer sent, so a socket client raises what in-process code would."""
    code = obj.get("code")
    message = str(obj.get("message", "error"))
    data = obj.get("data") if isinstance(obj.get("data"), dict) else None
    for cls in ERROR_CLASSES:
        if cls.code == code:
            return cls(message, data)
    err = SidecarError(message, data)
    return err
