"""The ``release-watch`` command line (also ``python -m watcher``).

Exit codes (contract): 0 success; 1 a repo or notifier failed after its retries (the others
still ran); 2 usage or configuration error. Errors are one line on stderr; ``--verbose`` adds
the traceback. Heavy modules are imported inside the commands that need them, so ``--help``
and a console-only poll start fast.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Sequence
from typing import Any

import click

from watcher.cli.groups import atlas_group, config_group, store_group
from watcher.cli.options import (
    CONFIG_HELP,
    IMPACT_SECTIONS,
    LOG_FORMAT_HELP,
    NOTES_SECTIONS,
    VERBOSE_HELP,
    State,
    global_options,
)
from watcher.cli.reporting import report_options, report_options_of
from watcher.cli.teardown import Teardown, quiet_stdout
from watcher.errors import ConfigError, StorePathError, WatcherError

logger = logging.getLogger("watcher")

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="release-watch", prog_name="release-watch",
                      message="%(prog)s %(version)s")
@click.option("--config", "config_path", metavar="PATH", help=CONFIG_HELP)
@click.option("-v", "--verbose", is_flag=True, help=VERBOSE_HELP)
@click.option("--log-format", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help=LOG_FORMAT_HELP)
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, verbose: bool, log_format: str) -> None:
    """Tells you what changed in PyTorch and PyTorch/XLA releases, by subsystem."""
    ctx.obj = State(config_path, verbose, log_format, ctx.obj)


@cli.command()
@global_options
@click.option("--repo", "repos", multiple=True, metavar="OWNER/NAME",
              help="Poll only this repo (repeatable); it need not be in the config.")
@click.option("--dry-run", is_flag=True, help="Compute and print; send nothing, change no state.")
@click.option("--short", is_flag=True,
              help="Console output short: headline, counts, BC-breaking changes, deprecations "
                   "and a link to the rest.")
@click.pass_obj
def poll(state: State, repos: tuple[str, ...], dry_run: bool, short: bool) -> None:
    """One poll of every watched repo, then exit."""
    from watcher.config import REPO_NAME

    for name in repos:
        if not REPO_NAME.match(name):
            raise click.BadParameter(f"{name!r} is not OWNER/NAME", param_hint="--repo")
    from watcher.cli.commands.poll import run_poll

    # The start-up ends once the runtime is built (``run_poll`` settles it), not at the config.
    code = run_poll(state.config(settle=False), state.deps, list(repos), dry_run=dry_run,
                    short=short)
    Teardown.end(code)  # the store and the notifiers are closed by now
    sys.exit(code)


@cli.command()
@global_options
@click.pass_obj
def run(state: State) -> None:
    """The long-running daemon: scheduled polls, digests and retries until SIGTERM/SIGINT."""
    from watcher.app import build_daemon
    from watcher.daemon import run_daemon

    config = state.config()
    if not state.verbose:
        logging.getLogger().setLevel(logging.INFO)
    sys.exit(run_daemon(build_daemon(config, state.deps)))


@cli.command()
@global_options
@click.option("--notifier", metavar="NAME", help="Only this digest notifier.")
@click.option("--dry-run", is_flag=True, help="Print the digests; send nothing, clear nothing.")
@click.pass_obj
def digest(state: State, notifier: str | None, dry_run: bool) -> None:
    """Build and send pending digests now."""
    from watcher.cli.commands.digest import run_digest

    sys.exit(run_digest(state.config(), state.deps, notifier=notifier, dry_run=dry_run))


@cli.command()
@global_options
@click.argument("path", metavar="PATH|-")
@click.option("--repo", metavar="OWNER/NAME",
              help="The repo the notes belong to: the subsystem model's prior (pytorch/xla: "
                   "XLA areas first) and where bare PR references link.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("--explain", is_flag=True, help="Say why each item got its subsystem and kind.")
@click.pass_obj
def classify(state: State, path: str, repo: str | None, fmt: str, explain: bool) -> None:
    """Parse and classify one release-notes markdown file (offline)."""
    from watcher.cli.commands.offline import run_classify

    run_classify(state.config(*NOTES_SECTIONS), state.deps.stdout, path, repo=repo, fmt=fmt,
                 explain=explain)
    Teardown.end(EXIT_OK)  # reads a file, writes no state: nothing to tear down


@cli.command()
@global_options
@click.argument("paths", metavar="NOTES...", nargs=-1)
@click.option("--code", "code", multiple=True, required=True, metavar="DIR",
              help="A codebase to check (repeat for more).")
@click.option("--release", metavar="TAG",
              help="The release a single notes file is (else read from its file name, "
                   "v2.7.0.md, or its first heading).")
@click.option("--range", "span", metavar="FROM..TO",
              help="Every release the store knows from FROM to TO, both included "
                   "(v2.6.0..v2.10.0), in place of notes files: every use of each change, "
                   "under the release that makes it.")
@click.option("--repo", metavar="OWNER/NAME", help="The repo the notes belong to.")
@report_options
@click.pass_obj
def impact(state: State, /, paths: tuple[str, ...], code: tuple[str, ...], release: str | None,
           span: str | None, repo: str | None, **options: Any) -> None:
    """Which items of release notes touch a codebase, every use as path:line with its tier
    (offline).

    Exit 1 when a use is in tier breaks (--fail-on check: also check), else 0."""
    from watcher.impact.code import gc_paused

    if bool(paths) == bool(span):
        raise click.UsageError("give notes files (or -) or --range FROM..TO, one of the two")
    # One run, start to end, makes no garbage worth a cyclic collection: the collector would
    # only walk the modules, the notes' items and the scan's rows again and again (a tenth of
    # a run over a large codebase).
    with gc_paused():
        from watcher.cli.commands.impact import (
            new_analyzer,
            notes_files,
            releases_in_range,
            run_impact,
            stored_releases,
        )

        config = state.config(*IMPACT_SECTIONS)
        notes = (releases_in_range(stored_releases(config, repo), span) if span
                 else notes_files(list(paths), release))
        touched = run_impact(config, state.deps.stdout, notes, new_analyzer(list(code)),
                             repo=repo, options=report_options_of(options))
        Teardown.end(EXIT_FAILED if touched else EXIT_OK)  # before the collector resumes
    sys.exit(EXIT_FAILED if touched else EXIT_OK)


@cli.command()
@global_options
@click.option("--code", "code", multiple=True, required=True, metavar="DIR",
              help="A codebase to check (repeat for more); its pins say the version it is on.")
@click.option("--from", "start", metavar="VERSION",
              help="The version the code is on (excluded), in place of its pins.")
@click.option("--to", "end", metavar="VERSION",
              help="The version to upgrade to (included); default the newest release.")
@click.option("--repo", metavar="OWNER/NAME",
              help="Whose releases: pytorch/pytorch (torch, the default) or pytorch/xla "
                   "(torch_xla).")
@report_options
@click.pass_obj
def upgrade(state: State, /, code: tuple[str, ...], start: str | None, end: str | None,
            repo: str | None, **options: Any) -> None:
    """What breaks in the code between the version it is on and --to: the check a CI job runs.

    FROM (the code's pins, or --from) is excluded, TO (--to, else the newest release) is
    included; the notes of every release in between are fetched from GitHub (conditional
    requests, kept in the store; GITHUB_TOKEN raises the limit). Exit 1 when a use is in
    tier breaks (--fail-on check: also check), else 0; 2 when the pins disagree or name no
    version (pass --from)."""
    from watcher.impact.code import gc_paused

    with gc_paused():
        from watcher.cli.commands.upgrade import run_upgrade

        touched = run_upgrade(state.config(), state.deps, sys.stderr, list(code), start=start,
                              end=end, repo=repo, options=report_options_of(options))
        Teardown.end(EXIT_FAILED if touched else EXIT_OK)
    sys.exit(EXIT_FAILED if touched else EXIT_OK)


@cli.command()
@global_options
@click.argument("old", metavar="OLD")
@click.argument("new", metavar="NEW")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("--exit-code", is_flag=True,
              help="Exit 1 when an item was added, removed or changed, 0 when none was "
                   "(as git diff --exit-code).")
@click.pass_obj
def diff(state: State, old: str, new: str, fmt: str, exit_code: bool) -> None:
    """Item-level diff of two release-notes files (offline)."""
    from watcher.cli.commands.offline import run_diff

    changed = run_diff(state.config(*NOTES_SECTIONS), state.deps.stdout, old, new, fmt=fmt)
    Teardown.end(EXIT_FAILED if exit_code and changed else EXIT_OK)  # as classify
    sys.exit(EXIT_FAILED if exit_code and changed else EXIT_OK)


@cli.command()
@global_options
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--check", is_flag=True,
              help="Exit 1 when the last successful poll is older than 3 poll intervals.")
@click.pass_obj
def status(state: State, as_json: bool, check: bool) -> None:
    """What the store knows: per repo polls, errors, releases; pending deliveries."""
    from watcher.cli.commands.status import run_status

    sys.exit(run_status(state.config(), state.deps, as_json=as_json, check=check))




for group in (atlas_group, config_group, store_group):
    cli.add_command(group)


def main(argv: Sequence[str] | None = None, deps: Any = None) -> int:
    """Entry point; returns the exit code (``sys.exit`` in the console script)."""
    verbose = "-v" in (argv or sys.argv[1:]) or "--verbose" in (argv or sys.argv[1:])
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="release-watch",
                 standalone_mode=False, obj=deps)
    except SystemExit as done:
        return int(done.code or 0) if not isinstance(done.code, str) else EXIT_FAILED
    except click.exceptions.Abort:
        click.echo("release-watch: aborted", err=True)
        return 130
    except click.ClickException as error:
        error.show()
        return EXIT_USAGE
    except (ConfigError, StorePathError) as error:  # a store path that cannot be one: usage
        _report(error, verbose)
        return EXIT_USAGE
    except WatcherError as error:
        _report(error, verbose)
        return EXIT_FAILED
    except BrokenPipeError:  # `release-watch status | head`: the reader has what it wanted
        return EXIT_OK
    return EXIT_OK


def _report(error: Exception, verbose: bool) -> None:
    """Each line of the error on stderr, secrets masked and controls escaped: it may quote
    what the operator typed (a ``--config`` path, a notifier name) or what a server said.
    Split on line feeds only: ``splitlines`` would also break at a form feed or U+2028 inside
    a quoted value."""
    from watcher.logs import redact
    from watcher.untrusted import escape_controls

    if verbose:
        logger.error("traceback follows", exc_info=error)
    for line in (redact(str(error)).strip("\n") or type(error).__name__).split("\n"):
        click.echo(f"release-watch: {escape_controls(line)}", err=True)


def console_script() -> None:
    Teardown.console = True
    code = main()
    quiet_stdout()
    sys.exit(code)


def dumps(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, default=str)
