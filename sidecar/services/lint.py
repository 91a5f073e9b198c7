"""Lint the open index, and plan or apply the mechanical fixes for its findings.

Linting reads only the in-memory ``IndexState`` (no LanceDB, no disk), so it costs milliseconds
and the daemon can run it after every batch. Fixes read the note from disk and refuse when the
file no longer matches what was indexed: a fix planned from stale findings could undo an edit.
Nothing is written unless ``apply_fixes`` is called (``--write``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sidecar.core.fix import add_relation, basename_counts, link_name, unified_diff
from sidecar.core.lint import Finding, LintConfig, get_rule, lint, summarize
from sidecar.core.note import content_hash
from sidecar.core.relations import Taxonomy
from sidecar.services.state import IndexState
from sidecar.store.files import Beneath
from sidecar.store.vaultfs import Vault


@dataclass(frozen=True, slots=True)
class LintReport:
    findings: list[Finding]
    summary: dict[str, Any]
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        summary = {**self.summary, "seconds": round(self.seconds, 4)}
        return {"findings": [f.to_dict() for f in self.findings], "summary": summary}


@dataclass(frozen=True, slots=True)
class FileFix:
    path: str
    old_text: str
    new_text: str
    findings: tuple[Finding, ...] = ()

    @property
    def diff(self) -> str:
        return unified_diff(self.path, self.old_text, self.new_text)


@dataclass(frozen=True, slots=True)
class FixPlan:
    fixes: list[FileFix]
    skipped: list[dict[str, str]] = field(default_factory=list)  # {path, reason}


def run_lint(
    state: IndexState, taxonomy: Taxonomy | None = None, config: LintConfig | None = None
) -> LintReport:
    started = time.perf_counter()
    with _locked(state):
        findings = lint(state.notes, state.graph, taxonomy, config)
    summary = summarize(findings)
    summary["notes_checked"] = len(state.notes)
    return LintReport(findings, summary, time.perf_counter() - started)


def _locked(state: IndexState) -> contextlib.AbstractContextManager[Any]:
    """The state's lock when it has one: the daemon's writer applies batches under it."""
    lock: contextlib.AbstractContextManager[Any] | None = getattr(state, "lock", None)
    return lock if lock is not None else contextlib.nullcontext()


# A fixer turns (note text, finding, link text of the finding's target) into new text, or None.
Fixer = Callable[[str, Finding, str], str | None]


def _fix_missing_inverse(text: str, finding: Finding, link: str) -> str | None:
    return add_relation(text, finding.relation or "", link) if finding.relation else None


FIXERS: Mapping[str, Fixer] = {"missing_inverse": _fix_missing_inverse}


def plan_fixes(
    state: IndexState, vault_root: Path, findings: Iterable[Finding], rule: str
) -> FixPlan:
    """One ``FileFix`` per note, applying every finding of ``rule`` for it in order."""
    get_rule(rule)
    fixer = FIXERS.get(rule)
    if fixer is None:
        raise ValueError(f"lint rule '{rule}' has no automatic fix (fixable: {', '.join(FIXERS)})")
    by_note: dict[str, list[Finding]] = {}
    for f in findings:
        if f.rule == rule and f.target:
            by_note.setdefault(f.note, []).append(f)
    plan = FixPlan([])
    with _locked(state):
        names = basename_counts(state.notes)
        hashes = {p: state.notes[p].content_hash for p in by_note if p in state.notes}
    for path, group in sorted(by_note.items()):
        fix = _plan_one(vault_root, path, hashes.get(path), group, fixer, names)
        if isinstance(fix, FileFix):
            plan.fixes.append(fix)
        else:
            plan.skipped.append({"path": path, "reason": fix})
    return plan


def _plan_one(
    root: Path,
    path: str,
    indexed_hash: str | None,
    findings: list[Finding],
    fixer: Fixer,
    names: Mapping[str, int],
) -> FileFix | str:
    try:
        data = Beneath(root).read_bytes(path)
        old = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot read: {exc}"
    if content_hash(data) != indexed_hash:
        return "changed since it was indexed; reindex and lint again"
    text = old
    for finding in findings:
        new = fixer(text, finding, link_name(finding.target or "", names))
        if new is None:
            return f"no safe automatic edit for: {finding.detail}"
        text = new
    return FileFix(path, old, text, tuple(findings))


def apply_fixes(vault: Vault, fixes: Iterable[FileFix]) -> tuple[list[str], list[dict[str, str]]]:
    """Write each fixed note atomically (never through a symlink), keeping its file mode; the
    paths written, and each note that could not be (a full disk) with why: a failed one is left
    whole, with its old text."""
    written: list[str] = []
    failed: list[dict[str, str]] = []
    for fix in fixes:
        try:
            current = vault.files.read_bytes(fix.path).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if current != fix.old_text:
            continue  # edited since the plan was made: leave the user's version alone
        try:
            vault.write(fix.path, fix.new_text.encode("utf-8"))
        except OSError as exc:
            failed.append({"path": fix.path, "error": exc.strerror or str(exc)})
            continue
        written.append(fix.path)
    return written, failed
