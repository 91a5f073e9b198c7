"""The scheduled lint: run on ``lint.schedule`` (cron, default nightly), catch up at start-up if
a run was missed while the machine slept, keep the last report (``lint.last``), and, only if
the user configured ``lint.report_note``, write the Markdown report into the vault."""

from __future__ import annotations

import datetime as dt
from typing import Any

from apscheduler.triggers.cron import CronTrigger

from sidecar.api.lint_methods import setup
from sidecar.api.registry import confined
from sidecar.core.lint_format import render_markdown
from sidecar.errors import UsageError
from sidecar.services.context import Services
from sidecar.services.lint import run_lint
from sidecar.store.files import write_json

LAST = "lint-last.json"


def trigger(cron: str) -> CronTrigger:
    try:
        return CronTrigger.from_crontab(cron, timezone=dt.UTC)
    except ValueError as exc:
        raise UsageError(f"lint.schedule {cron!r} is not a cron expression: {exc}") from None


def missed(cron: str, last_run: str | None, now: dt.datetime) -> bool:
    """True when a scheduled time passed since the last run (or there never was one)."""
    if not last_run:
        return True
    since = dt.datetime.fromisoformat(last_run)
    due = trigger(cron).get_next_fire_time(None, since)
    return due is not None and due <= now


def run_scheduled(services: Services) -> dict[str, Any]:
    """Runs in the writer: it may write the report note and reindex it."""
    taxonomy, config = setup(services)
    report = run_lint(services.state, taxonomy, config)
    now = services.clock().isoformat(timespec="seconds")
    result = {"ran_at": now, **report.to_dict()}
    note = str(services.settings["lint.report_note"]) if services.settings else ""
    if note:  # written before the run is recorded: whoever sees the run can open its report
        rel = confined(note if note.endswith(".md") else note + ".md")
        text = render_markdown(report.findings, report.summary, now).encode()
        services.vault.write(rel, text)
        services.reindex(paths=[rel])
        result["report_note"] = rel
    write_json(services.files, LAST, result)
    services.meta["lint_last_run"] = now
    services.save_meta()
    return result
