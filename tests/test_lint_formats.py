"""Lint output: JSON shape, SARIF 2.1.0 structure, the Markdown report, text, the docs table,
and the CLI's exit status."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sidecar.api import Registry
from sidecar.api.lint_methods import LintParams, run
from sidecar.cli.lint_cmd import lint as lint_cmd
from sidecar.core.lint import RULE_IDS, RULES, Finding, LintConfig, lint, summarize
from sidecar.core.lint_format import (
    render_markdown,
    render_rules_markdown,
    render_text,
    to_json,
    to_sarif,
)
from tests.test_lint_fix import registry_with_lint, write_vault
from tests.test_lint_rules import fm, state_of

__all__ = ["registry_with_lint"]  # a fixture, used by name

DOCS = Path(__file__).resolve().parents[1] / "docs" / "lint.md"
VAULT = {
    "A.md": fm(supersedes="B") + "# A\n\n[[Gone]] and [[B#Nope]]\n",
    "B.md": fm(supersedes="C"),
    "C.md": fm(supersedes="A"),
    "notes/Lone one.md": "",
    "T.md": "---\ncreated: {{date}}\n---\n",
}


@pytest.fixture
def findings() -> list[Finding]:
    state = state_of(VAULT)
    return lint(state.notes, state.graph)


def test_json_shape(findings: list[Finding]) -> None:
    doc = to_json(findings, summarize(findings))
    assert set(doc) == {"findings", "summary"}
    keys = {"rule", "severity", "note", "target", "relation", "line", "detail", "fix"}
    assert all(keys <= set(f) for f in doc["findings"])
    assert json.loads(json.dumps(doc)) == doc
    assert [Finding.from_dict(f) for f in doc["findings"]] == findings
    assert doc["summary"]["by_rule"]["supersedes_cycle"] == 1


def test_sarif_structure(findings: list[Finding]) -> None:
    log = to_sarif(findings, uri_prefix="docs/vault", version="0.1.0")
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    (run_,) = log["runs"]
    driver = run_["tool"]["driver"]
    assert driver["name"] and driver["version"] == "0.1.0"
    assert [r["id"] for r in driver["rules"]] == list(RULE_IDS)
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"] and rule["help"]["text"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
    assert len(run_["results"]) == len(findings)
    for result, finding in zip(run_["results"], findings, strict=True):
        assert result["ruleId"] == finding.rule
        assert driver["rules"][result["ruleIndex"]]["id"] == finding.rule
        assert result["level"] in ("error", "warning", "note")
        assert finding.note in result["message"]["text"]
        (loc,) = result["locations"]
        uri = loc["physicalLocation"]["artifactLocation"]["uri"]
        assert uri.startswith("docs/vault/") and " " not in uri and not uri.startswith("/")
        assert loc["physicalLocation"]["region"]["startLine"] >= 1
        assert all(re.fullmatch(r"[0-9a-f]{40}", v) for v in result["partialFingerprints"].values())
    lone = next(r for r in run_["results"] if "Lone one" in r["message"]["text"])
    assert lone["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "docs/vault/notes/Lone%20one.md"
    )
    assert lone["locations"][0]["physicalLocation"]["region"]["startLine"] == 1  # frontmatter


def test_markdown_report_links_every_offender(findings: list[Finding]) -> None:
    text = render_markdown(findings, summarize(findings))
    assert text.startswith("---\nsidecar_lint:\n  report: true\n")
    for f in findings:
        assert f"[[{f.note.removesuffix('.md')}]]" in text
    assert "## supersedes_cycle (1)" in text and "## orphan (2)" in text
    links = re.findall(r"(?<!\\)\[\[([^\]]+)\]\]", text)
    assert set(links) == {f.note.removesuffix(".md") for f in findings}  # details are escaped


def test_report_note_in_the_vault_does_not_hide_orphans(findings: list[Finding]) -> None:
    report = render_markdown(findings, summarize(findings))
    state = state_of({**VAULT, "Lint report.md": report})
    again = lint(state.notes, state.graph)
    assert again == findings


def test_text_groups_by_note_and_colours_only_when_asked(findings: list[Finding]) -> None:
    plain = render_text(findings, summarize(findings))
    assert "\x1b[" not in plain
    assert plain.splitlines()[0] == "A.md"
    assert re.search(r"^\s+\d+\s+error\s+supersedes_cycle", plain, re.M)  # a property's line
    assert plain.splitlines()[-1].startswith(f"{len(findings)} findings in 5 notes")
    assert "\x1b[31m" in render_text(findings, summarize(findings), color=True)


def test_docs_hold_the_current_rule_table() -> None:
    assert render_rules_markdown() in DOCS.read_text("utf-8")
    assert all(f"`{r.id}`" in render_rules_markdown() for r in RULES)


class FakeServices:
    def __init__(self, files: dict[str, str]) -> None:
        self.state = state_of(files)


def test_lint_run_method_renders_and_reports_failure() -> None:
    services: Any = FakeServices(VAULT)
    out = run(services, LintParams(format="sarif", fail_on="error", uri_prefix="v"))
    assert out["failed"] is True and json.loads(out["rendered"])["version"] == "2.1.0"
    clean = run(services, LintParams(rules=["orphan"], fail_on="warning"))
    assert clean["failed"] is False and "rendered" not in clean
    assert LintConfig.build(only=["orphan"]).only == frozenset({"orphan"})


@pytest.mark.parametrize(
    ("args", "status"),
    [
        ([], 1),  # errors exist, default --fail-on error
        (["--fail-on", "never"], 0),
        (["--rule", "orphan"], 0),
        (["--rule", "orphan", "--fail-on", "info"], 1),
        (["--rule", "no_such_rule"], 2),
        (["--json", "--format", "sarif"], 2),
    ],
)
def test_cli_exit_status(
    tmp_path: Path, registry_with_lint: Registry, args: list[str], status: int
) -> None:
    root = tmp_path / "vault"
    (root / "notes").mkdir(parents=True)
    write_vault(root, VAULT)
    result = CliRunner().invoke(lint_cmd, ["--vault", str(root), *args])
    assert result.exit_code == status, result.output


def test_cli_formats(tmp_path: Path, registry_with_lint: Registry) -> None:
    root = tmp_path / "vault"
    (root / "notes").mkdir(parents=True)
    write_vault(root, VAULT)
    runner = CliRunner()
    as_json = runner.invoke(lint_cmd, ["--vault", str(root), "--json"])
    assert json.loads(as_json.stdout)["summary"]["by_rule"]["supersedes_cycle"] == 1
    sarif = runner.invoke(lint_cmd, ["--vault", str(root), "--format", "sarif"])
    assert json.loads(sarif.stdout)["runs"][0]["results"]
    out = tmp_path / "report.md"
    md = runner.invoke(lint_cmd, ["--vault", str(root), "--format", "markdown", "-o", str(out)])
    assert md.stdout == "" and "[[A]]" in out.read_text("utf-8")
    text = runner.invoke(lint_cmd, ["--vault", str(root)])
    assert "supersedes_cycle" in text.stdout and "\x1b[" not in text.stdout
