"""Links and embeds to attachment files (images, PDFs, canvases) over real files in a vault:
found by path or by name as Obsidian finds them, a shared name goes to the attachment folder,
a missing one is broken and linted, and the index follows files coming and going."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sidecar.services.context import Services
from sidecar.services.lint import run_lint
from tests.conftest import VaultFactory
from tests.daemon_harness import LOAD, running

Open = Callable[[Path], Services]
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))  # NUL bytes: never read as a note

NOTES: dict[str, str | bytes] = {
    "Projects/Plan (draft).md": (
        "# Plan\n\n![[My diagram.png]]\n\n![scan](img/Scan%201.pdf)\n\n![](../Café/Über.png)\n\n"
        "[[Board.canvas]] and ![[Nowhere to be found.png]]\n"
    ),
    "Projects/img/Scan 1.pdf": b"%PDF-1.4\n",
    "Café/Über.png": PNG,
    "Assets/My diagram.png": PNG,
    "Projects/My diagram.png": PNG,
    "My diagram.png": PNG,
    "Boards/Board.canvas": '{"nodes": [], "edges": []}',
    "Root.md": "# Root\n\n![[My diagram.png]]\n",
}


def outgoing(s: Services, note: str) -> dict[str, tuple[str | None, str]]:
    return {o["raw"]: (o["target"], o["state"]) for o in s.graph.links(note)["outgoing"]}


def with_app_json(files: dict[str, str | bytes], folder: str) -> dict[str, str | bytes]:
    return {**files, ".obsidian/app.json": json.dumps({"attachmentFolderPath": folder})}


def test_by_relative_path_by_name_anywhere_and_missing(
    make_vault: VaultFactory, open_services: Open
) -> None:
    s = open_services(make_vault(NOTES))
    report = s.reindex()
    assert report.notes == 2  # the attachments are listed, not indexed as notes
    links = outgoing(s, "Projects/Plan (draft).md")
    assert links["img/Scan 1.pdf"] == ("Projects/img/Scan 1.pdf", "attachment")  # note's folder
    assert links["../Café/Über.png"] == ("Café/Über.png", "attachment")
    assert links["Board.canvas"] == ("Boards/Board.canvas", "attachment")  # by name, anywhere
    assert links["Nowhere to be found.png"] == (None, "broken")
    # No attachment folder set: a shared name goes where a note's would, the linking note's
    # folder first, then the shortest path.
    assert links["My diagram.png"] == ("Projects/My diagram.png", "attachment")
    assert outgoing(s, "Root")["My diagram.png"] == ("My diagram.png", "attachment")
    assert report.links["broken"] == 1 and report.links["attachments"] == 5
    assert report.links["attachments_missing"] == 1 and report.links["total"] == 6  # 5 + Root


def test_a_missing_attachment_is_linted_as_one(
    make_vault: VaultFactory, open_services: Open
) -> None:
    s = open_services(make_vault(NOTES))
    s.reindex()
    hits = [f for f in run_lint(s.state).findings if f.rule == "dangling_target"]
    assert [(f.note, f.detail, f.fix) for f in hits] == [(
        "Projects/Plan (draft).md",
        "link target 'Nowhere to be found.png' is a missing attachment (no such file)",
        "add the file to the vault, or correct the link",  # not "Create the note"
    )]  # fmt: skip


def test_a_name_several_files_share_is_linted_as_ambiguous_unless_the_folder_decides(
    make_vault: VaultFactory, open_services: Open
) -> None:
    s = open_services(make_vault(NOTES))
    s.reindex()
    hits = {(f.note, f.detail, f.fix) for f in run_lint(s.state).findings
            if f.rule == "ambiguous_link"}  # fmt: skip
    shared = "'My diagram.png' matches 3 files: Assets/My diagram.png, My diagram.png, "
    fix = "write the path, e.g. [[Assets/My diagram.png]]"
    assert hits == {
        ("Projects/Plan (draft).md", shared + "Projects/My diagram.png; Obsidian opens "
         "Projects/My diagram.png", fix),
        ("Root.md", shared + "Projects/My diagram.png; Obsidian opens My diagram.png", fix),
    }  # fmt: skip
    s = open_services(make_vault(with_app_json(NOTES, "Assets")))
    s.reindex()
    assert not [f for f in run_lint(s.state).findings if f.rule == "ambiguous_link"]


@pytest.mark.parametrize(
    ("setting", "plan", "root"),
    [
        ("Assets", "Assets/My diagram.png", "Assets/My diagram.png"),  # a vault folder
        ("/", "My diagram.png", "My diagram.png"),  # the vault root
        ("./", "Projects/My diagram.png", "My diagram.png"),  # the note's own folder
    ],
)
def test_a_shared_name_prefers_the_attachment_folder(
    make_vault: VaultFactory, open_services: Open, setting: str, plan: str, root: str
) -> None:
    s = open_services(make_vault(with_app_json(NOTES, setting)))
    s.reindex()
    assert outgoing(s, "Projects/Plan (draft).md")["My diagram.png"] == (plan, "attachment")
    assert outgoing(s, "Root")["My diagram.png"] == (root, "attachment")


def test_a_subfolder_of_the_notes_folder(make_vault: VaultFactory, open_services: Open) -> None:
    files = {**NOTES, "Projects/media/My diagram.png": PNG, "media/My diagram.png": PNG}
    s = open_services(make_vault(with_app_json(files, "./media")))
    s.reindex()
    links = outgoing(s, "Projects/Plan (draft).md")
    assert links["My diagram.png"] == ("Projects/media/My diagram.png", "attachment")
    assert outgoing(s, "Root")["My diagram.png"] == ("media/My diagram.png", "attachment")


def test_ignored_and_hidden_files_and_symlinked_folders_are_not_attachments(
    make_vault: VaultFactory, open_services: Open, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "Secret.png").write_bytes(PNG)
    files: dict[str, str | bytes] = {
        "Note.md": "![[Secret.png]] ![[Hidden.png]] ![[Skipped.png]]\n",
        ".stash/Hidden.png": PNG,
        "Private/Skipped.png": PNG,
        ".sidecarignore": "Private/\n",
    }
    root = make_vault(files)
    (root / "Linked").symlink_to(outside, target_is_directory=True)
    s = open_services(root)
    s.reindex()
    assert set(outgoing(s, "Note").values()) == {(None, "broken")}


def test_a_new_file_fixes_the_embed_and_deleting_it_breaks_it(
    make_vault: VaultFactory, open_services: Open
) -> None:
    """As a new note fixes the links naming it: a full scan and a watcher batch alike."""
    root = make_vault({"Note.md": "![[Später (v2).png]]\n"})
    s = open_services(root)
    s.reindex()
    assert outgoing(s, "Note")["Später (v2).png"] == (None, "broken")
    (root / "Bilder").mkdir()
    (root / "Bilder" / "Später (v2).png").write_bytes(PNG)
    s.reindex()
    assert outgoing(s, "Note")["Später (v2).png"] == ("Bilder/Später (v2).png", "attachment")
    stored = {(e.source, e.raw, e.target, e.state) for e in s.store.load_state()[1]}
    assert ("Note.md", "Später (v2).png", "Bilder/Später (v2).png", "attachment") in stored
    (root / "Bilder" / "Später (v2).png").unlink()
    s.indexer.run(scope=["Bilder/Später (v2).png"])  # the daemon's batch of that one path
    assert outgoing(s, "Note")["Später (v2).png"] == (None, "broken")
    stored = {(e.source, e.raw, e.target, e.state) for e in s.store.load_state()[1]}
    assert ("Note.md", "Später (v2).png", None, "broken") in stored


def test_a_dotted_note_name_is_still_a_note(make_vault: VaultFactory, open_services: Open) -> None:
    files: dict[str, str | bytes] = {
        "dendron.topic.png.md": "# About PNG in Dendron\n",
        "dendron.topic.png": PNG,
        "Note.md": "[[dendron.topic.png]] and ![[other.topic.png]]\n",
        "assets/other.topic.png": PNG,
    }
    s = open_services(make_vault(files))
    s.reindex()
    links = outgoing(s, "Note")
    assert links["dendron.topic.png"] == ("dendron.topic.png.md", "valid")
    assert links["other.topic.png"] == ("assets/other.topic.png", "attachment")


@pytest.mark.e2e
def test_the_daemon_sees_an_attachment_come_and_go(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "Trip notes.md").write_text("# Trip\n\n![[Kyōto map (1).png]]\n", "utf-8")
    with running(source) as d:

        def state() -> tuple[Any, Any]:
            with d.client() as c:
                out = c.call("note.links", {"note": "Trip notes"})["outgoing"]
            return out[0]["target"], out[0]["state"]

        def until(wanted: tuple[Any, Any]) -> None:
            deadline = time.monotonic() + 20 * LOAD
            while state() != wanted:
                assert time.monotonic() < deadline, f"still {state()}, not {wanted}"
                time.sleep(0.05)

        assert state() == (None, "broken")
        (d.vault / "maps").mkdir()
        tmp = d.vault / "maps" / ".partial"
        tmp.write_bytes(PNG)
        os.replace(tmp, d.vault / "maps" / "Kyōto map (1).png")
        until(("maps/Kyōto map (1).png", "attachment"))
        (d.vault / "maps" / "Kyōto map (1).png").unlink()
        until((None, "broken"))


def test_a_changed_attachment_folder_re_resolves(
    make_vault: VaultFactory, open_services: Open
) -> None:
    """As the daemon does when app.json changes: reload the rules, then a full scan."""
    root = make_vault(with_app_json(NOTES, "Assets"))
    s = open_services(root)
    s.reindex()
    assert outgoing(s, "Root")["My diagram.png"] == ("Assets/My diagram.png", "attachment")
    (root / ".obsidian" / "app.json").write_text(json.dumps({"attachmentFolderPath": "./"}))
    assert s.vault.reload_rules()
    report = s.reindex()
    assert outgoing(s, "Root")["My diagram.png"] == ("My diagram.png", "attachment")
    assert "Root.md" not in report.changed_paths  # re-resolved, not re-parsed


def test_paths_differing_only_in_case_are_both_files(
    make_vault: VaultFactory, open_services: Open
) -> None:
    """Linux keeps ``Assets/`` and ``assets/`` apart: both files are candidates, and the
    answer does not depend on the order the scan met them."""
    files: dict[str, str | bytes] = {
        "Note.md": "![[pic.png]] ![[assets/PIC.png]]\n",
        "Assets/pic.png": PNG,
        "assets/pic.png": PNG,
    }
    s = open_services(make_vault(with_app_json(files, "assets")))
    s.reindex()
    links = outgoing(s, "Note")
    assert links["pic.png"] == ("assets/pic.png", "attachment")
    assert links["assets/PIC.png"] == ("Assets/pic.png", "attachment")  # case-insensitive path
    (s.vault.root / "Assets" / "pic.png").unlink()
    s.reindex()
    # both links now name one file: one edge, as for two links to one note
    assert outgoing(s, "Note") == {"pic.png": ("assets/pic.png", "attachment")}


def test_a_file_deleted_while_no_process_watched_is_missing_at_the_next_run(
    make_vault: VaultFactory, tmp_path: Path
) -> None:
    """Attachment paths are not stored: the next process's first scan must re-check the stored
    edges that name files, though no note changed (``sidecar index`` run twice in-process)."""
    vault = make_vault({"Trip (Kyoto).md": "# Trip\n\n![[photo 1.png]]\n", "Pics/photo 1.png": PNG})
    data = tmp_path / "data-kept"
    first = Services.open(vault, data)
    first.reindex()
    first.close()
    (vault / "Pics" / "photo 1.png").unlink()
    again = Services.open(vault, data)
    try:
        report = again.reindex()
        assert outgoing(again, "Trip (Kyoto).md")["photo 1.png"] == (None, "broken")
        assert report.links["attachments_missing"] == 1
    finally:
        again.close()
