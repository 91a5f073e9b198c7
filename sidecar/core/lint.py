"""Graph lint: the rule table, findings, and grading by config and per-note overrides.

Rule ids are a public contract (config keys, SARIF ``ruleId``, ``--fix RULE``): never rename one.
The docs' rule table is generated from ``RULES`` (``lint_format.render_rules_markdown``).

Config (``[lint]`` in ``.sidecar/config.toml``) maps a rule id to a severity or ``"off"``; a note
can do the same for itself in its frontmatter::

    sidecar_lint:
      disable: [orphan]              # or: disable: all
      severity: {dangling_target: info}
"""

from __future__ import annotations

import difflib
import fnmatch
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from sidecar.core import lint_rules as r
from sidecar.core.graph import Graph
from sidecar.core.model import NoteRecord
from sidecar.core.relations import Taxonomy
from sidecar.core.resolve import Catalog

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
RANK = {"error": 3, "warning": 2, "info": 1}
NOTE_KEY = "sidecar_lint"


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str
    severity: Severity
    note: str
    target: str | None
    relation: str | None
    line: int  # 1-based; 0 means the frontmatter
    detail: str
    fix: str
    related: tuple[str, ...] = ()  # other notes involved (cycle members, candidates)

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "severity": self.severity, "note": self.note,
                "target": self.target, "relation": self.relation, "line": self.line,
                "detail": self.detail, "fix": self.fix, "related": list(self.related)}  # fmt: skip

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Finding:
        """Back from JSON (the CLI renders what the daemon sent)."""
        sev = _severity(str(d.get("severity")))
        return cls(str(d["rule"]), sev, str(d["note"]), d.get("target"), d.get("relation"),
                   int(d.get("line") or 0), str(d.get("detail", "")), str(d.get("fix", "")),
                   tuple(d.get("related") or ()))  # fmt: skip


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    severity: Severity
    summary: str
    fix: str
    check: Callable[[r.Context], Iterator[r.Hit]]
    fixable: bool = False


RULES: tuple[Rule, ...] = (
    Rule("invalid_frontmatter", "error", "The frontmatter is not valid YAML, so all its "
         "properties and relations are ignored.", "Fix the YAML (quote `{{...}}` template "
         "placeholders), or exclude template folders with `lint.exclude`.",
         r.invalid_frontmatter),
    Rule("supersedes_cycle", "error", "Notes supersede each other in a loop of three or more, "
         "so none of them is current.", "Remove the `supersedes`/`superseded_by` fact that "
         "closes the loop.", r.supersedes_cycle),
    Rule("contradictory_pair", "error", "A supersedes B and B supersedes A (in either "
         "spelling).", "Keep one direction: the newer note supersedes the older.",
         r.contradictory_pair),
    Rule("dangling_target", "warning", "A link or relation names a note or file that does not exist.",
         "Create the note, or correct the link.", r.dangling_target),
    Rule("ambiguous_link", "warning", "A link matches several notes by name; it goes where Obsidian goes.",
         "Write the folder path, e.g. `[[folder/Name]]`.", r.ambiguous_link),
    Rule("broken_anchor", "warning", "A link's `#heading` or `#^block` does not exist in the "
         "target note.", "Point the link at an existing heading or block id.", r.broken_anchor),
    Rule("self_edge", "warning", "A relation, or a body link without a heading, points at the "
         "note itself.", "Remove the link or point it at the intended note.", r.self_edge),
    Rule("stale_dependency", "warning", "A current note depends on a superseded, archived or "
         "deprecated note.", "Depend on the note that superseded it.", r.stale_dependency),
    Rule("unknown_relation", "info", "A frontmatter key holds links but is not a relation of the "
         "taxonomy.", "Rename the key, or declare it in `relations.pairs` (typed) or "
         "`relations.known`.", r.unknown_relation),
    Rule("missing_inverse", "info", "A states a typed relation to B, but B does not state the "
         "inverse back.", "Add the inverse to B's frontmatter (`sidecar lint --fix "
         "missing_inverse`).", r.missing_inverse, fixable=True),
    Rule("orphan", "info", "The note has no resolved link in or out.",
         "Link it from a related note or an index note.", r.orphan),
)  # fmt: skip
RULE_IDS = tuple(rule.id for rule in RULES)
# Rules that read only one note's text and the targets of its links: an editor can check an
# unsaved buffer with these; the others need the whole saved graph.
LOCAL_RULES = frozenset(
    {"invalid_frontmatter", "dangling_target", "ambiguous_link", "broken_anchor", "self_edge",
     "unknown_relation"}
)  # fmt: skip
_BY_ID = {rule.id: rule for rule in RULES}


def get_rule(rule_id: str) -> Rule:
    try:
        return _BY_ID[rule_id]
    except KeyError:
        close = difflib.get_close_matches(rule_id, RULE_IDS, n=2, cutoff=0.6)
        hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
        raise ValueError(
            f"unknown lint rule '{rule_id}'; {hint}(rules: {', '.join(RULE_IDS)})"
        ) from None


@dataclass(frozen=True, slots=True)
class LintConfig:
    """``severities``: rule -> severity or "off"; ``only``: run just these rules; ``exclude``:
    glob patterns of note paths never reported (``Templates/*``)."""

    severities: Mapping[str, str] = field(default_factory=dict)
    only: frozenset[str] | None = None
    exclude: tuple[str, ...] = ()

    @classmethod
    def build(
        cls,
        severities: Mapping[str, str] | None = None,
        only: Iterable[str] | None = None,
        exclude: Iterable[str] = (),
    ) -> LintConfig:
        """Validate at the edge: unknown rule ids and severities raise ``ValueError``."""
        sev = dict(severities or {})
        for rule_id, level in sev.items():
            get_rule(rule_id)
            if level not in (*SEVERITIES, "off"):
                raise ValueError(f"lint severity for {rule_id} must be error, warning, info or off")
        picked = None if only is None else frozenset(get_rule(x).id for x in only)
        return cls(sev, picked, tuple(exclude))

    def enabled(self, rule: Rule) -> bool:
        wanted = self.only is None or rule.id in self.only
        return wanted and self.severities.get(rule.id) != "off"

    def excluded(self, path: str) -> bool:
        return any(fnmatch.fnmatch(path, pat) or path.startswith(pat) for pat in self.exclude)


def lint(
    notes: Mapping[str, NoteRecord],
    graph: Graph,
    taxonomy: Taxonomy | None = None,
    config: LintConfig | None = None,
    *,
    focus: str | None = None,
    catalog: Catalog | None = None,
) -> list[Finding]:
    """Every finding of every enabled rule, graded, sorted by note, line and rule.

    With ``focus``, only that note's findings, and only from ``LOCAL_RULES``: ``graph`` then
    need hold just that note's edges (an unsaved buffer's, resolved against ``catalog``)."""
    config = config or LintConfig()
    ctx = r.Context(notes, graph, taxonomy or Taxonomy.default(), focus, catalog)
    out: list[Finding] = []
    for rule in RULES:
        if not config.enabled(rule) or (focus is not None and rule.id not in LOCAL_RULES):
            continue
        level = config.severities.get(rule.id, rule.severity)
        for hit in rule.check(ctx):
            if focus is not None and hit.note != focus:
                continue
            if config.excluded(hit.note) or hit.note in ctx.reports:
                continue
            finding = _grade(rule, hit, level, notes.get(hit.note))
            if finding is not None:
                out.append(finding)
    return sorted(out, key=lambda f: (f.note, f.line, f.rule, f.target or ""))


def _grade(rule: Rule, hit: r.Hit, level: str, note: NoteRecord | None) -> Finding | None:
    override = note_override(note.frontmatter if note else {}, rule.id)
    level = override or level
    if level == "off":
        return None
    return Finding(rule.id, _severity(level), hit.note, hit.target, hit.relation, hit.line, hit.detail,
                   hit.fix or rule.fix, hit.related)  # fmt: skip


def _severity(level: str) -> Severity:
    return "error" if level == "error" else "warning" if level == "warning" else "info"


def note_override(frontmatter: Mapping[str, Any], rule_id: str) -> str | None:
    """The note's own ``sidecar_lint`` say on a rule: "off", a severity, or None."""
    spec = frontmatter.get(NOTE_KEY)
    if not isinstance(spec, dict):
        return None
    disable = spec.get("disable", [])
    disabled = [disable] if isinstance(disable, str) else disable
    if isinstance(disabled, list) and ("all" in disabled or rule_id in disabled):
        return "off"
    levels = spec.get("severity")
    level = levels.get(rule_id) if isinstance(levels, dict) else None
    return level if level in (*SEVERITIES, "off") else None


def summarize(findings: Iterable[Finding]) -> dict[str, Any]:
    findings = list(findings)
    by_sev = Counter(f.severity for f in findings)
    by_rule = Counter(f.rule for f in findings)
    return {
        "total": len(findings),
        "by_severity": {s: by_sev.get(s, 0) for s in SEVERITIES},
        "by_rule": {rule.id: by_rule[rule.id] for rule in RULES if by_rule[rule.id]},
        "notes": len({f.note for f in findings}),
    }


def at_or_above(findings: Iterable[Finding], level: str) -> bool:
    """True when a finding is at least as severe as ``level`` (the ``--fail-on`` test)."""
    floor = RANK.get(level)
    return floor is not None and any(RANK[f.severity] >= floor for f in findings)
