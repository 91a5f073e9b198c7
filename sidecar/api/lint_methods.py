"""Graph lint methods: ``lint.run`` (findings, optionally rendered) and ``lint.fix``.

The taxonomy and rule config come from the settings of the open vault (``[relations]`` and
``[lint]`` in config.toml) when the composition root put them on ``services``; with no settings
the defaults apply, so the methods work in tests and before the config exists.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from sidecar.api.registry import Agent, Method, NoParams, Params, VaultPath
from sidecar.core.lint import LintConfig, at_or_above
from sidecar.core.lint_format import render
from sidecar.core.paging import page
from sidecar.core.relations import Taxonomy
from sidecar.errors import UsageError
from sidecar.services.lint import apply_fixes, plan_fixes, run_lint

if TYPE_CHECKING:
    from sidecar.services.context import Services

Format = Literal["json", "text", "sarif", "markdown"]
Level = Literal["error", "warning", "info", "never"]


class LintParams(Params):
    format: Format = Field("json", description="Also return the report rendered as this format.")
    fail_on: Level = Field("error", description="Severity at or above which `failed` is true.")
    rules: list[str] | None = Field(None, description="Run only these rule ids.")
    uri_prefix: str = Field("", description="SARIF: the vault's path inside the repository.")


class SummaryParams(Params):
    severity: Level = Field("info", description="Only findings at least this severe.")
    rule: str | None = Field(None, description="Only this rule, e.g. dangling_target.")
    note: VaultPath | None = Field(None, description="Only notes under this path prefix.")
    limit: int = Field(20, ge=1, le=1000, description="Most findings per page.")
    cursor: str | None = Field(None, description="From next_cursor.")


class FixParams(Params):
    rule: str = Field("missing_inverse", description="The rule whose findings to fix.")
    write: bool = Field(False, description="Write the notes; otherwise only return the diffs.")


def setup(services: Services, rules: list[str] | None = None) -> tuple[Taxonomy, LintConfig]:
    """Taxonomy and rule config from ``services.settings`` (if any), validated here."""
    values: Any = getattr(getattr(services, "settings", None), "values", {})
    try:
        taxonomy = Taxonomy.from_config(
            dict(values.get("relations.pairs", {})),
            list(values.get("relations.symmetric", [])),
            list(values.get("relations.known", [])),
        )
        config = LintConfig.build(
            dict(values.get("lint.severity", {})), rules, list(values.get("lint.exclude", []))
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return taxonomy, config


def run(services: Services, p: LintParams) -> dict[str, Any]:
    taxonomy, config = setup(services, p.rules)
    report = run_lint(services.state, taxonomy, config)
    out = report.to_dict()
    out["failed"] = at_or_above(report.findings, p.fail_on)
    if p.format != "json":
        out["rendered"] = render(p.format, report.findings, report.summary,
                                 uri_prefix=p.uri_prefix)  # fmt: skip
    return out


_RANK = {"error": 0, "warning": 1, "info": 2}


def summary(services: Services, p: SummaryParams) -> dict[str, Any]:
    """Counts per rule and severity, then the findings, worst first, a page at a time."""
    taxonomy, config = setup(services, [p.rule] if p.rule else None)
    findings = run_lint(services.state, taxonomy, config).to_dict()["findings"]
    cut = _RANK.get(p.severity, 3)
    kept = [f for f in findings if _RANK.get(f["severity"], 3) <= cut
            and (not p.note or f["note"].startswith(p.note))]  # fmt: skip
    kept.sort(key=lambda f: (_RANK.get(f["severity"], 3), f["rule"], f["note"], f["line"]))
    counts: dict[str, dict[str, int]] = {}
    for f in kept:
        counts.setdefault(f["rule"], {}).setdefault(f["severity"], 0)
        counts[f["rule"]][f["severity"]] += 1
    slim = [{k: f[k] for k in ("rule", "severity", "note", "line", "target", "detail", "fix")
             if f.get(k) not in (None, "")} for f in kept]  # fmt: skip
    return {"counts": counts, **page(slim, p.limit, p.cursor).fields("findings")}


def fix(services: Services, p: FixParams) -> dict[str, Any]:
    taxonomy, config = setup(services, [p.rule])
    report = run_lint(services.state, taxonomy, config)
    root = services.vault.root
    try:
        plan = plan_fixes(services.state, root, report.findings, p.rule)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    written: list[str] = []
    failed: list[dict[str, str]] = []
    if p.write and plan.fixes:
        written, failed = apply_fixes(services.vault, plan.fixes)
        if written:
            services.reindex(paths=written)
    return {
        "rule": p.rule,
        "fixes": [
            {"path": f.path, "diff": f.diff, "findings": len(f.findings)} for f in plan.fixes
        ],
        "skipped": plan.skipped,
        "written": bool(written),
        "written_paths": written,
        "failed": failed,
    }


def last(services: Services, p: NoParams) -> dict[str, Any]:
    from sidecar.store.files import read_json

    return dict(read_json(services.files, "lint-last.json", {"ran_at": None}))


METHODS = [
    Method("lint.last", NoParams, last,
           "The daemon's last scheduled lint report (ran_at null if none yet)."),
    Method("lint.run", LintParams, run,
           "Graph lint: findings with rule, severity, note, line and fix hint."),
    Method("lint.summary", SummaryParams, summary, "Lint counts per rule, then the findings, "
           "worst first, in pages.", agent=Agent(
               "lint_summary", "Vault health",
               "Broken links, supersedes cycles, orphans and other problems: counts per rule, "
               "then findings, worst first.", params=("severity", "rule", "limit", "cursor"))),
    Method("lint.fix", FixParams, fix,
           "Plan (or with write, apply) the safe frontmatter fixes for one lint rule.",
           read_only=False),
]  # fmt: skip
