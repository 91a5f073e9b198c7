"""``sidecar lsp`` latency as an editor sees it: completion, references and diagnostics.

    python bench/lsp_bench.py --vault ../shared/corpora/kepano-obsidian/vault
    python bench/lsp_bench.py --vault ../shared/corpora/dendron-site/vault [--pin]

Copies the vault, starts the real daemon (tiny embedder: the language server asks nothing of
the vectors; with ``--server``, one per checkout, each on its own copy, since the daemon's
answers are part of each request), starts ``sidecar lsp`` as a subprocess and drives it with pytest-lsp's client.
Each request is timed from send to answer, over stdio, including the server's calls to the
daemon's socket. Completion: ``[[`` + a 1-6 character prefix of a random note name, in an
open, edited buffer (the first request, which fetches the catalog, is reported apart).
References: on a random note among those with backlinks, half of them from the 50 biggest hubs
(up to 110 backlinks). Diagnostics: a broken link typed at the end of the buffer, timed from
that change to the ``publishDiagnostics`` naming it, which includes the server's debounce (the
pause it waits for typing to stop, ``DEBOUNCE_S``); "check" is that time less the debounce. The
note edited is the first one whose path has a space, as most of kepano's do. The server is
started as editors start it, in another folder, the vault named by ``rootUri`` only (``--pin``
passes ``--vault`` instead, for code from before the server read the vault from the editor).
Prints Markdown.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lsprotocol import types as t
from machine import describe, pct
from pytest_lsp import client_capabilities
from pytest_lsp.client import make_test_lsp_client

from sidecar.lsp.server import DEBOUNCE_S
from sidecar.transports.unix import RpcClient
from tests.daemon_harness import RunningDaemon, daemon_env, start


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far (Linux ``/proc``): unlike latency on a shared
    machine, the CPU a request costs hardly moves with the load."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure(
    vault: Path, env: dict[str, str], n: int, rng: random.Random, pin: bool, daemon: int
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Latencies per request kind, and the CPU seconds the server and the daemon spent on
    completion and on references: ``{kind: [server, daemon, requests]}``."""
    client = make_test_lsp_client()
    argv = [sys.executable, "-m", "sidecar", "lsp", *(["--vault", str(vault)] if pin else [])]
    await client.start_io(*argv, env=env, cwd=tempfile.gettempdir())
    assert client._server is not None  # pygls' client keeps the process it started there
    server = client._server.pid
    await client.initialize_session(t.InitializeParams(
        capabilities=client_capabilities("neovim"), root_uri=vault.as_uri(),
        initialization_options={"autostart": False}))  # fmt: skip
    notes = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
    rel = edited_note(vault)
    uri = (vault / rel).as_uri()
    text = (vault / rel).read_text("utf-8")
    client.text_document_did_open(t.DidOpenTextDocumentParams(
        t.TextDocumentItem(uri, "markdown", 1, text)))  # fmt: skip
    cpu: dict[str, list[float]] = {}

    def spent(kind: str, since: tuple[float, float] | None, count: int = 0) -> tuple[float, float]:
        now = cpu_seconds(server), cpu_seconds(daemon)
        if since is not None:
            cpu[kind] = [now[0] - since[0], now[1] - since[1], count]
        return now

    out: dict[str, list[float]] = {"completion_first": [], "completion": [], "references": [],
                                   "diagnostics": [], "diagnostics_check": []}  # fmt: skip
    for i in range(n + 1):
        name = Path(rng.choice(notes)).stem
        prefix = name[: rng.randint(1, 6)]
        edited = text + f"\nsee [[{prefix}"
        last = len(edited.split("\n")) - 1
        client.text_document_did_change(t.DidChangeTextDocumentParams(
            t.VersionedTextDocumentIdentifier(version=i + 2, uri=uri),
            [t.TextDocumentContentChangeWholeDocument(edited)]))  # fmt: skip
        started = time.perf_counter()
        got = await client.text_document_completion_async(t.CompletionParams(
            t.TextDocumentIdentifier(uri), t.Position(last, 6 + len(prefix))))  # fmt: skip
        took = (time.perf_counter() - started) * 1000
        assert isinstance(got, t.CompletionList) and got.items, prefix
        out["completion_first" if i == 0 else "completion"].append(took)
        if i == 0:
            began = spent("completion", None)
    began = spent("completion", began, n)
    targets = hub_sample(vault, env, n, rng)
    began = spent("references", None)
    for target in targets:
        started = time.perf_counter()
        refs = await client.text_document_references_async(t.ReferenceParams(
            context=t.ReferenceContext(include_declaration=False),
            text_document=t.TextDocumentIdentifier((vault / target).as_uri()),
            position=t.Position(0, 0)))  # fmt: skip
        out["references"].append((time.perf_counter() - started) * 1000)
        assert refs, target
    spent("references", began, len(targets))
    version = n + 10
    for i in range(min(n, 100)):
        version += 1
        edited = text + f"\nsee [[Nowhere {i} at all]]\n"
        client.text_document_did_change(t.DidChangeTextDocumentParams(
            t.VersionedTextDocumentIdentifier(version=version, uri=uri),
            [t.TextDocumentContentChangeWholeDocument(edited)]))  # fmt: skip
        started = time.perf_counter()
        while not any(f"Nowhere {i} at all" in d.message for d in client.diagnostics.get(uri, [])):
            await asyncio.sleep(0.001)
            assert time.perf_counter() - started < 10, "no diagnostic in 10 s"
        took = (time.perf_counter() - started) * 1000
        out["diagnostics"].append(took)
        out["diagnostics_check"].append(took - DEBOUNCE_S * 1000)
    await client.shutdown_session()
    return out, cpu


def edited_note(vault: Path) -> str:
    notes = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
    spaced = [p for p in notes if " " in p]
    return spaced[0] if spaced else "root.md" if (vault / "root.md").exists() else notes[0]


def hub_sample(vault: Path, env: dict[str, str], n: int, rng: random.Random) -> list[str]:
    socket = Path(env["SIDECAR_BENCH_SOCKET"])
    with RpcClient(socket) as c:
        hubs = [h["path"] for h in c.call("graph.hubs", {"limit": 50})["hubs"] if h["incoming"]]
        linked = sorted({e["target"] for e in c.call("graph.export")["edges"]
                         if e["state"] == "valid" and e["target"] != e["source"]})  # fmt: skip
    return [rng.choice(hubs if i % 2 else linked) for i in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("-n", type=int, default=300)
    ap.add_argument("--pin", action="store_true", help="pass --vault (code before the editor "
                    "named the vault)")  # fmt: skip
    ap.add_argument("--server", action="append", default=[], metavar="LABEL=PATH",
                    help="a checkout whose language server and daemon are measured "
                    "(repeatable; default: this one); each runs its own daemon on its own "
                    "copy of the vault, and the servers take turns, ABBA")  # fmt: skip
    args = ap.parse_args()
    servers = [s.split("=", 1) for s in args.server] or [["now", ""]]
    out: dict[str, dict[str, list[float]]] = {label: {} for label, _ in servers}
    cpu: dict[str, dict[str, list[float]]] = {label: {} for label, _ in servers}
    runs: dict[str, tuple[Path, dict[str, str], int]] = {}
    daemons: list[RunningDaemon] = []
    states: list[Path] = []
    try:
        for label, path in servers:  # the daemon answers note.references: part of the measure
            state = Path(tempfile.mkdtemp(dir="/tmp", prefix="scl"))
            states.append(state)
            vault = state / "vault"
            shutil.copytree(args.vault, vault)
            env = {k: v for k, v in daemon_env(state, model="tiny").items()
                   if k != "SIDECAR_VAULT"}  # fmt: skip
            d = start(vault, env, wait=600, code=Path(path) if path else None)
            daemons.append(d)
            env["SIDECAR_BENCH_SOCKET"] = str(d.socket)
            runs[label] = (vault, {**env, "PYTHONPATH": path} if path else env, d.proc.pid)
        began = " / ".join(f"{x:.2f}" for x in os.getloadavg())
        # two rounds, the second in reverse order, the same requests for every server
        rounds = [servers] if len(servers) == 1 else [servers, servers[::-1]]
        for r, order in enumerate(rounds):
            for label, _ in order:
                vault, run_env, daemon = runs[label]
                got, spent = asyncio.run(measure(vault, run_env, args.n // len(rounds),
                                                 random.Random(11 + r), args.pin, daemon))  # fmt: skip
                for key, values in got.items():
                    out[label].setdefault(key, []).extend(values)
                for key, used in spent.items():
                    total = cpu[label].setdefault(key, [0.0, 0.0, 0])
                    cpu[label][key] = [a + b for a, b in zip(total, used, strict=True)]
    finally:
        for d in daemons:
            d.stop()
        for state in states:
            shutil.rmtree(state, ignore_errors=True)
    notes = sum(1 for _ in args.vault.rglob("*.md"))
    print(f"`sidecar lsp` over stdio on {args.vault.parent.name} ({notes} notes), {args.n} "
          f"requests each. {describe()}. Load average at the start {began}, at the end "
          f"{' / '.join(f'{x:.2f}' for x in os.getloadavg())}.\n")  # fmt: skip
    print(f"Edited note: `{edited_note(args.vault)}`.\n")
    for label, path in servers:
        if len(servers) > 1:
            print(f"{label} (`{path}`):\n")
        print("| request | p50 ms | p95 ms | max ms |\n|---|---|---|---|")
        for key, values in out[label].items():
            print(f"| {key} | {statistics.median(values):.1f} | {pct(values, 0.95):.1f} | "
                  f"{max(values):.1f} |")  # fmt: skip
        print()
        for key, (in_server, in_daemon, count) in cpu[label].items():
            print(f"CPU per {key} request: server {1000 * in_server / count:.2f} ms, daemon "
                  f"{1000 * in_daemon / count:.2f} ms ({int(count)} requests).  ")  # fmt: skip
        print()


if __name__ == "__main__":
    main()
