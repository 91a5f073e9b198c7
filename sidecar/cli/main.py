"""``sidecar``: every command builds params, calls a method, prints the result.

Exit status: 0 ok, 1 findings or failure, 2 usage, 3 daemon unreachable when it was required.
Errors go to stderr as one line (and under ``--json`` also as a JSON document on stdout).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from sidecar import logs, profiling
from sidecar.cli import agent_cmd, agent_install, memory_cmd, output
from sidecar.cli.base import common, fail, run_method
from sidecar.cli.doctor_cmd import doctor
from sidecar.cli.eval_cmd import eval_command
from sidecar.cli.graph_cmd import (
    current,
    edges,
    export,
    fmt_search,
    graph_search_options,
    mentions,
    traverse,
)
from sidecar.cli.lint_cmd import lint
from sidecar.cli.lsp_cmd import lsp
from sidecar.cli.service_cmd import service
from sidecar.config import config_path, find_vault, load_settings, render_config
from sidecar.errors import AlreadyServing, SidecarError, UnsupportedPlatform, UsageError
from sidecar.transports.unix_path import find_daemon, socket_path_for

NEIGHBOUR_LIMIT = click.option(
    "--limit", type=click.IntRange(1, 100_000), default=500, show_default=True,
    help="At most this many notes within --depth, nearest first.",
)  # fmt: skip


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, invoke_without_command=True)
@click.version_option(package_name="vault-sidecar")
@click.option("--profile", "profile_dir", type=click.Path(file_okay=False), default=None,
              help="Record where indexing, embedding and search spend time into this folder "
              "(the same as SIDECAR_PROFILE=DIR; a daemon started so profiles itself).")  # fmt: skip
@click.pass_context
def main(ctx: click.Context, profile_dir: str | None) -> None:
    """Vault Sidecar: a local index, link graph and search for a Markdown vault."""
    if sys.platform == "win32":
        fail(UnsupportedPlatform("Vault Sidecar needs Unix sockets and file locks (Linux or "
                                 "macOS); on Windows, run it inside WSL"), False)  # fmt: skip
    if ctx.invoked_subcommand is None:  # a bare `sidecar` asks what there is: help, and exit 0
        click.echo(ctx.get_help())
        ctx.exit(0)
    if profile_dir:
        os.environ[profiling.ENV] = profile_dir  # read by every profiled section


@main.command()
@common
def init(vault: str | None, as_json: bool) -> None:
    """Write .sidecar/config.toml with every setting commented at its default."""
    root = Path(vault or os.environ.get("SIDECAR_VAULT") or Path.cwd()).expanduser().resolve()
    if not root.is_dir():
        fail(UsageError(f"vault folder not found: {root}"), as_json)
    path = config_path(root)
    created = not path.exists()
    if created:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_config(), "utf-8")
    result = {"config": str(path), "created": created}
    output.emit(result, as_json, lambda r: f"{'wrote' if created else 'kept existing'} {path}")


@main.command()
@common
@click.option("--full", is_flag=True, help="Re-parse every note, not only changed ones.")
@click.option(
    "--embed/--no-embed",
    default=True,
    show_default=True,
    help="Also compute vectors for new and changed chunks.",
)
def index(vault: str | None, as_json: bool, full: bool, embed: bool) -> None:
    """Bring the index up to date with the vault (incremental)."""
    params = {"full": full, "embed": embed}
    run_method(vault, as_json, "index.reindex", params, output.fmt_index)


@main.command()
@common
@click.argument("query")
@click.option(
    "--mode",
    type=click.Choice(["hybrid", "semantic", "lexical", "edge"]),
    default=None,
    help="Ranking mode (default hybrid).",
)
@click.option("--semantic", "shorthand", flag_value="semantic", help="Same as --mode semantic.")
@click.option("--lexical", "shorthand", flag_value="lexical", help="Same as --mode lexical.")
@click.option("--limit", type=click.IntRange(1, 200), default=10, show_default=True)
@click.option("--path", default="", help="Only notes under this path prefix.")
@click.option("--tag", "tags", multiple=True, help="Only notes with this tag (repeatable).")
@click.option(
    "--filter",
    "filters",
    multiple=True,
    metavar="KEY=VALUE",
    help="Frontmatter condition, repeatable: k=v, k!=v, k<v, k>=v (numbers, dates).",
)
@click.option("--decay/--no-decay", default=False, help="Favour recently changed notes.")
@click.option(
    "--half-life",
    type=click.FloatRange(min=0.1),
    default=30.0,
    show_default=True,
    help="Days for the decay to halve a score.",
)
@click.option("--min-score", type=click.FloatRange(0, 1), default=0.0)
@click.option(
    "--min-confidence",
    type=click.FloatRange(0, 1),
    default=None,
    help="Drop results whose confidence is below this (default: the mode's; 0 keeps all).",
)
@click.option("--explain", is_flag=True, help="Show each score's parts.")
@graph_search_options
def search(
    vault: str | None,
    as_json: bool,
    query: str,
    mode: str | None,
    shorthand: str | None,
    limit: int,
    path: str,
    tags: tuple[str, ...],
    filters: tuple[str, ...],
    decay: bool,
    half_life: float,
    min_score: float,
    min_confidence: float | None,
    explain: bool,
    **graph: Any,
) -> None:
    """Find notes by their words or their meaning (hybrid by default).

    QUERY takes Obsidian's search syntax: "exact phrase", -word, tag:#x, path:Folder,
    file:name, a OR b, prefix*, and (groups). A query that starts with '-' goes after '--',
    as with grep: sidecar search -- "-draft launch"."""
    if mode and shorthand and mode != shorthand:
        fail(UsageError(f"--mode {mode} contradicts --{shorthand}"), as_json)
    params = {
        "query": query,
        "mode": mode or shorthand or "hybrid",
        "limit": limit,
        "path": path,
        "tags": list(tags),
        "filters": list(filters),
        "half_life": half_life if decay else 0.0,
        "min_score": min_score,
        "explain": explain,
        **graph,
        **({} if min_confidence is None else {"min_confidence": min_confidence}),
    }
    run_method(vault, as_json, "search", params, fmt_search)


@main.command()
@common
def status(vault: str | None, as_json: bool) -> None:
    """What the index holds: counts, vectors pending, failures."""
    run_method(vault, as_json, "index.status", {}, output.fmt_status)


@main.command()
@common
@click.argument("note")
@click.option("--depth", type=click.IntRange(1, 3), default=1, show_default=True)
@NEIGHBOUR_LIMIT
def links(vault: str | None, as_json: bool, note: str, depth: int, limit: int) -> None:
    """Outgoing and incoming links of NOTE."""
    params = {"note": note, "depth": depth, "limit": limit}
    run_method(vault, as_json, "note.links", params, output.fmt_links)


@main.command()
@common
@click.argument("note")
@click.option("--grouped", is_flag=True, help="One line per linking note, with its count.")
def backlinks(vault: str | None, as_json: bool, note: str, grouped: bool) -> None:
    """Every link to NOTE, each with its line and context."""
    fmt = output.fmt_backlink_sources if grouped else output.fmt_backlinks
    run_method(vault, as_json, "note.backlinks", {"note": note}, fmt)


@main.command()
@common
def orphans(vault: str | None, as_json: bool) -> None:
    """Notes with no resolved link in or out."""
    run_method(vault, as_json, "graph.orphans", {}, output.fmt_list("orphans"))


@main.group()
def graph() -> None:
    """Queries over the whole link graph."""


@graph.command()
@common
@click.argument("note")
@click.option("--depth", type=click.IntRange(1, 3), default=1, show_default=True)
@NEIGHBOUR_LIMIT
def neighbors(vault: str | None, as_json: bool, note: str, depth: int, limit: int) -> None:
    """Notes within DEPTH links of NOTE, either direction, nearest first."""
    params = {"note": note, "depth": depth, "limit": limit}
    run_method(vault, as_json, "graph.neighbors", params, output.fmt_steps)


@graph.command()
@common
@click.argument("source")
@click.argument("target")
def path(vault: str | None, as_json: bool, source: str, target: str) -> None:
    """The shortest chain of links from SOURCE to TARGET."""
    params = {"source": source, "target": target}
    run_method(vault, as_json, "graph.path", params, output.fmt_steps)


@graph.command()
@common
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True)
def hubs(vault: str | None, as_json: bool, limit: int) -> None:
    """The most connected notes."""
    run_method(vault, as_json, "graph.hubs", {"limit": limit}, output.fmt_hubs)


@graph.command()
@common
def dangling(vault: str | None, as_json: bool) -> None:
    """Links to missing or ambiguous targets, with source and line."""
    run_method(vault, as_json, "graph.dangling", {}, output.fmt_dangling)


@main.command()
@common
def serve(vault: str | None, as_json: bool) -> None:
    """Run the daemon: watch the vault, keep the index fresh, serve the socket."""
    import asyncio

    from sidecar.api import build_registry
    from sidecar.daemon.app import Daemon
    from sidecar.daemon.heap import reexec_with_malloc_env, tune_allocators

    reexec_with_malloc_env()
    logs.to_stderr()
    try:
        settings = load_settings(find_vault(vault, os.environ, Path.cwd()), os.environ)
        path = find_daemon(settings, os.environ)
        if path is not None:
            raise AlreadyServing(f"a sidecar daemon is already serving {settings.vault} at {path}")
        tune_allocators()
        daemon = Daemon(settings, build_registry())
    except SidecarError as exc:
        fail(exc, as_json)
    try:
        asyncio.run(daemon.run())
    except SidecarError as exc:
        fail(exc, as_json)
    finally:
        daemon.close()


@main.command()
@common
def where(vault: str | None, as_json: bool) -> None:
    """Print the daemon's socket path for the vault (and whether it is serving)."""
    try:
        settings = load_settings(find_vault(vault, os.environ, Path.cwd()), os.environ)
    except SidecarError as exc:
        fail(exc, as_json)
    serving = find_daemon(settings, os.environ)
    path = serving or socket_path_for(settings, os.environ)
    result = {"socket": str(path), "serving": serving is not None, "vault": str(settings.vault),
              "data_dir": str(settings.data_dir)}  # fmt: skip
    output.emit(result, as_json, fmt_where)


def fmt_where(r: dict[str, Any]) -> str:
    """The socket's path alone on stdout (so `$(sidecar where)` is the path); whether a daemon
    answers there goes to stderr, for the person reading."""
    if r["serving"]:
        click.echo(f"serving: yes, a daemon answers there for {r['vault']}", err=True)
    else:
        click.echo(f"serving: no, no daemon serves {r['vault']} (`sidecar serve` starts one; "
                   "until then commands run in-process)", err=True)  # fmt: skip
    return str(r["socket"])


@main.command()
@common
@click.argument("method")
@click.argument("params", required=False)
def rpc(vault: str | None, as_json: bool, method: str, params: str | None) -> None:
    """Call any METHOD with a JSON object of PARAMS; print the raw result."""
    try:
        parsed = json.loads(params) if params else {}
    except ValueError as exc:
        fail(UsageError(f"PARAMS is not JSON: {exc}"), as_json)
    if not isinstance(parsed, dict):
        fail(UsageError("PARAMS must be a JSON object"), as_json)
    run_method(vault, True, method, parsed)


main.add_command(lint)
main.add_command(doctor)
main.add_command(mentions)
main.add_command(edges)
graph.add_command(traverse)
graph.add_command(current)
graph.add_command(export)
main.add_command(eval_command)
main.add_command(service)
main.add_command(lsp)
for _command in (*memory_cmd.COMMANDS, *agent_cmd.COMMANDS, *agent_install.COMMANDS):
    main.add_command(_command)
