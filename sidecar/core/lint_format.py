"""Lint findings as text, JSON, SARIF 2.1.0 and a Markdown report note; the docs' rule table.

Pure string building: the CLI decides about colour (a TTY) and where output goes. SARIF is what
CI code scanning ingests (GitHub, GitLab); its locations are paths relative to the repository, so
the caller passes the vault's place in it as ``uri_prefix``. The Markdown report is a note for
the vault: each offender is a ``[[wikilink]]``, and its frontmatter marks it as a lint report so
its own links do not hide orphans on the next run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from itertools import groupby
from typing import Any
from urllib.parse import quote

from sidecar.core.lint import NOTE_KEY, RULES, SEVERITIES, Finding, get_rule

FORMATS = ("text", "json", "sarif", "markdown")
_COLOURS = {"error": "31", "warning": "33", "info": "36"}
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _paint(text: str, code: str, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def summary_line(summary: Mapping[str, Any]) -> str:
    sev = summary.get("by_severity", {})
    counts = ", ".join(f"{sev.get(s, 0)} {s}" for s in SEVERITIES)
    total = summary.get("total", 0)
    return (
        f"{total} finding{'s' if total != 1 else ''} in {summary.get('notes', 0)} notes ({counts})"
    )


def render_text(findings: list[Finding], summary: Mapping[str, Any], color: bool = False) -> str:
    """Grouped by note, one line per finding, the fix hint beneath it."""
    out: list[str] = []
    for note, group in groupby(findings, key=lambda f: f.note):
        out.append(_paint(note, "1", color))
        for f in group:
            where = "fm" if f.line == 0 else str(f.line)
            level = _paint(f"{f.severity:<7}", _COLOURS[f.severity], color)
            out.append(f"  {where:>5}  {level} {f.rule:<19} {f.detail}")
            out.append(_paint(f"{'':>16}fix: {f.fix}", "2", color))
    out.append(summary_line(summary))
    return "\n".join(out)


def to_json(findings: Iterable[Finding], summary: Mapping[str, Any]) -> dict[str, Any]:
    return {"findings": [f.to_dict() for f in findings], "summary": dict(summary)}


def to_sarif(
    findings: Iterable[Finding], uri_prefix: str = "", version: str = ""
) -> dict[str, Any]:
    """A SARIF 2.1.0 log with one run; rules come from the ``RULES`` table."""
    index = {rule.id: i for i, rule in enumerate(RULES)}
    driver: dict[str, Any] = {
        "name": "sidecar-lint",
        "rules": [_sarif_rule(rule.id) for rule in RULES],
    }
    if version:
        driver["version"] = version
    results = [_sarif_result(f, index[f.rule], uri_prefix) for f in findings]
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0",
            "runs": [{"tool": {"driver": driver}, "results": results}]}  # fmt: skip


def _sarif_rule(rule_id: str) -> dict[str, Any]:
    rule = get_rule(rule_id)
    return {
        "id": rule.id,
        "name": "".join(part.title() for part in rule.id.split("_")),
        "shortDescription": {"text": rule.summary},
        "help": {"text": rule.fix, "markdown": rule.fix},
        "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
    }


def _sarif_result(f: Finding, rule_index: int, uri_prefix: str) -> dict[str, Any]:
    prefix = uri_prefix.strip("/")
    uri = quote(f"{prefix}/{f.note}" if prefix else f.note)
    key = "\x1f".join((f.rule, f.note, f.target or "", f.relation or ""))
    where = "frontmatter" if f.line == 0 else f"line {f.line}"
    return {
        "ruleId": f.rule,
        "ruleIndex": rule_index,
        "level": _SARIF_LEVEL[f.severity],
        "message": {"text": f"{f.note} ({where}): {f.detail}. Fix: {f.fix}"},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": uri},
            "region": {"startLine": max(f.line, 1)},
        }}],
        "partialFingerprints": {"sidecarFinding/v1": hashlib.sha1(key.encode()).hexdigest()},
    }  # fmt: skip


def _wikilink(path: str) -> str:
    return f"[[{path.removesuffix('.md')}]]"


def render_markdown(
    findings: list[Finding], summary: Mapping[str, Any], generated: str = ""
) -> str:
    """A report note: counts, then one section per rule listing each offender as a wikilink."""
    lines = ["---", f"{NOTE_KEY}:", "  report: true", "tags: [sidecar-lint]"]
    lines += [f"generated: {generated}"] if generated else []
    lines += ["---", "# Graph lint report", "", summary_line(summary), ""]
    lines += ["| rule | severity | findings |", "|---|---|---|"]
    by_rule = {rule.id: [f for f in findings if f.rule == rule.id] for rule in RULES}
    lines += [f"| {rid} | {_level(hits)} | {len(hits)} |" for rid, hits in by_rule.items() if hits]
    for rule in RULES:
        hits = by_rule[rule.id]
        if not hits:
            continue
        lines += ["", f"## {rule.id} ({len(hits)})", "", rule.summary, "", f"> {rule.fix}", ""]
        for f in hits:
            where = "frontmatter" if f.line == 0 else f"line {f.line}"
            lines.append(f"- [ ] {_wikilink(f.note)} ({where}): {_md_escape(f.detail)}")
    return "\n".join(lines) + "\n"


def _level(hits: list[Finding]) -> str:
    return "/".join(sorted({f.severity for f in hits}, key=SEVERITIES.index))


def _md_escape(text: str) -> str:
    """Details quote link syntax; keep it from becoming live links in the report."""
    return text.replace("[[", "\\[\\[").replace("]]", "\\]\\]").replace("|", "\\|")


def render_rules_markdown() -> str:
    """The rule table in docs/lint.md (a test checks the docs hold the current rendering)."""
    lines = ["| rule | default | finds | fix | --fix |", "|---|---|---|---|---|"]
    for rule in RULES:
        fixable = "yes" if rule.fixable else ""
        lines.append(f"| `{rule.id}` | {rule.severity} | {rule.summary} | {rule.fix} | {fixable} |")
    return "\n".join(lines) + "\n"


def render(fmt: str, findings: list[Finding], summary: Mapping[str, Any], **opts: Any) -> str:
    """Dispatch for callers that take the format as a string (RPC ``rendered``)."""
    if fmt == "text":
        return render_text(findings, summary, bool(opts.get("color", False)))
    if fmt == "markdown":
        return render_markdown(findings, summary, str(opts.get("generated", "")))
    if fmt == "sarif":
        doc = to_sarif(findings, str(opts.get("uri_prefix", "")), str(opts.get("version", "")))
        return json.dumps(doc, indent=2, ensure_ascii=False)
    if fmt == "json":
        return json.dumps(to_json(findings, summary), indent=2, ensure_ascii=False)
    raise ValueError(f"unknown lint format '{fmt}' (formats: {', '.join(FORMATS)})")
