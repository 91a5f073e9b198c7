"""``sidecar mcp`` as Claude Code runs it: a subprocess speaking MCP over stdio, driven by the SDK's
own client with the SDK's default environment (HOME, PATH, SHELL and TERM only), talking to the
real daemon a shell started (and, without one, to the index in-process).

Issue 22's must-shows: every tool called once; every listing paged to its end with nothing
repeated or lost; no answer over the bound on dendron-site; the write tools' refusals; and
move_note rewriting the links in every linking file and nothing else.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, get_default_environment

from sidecar.transports.mcp_pages import MAX_REPLY_CHARS
from sidecar.transports.mcp_tools import load
from tests.conftest import EXAMPLE_VAULT, corpus
from tests.daemon_harness import RunningDaemon, start

Session = Callable[[Client], Awaitable[Any]]

pytestmark = pytest.mark.e2e  # starts processes: the daemon, the CLI, editors


@contextmanager
def shell_daemon(source: Path) -> Iterator[tuple[RunningDaemon, Path]]:
    """A daemon on a copy of ``source``, started as a login shell would (no XDG_RUNTIME_DIR on
    this machine's root), with a short HOME so its socket path fits."""
    home = Path(tempfile.mkdtemp(dir="/tmp", prefix="scm"))
    vault = home / "vault"
    shutil.copytree(source, vault)
    env = {
        **os.environ,
        "HOME": str(home),
        "SIDECAR_EMBED_MODEL": "tiny",
        "SIDECAR_WATCH_DEBOUNCE_MS": "100",
        "SIDECAR_DAEMON_COMPACT_IDLE_SECONDS": "3600",  # BM25 statistics hold still
        "XDG_CACHE_HOME": str(Path(tempfile.gettempdir()) / "sidecar-test-cache"),
    }
    for key in ("XDG_RUNTIME_DIR", "SIDECAR_DATA_DIR"):
        env.pop(key, None)
    d = start(vault, env, wait=240)
    try:
        with d.client() as c:  # recall and search want the vectors, embedded after ready
            deadline = time.monotonic() + 240
            while c.call("index.status")["pending"] and time.monotonic() < deadline:
                time.sleep(0.2)
        yield d, home
    finally:
        try:
            d.stop(timeout=20)
        except subprocess.TimeoutExpired:
            # A SIGTERM while the backlog child exits can leave the daemon hanging (seen on
            # main too; reported): not what these tests are about.
            d.proc.kill()
            d.proc.wait(timeout=10)
        shutil.rmtree(home, ignore_errors=True)


def run(home: Path, vault: Path, session: Session, *args: str) -> Any:
    """``session`` against ``sidecar mcp`` spawned with the SDK's default environment."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        assert set(get_default_environment()) <= {
            "HOME",
            "PATH",
            "SHELL",
            "TERM",
            "LOGNAME",
            "USER",
        }
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "sidecar", "mcp", "--vault", str(vault), *args]
        )

        async def go() -> Any:
            async with Client(params, read_timeout_seconds=120) as client:
                return await session(client)

        return anyio.run(go)


async def call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    r = await client.call_tool(tool, args)
    text = r.content[0].text  # type: ignore[union-attr]
    return {
        "error": r.is_error,
        "text": text,
        "data": r.structured_content,
        "size": len(text) + len(json.dumps(r.structured_content or {})),
    }


async def pages(client: Client, tool: str, args: dict[str, Any], key: str) -> list[Any]:
    """Every item of a listing, page by page, following next_cursor to the end."""
    items: list[Any] = []
    cursor = None
    for _ in range(500):
        r = await call(client, tool, {**args, **({"cursor": cursor} if cursor else {})})
        assert not r["error"], r["text"]
        assert r["size"] <= MAX_REPLY_CHARS
        items += r["data"][key]
        cursor = r["data"].get("next_cursor")
        if cursor is None:
            return items
    raise AssertionError(f"{tool} never reached its last page")


def key(item: Any) -> str:
    return json.dumps(item, sort_keys=True)


# -- the example vault: every tool once, refusals ------------------------------------------------

EVERY_TOOL = [
    ("search", {"query": "session storage", "limit": 3}),
    ("read_note", {"note": "auth"}),
    ("note_context", {"note": "Auth Service"}),
    ("traverse", {"note": "Auth Service", "relation": "depends_on"}),
    ("current", {"note": "ADR-5 Sessions in Postgres"}),
    ("recall", {"prompt": "Where are user sessions stored: Redis session storage decision"}),
    ("session_start", {}),
    (
        "memory_write",
        {
            "title": "Session keys expire after 14 days",
            "entry_type": "decision",
            "content": "Decided with Alice.",
            "tags": ["redis"],
        },
    ),
    ("memory_search", {"query": "session keys expire"}),
    ("memory_update", {"id": "session-keys-expire-after-14-days", "append": "Checked."}),
    ("reminders", {}),
    ("lint_summary", {}),
    ("write_note", {"path": "Inbox/Agent note", "content": "# Agent note\n\nSee [[Alice]].\n"}),
    ("edit_note", {"note": "Inbox/Agent note", "append": "More.", "heading": "Agent note"}),
    ("move_note", {"note": "Inbox/Agent note", "to": "Archive/Agent note.md"}),
]


def test_every_tool_once_through_the_daemon_with_the_sdk_environment() -> None:
    assert {t for t, _ in EVERY_TOOL} == {t["definition"]["name"] for t in load()}

    async def session(client: Client) -> Any:
        init = client.server_info
        listed = (await client.list_tools()).tools
        answers = {t: await call(client, t, a) for t, a in EVERY_TOOL}
        return init, listed, answers

    with shell_daemon(EXAMPLE_VAULT) as (d, home):
        init, listed, answers = run(home, d.vault, session)
        with d.client() as c:
            status = c.call("index.status")
        moved = (d.vault / "Archive/Agent note.md").read_text("utf-8")
    assert init.version and init.name == "sidecar"
    assert len(listed) == 15 and all(t.title and t.annotations for t in listed)
    failed = {t: a["text"] for t, a in answers.items() if a["error"]}
    assert failed == {}
    for tool, a in answers.items():
        assert a["data"] is not None, tool
        assert not a["text"].lstrip().startswith("{"), f"{tool}: JSON twice, not a rendering"
    assert "services/Session Store.md" in answers["search"]["text"]
    assert answers["read_note"]["data"]["path"] == "services/Auth Service.md"
    assert answers["current"]["data"]["current"] == "decisions/ADR-7 Session storage.md"
    assert not answers["recall"]["data"]["abstained"]
    assert answers["memory_search"]["data"]["results"][0]["id"].startswith("session-keys")
    assert moved == "# Agent note\n\nSee [[Alice]].\n\nMore.\n"
    assert status["daemon"] is not None  # answered by the daemon, not an index of its own


def test_write_tools_refuse_outside_the_vault_and_stale_hashes() -> None:
    async def session(client: Client) -> Any:
        read = await call(client, "read_note", {"note": "Welcome"})
        h = read["data"]["hash"]
        return read, [
            await call(client, "write_note", {"path": "../outside.md", "content": "x"}),
            await call(client, "write_note", {"path": "/tmp/outside.md", "content": "x"}),
            await call(client, "move_note", {"note": "Welcome", "to": "../../outside.md"}),
            await call(client, "write_note", {"path": "Welcome.md", "content": "x"}),
            await call(
                client,
                "edit_note",
                {"note": "Welcome", "find": "Welcome", "replace": "x", "expected_hash": "0" * 16},
            ),
            await call(
                client, "write_note", {"path": "Welcome.md", "content": "new\n", "expected_hash": h}
            ),
            await call(
                client,
                "write_note",
                {"path": "Welcome.md", "content": "newer\n", "expected_hash": h},
            ),
        ]

    with shell_daemon(EXAMPLE_VAULT) as (d, home):
        before = (d.vault / "Welcome.md").read_bytes()
        read, r = run(home, d.vault, session)
        after = (d.vault / "Welcome.md").read_bytes()
        outside = [p for p in (home / "outside.md", Path("/tmp/outside.md")) if p.exists()]
    codes = [json.loads(x["text"])["error"]["code"] if x["error"] else None for x in r]
    assert codes == [-32003, -32003, -32003, -32008, -32008, None, -32008]
    assert before != after == b"new\n" and outside == []
    stale = json.loads(r[6]["text"])["error"]
    assert stale["data"]["hash"] == r[5]["data"]["hash"] != read["data"]["hash"]


def test_without_a_daemon_the_tools_run_in_process(tmp_path: Path) -> None:
    home = Path(tempfile.mkdtemp(dir="/tmp", prefix="scn"))
    try:
        vault = home / "vault"
        shutil.copytree(EXAMPLE_VAULT, vault)
        (vault / ".sidecar").mkdir(exist_ok=True)
        (vault / ".sidecar" / "config.toml").write_text('[embed]\nmodel = "tiny"\n', "utf-8")

        async def session(client: Client) -> Any:
            wrote = await call(client, "memory_write", {"title": "No daemon here"})
            found = await call(client, "memory_search", {"query": "daemon"})
            return wrote, found

        wrote, found = run(home, vault, session)
        assert not wrote["error"] and found["data"]["results"][0]["title"] == "No daemon here"
        assert (vault / ".sidecar" / "memory" / "no-daemon-here.md").is_file()
    finally:
        shutil.rmtree(home, ignore_errors=True)


# -- dendron-site: bounds, paging, move ----------------------------------------------------------

HUB = "dendron.ref.commands.md"


@pytest.fixture(scope="module")
def dendron() -> Iterator[tuple[RunningDaemon, Path]]:
    with shell_daemon(corpus("dendron-site")) as d:
        yield d


def test_no_answer_over_the_bound_on_dendron(dendron: tuple[RunningDaemon, Path]) -> None:
    """Issue 22 measured vault_catalog at 470k characters, graph_export 668k, lint_run 219k,
    note_mentions 139k, graph_dangling 79k; Claude Code's limit is 25k tokens."""
    d, home = dendron
    calls = {
        "search": {"query": "publish to github pages"},
        "read_note": {"note": "dendron.faq"},
        "note_context": {"note": HUB},
        "traverse": {"note": HUB, "relation": "link", "depth": 3},
        "lint_summary": {},
        "recall": {"prompt": "how do I publish my notes to github pages"},
        "session_start": {},
        "memory_search": {"query": "anything"},
        "reminders": {},
        "current": {"note": HUB},
        "vault_catalog": {},
        "graph_export": {},
        "lint_run": {},
        "graph_html": {},
        "note_mentions": {"note": HUB},
        "graph_dangling": {},
        "graph_orphans": {},
    }

    async def session(client: Client) -> Any:
        return {t: await call(client, t, a) for t, a in calls.items()}

    answers = run(home, d.vault, session, "--all")
    assert {t: a["text"][:200] for t, a in answers.items() if a["error"]} == {}
    sizes = {t: a["size"] for t, a in answers.items()}
    assert max(sizes.values()) <= MAX_REPLY_CHARS, sizes
    agents = {t["definition"]["name"] for t in load()}
    assert max(s for t, s in sizes.items() if t in agents) <= 16_000, sizes  # ~4k tokens
    for big in ("vault_catalog", "graph_export", "lint_run", "graph_html"):
        assert answers[big]["data"]["next_cursor"], big  # said so, and how to go on


def test_every_listing_pages_to_its_end_on_dendron(dendron: tuple[RunningDaemon, Path]) -> None:
    d, home = dendron

    async def session(client: Client) -> Any:
        out = {}
        for tool, args, k in [
            ("search", {"query": "note", "limit": 7}, "results"),
            ("note_context", {"note": HUB, "limit": 9}, "items"),
            ("traverse", {"note": HUB, "relation": "link", "depth": 2, "limit": 40}, "nodes"),
            ("lint_summary", {"limit": 25}, "findings"),
            ("vault_catalog", {}, "notes"),
        ]:
            out[tool] = await pages(client, tool, args, k)
        whole = await call(client, "read_note", {"note": "dendron.ref.telemetry"})
        text, cursor = [], None
        while True:
            r = await call(
                client,
                "read_note",
                {"note": "dendron.ref.telemetry", **({"cursor": cursor} if cursor else {})},
            )
            text.append(r["data"]["text"])
            cursor = r["data"].get("next_cursor")
            if cursor is None:
                break
        out["read_note"] = (whole, text)
        return out

    got = run(home, d.vault, session, "--all")
    with d.client() as c:

        def whole(method: str, params: dict[str, Any], k: str) -> list[Any]:
            """The listing over the socket: in pages too when it is over a page's budget."""
            items, cursor = [], None
            while True:
                r = c.call(method, {**params, **({"cursor": cursor} if cursor else {})})
                items += r[k]
                cursor = r.get("next_cursor")
                if cursor is None:
                    return items

        expect = {
            "search": c.call("search", {"query": "note", "limit": 50})["results"],
            "note_context": whole("note.context", {"note": HUB, "limit": 1000}, "items"),
            "traverse": c.call("graph.traverse", {"note": HUB, "relation": "link", "depth": 2})[
                "nodes"
            ],
            "lint_summary": whole("lint.summary", {"limit": 1000}, "findings"),
            "vault_catalog": c.call("vault.catalog", {})["notes"],
        }
        totals = {
            "note_context": c.call("note.context", {"note": HUB})["total"],
            "lint_summary": c.call("lint.summary", {})["total"],
        }
    for tool, items in expect.items():
        assert len(items) > 20, tool  # long enough to take several pages
        if tool == "search":  # scores move a little when the daemon compacts (BM25 statistics)
            seen = [i["path"] for i in got[tool]]
            assert len(seen) == len(set(seen)) and set(seen) == {i["path"] for i in items}
            continue
        seen = [key(i) for i in got[tool]]
        assert len(seen) == len(set(seen)), f"{tool}: an item came twice"
        assert seen == [key(i) for i in items], f"{tool}: items lost or out of order"
        assert len(seen) == totals.get(tool, len(seen)), tool
    whole, text = got["read_note"]
    raw = (d.vault / "dendron.ref.telemetry.md").read_text("utf-8")
    assert len(text) > 1 and "\n".join(text) == raw and whole["data"]["next_cursor"]


def digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*.md")
        if ".sidecar" not in p.parts
    }


def test_move_note_rewrites_every_linking_file_and_nothing_else(
    dendron: tuple[RunningDaemon, Path],
) -> None:
    d, home = dendron
    old, new = "dendron.topic.hooks.md", "dendron.topic.lifecycle-hooks.md"
    with d.client() as c:
        sources = {b["source"] for b in c.call("note.backlinks", {"note": old})["backlinks"]}
    assert len(sources) >= 3
    before = {p: (d.vault / p).read_text("utf-8") for p in sources}
    hashes = digest(d.vault)

    async def session(client: Client) -> Any:
        return await call(client, "move_note", {"note": old, "to": "dendron.topic.lifecycle-hooks"})

    r = run(home, d.vault, session)
    assert not r["error"], r["text"]
    after = digest(d.vault)
    changed = {p for p in after if after[p] != hashes.get(p)} - {new}
    assert changed == {u["path"] for u in r["data"]["updated"]} and changed <= sources
    assert old not in after and new in after
    name = re.compile(r"dendron\.topic\.hooks(?![\w.-])")  # not its children's names
    for p in changed:
        a, b = before[p].split("\n"), (d.vault / p).read_text("utf-8").split("\n")
        assert len(a) == len(b), p
        for x, y in zip(a, b, strict=True):
            if x != y:  # the only difference on a changed line is the note's name
                assert name.sub("dendron.topic.lifecycle-hooks", x) == y, p
    with d.client() as c:
        still = {b["source"] for b in c.call("note.backlinks", {"note": new})["backlinks"]}
        dangling = [
            x
            for x in c.call("graph.dangling", {})["dangling"]
            if name.fullmatch(x["raw"].split("#")[0].split("/")[-1].strip())
        ]
    assert sources <= still | {old} and dangling == []
