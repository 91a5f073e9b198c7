"""How long a user waits for each client with the daemon up, and how much memory the long-lived
clients hold: ``sidecar --help``, ``sidecar backlinks``, ``sidecar search --lexical``, the
UserPromptSubmit hook, ``sidecar mcp`` until an answered ``tools/list`` and ``sidecar lsp``
until an answered ``initialize``, with ``python -c pass`` measured in the same run as the floor.

    flock /tmp/sidecar-bench.lock python bench/client_latency.py --tree old=/tmp/old --tree new=.

Each ``--tree LABEL=PATH`` is a checkout whose ``sidecar`` package runs (``PYTHONPATH``), with
its own daemon on its own copy of the vault; the runs interleave the trees call by call, so a
before/after comparison sees the same load. Every process starts the way the console script
does (``sidecar.cli.launch.main``), in this interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, NamedTuple

from machine import describe, pct, status_mib

REPO = Path(__file__).resolve().parents[1]
# the console script's entry (``sidecar.cli.launch``; a checkout before it: ``sidecar.cli.main``)
MAIN = ("import sys\ntry:\n    from sidecar.cli.launch import main\nexcept ImportError:\n"
        "    from sidecar.cli.main import main\nsys.exit(main())")  # fmt: skip
PROMPT = json.dumps({"prompt": "where do we keep session data now, and for how long?"})
START, END = "<!-- client_latency:start -->", "<!-- client_latency:end -->"


class Sample(NamedTuple):
    wall: float  # seconds, from exec to the answer
    cpu: float  # seconds of CPU the client used until then (user + system)
    rss: float | None = None  # MiB


Measure = Callable[["Tree"], Sample]


class Tree:
    """One checkout: its environment, its vault copy and its daemon."""

    def __init__(self, label: str, path: Path, vault: Path, state: Path, model: str) -> None:
        self.label, self.path = label, path.resolve()
        self.home = state / label
        self.home.mkdir(parents=True)
        self.vault = self.home / "vault"
        shutil.copytree(vault, self.vault)
        config = self.vault / ".sidecar" / "config.toml"
        config.parent.mkdir(exist_ok=True)
        config.write_text(f'[embed]\nmodel = "{model}"\n', "utf-8")
        cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        self.env = {"PATH": os.environ["PATH"], "HOME": str(self.home), "XDG_CACHE_HOME": cache,
                    "PYTHONPATH": str(self.path), "LANG": "C.UTF-8"}  # fmt: skip
        self.daemon: subprocess.Popen[bytes] | None = None

    def argv(self, *args: str) -> list[str]:
        # -P: the working directory does not go first on sys.path, PYTHONPATH picks the tree
        return [sys.executable, "-P", "-c", MAIN, *args]

    def start_daemon(self) -> None:
        log = (self.home / "daemon.log").open("wb")
        self.daemon = subprocess.Popen(self.argv("serve", "--vault", str(self.vault)),
                                       env=self.env, stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
        deadline = time.monotonic() + 300
        while True:  # `where` never opens the index (a call would, in-process, before it serves)
            where = json.loads(self.run("where", "--json", "--vault", str(self.vault)).stdout)
            if where["serving"]:
                status = json.loads(
                    self.run("rpc", "index.status", "--vault", str(self.vault)).stdout
                )
                if status["daemon"]["ready"]:
                    return
            if self.daemon.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{self.label}: daemon did not start: {self.home}/daemon.log")
            time.sleep(0.5)

    def run(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.argv(*args), env=self.env, input=stdin, text=True,
                              capture_output=True, timeout=120)  # fmt: skip

    def stop(self) -> None:
        if self.daemon is not None and self.daemon.poll() is None:
            self.daemon.send_signal(signal.SIGTERM)
            try:
                self.daemon.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
                self.daemon.wait()


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cpu_of(pid: int) -> float:
    """CPU seconds a running process has used (clock ticks: 10 ms resolution)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(argv: list[str], env: dict[str, str], stdin: str = "", expect: str = "") -> Sample:
    cpu, began = _children_cpu(), time.perf_counter()
    r = subprocess.run(argv, env=env, input=stdin, text=True, capture_output=True, timeout=120)
    took, cpu = time.perf_counter() - began, _children_cpu() - cpu
    if r.returncode != 0 or expect not in r.stdout:
        raise SystemExit(f"{argv[4:]} failed ({r.returncode}): {r.stderr[-500:]}")
    if "in-process" in r.stderr:
        raise SystemExit(f"{argv[4:]} did not reach the daemon: {r.stderr}")
    return Sample(took, cpu)


def floor(t: Tree) -> Sample:
    return timed([sys.executable, "-P", "-c", "pass"], t.env)


def lsprotocol(t: Tree) -> Sample:
    """What pygls costs before it can answer anything: importing the protocol's types."""
    return timed([sys.executable, "-P", "-c", "import lsprotocol.types"], t.env)


def help_(t: Tree) -> Sample:
    return timed(t.argv("--help"), t.env, expect="Usage")


def backlinks(t: Tree) -> Sample:
    argv = t.argv("backlinks", "Auth Service", "--vault", str(t.vault))
    return timed(argv, t.env, expect="Session Store")


def search(t: Tree) -> Sample:
    argv = t.argv("search", "sessions", "--lexical", "--vault", str(t.vault))
    return timed(argv, t.env, expect="ADR")


def hook(t: Tree) -> Sample:
    argv = t.argv("recall", "--hook", "--vault", str(t.vault))
    return timed(argv, t.env, stdin=PROMPT)


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read_frame(stream: IO[bytes]) -> bytes:
    length = 0
    while (line := stream.readline()) not in (b"\r\n", b""):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return stream.read(length) if length else b""


class _Server:
    """``sidecar mcp`` or ``sidecar lsp`` in a process of its own, spoken to in its framing:
    MCP writes one message a line, LSP a Content-Length header before each."""

    def __init__(self, t: Tree, command: str, framed: bool) -> None:
        self.framed = framed
        self.proc = subprocess.Popen(t.argv(command, "--vault", str(t.vault)), env=t.env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)  # fmt: skip

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(
            _frame(message) if self.framed else json.dumps(message).encode() + b"\n"
        )
        self.proc.stdin.flush()

    def answer(self, ident: int) -> dict[str, Any]:
        """The reply to request ``ident`` (notifications and the server's requests skipped)."""
        assert self.proc.stdout is not None
        while True:
            raw = _read_frame(self.proc.stdout) if self.framed else self.proc.stdout.readline()
            if not raw:
                raise SystemExit("the server closed stdout")
            message: dict[str, Any] = json.loads(raw)
            if message.get("id") == ident and "method" not in message:
                return message

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def mcp(t: Tree) -> Sample:
    """From exec to the answer of tools/list (after initialize); RSS after one tool call."""
    began = time.perf_counter()
    server = _Server(t, "mcp", framed=False)
    server.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"}}})  # fmt: skip
    server.answer(1)
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert "tools" in server.answer(2)["result"]
    took, cpu = time.perf_counter() - began, _cpu_of(server.proc.pid)
    server.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "note_backlinks", "arguments": {"note": "Auth Service"}}})  # fmt: skip
    server.answer(3)
    rss = status_mib(server.proc.pid)
    server.close()
    return Sample(took, cpu, rss)


def lsp(t: Tree) -> Sample:
    """From exec to the answer of initialize; RSS after a workspace/symbol answered."""
    began = time.perf_counter()
    server = _Server(t, "lsp", framed=True)
    server.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": None, "rootUri": t.vault.as_uri(), "capabilities": {}}})  # fmt: skip
    server.answer(1)
    took, cpu = time.perf_counter() - began, _cpu_of(server.proc.pid)
    server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    server.send(
        {"jsonrpc": "2.0", "id": 2, "method": "workspace/symbol", "params": {"query": "Auth"}}
    )
    server.answer(2)
    rss = status_mib(server.proc.pid)
    server.send({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
    server.answer(3)
    server.send({"jsonrpc": "2.0", "method": "exit"})
    server.close()
    return Sample(took, cpu, rss)


CALLS: dict[str, tuple[str, Measure, float | None, float | None]] = {
    "floor": ("`python -c pass` (the floor)", floor, None, None),
    "help": ("`sidecar --help`", help_, 120, None),
    "backlinks": ('`sidecar backlinks "Auth Service"`, through the daemon', backlinks, 150, None),
    "search": ("`sidecar search sessions --lexical`, through the daemon", search, 150, None),
    "hook": ("UserPromptSubmit hook (`sidecar recall --hook`)", hook, 150, None),
    "mcp": ("`sidecar mcp` until `tools/list` is answered", mcp, 600, 50),
    "lsp": ("`sidecar lsp` until `initialize` is answered", lsp, 400, 50),
    "lsprotocol": ("`python -c 'import lsprotocol.types'` (pygls's floor)", lsprotocol, None, None),
}


def load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def table(trees: list[Tree], samples: dict[tuple[str, str], list[Sample]],
          calls: list[str]) -> list[str]:  # fmt: skip
    labels = [t.label for t in trees]
    head = "| call | target p50 | " + " | ".join(f"{lb} p50 | {lb} p95" for lb in labels)
    head += " | " + " | ".join(f"{lb} CPU p50" for lb in labels)
    head += " | " + " | ".join(f"{lb} RSS" for lb in labels) + " |"
    lines = [head, "|" + "---|" * (2 + 4 * len(labels))]
    for key in calls:
        title, _, target, rss_target = CALLS[key]
        cells = [title, f"≤ {target} ms" if target else ""]
        for lb in labels:
            ms = [1000 * x.wall for x in samples[(lb, key)]]
            cells += [f"{pct(ms, 0.5):.0f} ms", f"{pct(ms, 0.95):.0f} ms"]
        for lb in labels:
            cells.append(f"{pct([1000 * x.cpu for x in samples[(lb, key)]], 0.5):.0f} ms")
        for lb in labels:
            rss = [x.rss for x in samples[(lb, key)] if x.rss is not None]
            goal = f" (≤ {rss_target})" if rss_target and lb == labels[-1] else ""
            cells.append(f"{pct(rss, 0.5):.0f} MiB{goal}" if rss else "")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", action="append", default=[], metavar="LABEL=PATH",
                    help="a checkout to measure (repeatable; default: this one, as 'now')")  # fmt: skip
    ap.add_argument("--vault", type=Path, default=REPO / "docs" / "example-vault")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--model", default="minilm", help="the daemons' embedding model")
    ap.add_argument("--calls", default=",".join(CALLS), metavar="A,B",
                    help=f"only these calls (of {','.join(CALLS)}); not with --write")  # fmt: skip
    ap.add_argument(
        "--write", action="store_true", help="rewrite the section of docs/benchmarks.md"
    )
    args = ap.parse_args()
    calls = [c for c in args.calls.split(",") if c]
    if not set(calls) <= set(CALLS) or (args.write and calls != list(CALLS)):
        ap.error("--calls names calls of the table, and --write needs all of them")
    specs = [s.split("=", 1) for s in args.tree] or [["now", str(REPO)]]
    state = Path(tempfile.mkdtemp(dir="/tmp", prefix="scl"))
    trees = [Tree(label, Path(path), args.vault, state, args.model) for label, path in specs]
    began_load = load()
    samples: dict[tuple[str, str], list[Sample]] = {(t.label, k): [] for t in trees for k in calls}
    try:
        for t in trees:
            t.start_daemon()
        for t in trees:  # one unmeasured round: the page cache, the daemons' first queries
            for key in calls:
                CALLS[key][1](t)
        for i in range(args.runs):
            for key in calls:
                for t in trees:
                    samples[(t.label, key)].append(CALLS[key][1](t))
            print(f"run {i + 1}/{args.runs}, load {load()}", file=sys.stderr)
    finally:
        for t in trees:
            t.stop()
        shutil.rmtree(state, ignore_errors=True)
    rows = table(trees, samples, calls)
    commits = ", ".join(f"{t.label} = `{_commit(t.path)}`" for t in trees)
    text = "\n".join([
        f"`flock /tmp/sidecar-bench.lock python bench/client_latency.py "
        f"{' '.join('--tree ' + '='.join(s) for s in specs)} --runs {args.runs}"
        f"{'' if calls == list(CALLS) else ' --calls ' + ','.join(calls)}"
        f"{' --write' if args.write else ''}` "
        f"({commits}): each call started {args.runs} times as a new process, the trees "
        f"interleaved call by call; the daemon (model `{args.model}`) serves a copy of "
        f"`{args.vault.name}` for each tree. RSS: VmRSS of the client after one call through "
        f"it (MCP `note_backlinks`, LSP `workspace/symbol`), median. CPU: user + system time of the "
        f"client until its answer (the same figure on a loaded machine, where wall time is "
        f"mostly waiting for a core).",
        "", *rows, "",
        f"Machine: {describe()}. Load average (1/5/15 min) at the start {began_load}, "
        f"at the end {load()}.",
    ])  # fmt: skip
    print(text)
    if args.write:
        _write_section(text)
    return 0


def _commit(path: Path) -> str:
    r = subprocess.run(["git", "-C", str(path), "rev-parse", "--short", "HEAD"],
                       capture_output=True, text=True)  # fmt: skip
    dirty = subprocess.run(["git", "-C", str(path), "status", "--porcelain", "sidecar"],
                           capture_output=True, text=True).stdout.strip()  # fmt: skip
    return r.stdout.strip() + ("+changes" if dirty else "")


def _write_section(text: str) -> None:
    docs = REPO / "docs" / "benchmarks.md"
    doc = docs.read_text("utf-8")
    block = f"{START}\n{text}\n{END}"
    if START in doc:
        before, rest = doc.split(START, 1)
        doc = before + block + rest.split(END, 1)[1]
    else:
        doc = (
            doc.rstrip("\n") + "\n\n## Client start-up and latency (`bench/client_latency.py`)\n\n"
        )
        doc += block + "\n"
    docs.write_text(doc, "utf-8")
    out = REPO / "bench" / "results" / "client-latency.md"
    out.write_text(text + "\n", "utf-8")


if __name__ == "__main__":
    sys.exit(main())
