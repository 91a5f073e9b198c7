"""``sidecar lsp`` where no daemon runs: it starts one (detached), shows ``$/progress`` while the
daemon starts and indexes, publishes diagnostics once it serves, and the daemon keeps serving
after the editor has gone. With autostart off it says once what to run, and answers empty."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client

from sidecar.transports.unix import RpcClient, is_serving
from tests.conftest import EXAMPLE_VAULT
from tests.daemon_harness import daemon_env

pytestmark = [pytest.mark.slow, pytest.mark.e2e]
NOTE = "services/Session Store.md"
COLD_START_S = 90  # a cold start of the example vault here takes a few seconds; loaded CI more


@pytest.fixture
def vault() -> Iterator[tuple[Path, dict[str, str]]]:
    state = Path(tempfile.mkdtemp(dir="/tmp", prefix="sca"))
    shutil.copytree(EXAMPLE_VAULT, state / "vault")
    env = {k: v for k, v in daemon_env(state, model="tiny").items() if k != "SIDECAR_VAULT"}
    try:
        yield state / "vault", env
    finally:
        socket = _socket(state / "vault", env)
        if is_serving(socket):  # the daemon the server started: end it by its own pid
            with RpcClient(socket) as c:
                os.kill(int(c.call("index.status")["daemon"]["pid"]), signal.SIGTERM)
        shutil.rmtree(state, ignore_errors=True)


def _socket(vault: Path, env: dict[str, str]) -> Path:
    import subprocess

    where = subprocess.run([sys.executable, "-m", "sidecar", "where", "--vault", str(vault)],
                           env=env, capture_output=True, text=True, check=True)  # fmt: skip
    return Path(where.stdout.strip())


async def session(vault: Path, env: dict[str, str], options: dict[str, Any],
                  wait_for: float) -> LanguageClient:  # fmt: skip
    """Open a note with a broken link; wait up to ``wait_for`` s for its diagnostic."""
    client = make_test_lsp_client()
    with tempfile.TemporaryDirectory(prefix="lsp-cwd") as cwd:
        await client.start_io(sys.executable, "-m", "sidecar", "lsp", env=env, cwd=cwd)
        await client.initialize_session(t.InitializeParams(
            capabilities=client_capabilities("neovim"), root_uri=vault.as_uri(),
            initialization_options=options))  # fmt: skip
        uri = (vault / NOTE).as_uri()
        text = (vault / NOTE).read_text("utf-8") + "\n[[Nowhere yet]]\n"
        client.text_document_did_open(t.DidOpenTextDocumentParams(
            t.TextDocumentItem(uri, "markdown", 1, text)))  # fmt: skip
        deadline = time.monotonic() + wait_for
        while time.monotonic() < deadline:
            if any("Nowhere yet" in d.message for d in client.diagnostics.get(uri, [])):
                break
            await asyncio.sleep(0.1)
        await client.shutdown_session()
    return client


def test_starts_the_daemon_shows_progress_and_leaves_it_serving(
    vault: tuple[Path, dict[str, str]],
) -> None:
    root, env = vault
    socket = _socket(root, env)
    assert not is_serving(socket)
    started = time.monotonic()
    client = asyncio.run(session(root, env, {}, COLD_START_S))
    took = time.monotonic() - started
    uri = (root / NOTE).as_uri()
    assert any("Nowhere yet" in d.message for d in client.diagnostics.get(uri, [])), took
    reports = [r for rows in client.progress_reports.values() for r in rows]
    kinds = [type(r).__name__ for r in reports]
    assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd", kinds
    assert client.messages == []  # it worked: no popup
    assert is_serving(socket)  # the editor has gone; the daemon it started stays
    with RpcClient(socket) as c:
        assert c.call("index.status")["daemon"]["ready"]
        assert c.call("note.backlinks", {"note": "Session Store"})["backlinks"]


def test_autostart_off_says_once_what_to_run(vault: tuple[Path, dict[str, str]]) -> None:
    root, env = vault
    client = asyncio.run(session(root, env, {"autostart": False}, 2))
    assert not is_serving(_socket(root, env))
    assert len(client.messages) == 1, client.messages
    text = client.messages[0].message
    assert "no daemon serves it" in text and f"sidecar serve --vault {root}" in text
    assert client.diagnostics.get((root / NOTE).as_uri()) is None
