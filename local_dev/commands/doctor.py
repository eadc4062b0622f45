"""``iris doctor``: check the configuration, name each problem with its fix."""

from __future__ import annotations

import sys

import click

MARKS = {"ok": "✓", "warning": "!", "error": "✗"}


def print_report(report: object) -> int:
    """Print findings; returns the number of errors."""
    findings = report.findings  # type: ignore[attr-defined]
    for finding in findings:
        click.echo(f"{MARKS[finding.level]} {finding.check:<14}  {finding.message}")
        if finding.fix and finding.level != "ok":
            click.echo(f"  {'':<14}  fix: {finding.fix}")
    errors = sum(f.level == "error" for f in findings)
    warnings = sum(f.level == "warning" for f in findings)
    click.echo(f"{errors} error(s), {warnings} warning(s).")
    return errors


@click.command("doctor")
@click.option("--online", is_flag=True,
              help="Also make a 1-token call to the model and read Telegram's webhook info.")
@click.option("--cloud", is_flag=True,
              help="Judge the configuration for a Modal deployment (Turso, S3, sandboxes).")
def doctor(online: bool, cloud: bool) -> None:
    """Check the configuration: config file, database, object store, model and key,
    HTTP API key, Telegram/Slack tokens, sandbox credentials, MCP servers, web search,
    vision, voice replies and execute_code.

    Exits 1 when anything is wrong.

    Example: iris doctor --online
    """
    from local_dev.doctor import run_checks

    if print_report(run_checks(online=online, cloud=cloud)):
        sys.exit(1)


commands = [doctor]
