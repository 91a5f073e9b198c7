"""``--fix``: the frontmatter edit keeps every other byte, and the service writes only when asked."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from sidecar.api import Registry, build_registry, lint_methods
from sidecar.cli import inprocess as cli_client
from sidecar.cli.lint_cmd import lint as lint_cmd
from sidecar.core.fix import add_relation, basename_counts, link_name, unified_diff
from sidecar.core.frontmatter import load_frontmatter
from sidecar.core.links import frontmatter_links
from sidecar.core.lint import LintConfig, lint
from sidecar.services.lint import apply_fixes, plan_fixes
from sidecar.store.vaultfs import Vault
from tests.test_lint_rules import state_of

BODY = "# Note\r\n\r\nText with [[Link]] and a trailing space \n\tand a tab.\n"


def links_of(text: str) -> set[tuple[str, str]]:
    fm = load_frontmatter(text.splitlines(keepends=True))
    assert fm.error is None
    return {(x.relation, x.target) for x in frontmatter_links(fm.data)}


def assert_only_frontmatter_changed(old: str, new: str, changed_lines: int = 1) -> None:
    """Same body bytes; every old frontmatter line kept except at most ``changed_lines``."""
    old_fm, old_start = _split(old)
    new_fm, new_start = _split(new)
    assert old[old_start:] == new[new_start:]
    kept = [line for line in old_fm if line in new_fm]
    assert len(old_fm) - len(kept) <= changed_lines


def _split(text: str) -> tuple[list[str], int]:
    lines = text.splitlines(keepends=True)
    fm = load_frontmatter(lines)
    return lines[: fm.body_start], sum(len(x) for x in lines[: fm.body_start])


CASES = {
    "lf block list": (
        '---\ntitle: T\nsuperseded_by:\n  - "[[Z]]"\ntags: [a]\n---\n' + BODY,
        '---\ntitle: T\nsuperseded_by:\n  - "[[Z]]"\n  - "[[A]]"\ntags: [a]\n---\n' + BODY,
    ),
    "crlf new key": (
        "---\r\ntitle: T\r\nstatus: superseded\r\n---\r\n" + BODY,
        '---\r\ntitle: T\r\nstatus: superseded\r\nsuperseded_by:\r\n  - "[[A]]"\r\n---\r\n' + BODY,
    ),
    "no frontmatter, first line ending copied": (
        BODY,
        '---\r\nsuperseded_by:\r\n  - "[[A]]"\r\n---\r\n' + BODY,
    ),
    "relations block, new child": (
        '---\nrelations:\n  supersedes:\n    - "[[Y]]"\n---\n' + BODY,
        '---\nrelations:\n  supersedes:\n    - "[[Y]]"\n  superseded_by:\n    - "[[A]]"\n'
        "---\n" + BODY,
    ),
    "relations block, existing child": (
        '---\nrelations:\n  superseded_by: ["[[Z]]"]\n  decides: ["[[Q]]"]\n---\n' + BODY,
        '---\nrelations:\n  superseded_by: ["[[Z]]", "[[A]]"]\n  decides: ["[[Q]]"]\n---\n' + BODY,
    ),
    "flow list with comment": (
        "---\nsuperseded_by: ['[[Z]]', \"[[Y]]\"]  # keep me\n---\n" + BODY,
        '---\nsuperseded_by: [\'[[Z]]\', "[[Y]]", "[[A]]"]  # keep me\n---\n' + BODY,
    ),
    "scalar becomes list": (
        '---\nsuperseded_by: "[[Z]]"\n---\n' + BODY,
        '---\nsuperseded_by: ["[[Z]]", "[[A]]"]\n---\n' + BODY,
    ),
    "comments and dates untouched": (
        "---\n# top comment\ncreated: 2024-01-02 # a date\ntitle: 'x: y'\n\n---\n" + BODY,
        "---\n# top comment\ncreated: 2024-01-02 # a date\ntitle: 'x: y'\n\nsuperseded_by:\n"
        '  - "[[A]]"\n---\n' + BODY,
    ),
    "bom and no final newline": (
        "\ufeff---\nflow: [a, b]\n---\nlast line",
        '\ufeff---\nflow: [a, b]\nsuperseded_by: ["[[A]]"]\n---\nlast line',
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_add_relation_round_trip(name: str) -> None:
    old, expected = CASES[name]
    new = add_relation(old, "superseded_by", "A")
    assert new == expected
    assert_only_frontmatter_changed(old, new)
    assert links_of(new) == links_of(old) | {("superseded_by", "A")}


@pytest.mark.parametrize(
    "text",
    [
        "---\na: 1\nbody without a closing line\n",  # unclosed frontmatter
        "---\ncreated: {{date}}\n---\n",  # invalid YAML
        "---\nsuperseded_by: just words\n---\n",  # not a link value: adding one changes meaning
        "---\nsuperseded_by:\n  nested: map\n---\n",
        '---\nrelations: {superseded_by: ["[[Z]]"]}\n---\n',  # flow mapping with the key
        "---\nsuperseded_by: |\n  text\n---\n",
    ],
)
def test_unsafe_shapes_are_refused(text: str) -> None:
    assert add_relation(text, "superseded_by", "A") is None


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=300))
def test_any_body_is_kept_byte_for_byte(body: str) -> None:
    body = body.lstrip("\ufeff")
    if body.startswith("---"):
        body = "x" + body
    for head in ("", "---\ntitle: T\n---\n", "---\r\nrelations:\r\n  decides: []\r\n---\r\n"):
        new = add_relation(head + body, "superseded_by", "A")
        assert new is not None and new.endswith(head.split("---", 2)[-1].lstrip("\r\n") + body)


def test_link_name_is_short_when_unique() -> None:
    names = basename_counts(["a/Note.md", "b/Note.md", "c/Other.md"])
    assert link_name("c/Other.md", names) == "Other"
    assert link_name("a/Note.md", names) == "a/Note"


def test_unified_diff_marks_a_missing_final_newline() -> None:
    diff = unified_diff("n.md", "a\nb", "a\nc")
    assert diff.startswith("--- a/n.md\n+++ b/n.md\n")
    assert "\\ No newline at end of file" in diff


VAULT = {
    "New.md": '---\nrelations:\n  supersedes: ["[[Old]]"]\n---\n# New\n',
    "Old.md": "---\r\nstatus: superseded # since May\r\n---\r\n# Old\r\n\r\nBody\r\n",
    "App.md": '---\ndepends_on: ["[[Lib]]"]\n---\n',
    "Lib.md": "# Lib\n",
}


def write_vault(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).write_bytes(text.encode("utf-8"))


def test_plan_then_apply_round_trip(tmp_path: Path) -> None:
    write_vault(tmp_path, VAULT)
    state = state_of(VAULT)
    findings = lint(state.notes, state.graph, None, LintConfig.build(only=["missing_inverse"]))
    plan = plan_fixes(state, tmp_path, findings, "missing_inverse")
    assert [f.path for f in plan.fixes] == ["Lib.md", "Old.md"] and plan.skipped == []
    assert (tmp_path / "Old.md").read_bytes() == VAULT["Old.md"].encode()  # nothing written yet
    assert apply_fixes(Vault(tmp_path), plan.fixes) == (["Lib.md", "Old.md"], [])
    old = (tmp_path / "Old.md").read_bytes()
    assert old == (
        b'---\r\nstatus: superseded # since May\r\nsuperseded_by:\r\n  - "[[New]]"\r\n'
        b"---\r\n# Old\r\n\r\nBody\r\n"
    )
    after = {p: (tmp_path / p).read_text("utf-8") for p in VAULT}
    again = state_of(after)
    assert lint(again.notes, again.graph, None, LintConfig.build(only=["missing_inverse"])) == []


def test_stale_index_is_not_fixed(tmp_path: Path) -> None:
    write_vault(tmp_path, VAULT)
    state = state_of(VAULT)
    findings = lint(state.notes, state.graph, None, LintConfig.build(only=["missing_inverse"]))
    (tmp_path / "Lib.md").write_text("# Lib, edited after indexing\n", "utf-8")
    plan = plan_fixes(state, tmp_path, findings, "missing_inverse")
    assert [f.path for f in plan.fixes] == ["Old.md"]
    assert plan.skipped == [
        {"path": "Lib.md", "reason": "changed since it was indexed; reindex and lint again"}
    ]
    with pytest.raises(ValueError, match="no automatic fix"):
        plan_fixes(state, tmp_path, findings, "orphan")


@pytest.fixture
def registry_with_lint(monkeypatch: pytest.MonkeyPatch) -> None:
    """Until the lead wires lint into ``build_registry``, the CLI tests add it themselves."""

    def build() -> Registry:
        base = build_registry()
        if "lint.run" in base:
            return base
        return Registry([*base, *lint_methods.METHODS])

    monkeypatch.setattr(cli_client, "build_registry", build)


def test_cli_fix_shows_a_diff_then_writes(tmp_path: Path, registry_with_lint: Any) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    write_vault(root, VAULT)
    runner = CliRunner()
    shown = runner.invoke(lint_cmd, ["--vault", str(root), "--fix", "missing_inverse"])
    assert shown.exit_code == 0, shown.output
    assert '+  - "[[New]]"' in shown.stdout and '+  - "[[App]]"' in shown.stdout
    assert "2 notes would change" in shown.stderr
    assert (root / "Old.md").read_bytes() == VAULT["Old.md"].encode()
    wrote = runner.invoke(lint_cmd, ["--vault", str(root), "--fix", "missing_inverse", "--write"])
    assert wrote.exit_code == 0, wrote.output
    assert (root / "Lib.md").read_text("utf-8") == '---\nrequired_by:\n  - "[[App]]"\n---\n# Lib\n'
    check = runner.invoke(lint_cmd, ["--vault", str(root), "--json", "--rule", "missing_inverse"])
    assert check.exit_code == 0 and '"findings": []' in check.stdout


@pytest.mark.e2e  # mount(8) is a process
def test_fixes_on_a_full_disk_say_which_notes_were_not_written(tmp_path: Path) -> None:
    """A disk that fills part-way: the notes written are reported (and re-indexed), each one
    that was not says why, and every note is either its old or its new text, whole."""
    from sidecar.embed import TinyEmbedder
    from sidecar.services.context import Services
    from tests.test_storage_full import tmpfs

    with tmpfs(tmp_path / "vault", "1m") as vault:
        write_vault(vault, VAULT)
        s = Services.open(vault, tmp_path / "data", embedder=TinyEmbedder(64))
        try:
            s.reindex()
            filler = vault / "filler.bin"  # leaves no room for even one note's temp file
            with contextlib.suppress(OSError), open(filler, "wb") as fh:
                while True:
                    fh.write(b"\0" * 4096)
                    fh.flush()
            out = build_registry().call(s, "lint.fix", {"rule": "missing_inverse", "write": True})
        finally:
            s.close()
        assert out["written_paths"] == [] and not out["written"]
        assert sorted(f["path"] for f in out["failed"]) == ["Lib.md", "Old.md"]
        assert all("No space left" in f["error"] for f in out["failed"]), out["failed"]
        for rel, text in VAULT.items():
            assert (vault / rel).read_bytes() == text.encode("utf-8")
        assert not [p.name for p in vault.iterdir() if p.name.endswith(".tmp")]
