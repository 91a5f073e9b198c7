"""Shared fixtures: small vaults written by the tests, the real corpora, an open index."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

# The fast loop runs over and over. With PYTHONDONTWRITEBYTECODE set in the environment, each
# run compiled and assert-rewrote every test and sidecar module again (about 4 s of 10 s).
sys.dont_write_bytecode = False

from sidecar.services.context import Services  # noqa: E402  (after the line above)

# Property and fuzz tests: a short run in CI, a long one nightly (HYPOTHESIS_PROFILE=nightly).
settings.register_profile("ci", max_examples=200, deadline=None, database=None)
settings.register_profile("nightly", max_examples=20_000, deadline=None, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CORPORA = SHARED / "corpora"
EXAMPLE_VAULT = REPO / "docs" / "example-vault"

VaultFactory = Callable[[dict[str, str | bytes]], Path]


def corpus(name: str) -> Path:
    path = CORPORA / name / "vault"
    assert path.is_dir(), f"the shared corpora are required beside the repo: {path} is missing"
    return path


def require(ok: bool, why: str) -> None:
    """For a tool a test needs from the machine: missing, the test fails (never skips), on a
    developer's box as under CI, whose .ci/run installs it."""
    if not ok:
        pytest.fail(f"this machine must provide it: {why}")


def write_files(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, "utf-8")


@pytest.fixture
def make_vault(tmp_path: Path) -> VaultFactory:
    def make(files: dict[str, str | bytes]) -> Path:
        root = tmp_path / "vault"
        root.mkdir(exist_ok=True)
        write_files(root, files)
        return root

    return make


@pytest.fixture
def open_services(tmp_path: Path) -> Iterator[Callable[[Path], Services]]:
    """Open an index of a vault in a temporary data dir; closed at the end of the test."""
    opened: list[Services] = []

    def open_(vault: Path) -> Services:
        services = Services.open(vault, tmp_path / f"data{len(opened)}")
        opened.append(services)
        return services

    yield open_
    for services in opened:
        services.close()


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the real user's data dir or runtime dir."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.delenv("SIDECAR_VAULT", raising=False)
    monkeypatch.delenv("SIDECAR_DATA_DIR", raising=False)
    for key in list(os.environ):
        if key.startswith("SIDECAR_"):
            monkeypatch.delenv(key, raising=False)


@pytest.fixture(autouse=True)
def _no_thread_leaks() -> Iterator[None]:
    """A test that leaves a Python thread running has a bug (watchdog's conftest does the same)."""
    before = set(threading.enumerate())
    yield
    leaked = [
        t for t in threading.enumerate()
        if t not in before and t.is_alive() and not t.daemon
    ]  # fmt: skip
    for t in leaked:
        t.join(timeout=2)
    still = [t.name for t in leaked if t.is_alive()]
    assert not still, f"threads leaked: {still}"


@pytest.fixture(autouse=True)
def _processes_only_in_e2e_tests(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fast loop (``pytest -m "not e2e"``) starts no process: a test that starts one (the
    daemon, the CLI, an editor, a browser) is marked ``e2e``, which this enforces. Tests that
    read a whole real vault are marked ``e2e`` too, by hand, to keep the loop under a minute."""
    if request.node.get_closest_marker("e2e") is not None:
        return

    def refuse(self: subprocess.Popen[bytes], *args: object, **kwargs: object) -> None:
        raise AssertionError(f"{request.node.nodeid} starts a process: mark it e2e")

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
