"""The ``sidecar`` command as a user runs it: a subprocess, real files, real exit codes."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from sidecar.config import SETTINGS
from tests.conftest import EXAMPLE_VAULT

pytestmark = pytest.mark.e2e  # starts processes: the daemon, the CLI, editors


def sidecar(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return subprocess.run(
        [sys.executable, "-m", "sidecar", *args],
        capture_output=True, text=True, cwd=cwd, env={**os.environ, **(env or {})}, timeout=120,
    )  # fmt: skip


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, root)
    return root


def test_index_json_shape_and_stdout_is_only_json(vault: Path) -> None:
    r = sidecar("index", "--vault", str(vault), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["notes"] == 10 and doc["changed"] == 10 and doc["deleted"] == 0
    assert set(doc["links"]) >= {"total", "resolved", "broken", "ambiguous"}
    assert doc["links"]["broken"] == 3  # [[Redis Cluster]]: twice in one note (body + relation)
    assert doc["errors"] == [] and isinstance(doc["seconds"], float)
    again = json.loads(sidecar("index", "--vault", str(vault), "--json").stdout)
    assert again["changed"] == 0 and again["parsed"] == 0


def test_vault_discovery_from_a_subfolder(vault: Path) -> None:
    r = sidecar("backlinks", "Auth Service", "--json", cwd=vault / "services")
    assert r.returncode == 0, r.stderr
    sources = {b["source"] for b in json.loads(r.stdout)["backlinks"]}
    assert sources == {"Welcome.md", "services/User Directory.md", "people/Alice.md",
                       "decisions/ADR-7 Session storage.md"}  # fmt: skip


def test_unknown_note_is_exit_1_with_close_matches(vault: Path) -> None:
    r = sidecar("backlinks", "Auth Servce", "--vault", str(vault), "--json")
    assert r.returncode == 1
    err = json.loads(r.stdout)["error"]
    assert err["data"]["close"] == ["services/Auth Service.md"]
    assert "did you mean" in r.stderr


def test_no_vault_is_a_usage_error(tmp_path: Path) -> None:
    r = sidecar("status", cwd=tmp_path)
    assert r.returncode == 2 and "no vault" in r.stderr


def test_links_graph_commands(vault: Path) -> None:
    v = ["--vault", str(vault), "--json"]
    links = json.loads(sidecar("links", "auth", "--depth", "2", *v).stdout)
    assert links["path"] == "services/Auth Service.md"
    rels = {(o["relation"], o["target"]) for o in links["outgoing"]}
    assert ("depends_on", "services/Session Store.md") in rels
    assert ("owner", "people/Alice.md") in rels
    assert any(n["depth"] == 2 for n in links["neighbors"])
    orphans = json.loads(sidecar("orphans", *v).stdout)["orphans"]
    assert orphans == ["Scratch.md"]
    path = json.loads(sidecar("graph", "path", "Scratch", "Alice", *v).stdout)
    assert path["found"] is False
    path = json.loads(sidecar("graph", "path", "ADR-5 Sessions in Postgres", "Alice", *v).stdout)
    assert path["found"] and path["path"][0]["path"].startswith("decisions/ADR-5")
    dangling = json.loads(sidecar("graph", "dangling", *v).stdout)["dangling"]
    assert {(d["source"], d["raw"]) for d in dangling} == {
        ("daily/2026-11-28.md", "Redis Cluster"), ("services/Session Store.md", "Redis Cluster")
    }  # fmt: skip
    hubs = json.loads(sidecar("graph", "hubs", "--limit", "1", *v).stdout)["hubs"]
    assert hubs[0]["path"] == "services/Auth Service.md"
    export = json.loads(sidecar("graph", "export", *v).stdout)
    assert len(export["nodes"]) == 10 and len(export["edges"]) > 20


def test_rpc_raw_and_bad_params(vault: Path) -> None:
    r = sidecar("rpc", "note.backlinks", '{"note": "Alice"}', "--vault", str(vault))
    assert r.returncode == 0 and json.loads(r.stdout)["path"] == "people/Alice.md"
    bad = sidecar("rpc", "note.links", '{"note": "Alice", "depth": 9}', "--vault", str(vault))
    assert bad.returncode == 2 and "depth" in bad.stderr
    missing = sidecar("rpc", "no.such", "{}", "--vault", str(vault))
    assert missing.returncode == 2 and "no method" in missing.stderr


def test_init_writes_every_setting_commented(tmp_path: Path) -> None:
    root = tmp_path / "v"
    root.mkdir()
    r = sidecar("init", "--vault", str(root))
    assert r.returncode == 0, r.stderr
    text = (root / ".sidecar" / "config.toml").read_text("utf-8")
    assert tomllib.loads(text) == {s.key.split(".")[0]: {} for s in SETTINGS}
    keys = re.compile(r"^# [a-z_]+ = |^\[")
    uncommented = tomllib.loads("\n".join(line.removeprefix("# ") for line in text.splitlines()
                                          if keys.match(line)))  # fmt: skip
    flat = {f"{sec}.{k}": v for sec, table in uncommented.items() for k, v in table.items()}
    assert flat == {s.key: s.default for s in SETTINGS}
    assert sidecar("init", "--vault", str(root)).returncode == 0  # idempotent, keeps the file


def test_index_dir_is_outside_the_vault(vault: Path, tmp_path: Path) -> None:
    before = sorted(p.relative_to(vault) for p in vault.rglob("*"))
    sidecar("index", "--vault", str(vault))
    assert sorted(p.relative_to(vault) for p in vault.rglob("*")) == before
    assert any((tmp_path / "xdg-data" / "sidecar").iterdir())


def test_in_process_commands_use_the_configured_model(vault: Path) -> None:
    env = {"SIDECAR_EMBED_MODEL": "tiny:32"}
    r = sidecar("index", "--vault", str(vault), "--json", env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["embedded"] == 22  # 14 body chunks and 8 notes' properties
    status = json.loads(sidecar("status", "--vault", str(vault), "--json", env=env).stdout)
    assert (status["model"], status["pending"], status["vectors"]) == ("tiny-hash-32", 0, 22)
