"""The ``release-watch`` command line (also ``python -m watcher``).

Exit codes (contract): 0 success; 1 a repo or notifier failed after its retries (the others
still ran); 2 usage or configuration error. Errors are one line on stderr; ``--verbose`` adds
the traceback. Heavy modules are imported inside the commands that need them, so ``--help``
and a console-only poll start fast.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TypeVar

import click

from watcher.errors import ConfigError, StorePathError, WatcherError

logger = logging.getLogger("watcher")

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class State:
    """The global options. What they lead to (the environment's secrets, logging, the
    dependencies) is built when a command first asks, so ``SUBCOMMAND --help`` imports none of
    the heavy libraries."""

    def __init__(self, config_path: str | None, verbose: bool, log_format: str,
                 deps: Any) -> None:
        self.config_path = config_path
        self.verbose = verbose
        self.log_format = log_format
        self._deps = deps
        self._logging = False

    @property
    def deps(self) -> Any:
        if self._deps is None:
            from watcher.deps import Dependencies

            self._deps = Dependencies()
        if not self._logging:
            self.setup_logging()
        return self._deps

    def setup_logging(self) -> None:
        from watcher.logs import setup_logging

        self._logging = True
        secrets = self.deps.get_secrets()
        values = [s.get_secret_value() for s in (secrets.github_token, secrets.slack_bot_token,
                                                  secrets.slack_webhook_url,
                                                  secrets.slack_app_token,
                                                  secrets.slack_signing_secret) if s is not None]
        setup_logging(verbose=self.verbose, log_format=self.log_format, secrets=values)

    def config_file(self) -> Any:
        """The config file's path (None: the built-in defaults), logging set up first."""
        self.deps  # noqa: B018 - logging (with the secrets masked) first, then the config
        from watcher.config import find_config_file

        return find_config_file(self.config_path)

    def config(self) -> Any:
        from watcher.config import load_config
        from watcher.logs import register_secrets

        path = self.config_file()
        try:
            config = load_config(path)
        except ConfigError as error:
            # Every problem, not only the top-level ones: the notifiers' too, as `config check`
            # lists them.
            from watcher.validate import check_file

            problems = check_file(path, self.deps).problems
            raise ConfigError("\n".join(problems) or str(error)) from None
        register_secrets(str(n["webhook_url"]) for n in config.notifiers if n.get("webhook_url"))
        return config


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"release-watch: {message}", err=True)
    sys.exit(code)


_CONFIG_HELP = ("Config file (else $RELEASE_WATCH_CONFIG, else ./release-watch.toml, else the "
                "built-in defaults).")
_VERBOSE_HELP = "Debug logging and tracebacks on errors."
_LOG_FORMAT_HELP = "Format of log lines on stderr."


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="release-watch", prog_name="release-watch",
                      message="%(prog)s %(version)s")
@click.option("--config", "config_path", metavar="PATH", help=_CONFIG_HELP)
@click.option("-v", "--verbose", is_flag=True, help=_VERBOSE_HELP)
@click.option("--log-format", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help=_LOG_FORMAT_HELP)
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, verbose: bool, log_format: str) -> None:
    """Tells you what changed in PyTorch and PyTorch/XLA releases, by subsystem."""
    ctx.obj = State(config_path, verbose, log_format, ctx.obj)


def _late_global(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """A global option given after the subcommand (``poll --config X``): it overrides the one
    before, and logging is set up again if it changed."""
    state = ctx.find_object(State)
    if state is None or value is None or value is False:
        return value  # not given here (or parsed without running, as tests of deploy files do)
    if param.name == "config_path":
        state.config_path = value
        return value
    if param.name == "verbose":
        state.verbose = True
    else:
        state.log_format = value
    state.setup_logging()
    return value


Command = TypeVar("Command", bound=Callable[..., Any])


def global_options(command: Command) -> Command:
    """The group's options, accepted after the subcommand too (the contract says --config is
    global; people type it at the end)."""
    for option in (
        click.option("--log-format", "log_format", type=click.Choice(["text", "json"]),
                     default=None, expose_value=False, callback=_late_global,
                     help=_LOG_FORMAT_HELP),
        click.option("-v", "--verbose", "verbose", is_flag=True, default=False,
                     expose_value=False, callback=_late_global, help=_VERBOSE_HELP),
        click.option("--config", "config_path", metavar="PATH", default=None,
                     expose_value=False, callback=_late_global, help=_CONFIG_HELP),
    ):
        command = option(command)
    return command


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

    sys.exit(run_poll(state.config(), state.deps, list(repos), dry_run=dry_run, short=short))


@cli.command()
@global_options
@click.pass_obj
def run(state: State) -> None:
    """The long-running daemon: scheduled polls, digests and retries until SIGTERM/SIGINT."""
    from watcher.daemon import run_daemon

    config = state.config()
    if not state.verbose:
        logging.getLogger().setLevel(logging.INFO)
    sys.exit(run_daemon(config, state.deps))


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

    run_classify(state.config(), state.deps.stdout, path, repo=repo, fmt=fmt, explain=explain)


@cli.command()
@global_options
@click.argument("paths", metavar="NOTES...", nargs=-1)
@click.option("--code", "code", multiple=True, required=True, metavar="DIR",
              help="A codebase to check (repeat for more).")
@click.option("--release", metavar="TAG",
              help="The release a single notes file is (else read from its file name, "
                   "v2.7.0.md, or its first heading).")
@click.option("--range", "span", metavar="FROM..TO",
              help="Every release the store knows from FROM to TO (v2.5.0..v2.10.0), in "
                   "place of notes files: each use once, with the first release that breaks it.")
@click.option("--repo", metavar="OWNER/NAME", help="The repo the notes belong to.")
@click.option("--all", "show_all", is_flag=True,
              help="Also list the mentions (imports, annotations, marking decorators).")
@click.option("--fail-on", type=click.Choice(["breaks", "check"]), default="breaks",
              show_default=True, help="The surest tier that still exits 1.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.pass_obj
def impact(state: State, paths: tuple[str, ...], code: tuple[str, ...], release: str | None,
           span: str | None, repo: str | None, show_all: bool, fail_on: str, fmt: str) -> None:
    """Which items of release notes touch a codebase, every use as path:line with its tier
    (offline).

    Exit 1 when a use is in tier breaks (--fail-on check: also check), else 0."""
    from watcher.cli.commands.impact import (
        releases_in_range,
        run_impact,
        stored_releases,
    )

    if bool(paths) == bool(span):
        raise click.UsageError("give notes files (or -) or --range FROM..TO, one of the two")
    config = state.config()
    releases = releases_in_range(stored_releases(config, repo), span) if span else None
    touched = run_impact(config, state.deps.stdout, list(paths), list(code), repo=repo,
                         fmt=fmt, release=release, releases=releases, show_all=show_all,
                         fail_on=fail_on)
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

    changed = run_diff(state.config(), state.deps.stdout, old, new, fmt=fmt)
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


_PACKAGE_HELP = "The package whose API it is (torch_xla: pytorch/xla's)."


@cli.group("atlas")
def atlas_group() -> None:
    """The API atlas of a package release, read from its wheel: build one, or diff two."""


@atlas_group.command("build")
@global_options
@click.argument("what", metavar="WHEEL|VERSION")
@click.option("--package", type=click.Choice(["torch", "torch_xla"]), default="torch",
              show_default=True, help=_PACKAGE_HELP)
@click.pass_obj
def atlas_build(state: State, what: str, package: str) -> None:
    """Build the atlas of a wheel file, or of a version (bundled, stored, or fetched from the
    package index and built), keep it in the store and print what it holds."""
    from watcher.cli.commands.atlas import run_atlas_build

    sys.exit(run_atlas_build(state.config(), state.deps, what, package))


@atlas_group.command("diff")
@global_options
@click.argument("old", metavar="OLD")
@click.argument("new", metavar="NEW")
@click.option("--package", type=click.Choice(["torch", "torch_xla"]), default="torch",
              show_default=True, help=_PACKAGE_HELP)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.pass_obj
def atlas_diff(state: State, old: str, new: str, package: str, fmt: str) -> None:
    """The API changes from OLD to NEW (each a wheel, an atlas file or a version): names
    removed, parameters removed or made keyword-only, defaults changed, new deprecations."""
    from watcher.cli.commands.atlas import run_atlas_diff

    sys.exit(run_atlas_diff(state.config(), state.deps, old, new, package=package, fmt=fmt))


@cli.group("config")
def config_group() -> None:
    """Configuration commands."""


@config_group.command("check")
@global_options
@click.option("--online", is_flag=True,
              help="Also ask GitHub (/rate_limit) and Slack (auth.test) whether the tokens "
                   "work; exit 1 if one does not.")
@click.pass_obj
def config_check(state: State, online: bool) -> None:
    """Validate everything `run` would; print the config with secrets masked."""
    from watcher.cli.commands.config_check import run_config_check

    sys.exit(run_config_check(state.config_file(), state.deps, online=online))


@cli.group("store")
def store_group() -> None:
    """Store commands: check its database, start over, or copy it into PostgreSQL."""


@store_group.command("check")
@global_options
@click.pass_obj
def store_check(state: State) -> None:
    """Run SQLite's integrity check over the store; exit 1 if it is damaged."""
    from watcher.cli.commands.store import run_store_check

    sys.exit(run_store_check(state.config(), state.deps))


@store_group.command("reinit")
@global_options
@click.option("--force", is_flag=True, help="Start over even if the store is sound.")
@click.pass_obj
def store_reinit(state: State, force: bool) -> None:
    """Start over with an empty store (a lost or damaged one is set aside, not deleted)."""
    from watcher.cli.commands.store import run_store_reinit

    sys.exit(run_store_reinit(state.config(), state.deps, force=force))


@store_group.command("copy")
@global_options
@click.option("--to", "url", metavar="URL", default=None,
              help="The PostgreSQL database (postgresql://…); default: [store] url.")
@click.pass_obj
def store_copy(state: State, url: str | None) -> None:
    """Copy the embedded store (store.path) into PostgreSQL; run again, it copies nothing new."""
    from watcher.cli.commands.store_copy import run_store_copy

    sys.exit(run_store_copy(state.config(), state.deps, url))


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


def _quiet_stdout() -> None:
    """Flush standard output now; when its reader has gone (``| head``), point it at
    /dev/null, so the interpreter's own flush at exit has nowhere to fail and prints no
    "Exception ignored ... BrokenPipeError" (the recipe of the Python docs, signal module,
    "Note on SIGPIPE")."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


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
    code = main()
    _quiet_stdout()
    sys.exit(code)


def dumps(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, default=str)
