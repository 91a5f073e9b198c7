"""Commands for coding agents: ``session-start`` and ``recall`` (run as Claude Code hooks) and
``mcp`` (the MCP stdio server).

The hook commands never fail their caller: whatever goes wrong (no vault, no daemon, a broken
model) they exit 0 and print nothing, because a hook that fails can block the user's prompt and
anything it prints lands in the agent's context or the user's transcript. ``--hook`` reads the
hook's JSON from stdin (``prompt`` for ``UserPromptSubmit``); ``--json`` prints the whole result
instead of the text.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

import click

from sidecar.cli.base import common, fail
from sidecar.cli.client import connect, stderr_line
from sidecar.cli.hook import hook_input, quiet_call
from sidecar.cli.memory_output import fmt_recall
from sidecar.config import find_vault, load_settings
from sidecar.errors import SidecarError


def _quiet_call(vault: str | None, method: str, params: dict[str, Any],
                hook: bool = False) -> dict[str, Any] | None:  # fmt: skip
    """The method's result, or None: never an exception, never a non-zero exit. As a hook,
    ``sidecar.cli.hook.quiet_call`` (silent, only from a daemon); otherwise through the daemon
    or in-process, a failure said in one line on stderr."""
    if hook:
        return quiet_call(vault, method, params)
    try:
        settings = load_settings(find_vault(vault, os.environ, Path.cwd()), os.environ)
        client = connect(settings, notice=stderr_line)
        try:
            result: dict[str, Any] = client.call(method, params)
            return result
        finally:
            client.close()
    except Exception as exc:
        message = exc.message if isinstance(exc, SidecarError) else f"{type(exc).__name__}: {exc}"
        click.echo(f"sidecar {method}: {message}", err=True)
        return None


def _hook_input() -> dict[str, Any]:
    return hook_input(sys.stdin)


@click.command(name="session-start")
@common
@click.option("--budget", type=click.IntRange(0, 100_000), default=2000, show_default=True,
              help="Most characters of text.")  # fmt: skip
@click.option("--query", default="", help="Rank the warmup by relevance to this.")
@click.option("--hook", is_flag=True, help="Run as a SessionStart hook (reads its JSON on stdin).")
def session_start(vault: str | None, as_json: bool, budget: int, query: str, hook: bool) -> None:
    """Due reminders, the last handoff and a warmup of memory and notes, for an agent."""
    if hook:
        _hook_input()  # drained so the caller's pipe never blocks; nothing in it is needed
    result = _quiet_call(vault, "session.start", {"budget": budget, "query": query}, hook)
    if as_json:
        click.echo(json.dumps(result or {"text": "", "chars": 0, "budget": budget}, indent=2))
    elif result and result.get("text"):
        click.echo(result["text"])


@click.command()
@common
@click.argument("prompt", required=False)
@click.option("--hook", is_flag=True, help="Run as a UserPromptSubmit hook: the prompt comes "
              "from the hook's JSON on stdin.")  # fmt: skip
@click.option("--max-notes", type=click.IntRange(0, 20), default=None)
@click.option("--max-memory", type=click.IntRange(0, 20), default=None)
@click.option("--min-score", type=click.FloatRange(0, 1), default=None)
@click.option("--include-superseded", is_flag=True)
def recall(vault: str | None, as_json: bool, prompt: str | None, hook: bool,
           max_notes: int | None, max_memory: int | None, min_score: float | None,
           include_superseded: bool) -> None:  # fmt: skip
    """The few notes and memory entries that matter for PROMPT ('-' reads stdin), or nothing."""
    if hook:
        prompt = str(_hook_input().get("prompt") or "")
    elif prompt == "-" or prompt is None:
        prompt = sys.stdin.read() if prompt == "-" else ""
    params = {"prompt": prompt, "max_notes": max_notes, "max_memory": max_memory,
              "min_score": min_score, "include_superseded": include_superseded}  # fmt: skip
    result = _quiet_call(vault, "recall", params, hook) if prompt.strip() else None
    if result is None:
        reason = "empty prompt" if not prompt.strip() else "error (see stderr)"
        result = {"prompt": prompt, "notes": [], "memory": [], "abstained": True, "reason": reason}
    if as_json:
        click.echo(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        text = fmt_recall(result)
        if text:
            click.echo(text)


@click.command()
@click.option("--vault", "vault", metavar="PATH", help="The vault (else SIDECAR_VAULT, else the "
              "nearest parent holding .obsidian/ or .sidecar/).")  # fmt: skip
@click.option("--all", "all_methods", is_flag=True, help="Every method as a tool, editor and "
              "admin ones too (default: the agents' toolset).")  # fmt: skip
def mcp(vault: str | None, all_methods: bool) -> None:
    """Serve the vault's tools for agents over MCP stdio (through the daemon when it runs)."""
    from sidecar.transports import mcp_tools
    from sidecar.transports.mcp_server import Backend, McpServer, run_stdio

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        settings = load_settings(find_vault(vault, os.environ, Path.cwd()), os.environ)
    except SidecarError as exc:
        fail(exc, False)
    backend = Backend(lambda: connect(settings))
    run_stdio(McpServer(mcp_tools.load(all_methods), backend))


COMMANDS = [session_start, recall, mcp]
