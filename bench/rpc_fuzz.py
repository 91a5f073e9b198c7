"""Schema-driven fuzzing and path tricks against the real daemon (issue 24's campaign, re-run).

    python bench/rpc_fuzz.py [--calls 3000] [--seed 1]

On a copy of the example vault served by a real daemon (tiny model), over one raw socket:

- **fuzz**: ``--calls`` requests, each to a method of the registry with parameters built from
  its JSON schema and then bent: wrong types, huge and negative numbers, nulls, unicode, missing
  and unknown fields. Every request must be answered, with its own id, within the deadline.
- **paths**: every path field of every method with every trick below. No answer may hold the
  text of a sentinel file outside the vault, and the sentinel must be there, unchanged, after.

It prints one table row per part (calls, answered, wrong ids, hangs, the error codes seen) and
whether the daemon still serves and its log holds no traceback. ``FUZZ_SHOW_OK=1`` lists the
calls answered with a result on stderr (a path trick answered so must name a file in the vault).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sidecar.api import build_registry
from tests.conftest import EXAMPLE_VAULT
from tests.daemon_harness import running

PATH_FIELDS = {"note", "source", "target", "path", "paths", "new_path", "folder"}
SENTINEL = "sentinel-7f3a1c: this text is outside the vault"
TRICKS = [
    "../{s}",
    "../../{s}",
    "{abs}",
    "./../{s}",
    "a/../../{s}",
    "a/./../../{s}",
    "..\\{s}",
    "..\\..\\{s}",
    "%2e%2e/{s}",
    "%2e%2e%2f{s}",
    "..%2f{s}",
    "..%5c{s}",
    "....//{s}",
    "..;/{s}",
    "../{s}\x00.md",
    "{s}\x00",
    "\x00../{s}",
    "file://{abs}",
    "file:///{absr}",
    "~/../{s}",
    "/..",
    "..",
    ".",
    "",
    " ",
    "//{abs}",
    "\\\\?\\{abs}",
    "C:\\{s}",
    "C:/{s}",
    "\u2025/{s}",
    "\uff0e\uff0e/{s}",
    "..\u2215{s}",
    "..\u29f8{s}",
    "\u002e\u002e/{s}",
    "a/" * 200 + "../" * 201 + "{s}",
    "../" * 64 + "{abs}",
    ".sidecar/../../{s}",
    ".obsidian/../../{s}",
    "[[../{s}]]",
    "../{s}#heading",
    "../{s}|alias",
    "../{s}.md",
    "{abs}.md",
    "../{s}/",
    "..//{s}",
    "./.././{s}",
    ".../{s}",
    "../{S}",
    "{abs}\n",
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    registry = build_registry()
    with running(EXAMPLE_VAULT) as d:
        outside = d.vault.parent / "outside"
        outside.mkdir()
        secret = outside / "secret.md"
        secret.write_text(f"# Secret\n\n{SENTINEL}\n", "utf-8")
        conn = Connection(d.socket)
        names = sorted(m.name for m in registry)
        fuzz = [(n, bend(schema_of(registry, n), rng)) for n in rng.choices(names, k=a.calls)]
        rows = [("fuzz", conn.run(fuzz))]
        rel = f"../outside/{secret.name}"
        tricks = [
            t.format(s=rel, S=rel.upper(), abs=str(secret), abspath=str(secret),
                     absr=str(secret).lstrip("/"))
            for t in TRICKS
        ]  # fmt: skip
        paths = [(m.name, {**base(m.params), f: [t] if f == "paths" else t})
                 for m in registry for f in m.params.model_fields if f in PATH_FIELDS
                 for t in tricks]  # fmt: skip
        rows.append(("paths", conn.run(paths)))
        with d.client() as c:
            alive = c.call("index.status")["notes"] > 0
        intact = secret.read_text("utf-8") == f"# Secret\n\n{SENTINEL}\n"
        log = d.log_text()
        if "Traceback" in log:
            sys.stderr.write(log[log.index("Traceback") - 2000 :][:6000])
    out = [
        "| part | calls | answered | wrong id | hangs | leaked | codes |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in rows:
        codes = ", ".join(f"{k}: {v}" for k, v in sorted(r["codes"].items(), key=str))
        out.append(f"| {name} | {r['calls']} | {r['answered']} | {r['wrong_id']} | {r['hangs']} "
                   f"| {r['leaked']} | {codes} |")  # fmt: skip
    out.append(f"\ndaemon serving after: {alive}; sentinel intact: {intact}; "
               f"tracebacks in its log: {log.count('Traceback')}")  # fmt: skip
    sys.stdout.write("\n".join(out) + "\n")


class Connection:
    """One raw socket: a request line out, its answer line back, ids checked here."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sock = self._connect()
        self.ident = 0

    def _connect(self) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(60)
        sock.connect(str(self.path))
        return sock

    def run(self, calls: list[tuple[str, Any]]) -> dict[str, Any]:
        r: dict[str, Any] = {"calls": len(calls), "answered": 0, "wrong_id": 0, "hangs": 0,
                             "leaked": 0, "codes": Counter()}  # fmt: skip
        buf = self.sock.makefile("rb")
        for method, params in calls:
            self.ident += 1
            line = json.dumps({"jsonrpc": "2.0", "id": self.ident, "method": method,
                               "params": params}) + "\n"  # fmt: skip
            self.sock.sendall(line.encode())
            try:
                answer = self._answer(buf)
            except TimeoutError:
                r["hangs"] += 1
                self.sock.close()
                self.sock = self._connect()
                buf = self.sock.makefile("rb")
                continue
            r["answered"] += 1
            r["wrong_id"] += answer.get("id") != self.ident
            r["leaked"] += SENTINEL in json.dumps(answer)
            r["codes"]["ok" if "result" in answer else answer["error"]["code"]] += 1
            if "error" in answer and answer["error"]["code"] == -32603:
                sys.stderr.write(f"internal error: {method} {json.dumps(params)[:300]} -> "
                                 f"{answer['error']['message'][:300]}\n")  # fmt: skip
            if "result" in answer and os.environ.get("FUZZ_SHOW_OK"):
                sys.stderr.write(f"ok: {method} {json.dumps(params)[:160]}\n")
        return r

    def _answer(self, buf: Any) -> dict[str, Any]:
        while True:
            raw = buf.readline()
            if not raw:
                raise TimeoutError("closed")
            message: dict[str, Any] = json.loads(raw)
            if "id" in message:  # notifications (index.changed) carry none
                return message


def schema_of(registry: Any, name: str) -> dict[str, Any]:
    schema: dict[str, Any] = registry.get(name).params.model_json_schema()
    return schema


def base(model: Any) -> dict[str, Any]:
    """Plausible values for a method's required fields, so a path trick reaches the check."""
    plain = {"note": "Welcome", "source": "Welcome", "target": "Welcome", "id": "x",
             "query": "session", "title": "t", "relation": "relates_to", "prompt": "p"}  # fmt: skip
    return {k: v for k, v in plain.items() if k in model.model_fields}


def bend(schema: dict[str, Any], rng: random.Random) -> Any:
    """Params for ``schema``: each field a value of its type most of the time, bent otherwise."""
    if rng.random() < 0.03:
        return rng.choice([None, [], "x", 7, [1, 2]])  # not an object at all
    out: dict[str, Any] = {}
    for name, prop in schema.get("properties", {}).items():
        if rng.random() < 0.2 and name not in schema.get("required", []):
            continue
        out[name] = value(prop, schema.get("$defs", {}), rng)
    if rng.random() < 0.1:
        out[rng.choice(["zzz", "__proto__", "params", "\u00e9"])] = value({}, {}, rng)
    if out and rng.random() < 0.1:
        out.pop(rng.choice(sorted(out)))
    return out


def value(prop: dict[str, Any], defs: dict[str, Any], rng: random.Random, depth: int = 0) -> Any:
    if "$ref" in prop:
        prop = defs.get(prop["$ref"].rsplit("/", 1)[-1], {})
    for key in ("anyOf", "oneOf"):
        if key in prop:
            prop = rng.choice(prop[key])
    if rng.random() < 0.15 or depth > 3:
        return rng.choice(WILD)
    kind = prop.get("type")
    if "enum" in prop:
        return rng.choice(prop["enum"])
    if kind == "string":
        return rng.choice(STRINGS)
    if kind == "integer":
        return rng.choice([0, 1, -1, 5, 50, 2**31, 2**63, -(2**63), 10**30])
    if kind == "number":
        return rng.choice([0.0, 0.5, -1.5, 1e300, -1e300, 1e-300, 3.0])
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        return [value(prop.get("items", {}), defs, rng, depth + 1) for _ in range(rng.randrange(4))]
    if kind == "object":
        return {
            rng.choice(STRINGS): value({}, defs, rng, depth + 1) for _ in range(rng.randrange(3))
        }
    return rng.choice(WILD)


STRINGS = ["", "Welcome", "Auth Service", "session", "x" * 20_000, "é\u0301", "\u202e", "[[x]]",
           "a\nb", "%", "#", "(", "*", "'; DROP TABLE notes; --", "\ud800", "NaN", "../x.md",
           "services/Auth Service.md", "📎", "a" * 300 + ".md", "relates_to", "supersedes"]  # fmt: skip
WILD = [None, True, -1, 10**40, 1e308, "", [], {}, [None], {"": {}}, "x" * 100_000, [[[[]]]]]


if __name__ == "__main__":
    started = time.monotonic()
    main()
    sys.stdout.write(f"took {time.monotonic() - started:.0f} s\n")
