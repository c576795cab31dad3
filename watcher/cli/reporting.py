"""The options ``impact`` and ``upgrade`` share (what fails, what is shown, in which format,
which uses are accepted), declared once for both commands."""

from __future__ import annotations

from typing import Any

import click

from watcher.cli.options import Command

__all__ = ["FORMATS", "report_options", "report_options_of"]


def report_options(command: Command) -> Command:
    """The options ``impact`` and ``upgrade`` share: what fails, what is shown, how, and
    which uses are accepted."""
    for option in reversed((
        click.option("--all", "show_all", is_flag=True,
                     help="Also list the mentions (imports, annotations, marking decorators)."),
        click.option("--fail-on", type=click.Choice(["breaks", "check"]), default="breaks",
                     show_default=True, help="The surest tier that still exits 1."),
        click.option("--format", "fmt", type=click.Choice(FORMATS), default="text",
                     show_default=True,
                     help="sarif: SARIF 2.1.0 (code scanning); github: one workflow command "
                          "(annotation) a use."),
        click.option("--only-affecting", is_flag=True,
                     help="JSON: only the items with a use (the summary counts all)."),
        click.option("--baseline", "baselines", multiple=True, metavar="FILE",
                     help="Keep the uses a baseline file lists out of the tiers (counted as "
                          "suppressed); repeat for more."),
        click.option("--suppressions", type=click.Choice(["store"]),
                     help="store: also keep the uses marked \"Not us\" in Slack out of the "
                          "tiers."),
        click.option("--write-baseline", metavar="FILE",
                     help="Write every use in breaks and check to FILE as accepted, and "
                          "exit 0."),
    )):
        command = option(command)
    return command


FORMATS = ["text", "json", "sarif", "github"]


def report_options_of(options: dict[str, Any]) -> Any:
    """The ``ReportOptions`` the shared options give (imported only when a command runs)."""
    from watcher.cli.commands.impact import ReportOptions

    return ReportOptions(**options)
