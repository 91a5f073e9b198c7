"""``sidecar agent install|uninstall claude-code``: the hooks and the MCP server in Claude Code's
own settings, shown as a diff before anything is written.

Where Claude Code reads them: with ``--project`` (the default) the hooks go in
``.claude/settings.json`` of the project (the current folder) and the server in ``.mcp.json``
beside it; with ``--user`` the hooks go in ``~/.claude/settings.json`` and the server in the
top-level ``mcpServers`` of ``~/.claude.json``. Commands name the ``sidecar`` being run and the
vault by absolute path: a hook or server started by Claude Code must not depend on its PATH or
its current folder. Everything else in those files is kept as it was; what we wrote is found
again by shape (our ``--hook`` commands, the ``sidecar`` server), so installing twice changes
nothing and uninstalling removes only ours.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from sidecar.cli.base import fail
from sidecar.config import find_vault
from sidecar.errors import SidecarError, UsageError

SERVER = "sidecar"
HOOKS = {"SessionStart": "session-start", "UserPromptSubmit": "recall"}
HOOK_TIMEOUT = 10  # seconds Claude Code waits; the hooks answer in milliseconds from a daemon


@dataclass(frozen=True, slots=True)
class Target:
    settings: Path  # where the hooks go
    servers: Path  # where the MCP server goes


def target(scope: str, cwd: Path, home: Path) -> Target:
    if scope == "user":
        return Target(home / ".claude" / "settings.json", home / ".claude.json")
    return Target(cwd / ".claude" / "settings.json", cwd / ".mcp.json")


def executable() -> str:
    """The ``sidecar`` that is running, by absolute path (else the one on PATH)."""
    here = Path(sys.argv[0])
    if here.name == "sidecar" and here.exists():
        return str(here.resolve())
    import shutil  # here: it loads the compression modules, which `sidecar --help` need not

    found = shutil.which("sidecar")
    return str(Path(found).resolve()) if found else "sidecar"


def ours(command: str) -> bool:
    try:
        argv = shlex.split(command)
    except ValueError:
        return False
    return (len(argv) >= 3 and Path(argv[0]).name == "sidecar" and argv[1] in HOOKS.values()
            and "--hook" in argv)  # fmt: skip


def with_hooks(settings: dict[str, Any], exe: str, vault: Path | None) -> dict[str, Any]:
    """``settings`` with our hooks (or, for ``vault`` None, without them); others untouched."""
    out: dict[str, Any] = json.loads(json.dumps(settings))
    hooks: dict[str, Any] = out["hooks"] if isinstance(out.get("hooks"), dict) else {}
    for event, sub in HOOKS.items():
        groups = [g for g in hooks.get(event, []) if isinstance(g, dict)]
        kept = []
        for g in groups:
            inner = [h for h in g.get("hooks", []) if not ours(str(h.get("command", "")))]
            if inner or not g.get("hooks"):
                kept.append({**g, "hooks": inner})
        if vault is not None:
            command = shlex.join([exe, sub, "--hook", "--vault", str(vault)])
            kept.append({"hooks": [{"type": "command", "command": command,
                                    "timeout": HOOK_TIMEOUT}]})  # fmt: skip
        if kept:
            hooks[event] = kept
        else:
            hooks.pop(event, None)
    if hooks:
        out["hooks"] = hooks
    else:
        out.pop("hooks", None)
    return out


def with_server(config: dict[str, Any], exe: str, vault: Path | None) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(config))
    servers: dict[str, Any] = out["mcpServers"] if isinstance(out.get("mcpServers"), dict) else {}
    servers.pop(SERVER, None)
    if vault is not None:
        servers[SERVER] = {"type": "stdio", "command": exe, "args": ["mcp", "--vault", str(vault)],
                           "env": {}}  # fmt: skip
    if servers:
        out["mcpServers"] = servers
    else:
        out.pop("mcpServers", None)
    return out


def read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise UsageError(f"{path} is not valid JSON ({exc}); not changed") from None
    if not isinstance(value, dict):
        raise UsageError(f"{path} does not hold a JSON object; not changed")
    return value


def render(value: dict[str, Any]) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n" if value else ""


def plan(t: Target, exe: str, vault: Path | None) -> list[tuple[Path, str, str]]:
    """(file, text now, text after) for each file that would change."""
    changes = []
    for path, change in ((t.settings, with_hooks), (t.servers, with_server)):
        before = read(path)
        after = change(before, exe, vault)
        old = path.read_text("utf-8") if path.exists() else ""
        if after != before:
            changes.append((path, old, render(after)))
    return changes


def show(changes: list[tuple[Path, str, str]]) -> None:
    import difflib  # only when a change is shown: not on every command's start-up

    for path, old, new in changes:
        diff = difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                    f"{path} (now)", f"{path} (after)")  # fmt: skip
        click.echo("".join(diff), nl=False)


def apply(changes: list[tuple[Path, str, str]]) -> None:
    from sidecar.store.files import atomic_write  # not at import: every command loads this module

    for path, _, new in changes:
        mode = os.stat(path).st_mode & 0o777 if path.exists() else 0o644
        atomic_write(path, new.encode("utf-8"), mode)


def scope_option(fn: Any) -> Any:
    fn = click.option("--user", "scope", flag_value="user", help="For every project: "
                      "~/.claude/settings.json and ~/.claude.json.")(fn)  # fmt: skip
    fn = click.option("--project", "scope", flag_value="project", default=True,
                      help="For this project (default): .claude/settings.json and .mcp.json "
                      "in the current folder.")(fn)  # fmt: skip
    return fn


def _run(scope: str, vault: Path | None, yes: bool, dry_run: bool) -> None:
    t = target(scope, Path.cwd(), Path.home())
    changes = plan(t, executable(), vault)
    if not changes:
        click.echo("Claude Code's settings already say so; nothing to change.")
        return
    show(changes)
    if dry_run:
        return
    if not yes and not (sys.stdin.isatty() and click.confirm("Write these changes?")):
        click.echo("Not written (pass --yes to write without asking).", err=True)
        return
    apply(changes)
    click.echo(f"Wrote {', '.join(str(p) for p, _, _ in changes)}. Restart Claude Code to load "
               "them; `sidecar serve` (or `sidecar service install`) keeps the daemon up.")  # fmt: skip


@click.group()
def agent() -> None:
    """Connect coding agents to the vault (Claude Code)."""


@agent.command()
@click.argument("client", type=click.Choice(["claude-code"]))
@scope_option
@click.option("--vault", "vault", metavar="PATH", help="The vault (else SIDECAR_VAULT, else the "
              "nearest parent holding .obsidian/ or .sidecar/).")  # fmt: skip
@click.option("--yes", is_flag=True, help="Write without asking.")
@click.option("--dry-run", is_flag=True, help="Only show the change.")
def install(client: str, scope: str, vault: str | None, yes: bool, dry_run: bool) -> None:
    """Add the SessionStart and UserPromptSubmit hooks and the MCP server to Claude Code's
    settings, showing the change first."""
    try:
        root = find_vault(vault, os.environ, Path.cwd()).resolve()
        _run(scope, root, yes, dry_run)
    except SidecarError as exc:
        fail(exc, False)


@agent.command()
@click.argument("client", type=click.Choice(["claude-code"]))
@scope_option
@click.option("--yes", is_flag=True, help="Write without asking.")
@click.option("--dry-run", is_flag=True, help="Only show the change.")
def uninstall(client: str, scope: str, yes: bool, dry_run: bool) -> None:
    """Remove our hooks and MCP server from Claude Code's settings (nothing else)."""
    try:
        _run(scope, None, yes, dry_run)
    except SidecarError as exc:
        fail(exc, False)


COMMANDS = [agent]
