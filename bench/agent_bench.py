"""What an agent pays for the vault: ``tools/list``, each tool's answer on dendron-site, and the
wall time of the UserPromptSubmit hook, for this checkout and optionally an older one.

    flock /tmp/sidecar-bench.lock python bench/agent_bench.py
    flock /tmp/sidecar-bench.lock python bench/agent_bench.py --compare /tmp/old-checkout

A daemon (the real model) serves a copy of dendron-site for each checkout, with its data dir
derived from a HOME of its own under ``--work``, kept between runs (only the first run embeds).
The MCP server is spoken to over stdio with the SDK's client and the SDK's default environment
(HOME, PATH, SHELL, TERM); an answer's size is counted in characters (~4 a token) for its text
content and its structured content (as plain ``json.dumps`` writes it) apart. The hook runs as Claude Code runs it, a process per prompt with the
hook's JSON on stdin, over 50 prompts of bench/recall_set.jsonl (25 off-topic, 25 questions about
dendron-site); with ``--compare`` the two checkouts alternate prompt by prompt, so both see the
same load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from machine import describe, pct  # noqa: E402
from recall_set import load_set, prompts_for  # noqa: E402

DENDRON = HERE.parents[1] / "shared" / "corpora" / "dendron-site" / "vault"
HUB = "dendron.ref.commands.md"
# (tool in the agents' set, tool in --all / the old one-per-method set, arguments)
CALLS = [
    ("search", "search", {"query": "publish to github pages"}),
    ("recall", "recall", {"prompt": "how do I publish my notes to github pages"}),
    ("read_note", None, {"note": "dendron.faq"}),
    ("note_context", "note_links", {"note": HUB}),
    ("traverse", "graph_traverse", {"note": HUB, "relation": "link", "depth": 2}),
    ("current", "graph_current", {"note": HUB}),
    ("lint_summary", "lint_run", {}),
    ("session_start", "session_start", {}),
    ("memory_search", "memory_search", {"query": "github pages"}),
    ("reminders", "reminders_due", {}),
    (None, "vault_catalog", {}),
    (None, "graph_export", {}),
    (None, "graph_html", {}),
    (None, "note_mentions", {"note": HUB}),
    (None, "graph_dangling", {}),
]


class Checkout:
    """One checkout's daemon on its own copy of dendron-site, found from HOME alone."""

    def __init__(self, code: Path, work: Path, label: str) -> None:
        self.code, self.label = code, label
        self.home = work / label
        self.vault = self.home / "vault"
        if not self.vault.is_dir():
            shutil.copytree(DENDRON, self.vault)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("XDG_", "SIDECAR_"))}  # fmt: skip
        self.env = {**env, "HOME": str(self.home), "SIDECAR_EMBED_MODEL": "minilm"}
        if "XDG_CACHE_HOME" not in os.environ:  # the model's cache, not a fresh download
            self.env["XDG_CACHE_HOME"] = str(Path.home() / ".cache")
        else:
            self.env["XDG_CACHE_HOME"] = os.environ["XDG_CACHE_HOME"]
        log = (self.home / "daemon.log").open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sidecar", "serve", "--vault", str(self.vault)],
            cwd=code, env=self.env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 1800
        while not self.ready():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{self.label}: no daemon (log {self.home}/daemon.log)")
            time.sleep(1)

    def ready(self) -> bool:
        """Asked over the socket ``sidecar where`` names: a command run without a daemon would
        open the index itself, and take the writer lock from the daemon starting up."""
        from sidecar.errors import SidecarError
        from sidecar.transports.unix_client import RpcClient

        where = subprocess.run(
            [sys.executable, "-m", "sidecar", "where", "--vault", str(self.vault)],
            cwd=self.code, env=self.env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        try:
            with RpcClient(Path(where.stdout.strip()), timeout=30) as client:
                status = client.call("index.status")
        except (SidecarError, OSError, ValueError):
            return False
        return bool((status.get("daemon") or {}).get("ready")) and status.get("pending") == 0

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    def mcp_sizes(self, all_methods: bool) -> dict[str, Any]:
        args = ["-m", "sidecar", "mcp", "--vault", str(self.vault)]
        env = {k: os.environ[k] for k in ("PATH", "SHELL", "TERM") if k in os.environ}
        params = StdioServerParameters(
            command=sys.executable, args=[*args, *(["--all"] if all_methods else [])],
            cwd=self.code, env={**env, "HOME": str(self.home)},
        )  # fmt: skip

        async def go() -> dict[str, Any]:
            async with Client(params, read_timeout_seconds=300) as c:
                info = c.server_info
                tools = (await c.list_tools()).tools
                listed = json.dumps(
                    {"tools": [t.model_dump(by_alias=True, exclude_none=True) for t in tools]},
                    separators=(",", ":"),
                )
                names = {t.name for t in tools}
                sizes: dict[str, Any] = {}
                for agent, generic, arguments in CALLS:
                    name = agent if agent in names else generic
                    if name not in names:
                        continue
                    r = await c.call_tool(name, arguments)
                    text = "".join(getattr(x, "text", "") for x in r.content)
                    structured = json.dumps(r.structured_content) if r.structured_content else ""
                    sizes[name] = {"text": len(text), "structured": len(structured),
                                   "error": bool(r.is_error),
                                   "more": bool((r.structured_content or {}).get("next_cursor"))}  # fmt: skip
                return {"tools": len(tools), "list_bytes": len(listed.encode()),
                        "version": info.version if info else None, "sizes": sizes}  # fmt: skip

        return anyio.run(go)

    def hook(self, prompt: str) -> tuple[float, float, str]:
        """Wall and CPU milliseconds of one hook process (CPU: its user + system time, what a
        loaded machine does not inflate), and what it printed."""
        payload = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": prompt})
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.perf_counter()
        r = subprocess.run(
            [sys.executable, "-m", "sidecar", "recall", "--hook", "--vault", str(self.vault)],
            cwd=self.code, env=self.env, input=payload, capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        wall = (time.perf_counter() - began) * 1000
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
        return wall, cpu, r.stdout


def hook_times(checkouts: list[Checkout]) -> dict[str, dict[str, Any]]:
    rows = prompts_for(load_set(), "dendron-site", "all")
    off = [r for r in rows if r["kind"] == "off"][:25]
    on = [r for r in rows if r["kind"] == "on"][:25]
    times: dict[str, list[float]] = {c.label: [] for c in checkouts}
    cpus: dict[str, list[float]] = {c.label: [] for c in checkouts}
    spoke: dict[str, dict[str, int]] = {c.label: {"off": 0, "on": 0} for c in checkouts}
    for c in checkouts:  # one untimed call each: the first import of a checkout fills caches
        c.hook("warm up the page cache for this checkout")
    for r in off + on:
        for c in checkouts:
            wall, cpu, printed = c.hook(r["prompt"])
            times[c.label].append(wall)
            cpus[c.label].append(cpu)
            spoke[c.label][r["kind"]] += bool(printed.strip())
    floor = []
    for _ in range(20):  # the interpreter's own start, measured in the same run
        began = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        floor.append((time.perf_counter() - began) * 1000)
    out: dict[str, dict[str, Any]] = {"python -c pass": {"n": 20, "p50": statistics.median(floor),
                                                         "p95": pct(floor, 0.95)}}  # fmt: skip
    for label, t in times.items():
        out[label] = {"n": len(t), "p50": statistics.median(t), "p95": pct(t, 0.95),
                      "cpu_p50": statistics.median(cpus[label]), "cpu_p95": pct(cpus[label], 0.95),
                      "injected_off": spoke[label]["off"], "injected_on": spoke[label]["on"]}  # fmt: skip
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compare", type=Path, help="an older checkout, measured in the same run")
    ap.add_argument("--work", type=Path, default=Path("/tmp/sidecar-agent-bench"))
    ap.add_argument("--prepare", action="store_true",
                    help="only index and embed each copy (outside the lock), then stop")  # fmt: skip
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    trees = ([("before", args.compare.resolve())] if args.compare else []) + [("this", HERE.parent)]
    checkouts = [Checkout(code, args.work, label) for label, code in trees]
    try:
        for c in checkouts:
            c.wait_ready()
        if args.prepare:
            return
        results: dict[str, Any] = {"machine": describe(), "load_before": os.getloadavg()}
        for c in checkouts:
            results[c.label] = {"agent": c.mcp_sizes(False)}
            if c.label == "this":
                results[c.label]["all"] = c.mcp_sizes(True)
        results["hook_ms"] = hook_times(checkouts)
        results["load_after"] = os.getloadavg()
    finally:
        for c in checkouts:
            c.stop()
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
