"""The Claude Code hooks, ``sidecar recall --hook`` and ``sidecar session-start --hook``: a
process per prompt, so they import only the settings, the socket client and the recall text,
not click and the CLI's other commands (those were ~30 ms of the hook's CPU, docs/benchmarks.md).

A hook never fails its caller: whatever goes wrong (no vault, no daemon, a broken model) it exits
0 and prints nothing, because a hook that fails can block the user's prompt and anything it
prints lands in the agent's context or the user's transcript (``SIDECAR_HOOK_DEBUG=1`` says why
on stderr). It answers only from a daemon: in-process, the first prompt would index the vault
inside the hook's timeout. With no daemon it starts one when ``daemon.autostart`` is on (for the
next prompt; this one gets nothing).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from sidecar.config import find_vault, load_settings
from sidecar.errors import DaemonUnreachable, SidecarError

HOOKS = ("recall", "session-start")
SESSION_BUDGET = 2000  # characters, as ``sidecar session-start --budget`` defaults


def hook_args(argv: list[str]) -> tuple[str, str | None] | None:
    """(command, vault) when ``argv`` is a hook as ``sidecar agent install`` writes it
    (``recall --hook [--vault PATH]``), else None: every other form goes through the CLI."""
    if len(argv) < 2 or argv[0] not in HOOKS or "--hook" not in argv:
        return None
    rest = [a for a in argv[1:] if a != "--hook"]
    if not rest:
        return argv[0], None
    if len(rest) == 2 and rest[0] == "--vault":
        return argv[0], rest[1]
    if len(rest) == 1 and rest[0].startswith("--vault="):
        return argv[0], rest[0].split("=", 1)[1]
    return None


def run(command: str, vault: str | None) -> int:
    """One hook: its JSON from stdin, the daemon's answer as text on stdout; always 0."""
    data = hook_input(sys.stdin)
    if command == "recall":
        prompt = str(data.get("prompt") or "")
        result = quiet_call(vault, "recall", {"prompt": prompt}) if prompt.strip() else None
        from sidecar.cli.memory_output import fmt_recall

        text = fmt_recall(result) if result else ""
    else:
        result = quiet_call(vault, "session.start", {"budget": SESSION_BUDGET, "query": ""})
        text = str((result or {}).get("text") or "")
    if text:
        sys.stdout.write(text + "\n")
    return 0


def hook_input(stream: Any) -> dict[str, Any]:
    """The hook's JSON (drained whole, so the caller's pipe never blocks), or {}."""
    try:
        data = json.loads(stream.read() or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def quiet_call(vault: str | None, method: str, params: dict[str, Any],
               debug: bool | None = None) -> dict[str, Any] | None:  # fmt: skip
    """The method's result from the vault's daemon, or None: never an exception."""
    # here, not at the top: every `sidecar` passes through this module (``launch``), and
    # `sidecar --help` needs no socket (tests/test_client_imports.py)
    from sidecar.transports.unix_client import RpcClient
    from sidecar.transports.unix_path import find_daemon

    if debug is None:
        debug = bool(os.environ.get("SIDECAR_HOOK_DEBUG"))
    try:
        settings = load_settings(find_vault(vault, os.environ, Path.cwd()), os.environ)
        path = find_daemon(settings, os.environ)
        if path is None:
            if settings["daemon.autostart"]:
                from sidecar.transports.autostart import start_daemon

                with contextlib.suppress(SidecarError):  # started; its socket comes later
                    start_daemon(settings, os.environ, timeout=0.05)
            raise DaemonUnreachable(f"no daemon serves {settings.vault}")
        with RpcClient(path, timeout=None) as client:
            result: dict[str, Any] = client.call(method, params)
            return result
    except Exception as exc:
        message = exc.message if isinstance(exc, SidecarError) else f"{type(exc).__name__}: {exc}"
        if debug:
            sys.stderr.write(f"sidecar {method}: {message}\n")
        return None
