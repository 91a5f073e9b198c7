"""Lint over the three real corpora and the obsidian-second-brain sample vault, indexed for real.

Every assertion is a fact checked by reading the vault (see docs/lint.md for the full account).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from sidecar.core.lint import Finding
from sidecar.services.context import Services
from sidecar.services.lint import LintReport, run_lint

SHARED = Path(__file__).resolve().parents[2] / "shared"
VAULTS = {
    "dendron-site": SHARED / "corpora" / "dendron-site" / "vault",
    "obsidian-tasks-docs": SHARED / "corpora" / "obsidian-tasks-docs" / "vault",
    "kepano-obsidian": SHARED / "corpora" / "kepano-obsidian" / "vault",
    "second-brain": SHARED / "peers" / "obsidian-second-brain" / "examples" / "sample-vault",
}

pytestmark = [pytest.mark.slow, pytest.mark.e2e]  # whole real vaults


@pytest.fixture(scope="module")
def linted(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, tuple[Services, LintReport]]]:
    out = {}
    for name, root in VAULTS.items():
        assert root.is_dir(), f"the shared corpora are required beside the repo: {root}"
        services = Services.open(root, tmp_path_factory.mktemp(name))
        services.reindex()
        out[name] = (services, run_lint(services.state))
    yield out
    for services, _ in out.values():
        services.close()


def by_rule(report: LintReport, rule: str) -> list[Finding]:
    return [f for f in report.findings if f.rule == rule]


def test_counts_agree_with_the_graph_queries(
    linted: dict[str, tuple[Services, LintReport]],
) -> None:
    for services, report in linted.values():
        graph = services.state.graph
        assert len(by_rule(report, "dangling_target")) == len(graph.dangling())
        assert [f.note for f in by_rule(report, "orphan")] == graph.orphans()


def test_no_typed_relation_findings_where_no_vault_uses_the_taxonomy(
    linted: dict[str, tuple[Services, LintReport]],
) -> None:
    typed = {"supersedes_cycle", "contradictory_pair", "missing_inverse", "stale_dependency"}
    for _services, report in linted.values():
        assert not typed & set(report.summary["by_rule"])


def test_kepano_templates_are_the_28_invalid_frontmatters_at_their_placeholder_line(
    linted: dict[str, tuple[Services, LintReport]],
) -> None:
    services, report = linted["kepano-obsidian"]
    invalid = by_rule(report, "invalid_frontmatter")
    assert len(invalid) == 28  # ATTRIBUTION.md: the Templates/ files, `created: {{date}}`
    for f in invalid:
        assert f.note.startswith("Templates/") and f.severity == "error"
        line = (services.vault.root / f.note).read_text("utf-8").splitlines()[f.line - 1]
        assert "{{" in line, (f.note, f.line, line)


def test_kepano_unknown_relations_are_its_media_properties(
    linted: dict[str, tuple[Services, LintReport]],
) -> None:
    _services, report = linted["kepano-obsidian"]
    found = by_rule(report, "unknown_relation")
    assert {f.relation for f in found} == {
        "artist", "cast", "director", "cuisine", "ingredients", "last", "maker", "system",
        "guests", "show", "host",
    }  # fmt: skip
    assert all(f.severity == "info" and f.line >= 2 for f in found)  # the property's own line


def test_tasks_docs_every_heading_anchor_resolves(
    linted: dict[str, tuple[Services, LintReport]],
) -> None:
    services, report = linted["obsidian-tasks-docs"]
    anchored = [x for n in services.state.notes.values() for x in n.links if x.anchor]
    assert len(anchored) > 100  # headings with ':' '?' '(' and emoji among them
    assert by_rule(report, "broken_anchor") == []
    # Every dangling target is one of the docs' 129 image embeds: the corpus carries no images
    # (ATTRIBUTION.md), so Obsidian would show each unresolved too. No note link dangles.
    dangling = by_rule(report, "dangling_target")
    assert len(dangling) == 129
    assert all(f.detail.endswith("is a missing attachment (no such file)") for f in dangling)
    selfs = by_rule(report, "self_edge")
    assert len(selfs) == 7 and all(f.relation == "link" for f in selfs)


def test_dendron_anchors_ranges_wildcards_and_embedded_headings(
    linted: dict[str, tuple[Services, LintReport]],
) -> None:
    _services, report = linted["dendron-site"]
    broken = by_rule(report, "broken_anchor")
    details = {f.detail for f in broken}
    # renamed to "Toggle Edges Links" in the target: a real stale anchor
    assert any("graph-panel#toggle-edges" in d for d in details)
    # `#init` lives in dendron.topic.publish.cli, which dendron.ref.cli embeds: not broken
    assert not any("dendron.ref.cli#init'" in d for d in details)
    # Dendron ranges check their start heading: `![[dendron.topic.pod.custom#summary,1:#*]]`
    assert not any(f.note == "changelog.past-versions.0-3-x.md" and f.line == 417 for f in broken)
    assert any("#specify-vault-location-when-creating-a-note,1:#*'" in d for d in details)
    assert report.seconds < 2.0


def test_second_brain_links_with_a_hyphen_for_an_em_dash(
    linted: dict[str, tuple[Services, LintReport]],
) -> None:
    _services, report = linted["second-brain"]
    dangling = Counter(f.target for f in by_rule(report, "dangling_target"))
    # the files are named "2026-04-27 — ..." (em dash); four links type " - "
    assert dangling["wiki/logs/2026-04-27 - Tide retention rebuild"] == 4
    assert dangling["Companies/Currentscale Labs"] == 4  # a note the sample never wrote
    unknown = {f.relation for f in by_rule(report, "unknown_relation")}
    assert unknown == {"related_people", "related_projects"}
