"""``sidecar lsp`` latency as an editor sees it: completion and references over stdio.

    python bench/lsp_bench.py --vault ../shared/corpora/dendron-site/vault

Copies the vault, starts the real daemon (tiny embedder: the language server asks nothing of
the vectors), starts ``sidecar lsp`` as a subprocess and drives it with pytest-lsp's client.
Each request is timed from send to answer, over stdio, including the server's calls to the
daemon's socket. Completion: ``[[`` + a 1-6 character prefix of a random note name, in an
open, edited buffer (the first request, which fetches the catalog, is reported apart).
References: on a random note among those with backlinks, half of them from the 50 biggest hubs
(up to 110 backlinks). Prints Markdown.
"""

from __future__ import annotations

import argparse
import asyncio
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
from pytest_lsp import ClientServerConfig, client_capabilities

from sidecar.transports.unix import RpcClient
from tests.daemon_harness import daemon_env, start


async def measure(
    vault: Path, env: dict[str, str], n: int, rng: random.Random
) -> dict[str, list[float]]:
    config = ClientServerConfig([sys.executable, "-m", "sidecar", "lsp", "--vault", str(vault)],
                                server_env=env)  # fmt: skip
    client = await config.start()
    await client.initialize_session(t.InitializeParams(
        capabilities=client_capabilities("neovim"), root_uri=vault.as_uri()))  # fmt: skip
    notes = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
    rel = "root.md" if (vault / "root.md").exists() else notes[0]
    uri = (vault / rel).as_uri()
    text = (vault / rel).read_text("utf-8")
    client.text_document_did_open(t.DidOpenTextDocumentParams(
        t.TextDocumentItem(uri, "markdown", 1, text)))  # fmt: skip
    out: dict[str, list[float]] = {"completion_first": [], "completion": [], "references": []}
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
    targets = hub_sample(vault, env, n, rng)
    for target in targets:
        started = time.perf_counter()
        refs = await client.text_document_references_async(t.ReferenceParams(
            context=t.ReferenceContext(include_declaration=False),
            text_document=t.TextDocumentIdentifier((vault / target).as_uri()),
            position=t.Position(0, 0)))  # fmt: skip
        out["references"].append((time.perf_counter() - started) * 1000)
        assert refs, target
    await client.shutdown_session()
    return out


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
    args = ap.parse_args()
    state = Path(tempfile.mkdtemp(dir="/tmp", prefix="scl"))
    vault = state / "vault"
    shutil.copytree(args.vault, vault)
    env = daemon_env(state, model="tiny")
    d = start(vault, env, wait=600)
    env["SIDECAR_BENCH_SOCKET"] = str(d.socket)
    try:
        out = asyncio.run(measure(vault, env, args.n, random.Random(11)))
    finally:
        d.stop()
        shutil.rmtree(state, ignore_errors=True)
    notes = sum(1 for _ in args.vault.rglob("*.md"))
    print(f"`sidecar lsp` over stdio on {args.vault.parent.name} ({notes} notes), {args.n} "
          f"requests each. {describe()}\n")  # fmt: skip
    print("| request | p50 ms | p95 ms | max ms |\n|---|---|---|---|")
    for key, values in out.items():
        print(f"| {key} | {statistics.median(values):.1f} | {pct(values, 0.95):.1f} | "
              f"{max(values):.1f} |")  # fmt: skip


if __name__ == "__main__":
    main()
