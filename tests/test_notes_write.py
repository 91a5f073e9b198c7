"""read_note, write_note, edit_note and move_note in-process (tiny embedder): what they return,
what they refuse, and that every byte they were not asked to change stays as it was."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.api import build_registry
from sidecar.embed import TinyEmbedder
from sidecar.errors import NoteNotFound, PathOutsideVault, SidecarError, UsageError, WriteConflict
from sidecar.services.context import Services
from tests.conftest import EXAMPLE_VAULT, write_files

REGISTRY = build_registry()
NOTES: dict[str, str | bytes] = {
    "Projects/Deep Work.md": "---\naliases: [focus]\n---\n# Deep Work\n\nIntro line.\n\n"
                             "## Plan\n\n- read\n- write\n\n## Log\n\nDay one.\n",
    "Index.md": "# Index\n\nSee [[Deep Work]], [[Projects/Deep Work|the plan]], [[focus]],\n"
                "[[Deep Work#Plan]] and [md](Projects/Deep%20Work.md#log).\n"
                "Unrelated line with Deep Work in prose.\n",
    "Projects/Other.md": "# Other\n\n[back](Deep%20Work.md) and ![[Deep Work]]\n",
    "crlf.md": b"# Windows\r\n\r\nfirst line\r\nsecond line\r\n",
    "Own links.md": "# Own\n\n[to index](Index.md) and [to other](Projects/Other.md)\n",
}  # fmt: skip


@pytest.fixture
def s(tmp_path: Path) -> Iterator[Services]:
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    write_files(vault, NOTES)
    services = Services.open(vault, tmp_path / "data", embedder=TinyEmbedder(64))
    services.reindex()
    yield services
    services.close()


def call(s: Services, method: str, **params: Any) -> Any:
    return REGISTRY.call(s, method, params)


def raw(s: Services, rel: str) -> bytes:
    return (s.vault.root / rel).read_bytes()


def test_read_whole_section_range_and_pages(s: Services) -> None:
    whole = call(s, "note.read", note="focus")  # by alias
    assert whole["path"] == "Projects/Deep Work.md" and whole["text"].startswith("---\naliases")
    assert whole["lines"] == 16 and "next_cursor" not in whole and len(whole["hash"]) == 16
    plan = call(s, "note.read", note="Deep Work", heading="Plan")
    assert plan["text"] == "## Plan\n\n- read\n- write\n" and plan["start_line"] == 8
    assert call(s, "note.read", note="Deep Work", start_line=4, end_line=6)["text"] == (
        "# Deep Work\n\nIntro line."
    )
    seen, cursor = [], None
    while True:
        page = call(s, "note.read", note="services/Auth Service.md", max_chars=200,
                    **({"cursor": cursor} if cursor else {}))  # fmt: skip
        seen.append(page["text"])
        cursor = page.get("next_cursor")
        if cursor is None:
            break
    assert len(seen) > 2
    assert "\n".join(seen) == raw(s, "services/Auth Service.md").decode()  # nothing lost or twice
    with pytest.raises(UsageError, match="no heading 'Nope'"):
        call(s, "note.read", note="Deep Work", heading="Nope")
    with pytest.raises(NoteNotFound):
        call(s, "note.read", note="No such note")


def test_write_refuses_outside_the_vault_and_unseen_text(s: Services) -> None:
    for bad in ("../escape.md", "/etc/passwd", "Projects/../../x.md"):
        with pytest.raises(PathOutsideVault):
            call(s, "note.write", path=bad, content="x")
    for bad in (".obsidian/app.md", "notes.txt", ".sidecar/memory/x.md"):
        with pytest.raises(UsageError):
            call(s, "note.write", path=bad, content="x")
    (s.vault.root / "elsewhere").mkdir()
    (s.vault.root / "linked").symlink_to(s.vault.root.parent, target_is_directory=True)
    with pytest.raises(PathOutsideVault):
        call(s, "note.write", path="linked/evil.md", content="x")
    assert not (s.vault.root.parent / "evil.md").exists()
    before = raw(s, "Index.md")
    with pytest.raises(WriteConflict, match="exists: pass expected_hash") as exists:
        call(s, "note.write", path="Index", content="gone")
    assert exists.value.data["hash"] == call(s, "note.read", note="Index")["hash"]
    with pytest.raises(WriteConflict, match="changed since it was read"):
        call(s, "note.write", path="Index.md", content="gone", expected_hash="0" * 16)
    with pytest.raises(WriteConflict):
        call(s, "note.write", path="New.md", content="x", expected_hash="0" * 16)
    assert raw(s, "Index.md") == before and not (s.vault.root / "New.md").exists()


def test_write_creates_and_replaces_and_the_index_sees_it(s: Services) -> None:
    made = call(s, "note.write", path="Inbox/Zebra ideas", content="# Zebra ideas\n\nStripes.\n")
    assert made == {"path": "Inbox/Zebra ideas.md", "hash": made["hash"], "created": True,
                    "bytes": 24}  # fmt: skip
    found = call(s, "search", query="stripes", mode="lexical")["results"]
    assert found[0]["path"] == "Inbox/Zebra ideas.md"
    again = call(s, "note.write", path="Inbox/Zebra ideas.md", content="# Zebra\n",
                 expected_hash=made["hash"])  # fmt: skip
    assert not again["created"] and raw(s, "Inbox/Zebra ideas.md") == b"# Zebra\n"
    call(s, "note.write", path="Inbox/Zebra ideas.md", content="# Z\n", overwrite=True)
    assert raw(s, "Inbox/Zebra ideas.md") == b"# Z\n"


def test_edit_replaces_exactly_and_keeps_every_other_byte(s: Services) -> None:
    before = raw(s, "Projects/Deep Work.md")
    r = call(s, "note.edit", note="Deep Work", find="Day one.", replace="Day one. Day two.")
    after = raw(s, "Projects/Deep Work.md")
    assert after == before.replace(b"Day one.", b"Day one. Day two.") and r["replacements"] == 1
    with pytest.raises(UsageError, match="occurs 2 times"):
        call(s, "note.edit", note="Deep Work", find="Day", replace="Night")
    call(s, "note.edit", note="Deep Work", find="Day", replace="Night", replace_all=True)
    assert raw(s, "Projects/Deep Work.md").count(b"Night") == 2
    with pytest.raises(UsageError, match="not in the note"):
        call(s, "note.edit", note="Deep Work", find="absent text", replace="x")
    with pytest.raises(WriteConflict):
        call(s, "note.edit", note="Deep Work", find="Intro", replace="x", expected_hash="f" * 16)
    crlf = raw(s, "crlf.md")
    call(s, "note.edit", note="crlf", find="first line\nsecond", replace="1st line\n2nd")
    assert raw(s, "crlf.md") == crlf.replace(b"first line\r\nsecond", b"1st line\r\n2nd")


def test_append_goes_at_the_end_of_its_section(s: Services) -> None:
    before = raw(s, "Projects/Deep Work.md").decode()
    call(s, "note.edit", note="Deep Work", append="- rest", heading="Plan")
    after = raw(s, "Projects/Deep Work.md").decode()
    assert after == before.replace("- write\n", "- write\n\n- rest\n")
    call(s, "note.edit", note="crlf", append="third line")
    assert raw(s, "crlf.md").endswith(b"second line\r\n\r\nthird line\r\n")
    with pytest.raises(UsageError, match="headings: Deep Work, Plan, Log"):
        call(s, "note.edit", note="Deep Work", append="x", heading="Missing")
    with pytest.raises(UsageError):
        call(s, "note.edit", note="Deep Work", append="x", find="y")


def test_move_rewrites_every_link_and_nothing_else(s: Services) -> None:
    index, other = raw(s, "Index.md").decode(), raw(s, "Projects/Other.md").decode()
    untouched = {p: raw(s, p) for p in ("services/Auth Service.md", "Welcome.md")}
    r = call(s, "note.move", note="Deep Work", to="Areas/Focused Work.md")
    assert (r["from"], r["to"]) == ("Projects/Deep Work.md", "Areas/Focused Work.md")
    assert not (s.vault.root / "Projects/Deep Work.md").exists()
    assert raw(s, "Index.md").decode() == (
        index.replace("[[Deep Work]]", "[[Focused Work]]")
        .replace("[[Projects/Deep Work|", "[[Areas/Focused Work|")
        .replace("[[Deep Work#Plan]]", "[[Focused Work#Plan]]")
        .replace("(Projects/Deep%20Work.md#log)", "(Areas/Focused%20Work.md#log)")
    )  # the alias link [[focus]] and the prose mention stay
    assert raw(s, "Projects/Other.md").decode() == other.replace(
        "(Deep%20Work.md)", "(../Areas/Focused%20Work.md)").replace("![[Deep Work]]",
                                                                   "![[Focused Work]]")  # fmt: skip
    assert {p: raw(s, p) for p in untouched} == untouched
    assert sorted(u["path"] for u in r["updated"]) == ["Index.md", "Projects/Other.md"]
    back = call(s, "note.backlinks", note="Areas/Focused Work.md")
    assert {b["source"] for b in back["backlinks"]} == {"Index.md", "Projects/Other.md"}
    assert call(s, "graph.dangling")["dangling"] == [] or all(
        "Deep Work" not in d["raw"] for d in call(s, "graph.dangling")["dangling"])  # fmt: skip


def test_a_moved_note_keeps_its_own_relative_links(s: Services) -> None:
    call(s, "note.move", note="Own links", to="Deep/Down/Own links.md")
    text = raw(s, "Deep/Down/Own links.md").decode()
    assert text == "# Own\n\n[to index](../../Index.md) and [to other](../../Projects/Other.md)\n"


def test_move_refuses_to_overwrite(s: Services) -> None:
    with pytest.raises(WriteConflict, match="already exists"):
        call(s, "note.move", note="Deep Work", to="Projects/Other.md")
    with pytest.raises(WriteConflict):
        call(s, "note.move", note="Deep Work", to="other")  # case-insensitively the same
    with pytest.raises(PathOutsideVault):
        call(s, "note.move", note="Deep Work", to="../out.md")
    assert (s.vault.root / "Projects/Deep Work.md").exists()


def test_every_failure_is_a_sidecar_error(s: Services) -> None:
    for method, params in [("note.read", {"note": ""}), ("note.edit", {"note": "Index"}),
                           ("note.move", {"note": "Index", "to": "Index"})]:  # fmt: skip
        with pytest.raises(SidecarError):
            call(s, method, **params)


@pytest.mark.parametrize(
    ("method", "params"),
    [("note.write", {"path": "a" * 300 + ".md", "content": "x"}),
     ("note.write", {"path": "Folder " + "é" * 130 + "/n.md", "content": "x"}),  # 260 bytes
     ("note.write", {"path": "Index.md/under a note.md", "content": "x"}),
     ("note.move", {"note": "Index", "to": "b" * 300 + ".md"})],
)  # fmt: skip
def test_a_path_the_file_system_cannot_hold_is_one_line(
    s: Services, method: str, params: dict[str, Any]
) -> None:
    """Found by bench/rpc_fuzz.py: a 300-byte name answered -32603 with a traceback in the log."""
    with pytest.raises(UsageError) as err:
        call(s, method, **params)
    assert "\n" not in err.value.message and str(s.vault.root) not in err.value.message
    assert (s.vault.root / "Index.md").exists()
