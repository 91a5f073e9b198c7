"""The bad-input corpus: hostile YAML, odd names, binary and non-UTF-8 files, a 50 MB note, 100k
links, deep nesting, symlink loops and links out, notes rewritten or deleted mid-index. Each gets
a clear finding (a failure, a frontmatter warning, or nothing because it indexes fine), through
the indexer and through one real daemon, which keeps serving throughout.

Small files are checked in under ``tests/badinput/``; big and special ones are made here.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from sidecar.errors import PathOutsideVault
from tests.daemon_harness import running

BADINPUT = Path(__file__).parent / "badinput"
NFD = "cafe\u0301 nfd.md"

# path -> (outcome, substring of the finding). "indexed": indexed with no finding; "warning":
# indexed, with the finding in status.invalid_frontmatter or the index report's warnings;
# "failed": not indexed, listed in status.failed; "absent": never considered a note; "skipped":
# not indexed, silently by the scan (symlinks and FIFOs are not notes), with the finding when a
# watcher event or a request names the path.
EXPECTED: dict[str, tuple[str, str]] = {
    "Home.md": ("indexed", ""),
    "café.md": ("indexed", ""),
    NFD: ("indexed", ""),
    "with  space.md": ("indexed", ""),
    "hash#name.md": ("indexed", ""),
    "pipe|name.md": ("indexed", ""),
    "unbalanced brackets.md": ("indexed", ""),
    "unclosed comment.md": ("indexed", ""),
    "yaml anchor bomb.md": ("warning", "more than 20000 values"),
    "yaml tabs.md": ("warning", "tab character"),
    "yaml bom.md": ("indexed", ""),
    "yaml crlf.md": ("indexed", ""),
    "yaml template.md": ("warning", "invalid YAML"),
    "yaml unclosed.md": ("indexed", ""),
    "yaml python tag.md": ("warning", "could not determine a constructor"),
    "yaml list.md": ("warning", "not a mapping"),
    "yaml wrong types.md": ("indexed", ""),
    "yaml empty.md": ("indexed", ""),
    "huge frontmatter.md": ("warning", "frontmatter larger than"),
    "huge 50MB.md": ("failed", "larger than 5000000 bytes"),
    "binary.md": ("failed", "binary file"),
    "latin1.md": ("warning", "not UTF-8"),
    "empty.md": ("indexed", ""),
    "many links.md": ("indexed", ""),
    "deep list.md": ("indexed", ""),
    "deep quote.md": ("indexed", ""),
    "long line.md": ("indexed", ""),
    "loop/Home.md": ("absent", ""),
    "out/secret.md": ("absent", ""),
    "link out.md": ("skipped", "not a regular file (a symlink)"),
    "fifo.md": ("skipped", "not a regular file"),
}


def make_bad_vault(root: Path) -> None:
    """Everything but symlinks and the FIFO (``special_files``), so the vault can be copied."""
    shutil.copytree(BADINPUT, root)
    with (root / "huge 50MB.md").open("wb") as fh:
        fh.truncate(50 * 1024 * 1024)  # sparse: 50 MB of NUL, refused by size before reading
        fh.seek(0)
        fh.write(b"# Huge\n\n[[Home]]\n")
    (root / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + os.urandom(4096))
    (root / "latin1.md").write_bytes("# Caf\xe9 latin-1\n\n[[Home]] d\xe9j\xe0\n".encode("latin-1"))
    (root / "empty.md").write_bytes(b"")
    (root / "huge frontmatter.md").write_text(
        "---\ntitle: " + "x" * 1_000_000 + "\n---\n# Big frontmatter\n\n[[Home]]\n", "utf-8"
    )
    links = " ".join(f"[[target {i}]]" for i in range(100_000))
    (root / "many links.md").write_text(f"# Many links\n\n{links}\n\n[[Home]]\n", "utf-8")
    deep = "".join("  " * i + f"- level {i}\n" for i in range(1000))
    (root / "deep list.md").write_text(f"# Deep\n\n{deep}\n[[Home]]\n", "utf-8")
    (root / "deep quote.md").write_text(">" * 20_000 + " [[Home]]\n", "utf-8")
    (root / "long line.md").write_text("word " * 400_000 + "[[Home]]\n", "utf-8")


def special_files(root: Path, outside: Path) -> None:
    outside.mkdir(exist_ok=True)
    (outside / "secret.md").write_text("# Secret\n\nOUTSIDEWORD [[Home]]\n", "utf-8")
    os.symlink(root, root / "loop")  # a folder loop
    os.symlink(outside, root / "out")  # a folder out of the vault
    os.symlink(outside / "secret.md", root / "link out.md")  # a note out of the vault
    os.mkfifo(root / "fifo.md")  # a reader that would block forever if opened


def check_outcomes(status: dict[str, Any], notes: set[str], warnings: dict[str, str]) -> None:
    failed = {f["path"]: f["error"] for f in status["failed"]}
    invalid = {f["path"]: f["error"] for f in status["invalid_frontmatter"]}
    warnings = {**warnings, **{w["path"]: w["warning"] for w in status["warnings"]}}
    for path, (outcome, finding) in EXPECTED.items():
        if outcome == "failed":
            assert path not in notes and finding in failed.get(path, ""), (path, failed)
        elif outcome == "absent":
            assert path not in notes and path not in failed, path
        elif outcome == "skipped":
            assert path not in notes and finding in failed.get(path, finding), path
        else:
            assert path in notes, path
            said = invalid.get(path) or warnings.get(path, "")
            assert (finding in said) if finding else not said, (path, said)
    assert set(failed) - {p for p, (o, _) in EXPECTED.items() if o == "skipped"} == {
        p for p, (o, _) in EXPECTED.items() if o == "failed"
    }


@pytest.mark.e2e  # a 50 MB note and 100k links in one: half a minute on a loaded machine
def test_the_indexer_reports_every_bad_input(tmp_path: Path, open_services: Any) -> None:
    vault = tmp_path / "vault"
    make_bad_vault(vault)
    special_files(vault, tmp_path / "outside")
    s = open_services(vault)
    report = s.reindex()
    assert report.errors == [{"path": p, "error": e} for p, e in sorted(s.indexer.failures.items())]
    warnings = {w["path"]: w["warning"] for w in report.warnings}
    check_outcomes(s.status(), set(s.state.notes), warnings)
    assert not Path("/tmp/sidecar-pwned").exists()  # the YAML python tag ran nothing
    home = s.graph.backlinks("Home")["backlinks"]
    assert {"many links.md", "latin1.md", NFD, "yaml tabs.md", "deep quote.md"} <= {
        b["source"] for b in home
    }
    assert s.graph.note("café nfd") == NFD  # typed composed, stored decomposed
    size = (vault / "many links.md").stat().st_size  # chunks grow with the text, not per link
    assert s.state.notes["many links.md"].chunk_count < size / 500 < 100_000
    assert s.reindex().parsed == 0  # stable: nothing re-read on the next pass


def test_notes_rewritten_while_being_indexed_end_up_current(
    tmp_path: Path, open_services: Any
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Home.md").write_text("# Home\n", "utf-8")
    (vault / "A.md").write_text("# A\n\nfirst [[Home]]\n", "utf-8")
    s = open_services(vault)
    real_read = s.vault.read

    def racing_read(rel: str):  # type: ignore[no-untyped-def]
        got = real_read(rel)
        if rel == "A.md":  # rewritten right after the indexer read it
            (vault / "A.md").write_text("# A\n\nsecond, longer text [[Other]]\n", "utf-8")
        return got

    s.vault.read = racing_read  # type: ignore[method-assign]
    s.reindex()
    s.vault.read = real_read  # type: ignore[method-assign]
    s.reindex()
    assert [x["target"] for x in s.graph.links("A")["outgoing"]] == [None]  # [[Other]], broken
    from sidecar.services import doctor

    assert doctor.check(s)["problems"] == []


def _raw(sock_path: Path, request: dict[str, Any]) -> dict[str, Any]:
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(sock_path))
        s.sendall(json.dumps(request).encode() + b"\n")
        return dict(json.loads(s.makefile("r", encoding="utf-8").readline()))


def _churn(vault: Path, stop: threading.Event) -> None:
    i = 0
    while not stop.is_set():
        path = vault / f"churn {i % 7}.md"
        if i % 3 == 2:
            path.unlink(missing_ok=True)
        else:
            path.write_text(f"# Churn {i}\n\n[[Home]] round {i}\n" * (1 + i % 50), "utf-8")
        i += 1
        time.sleep(0.005)


@pytest.mark.e2e
def test_one_daemon_over_the_bad_vault_keeps_serving(tmp_path: Path) -> None:
    source = tmp_path / "bad"
    make_bad_vault(source)
    with running(source) as d:
        special_files(d.vault, Path(tempfile.mkdtemp(dir=d.vault.parent, prefix="out")))
        with d.client(timeout=None) as c:
            report = c.call("index.reindex", {})
            status = c.call("index.status")
            warnings = {w["path"]: w["warning"] for w in report["warnings"]}
            notes = {n["path"] for n in c.call("graph.export")["nodes"]}
            check_outcomes(status, notes, warnings)
            hits = c.call("search", {"query": "Tabs in YAML", "mode": "lexical"})["results"]
            assert hits and hits[0]["path"] == "yaml tabs.md"
            assert c.call("search", {"query": "OUTSIDEWORD", "mode": "lexical"})["results"] == []
            assert len(c.call("note.backlinks", {"note": "Home"})["backlinks"]) >= 20
            with pytest.raises(PathOutsideVault):
                c.call("note.backlinks", {"note": "../../etc/passwd"})
            for params in ({"paths": ["../x.md"]}, {"paths": ["/etc/passwd"]}):
                reply = _raw(d.socket, {"jsonrpc": "2.0", "id": 1, "method": "index.reindex",
                                        "params": params})  # fmt: skip
                assert reply["error"]["code"] == -32003
            # notes rewritten and deleted while the watcher and explicit reindexes run
            stop = threading.Event()
            churner = threading.Thread(target=_churn, args=(d.vault, stop))
            churner.start()
            try:
                for _ in range(10):
                    c.call("index.reindex", {"embed": False})
                    assert c.call("index.status")["notes"] > 0
            finally:
                stop.set()
                churner.join(timeout=10)
            c.call("index.reindex", {"embed": False})  # whatever the watcher has not done yet
            assert c.call("index.check", {})["problems"] == []
            assert c.call("index.status")["daemon"]["ready"]
        assert "Traceback" not in d.log_text()
