"""``sidecar lint``: graph lint with CI-friendly output and exit status, and ``--fix``.

It declares ``--vault``/``--json`` itself (the same as ``main.common``) and imports ``fail``
late, so ``main.py`` can import this module at its top without an import cycle. Its own small
runner instead of ``run_method`` because the exit status depends on the result
(1 when a finding at or above ``--fail-on`` exists) and because the output is rendered here, where
the terminal (colour) and the working directory (SARIF paths relative to the repository) are
known. The daemon only sends findings.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from sidecar.cli.base import fail as _fail
from sidecar.cli.client import connect
from sidecar.config import find_vault, load_settings
from sidecar.errors import SidecarError, UsageError
from sidecar.transports.client import Client

# core.lint_format.FORMATS, spelled out: importing it loads every rule (tests check they agree)
FORMATS = ("text", "json", "sarif", "markdown")


@click.command()
@click.option("--vault", "vault", metavar="PATH", help="The vault (else SIDECAR_VAULT, "
              "else the nearest parent holding .obsidian/ or .sidecar/).")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default=None,
    help="Output format (default text; --json is --format json).",
)
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning", "info", "never"]),
    default="error",
    show_default=True,
    help="Exit 1 when a finding at or above this severity exists.",
)
@click.option("--rule", "rules", multiple=True, metavar="RULE", help="Only this rule (repeatable).")
@click.option(
    "--fix",
    "fix_rule",
    metavar="RULE",
    help="Show the safe fixes for RULE's findings as a diff (e.g. missing_inverse).",
)
@click.option("--write", is_flag=True, help="With --fix: write the fixed notes.")
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the report to this file instead of stdout.",
)
@click.option(
    "--color/--no-color", default=None, help="Colour the text report (default: on a TTY)."
)
def lint(
    vault: str | None, as_json: bool, fmt: str | None, fail_on: str, rules: tuple[str, ...],
    fix_rule: str | None, write: bool, output: Path | None, color: bool | None,
) -> None:  # fmt: skip
    """Check the link graph: dangling links, broken anchors, supersedes cycles, missing inverse
    relations and more (docs/lint.md lists every rule)."""
    if as_json and fmt not in (None, "json"):
        _fail(UsageError("--json and --format are exclusive"), True)
    if write and not fix_rule:
        _fail(UsageError("--write needs --fix RULE"), as_json)
    fmt = "json" if as_json else fmt or "text"
    try:
        root = find_vault(vault, os.environ, Path.cwd())
        client = connect(load_settings(root, os.environ))
        try:
            if fix_rule:
                _fix(client, fix_rule, write, fmt == "json")
                return
            result = client.call("lint.run", {"fail_on": fail_on, "rules": list(rules) or None})
        finally:
            client.close()
    except SidecarError as exc:
        _fail(exc, fmt == "json")
    text = _render(result, fmt, root, bool(color) if output is not None else color)
    if output is not None:
        output.write_text(text, "utf-8")
        click.echo(f"wrote {output}", err=True)
    else:
        click.echo(text, nl=not text.endswith("\n"))
    sys.exit(1 if result.get("failed") else 0)


def _render(result: dict[str, Any], fmt: str, root: Path, color: bool | None) -> str:
    if fmt == "json":
        return json.dumps(result, indent=2, ensure_ascii=False)
    from sidecar.core.lint import Finding  # the rules: 80 ms to import, for formatting only
    from sidecar.core.lint_format import render

    findings = [Finding.from_dict(f) for f in result["findings"]]
    if color is None:
        color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    prefix = _repo_prefix(root)
    return render(fmt, findings, result["summary"], color=color, uri_prefix=prefix)


def _repo_prefix(root: Path) -> str:
    """The vault's path from the working directory, which in CI is the repository root."""
    try:
        rel = root.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return ""
    return "" if rel == "." else rel


def _fix(client: Client, rule: str, write: bool, as_json: bool) -> None:
    result = client.call("lint.fix", {"rule": rule, "write": write})
    if as_json:
        click.echo(json.dumps(result, indent=2, ensure_ascii=False))
        return
    for fix in result["fixes"]:
        click.echo(fix["diff"], nl=False)
    for skip in result["skipped"]:
        click.echo(f"skipped {skip['path']}: {skip['reason']}", err=True)
    count = len(result["fixes"])
    for failed in result.get("failed", []):
        click.echo(f"not written {failed['path']}: {failed['error']}", err=True)
    if write:
        click.echo(f"wrote {len(result['written_paths'])} of {count} notes", err=True)
    elif count:
        click.echo(f"{count} notes would change; run again with --write to apply", err=True)
    else:
        click.echo(f"nothing to fix for {rule}", err=True)
