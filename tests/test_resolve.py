from typing import Any

from sidecar.core.model import LinkRef
from sidecar.core.resolve import Catalog, NoteKey, Resolution, resolve_links
from sidecar.services.lint import run_lint

NOTES = [
    NoteKey("Home.md", ("Start",)),
    NoteKey("projects/Alpha.md", (), "alpha-id"),
    NoteKey("projects/Readme.md"),
    NoteKey("areas/Readme.md"),
    NoteKey("a/b/Deep Note.md"),
    NoteKey("dendron.topic.lookup.md"),
]
CAT = Catalog.build(NOTES)


def wl(target: str, label: str = "", anchor: str = "", relation: str = "link") -> LinkRef:
    return LinkRef(target, anchor, relation, label or target, label, True, False, False, 1, "")


def md(target: str) -> LinkRef:
    return LinkRef(target, "", "link", target, "", False, False, True, 1, "")


def resolve(link: LinkRef, source: str = "Home.md") -> tuple[str | None, str]:
    r = CAT.resolve(link, source)
    return r.target, r.state


def test_path_then_basename_case_insensitive() -> None:
    assert resolve(wl("projects/alpha")) == ("projects/Alpha.md", "valid")
    assert resolve(wl("ALPHA.md")) == ("projects/Alpha.md", "valid")
    assert resolve(wl("deep note")) == ("a/b/Deep Note.md", "valid")


def test_aliases_and_ids() -> None:
    assert resolve(wl("start"), "a/b/Deep Note.md") == ("Home.md", "valid")
    assert resolve(wl("alpha-id")) == ("projects/Alpha.md", "valid")


def test_ambiguous_basename_goes_where_obsidian_goes_then_narrowed_by_folder() -> None:
    r = CAT.resolve(wl("Readme"), "Home.md")
    assert (r.target, r.state) == ("areas/Readme.md", "valid")  # the shorter path
    assert r.candidates == ("areas/Readme.md", "projects/Readme.md")
    assert resolve(wl("projects/Readme")) == ("projects/Readme.md", "valid")


def test_broken_attachment_self() -> None:
    assert resolve(wl("Nowhere")) == (None, "broken")
    # an attachment naming no file in the vault is broken, as Obsidian shows it unresolved
    assert resolve(wl("diagram.png")) == (None, "broken")
    with_file = Catalog.build(NOTES, ["img/diagram.png"])
    assert with_file.resolve(wl("diagram.png"), "Home.md") == Resolution(
        "img/diagram.png", "attachment"
    )
    assert resolve(wl("Home")) == ("Home.md", "self")


def test_dotted_names_are_notes_not_extensions() -> None:
    assert resolve(wl("dendron.topic.lookup")) == ("dendron.topic.lookup.md", "valid")


def test_dendron_label_first() -> None:
    r = CAT.resolve(wl("Lookup docs", label="dendron.topic.lookup#usage"), "Home.md")
    assert (r.target, r.state, r.swapped) == ("dendron.topic.lookup.md", "valid", True)
    edge = resolve_links("Home.md", [wl("Lookup docs", label="dendron.topic.lookup#usage")], CAT)
    assert (edge[0].target, edge[0].anchor, edge[0].text) == (
        "dendron.topic.lookup.md", "usage", "Lookup docs"
    )  # fmt: skip
    # Obsidian order wins when the written target resolves.
    assert CAT.resolve(wl("Alpha", label="Home"), "Home.md").target == "projects/Alpha.md"


def test_markdown_links_relative_then_vault_root() -> None:
    assert resolve(md("../Alpha.md"), "projects/Readme.md") == ("projects/Alpha.md", "valid")
    assert resolve(md("Alpha.md"), "projects/Readme.md") == ("projects/Alpha.md", "valid")
    assert resolve(md("projects/Alpha.md"), "a/b/Deep Note.md") == ("projects/Alpha.md", "valid")
    assert resolve(md("../../../etc/passwd.md"), "Home.md") == (None, "broken")


def test_dedup_by_target_and_relation() -> None:
    edges = resolve_links(
        "Home.md",
        [wl("Alpha"), wl("projects/Alpha"), wl("alpha-id", relation="depends_on"), wl("x"),
         wl("X")],
        CAT,
    )  # fmt: skip
    assert [(e.target, e.relation, e.state) for e in edges] == [
        ("projects/Alpha.md", "link", "valid"),
        ("projects/Alpha.md", "depends_on", "valid"),
        (None, "link", "broken"),
    ]


def test_catalog_remove_undoes_add() -> None:
    cat = Catalog.build(NOTES)
    cat.remove(NoteKey("areas/Readme.md"))
    assert cat.resolve(wl("Readme"), "Home.md").target == "projects/Readme.md"
    cat.remove(NoteKey("Home.md", ("Start",)))
    assert cat.resolve(wl("Start"), "x.md").state == "broken"


def test_a_dotted_name_ending_like_an_extension_is_still_a_name() -> None:
    cat = Catalog.build([NoteKey("dendron.topic.md"), NoteKey("dendron.topic.markdown.md")])
    r = cat.resolve(wl("dendron.topic.markdown"), "x.md")
    assert (r.target, r.state) == ("dendron.topic.markdown.md", "valid")
    assert cat.resolve(wl("dendron.topic"), "x.md").target == "dendron.topic.md"


def test_obsidian_ambiguity_rule_same_folder_nested_and_root() -> None:
    """Obsidian opens the note in the linking note's folder, else the shortest path."""
    cat = Catalog.build(NoteKey(p) for p in (
        "Kyoto.md", "travel/Kyoto.md", "travel/2023/Kyoto.md", "travel/2023/Plan.md",
        "travel/Trip.md", "deep/er/Note.md", "Home.md", "places/asia/Osaka.md",
        "z/Osaka.md", "other/Kyoto2.md",
    ))  # fmt: skip

    def pick(name: str, source: str) -> str | None:
        return cat.resolve(wl(name), source).target

    assert pick("Kyoto", "travel/2023/Plan.md") == "travel/2023/Kyoto.md"  # same folder
    assert pick("Kyoto", "travel/Trip.md") == "travel/Kyoto.md"  # same folder, nested
    assert pick("Kyoto", "deep/er/Note.md") == "Kyoto.md"  # elsewhere: shortest path (root)
    assert pick("Kyoto", "Home.md") == "Kyoto.md"  # the root's own
    assert pick("Osaka", "Home.md") == "z/Osaka.md"  # no root copy: shortest path
    assert pick("2023/Kyoto", "Home.md") == "travel/2023/Kyoto.md"  # a written folder narrows
    assert cat.resolve(wl("Kyoto"), "Home.md").candidates == (
        "Kyoto.md",
        "travel/2023/Kyoto.md",
        "travel/Kyoto.md",
    )


def test_ambiguous_link_backlinks_the_note_obsidian_opens_and_lint_warns(
    make_vault: Any, open_services: Any
) -> None:
    vault = make_vault({
        "Kyoto.md": "# Kyoto (root)\n", "travel/Kyoto.md": "# Kyoto (travel)\n",
        "travel/Trip.md": "# Trip\n\nOff to [[Kyoto]].\n", "Home.md": "# Home\n\nSee [[Kyoto]].\n",
    })  # fmt: skip
    s = open_services(vault)
    s.reindex()
    assert [b["source"] for b in s.graph.backlinks("travel/Kyoto.md")["backlinks"]] == [
        "travel/Trip.md"
    ]
    assert [b["source"] for b in s.graph.backlinks("Kyoto.md")["backlinks"]] == ["Home.md"]
    found = [f for f in run_lint(s.state).findings if f.rule == "ambiguous_link"]
    assert sorted(f.note for f in found) == ["Home.md", "travel/Trip.md"]
    assert all(f.severity == "warning" for f in found)
