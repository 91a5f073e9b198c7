"""Each lint rule over a small vault written here: it fires where it should, and only there."""

from __future__ import annotations

import hashlib

import pytest

from sidecar.core.lint import RULE_IDS, RULES, Finding, LintConfig, at_or_above, lint, summarize
from sidecar.core.model import NoteRecord
from sidecar.core.note import parse_note
from sidecar.core.relations import Taxonomy
from sidecar.services.state import IndexState


def state_of(files: dict[str, str]) -> IndexState:
    """Parse and resolve notes exactly as the indexer does, without a store."""
    records = []
    for path, text in files.items():
        digest = hashlib.sha1(text.encode()).hexdigest()
        records.append(NoteRecord.from_parsed(parse_note(path, text, digest), 0, len(text)))
    state = IndexState.empty()
    state.apply(records, [])
    return state


def run(
    files: dict[str, str], rule: str | None = None, taxonomy: Taxonomy | None = None
) -> list[Finding]:
    state = state_of(files)
    config = LintConfig.build(only=[rule] if rule else None)
    return lint(state.notes, state.graph, taxonomy, config)


def fm(**relations: str | list[str]) -> str:
    """Frontmatter with relation keys holding wikilinks."""
    lines = ["---"]
    for key, value in relations.items():
        items = [value] if isinstance(value, str) else value
        links = ", ".join('"[[' + v + ']]"' for v in items)
        lines.append(f"{key}: [{links}]")
    return "\n".join([*lines, "---", ""])


# No rule fires here: typed facts stated from both ends, every link and anchor valid.
CLEAN = {
    "Old.md": fm(superseded_by="New") + "# Old\n\nSee [[New]].\n",
    "New.md": fm(supersedes="Old", relates_to="App", required_by="App")
    + "# New\n\n## Design\n\nBack to [[Old#Old]]. ^blk\n",
    "App.md": fm(depends_on="New", relates_to="New") + "[[New#Design]] and [[New#^blk]]\n",
}


def test_clean_vault_has_no_findings() -> None:
    assert run(CLEAN) == []


@pytest.mark.parametrize("rule", RULE_IDS)
def test_rule_is_silent_on_a_clean_vault(rule: str) -> None:
    assert run(CLEAN, rule) == []


def test_rules_table_is_complete_and_stable() -> None:
    assert set(RULE_IDS) == {
        "unknown_relation", "dangling_target", "self_edge", "supersedes_cycle",
        "contradictory_pair", "missing_inverse", "ambiguous_link", "broken_anchor", "orphan",
        "stale_dependency", "invalid_frontmatter",
    }  # fmt: skip
    assert all(r.summary and r.fix and r.severity in ("error", "warning", "info") for r in RULES)


def test_unknown_relation_once_per_note_and_key_with_a_suggestion() -> None:
    found = run({"A.md": fm(supercedes=["B", "C"], categories="B"), "B.md": "", "C.md": ""},
                "unknown_relation")  # fmt: skip
    assert [(f.note, f.relation, f.line, f.severity) for f in found] == [
        ("A.md", "supercedes", 2, "info")  # the property's line
    ]
    assert "did you mean 'supersedes'" in found[0].fix


def test_user_defined_relations_are_known() -> None:
    files = {"A.md": fm(blocks="B"), "B.md": fm(blocked_by="A")}
    tax = Taxonomy.from_config({"blocks": "blocked_by"}, [], [])
    assert run(files, "unknown_relation", tax) == []
    assert run(files, "missing_inverse", tax) == []
    assert len(run(files, "unknown_relation")) == 2


def test_dangling_target_in_body_and_frontmatter() -> None:
    found = run({"A.md": fm(depends_on="Gone") + "\nText [[Missing]].\n"}, "dangling_target")
    assert [(f.line, f.relation, f.target) for f in found] == [
        (2, "depends_on", "Gone"), (5, "link", "Missing")]  # fmt: skip


def test_dangling_wikilink_to_a_name_with_a_hash_says_how_to_link_it() -> None:
    # Obsidian reads `#` in a wikilink as a heading, so [[Other (draft) #1]] names a note
    # "Other (draft)": the link is broken in Obsidian too, and a Markdown link reaches the note.
    files = {"A.md": "[[Other (draft) #1]] [[Gone#x]]\n", "Sub/Other (draft) #1.md": "hi\n"}
    found = run(files, "dangling_target")
    assert [f.target for f in found] == ["Gone#x", "Other (draft)#1"]
    assert "#" not in found[0].fix
    assert "[Other (draft) #1](Sub/Other%20%28draft%29%20%231.md)" in found[1].fix
    link = "[x](Sub/Other%20%28draft%29%20%231.md)\n"
    assert run({**files, "A.md": link}, "dangling_target") == []


def test_self_edge_typed_and_bare_but_not_own_heading() -> None:
    files = {"A.md": fm(supersedes="A") + "# A\n\n[[A]] and [[A#A]] and [[#A]]\n"}
    found = run(files, "self_edge")
    assert [(f.relation, f.line) for f in found] == [("supersedes", 2), ("link", 6)]


def test_supersedes_cycle_of_three_is_one_finding() -> None:
    files = {"A.md": fm(supersedes="B"), "B.md": fm(supersedes="C"), "C.md": fm(supersedes="A")}
    found = run(files, "supersedes_cycle")
    assert len(found) == 1
    assert found[0].related == ("A.md", "B.md", "C.md")
    assert "A.md -> B.md -> C.md -> A.md" in found[0].detail
    assert found[0].severity == "error"


def test_supersedes_cycle_of_five_mixing_both_spellings() -> None:
    files = {
        "N1.md": fm(supersedes="N2"),
        "N2.md": fm(superseded_by="N1", supersedes="N3"),
        "N3.md": fm(supersedes="N4"),
        "N4.md": "",
        "N5.md": fm(superseded_by="N4", supersedes="N1"),  # N4 supersedes N5, N5 supersedes N1
    }
    found = run(files, "supersedes_cycle")
    assert [f.related for f in found] == [("N1.md", "N2.md", "N3.md", "N4.md", "N5.md")]
    assert found[0].detail.endswith("N1.md -> N2.md -> N3.md -> N4.md -> N5.md -> N1.md")


def test_a_chain_is_not_a_cycle_and_two_cycles_are_two_findings() -> None:
    chain = {f"C{i}.md": fm(supersedes=f"C{i + 1}") for i in range(50)}
    assert run(chain, "supersedes_cycle") == []
    two = {"A.md": fm(supersedes="B"), "B.md": fm(supersedes="C"), "C.md": fm(supersedes="A"),
           "X.md": fm(supersedes="Y"), "Y.md": fm(supersedes="Z"), "Z.md": fm(supersedes="X")}  # fmt: skip
    assert len(run(two, "supersedes_cycle")) == 2


def test_contradictory_pair_counts_both_spellings_once() -> None:
    direct = {"A.md": fm(supersedes="B"), "B.md": fm(supersedes="A")}
    spelled = {"A.md": fm(supersedes="B", superseded_by="B"), "B.md": ""}
    for files in (direct, spelled):
        found = run(files, "contradictory_pair")
        assert [(f.note, f.related) for f in found] == [("A.md", ("A.md", "B.md"))]
    assert run(direct, "supersedes_cycle") == []  # a two-note loop is reported once, as a pair


def test_missing_inverse_sits_on_the_note_to_edit() -> None:
    files = {"A.md": fm(supersedes="B", caused="C"), "B.md": "", "C.md": fm(caused_by="A")}
    found = run(files, "missing_inverse")
    assert [(f.note, f.relation, f.target) for f in found] == [("B.md", "superseded_by", "A.md")]


def test_missing_inverse_symmetric_and_never_for_plain_links() -> None:
    files = {"A.md": fm(contradicts="B") + "[[B]]\n", "B.md": "", "C.md": fm(categories="A")}
    found = run(files, "missing_inverse")
    assert [(f.note, f.relation, f.target) for f in found] == [("B.md", "contradicts", "A.md")]


def test_ambiguous_link_lists_candidates() -> None:
    files = {"x/Same.md": "", "y/Same.md": "", "A.md": "[[Same]]\n"}
    found = run(files, "ambiguous_link")
    assert [(f.note, f.related) for f in found] == [("A.md", ("x/Same.md", "y/Same.md"))]
    assert "[[x/Same]]" in found[0].fix
    assert "Obsidian opens x/Same.md" in found[0].detail


def test_broken_anchor_headings_blocks_and_dendron_ranges() -> None:
    files = {
        "T.md": "# Title\n\n## What's new?\n\ntext ^real\n\n## summary\n",
        "A.md": "[[T#What's new?]] [[T#whats-new]] [[T#^real]] [[T#Title#What's new?]]\n"
        "[[T#summary,1:#*]] [[T#*]]\n\n[[T#No such heading]] [[T#^fake]] [[T#nope,1:#*]]\n",
    }
    found = run(files, "broken_anchor")
    assert [(f.line, f.detail.split(": ")[1]) for f in found] == [
        (4, "T.md has no heading 'No such heading'"),
        (4, "T.md has no block '^fake'"),
        (4, "T.md has no heading 'nope,1:#*'"),
    ]


def test_broken_anchor_sees_headings_of_embedded_notes() -> None:
    files = {"Part.md": "## Inner\n", "Page.md": "![[Part]]\n", "A.md": "[[Page#Inner]]\n"}
    assert run(files, "broken_anchor") == []


def test_orphan_ignores_broken_links_and_lint_reports() -> None:
    files = {
        "Lonely.md": "[[Nowhere]]\n",
        "A.md": "[[B]]\n",
        "B.md": "",
        "Report.md": "---\nsidecar_lint: {report: true}\n---\n[[Lonely]] [[Alone]]\n",
        "Alone.md": "",
    }
    assert [f.note for f in run(files, "orphan")] == ["Alone.md", "Lonely.md"]


def test_stale_dependency_by_fact_or_status() -> None:
    files = {
        "Old.md": "",
        "New.md": fm(supersedes="Old"),
        "Dead.md": "---\nstatus: deprecated\n---\n",
        "App.md": fm(depends_on=["Old", "Dead", "New"]),
        "Gone.md": '---\nstatus: archived\ndepends_on: ["[[Old]]"]\n---\n',  # not current
        "Lib.md": '---\nstatus: "[[Obsolete]]"\nrequired_by: ["[[App2]]"]\n---\n',
        "App2.md": "",
    }
    found = run(files, "stale_dependency")
    assert [(f.note, f.target) for f in found] == [
        ("App.md", "Dead.md"), ("App.md", "Old.md"), ("Lib.md", "Lib.md")]  # fmt: skip
    old = next(f for f in found if f.target == "Old.md")
    assert "superseded by New.md" in old.detail and "[[New]]" in old.fix
    assert "App2.md depends on Lib.md" in found[2].detail


def test_invalid_frontmatter_points_at_the_yaml_line() -> None:
    files = {"T.md": "---\ntitle: x\ncreated: {{date}}\n---\nbody\n", "Ok.md": "---\na: 1\n---\n"}
    found = run(files, "invalid_frontmatter")
    assert [(f.note, f.line, f.severity) for f in found] == [("T.md", 3, "error")]


def test_config_regrades_disables_and_excludes() -> None:
    state = state_of({"A.md": "[[Gone]]\n", "Templates/T.md": "[[Gone]]\n"})
    cfg = LintConfig.build({"dangling_target": "error", "orphan": "off"}, exclude=["Templates/"])
    found = lint(state.notes, state.graph, None, cfg)
    assert [(f.rule, f.note, f.severity) for f in found] == [("dangling_target", "A.md", "error")]
    assert at_or_above(found, "error") and not at_or_above([], "info")
    with pytest.raises(ValueError, match="unknown lint rule"):
        LintConfig.build({"no_such_rule": "off"})
    with pytest.raises(ValueError, match="severity"):
        LintConfig.build({"orphan": "fatal"})


def test_per_note_frontmatter_override() -> None:
    files = {
        "Quiet.md": "---\nsidecar_lint:\n  disable: [orphan]\n---\n[[Gone]]\n",
        "Graded.md": "---\nsidecar_lint: {severity: {dangling_target: info}}\n---\n[[Gone]]\n",
        "Silent.md": "---\nsidecar_lint: {disable: all}\n---\n[[Gone]]\n",
    }
    found = run(files)
    assert [(f.rule, f.note, f.severity) for f in found] == [
        ("orphan", "Graded.md", "info"),
        ("dangling_target", "Graded.md", "info"),
        ("dangling_target", "Quiet.md", "warning"),
    ]


def test_summary_counts() -> None:
    found = run({"A.md": "[[Gone]]\n", "B.md": ""})
    summary = summarize(found)
    assert summary["total"] == 3
    assert summary["by_severity"] == {"error": 0, "warning": 1, "info": 2}
    assert summary["by_rule"] == {"dangling_target": 1, "orphan": 2}
