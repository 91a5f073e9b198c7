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
    ├── StoreError               -32005  exit 1   LanceDB failed; the message says how
    ├── DaemonUnreachable        -32006  exit 3   a daemon was required and did not answer
    ├── ModelError               -32007  exit 1   the embedding model could not load or run
    ├── WriteConflict            -32008  exit 1   a note changed since it was read, or exists
    └── MethodNotFound           -32601  exit 2   no such RPC method

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
