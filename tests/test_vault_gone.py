"""A vault folder that disappears under the daemon (an unmounted drive, a sync client's
re-download, ``rm -rf``): writes are refused with one clear line, nothing recreates the folder,
and status says so until it is back (issue 24, major 6)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from typing import Any

import pytest

from sidecar.errors import SidecarError
from tests.conftest import EXAMPLE_VAULT
from tests.daemon_harness import RunningDaemon, running


def wait_for(check: Callable[[], Any], seconds: float, what: str) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def degraded(d: RunningDaemon) -> list[dict[str, Any]]:
    with d.client() as c:
        return list(c.call("index.status")["daemon"].get("degraded") or [])


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_writes_are_refused_while_the_vault_is_gone() -> None:
    with running(EXAMPLE_VAULT) as d:
        with d.client() as c:
            c.call("memory.write", {"id": "before", "title": "written while the vault is here"})
        moved = d.vault.with_name("vault-away")
        d.vault.rename(moved)
        with d.client() as c:
            for method, params in [
                ("memory.write", {"id": "after", "title": "acknowledged while it was gone"}),
                ("note.write", {"path": "New.md", "content": "# New\n"}),
            ]:
                with pytest.raises(SidecarError) as err:
                    c.call(method, params)
                assert "vault folder is missing" in err.value.message, (method, err.value.message)
                assert "\n" not in err.value.message
        assert not d.vault.exists(), "a write recreated the vault folder"
        faults = wait_for(lambda: {f["part"]: f for f in degraded(d)}.get("vault"), 30,
                          "status to say the vault is missing")  # fmt: skip
        assert faults["error"] == f"the vault folder is missing: {d.vault}"
        moved.rename(d.vault)
        wait_for(lambda: not degraded(d), 30, "the vault to be seen again")
        with d.client() as c:
            c.call("memory.write", {"id": "after", "title": "written once it was back"})
            assert c.call("memory.get", {"id": "before"})["entry"]["id"] == "before"
        assert (d.vault / ".sidecar" / "memory" / "after.md").is_file()


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_a_vault_removed_for_good_is_not_recreated() -> None:
    with running(EXAMPLE_VAULT) as d:
        shutil.rmtree(d.vault)
        with d.client() as c, pytest.raises(SidecarError) as err:
            c.call("memory.write", {"id": "ghost", "title": "nowhere to go"})
        assert "vault folder is missing" in err.value.message
        assert not d.vault.exists()
