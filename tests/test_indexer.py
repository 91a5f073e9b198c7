"""Incremental indexing against a real LanceDB store on disk."""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Callable
from pathlib import Path

from sidecar.embed import TinyEmbedder
from sidecar.services.context import Services
from tests.conftest import VaultFactory

Open = Callable[[Path], Services]

BASE: dict[str, str | bytes] = {
    "Home.md": "# Home\n\nSee [[Alpha]] and [[Beta#Part]] and [[Missing]].\n",
    "Alpha.md": "---\naliases: [A1]\n---\n# Alpha\n\nBack to [[Home]].\n",
    "Beta.md": "# Beta\n\n## Part\n\nLinks to [[A1]].\n",
}


def bump(path: Path, text: str) -> None:
    st = path.stat()
    path.write_text(text, "utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_cold_then_nothing_to_do(make_vault: VaultFactory, open_services: Open) -> None:
    s = open_services(make_vault(BASE))
    first = s.reindex()
    assert (first.notes, first.parsed, first.changed) == (3, 3, 3)
    assert first.links == {"total": 5, "resolved": 4, "broken": 1, "ambiguous": 0,
                           "attachments": 0, "attachments_missing": 0, "self": 0}  # fmt: skip
    again = s.reindex()
    assert (again.parsed, again.changed, again.deleted, again.touched) == (0, 0, 0, 0)


def test_an_ambiguous_link_counts_once_in_the_total(
    make_vault: VaultFactory, open_services: Open
) -> None:
    s = open_services(make_vault({"Trips/Kyoto.md": "# Kyoto\n", "Food/Kyoto.md": "# Kyoto\n",
                                  "Home.md": "[[Kyoto]]\n"}))  # fmt: skip
    links = s.reindex().links
    assert (links["total"], links["resolved"], links["ambiguous"]) == (1, 1, 1)


def test_edit_reparses_one_note(make_vault: VaultFactory, open_services: Open) -> None:
    root = make_vault(BASE)
    s = open_services(root)
    s.reindex()
    bump(root / "Beta.md", "# Beta\n\n## Part\n\nNow links to [[Home]].\n")
    r = s.reindex()
    assert (r.parsed, r.changed_paths) == (1, ["Beta.md"])
    assert [b["source"] for b in s.graph.backlinks("Home")["backlinks"]] == ["Alpha.md", "Beta.md"]
    # Beta no longer links Alpha (it did through the alias A1): only Home's link is left
    assert [b["source"] for b in s.graph.backlinks("Alpha")["backlinks"]] == ["Home.md"]


def test_touch_without_change_is_not_reparsed(
    make_vault: VaultFactory, open_services: Open
) -> None:
    root = make_vault(BASE)
    s = open_services(root)
    s.reindex()
    bump(root / "Alpha.md", BASE["Alpha.md"])  # type: ignore[arg-type]
    r = s.reindex()
    assert (r.parsed, r.touched) == (0, 1)
    assert s.reindex().touched == 0  # the new mtime was stored


def test_new_note_fixes_a_broken_link_and_delete_breaks_it(
    make_vault: VaultFactory, open_services: Open
) -> None:
    root = make_vault(BASE)
    s = open_services(root)
    s.reindex()
    assert [d["raw"] for d in s.graph.dangling()["dangling"]] == ["Missing"]
    (root / "sub").mkdir()
    (root / "sub" / "missing.md").write_text("# now here\n", "utf-8")
    r = s.reindex()
    assert r.parsed == 1 and r.links["broken"] == 0
    assert s.graph.backlinks("sub/missing")["backlinks"][0]["source"] == "Home.md"
    (root / "sub" / "missing.md").unlink()
    r = s.reindex()
    assert r.deleted == 1 and r.links["broken"] == 1
    stored = sorted((e.source, e.raw, e.state) for e in s.store.load_state()[1])
    assert stored == sorted((e.source, e.raw, e.state) for e in s.state.graph.edges())


def test_alias_change_re_resolves_other_notes(
    make_vault: VaultFactory, open_services: Open
) -> None:
    root = make_vault(BASE)
    s = open_services(root)
    s.reindex()
    bump(root / "Alpha.md", "---\naliases: [Other]\n---\n# Alpha\n\nBack to [[Home]].\n")
    r = s.reindex()
    assert r.parsed == 1
    beta = s.graph.links("Beta")["outgoing"]
    assert [(o["raw"], o["state"]) for o in beta] == [("A1", "broken")]


def test_rename_keeps_vectors_and_moves_backlinks(make_vault: VaultFactory, tmp_path: Path) -> None:
    root = make_vault(BASE)
    s = Services.open(root, tmp_path / "d", embedder=TinyEmbedder())
    s.reindex()
    s.embed_stage.run()
    (root / "archive").mkdir()
    (root / "Alpha.md").rename(root / "archive" / "Alpha.md")
    r = s.reindex()
    assert (r.renamed, r.deleted, r.parsed) == (1, 1, 1)
    assert s.embed_stage.pending() == 0  # its chunks' hashes kept their vectors
    count = s.state.notes["archive/Alpha.md"].chunk_count  # its text and its properties'
    assert [v[:2] for v in s.vectors.of_notes(["archive/Alpha.md"])] == [
        ("archive/Alpha.md", seq) for seq in range(count)
    ] and count == 2
    sources = [b["source"] for b in s.graph.backlinks("archive/Alpha")["backlinks"]]
    assert sources == ["Beta.md", "Home.md"]  # Beta links through Alpha's alias A1
    s.close()


def test_state_survives_reopen(make_vault: VaultFactory, tmp_path: Path) -> None:
    root = make_vault(BASE)
    s = Services.open(root, tmp_path / "d")
    s.reindex()
    before = (s.graph.export(), s.graph.orphans())
    s.close()
    s2 = Services.open(root, tmp_path / "d")
    try:
        assert (s2.graph.export(), s2.graph.orphans()) == before
        assert s2.reindex().parsed == 0
    finally:
        s2.close()


def test_bad_files_are_reported_and_the_rest_indexes(
    make_vault: VaultFactory, open_services: Open
) -> None:
    root = make_vault({
        **BASE,
        "binary.md": b"\x00\x01\x02PNG",
        "latin1.md": "caf\xe9 [[Home]]\n".encode("latin-1"),
        "bad yaml.md": "---\ncreated: {{date}}\ntags: [x\n---\n# Body [[Home]]\n",
        ".hidden/secret.md": "# hidden\n",
        ".obsidian/workspace.md": "# config\n",
    })  # fmt: skip
    os.symlink(root, root / "loop")  # a symlinked folder pointing at the vault itself
    s = open_services(root)
    r = s.reindex()
    assert r.notes == 5
    assert r.errors == [{"path": "binary.md", "error": "binary file (NUL bytes)"}]
    warned = {w["path"] for w in r.warnings}
    assert warned == {"latin1.md", "bad yaml.md"}
    sources = {b["source"] for b in s.graph.backlinks("Home")["backlinks"]}
    assert {"latin1.md", "bad yaml.md"} <= sources
    status = s.status()
    assert status["failed"] == [{"path": "binary.md", "error": "binary file (NUL bytes)"}]
    assert [f["path"] for f in status["invalid_frontmatter"]] == ["bad yaml.md"]


def test_sidecarignore(make_vault: VaultFactory, open_services: Open) -> None:
    root = make_vault({**BASE, "drafts/x.md": "# x\n", "Templates/t.md": "# t\n",
                       ".sidecarignore": "drafts/\n/Templates\n"})  # fmt: skip
    r = open_services(root).reindex()
    assert r.notes == 3


def test_note_deleted_between_scan_and_read(make_vault: VaultFactory, open_services: Open) -> None:
    root = make_vault(BASE)
    s = open_services(root)
    real_read = s.vault.read

    def racing_read(rel: str):  # type: ignore[no-untyped-def]
        if rel == "Beta.md":
            (root / "Beta.md").unlink()
        return real_read(rel)

    s.vault.read = racing_read  # type: ignore[method-assign]
    r = s.reindex()
    assert r.notes == 2
    assert r.errors == [{"path": "Beta.md", "error": "deleted before it could be read"}]


def test_an_index_read_by_another_parser_is_read_again_once(
    make_vault: VaultFactory, tmp_path: Path
) -> None:
    """An index made before notes were read by marko (main's scanner: no ``[ref]`` links, no
    properties' chunk) kept those parses for every unchanged note, so what a note holds
    depended on when it was last edited. The first full scan by a new parser reads all again."""
    root = make_vault({**BASE, "Ref.md": "See [the home][h].\n\n[h]: Home.md\n"})
    s = Services.open(root, tmp_path / "idx")
    s.reindex()
    s.close()
    meta = tmp_path / "idx" / "meta.json"
    old = json.loads(meta.read_text("utf-8"))
    old.pop("parsed_by", None)  # as an older version wrote it
    meta.write_text(json.dumps(old), "utf-8")
    s = Services.open(root, tmp_path / "idx")
    try:
        assert s.indexer.backlog() == 4  # the daemon's cold-start choice sees all of it
        assert s.reindex().parsed == 4
        assert s.reindex().parsed == 0
    finally:
        s.close()
    s = Services.open(root, tmp_path / "idx")
    try:
        assert s.indexer.backlog() == 0 and s.reindex().parsed == 0
    finally:
        s.close()


def test_a_watcher_batch_that_changes_only_the_time_leaves_meta_json_until_close(
    make_vault: VaultFactory, tmp_path: Path
) -> None:
    """meta.json is two fsyncs, 10-17 ms of a one-note re-index beside other writers' I/O. A
    batch that changes nothing a start reads from it (failures, parser, vault) keeps the new
    time in memory (``status`` shows it); a new failure is written at once; close writes the
    time."""
    ticks = iter(range(100))
    clock = lambda: dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(hours=next(ticks))  # noqa: E731
    root = make_vault(BASE)
    s = Services.open(root, tmp_path / "idx", clock=clock)
    meta = tmp_path / "idx" / "meta.json"
    try:
        s.reindex()
        written = meta.read_bytes()
        bump(root / "Home.md", "# Home\n\nSee [[Alpha]] again.\n")
        assert s.reindex(paths=["Home.md"]).parsed == 1
        assert meta.read_bytes() == written
        assert s.status()["last_indexed"] == "2026-01-01T01:00:00+00:00"
        (root / "Bin.md").write_bytes(b"\x00\x01binary\x00")
        assert s.reindex(paths=["Bin.md"]).errors
        on_disk = json.loads(meta.read_bytes())
        assert "Bin.md" in on_disk["failures"]
        assert on_disk["last_indexed"] == "2026-01-01T02:00:00+00:00"
        bump(root / "Home.md", "# Home\n\nSee [[Beta]].\n")
        s.reindex(paths=["Home.md"])
    finally:
        s.close()
    assert json.loads(meta.read_bytes())["last_indexed"] == "2026-01-01T03:00:00+00:00"
