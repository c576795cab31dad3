"""The global options every command of ``release-watch`` takes, before or after its name, and
the state they lead to (secrets, logging, the dependencies), built when a command first asks:
``SUBCOMMAND --help`` imports none of the heavy libraries."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from watcher.errors import ConfigError

__all__ = ["ATLAS_SECTIONS", "CONFIG_HELP", "IMPACT_SECTIONS", "LOG_FORMAT_HELP", "NOTES_SECTIONS",
           "VERBOSE_HELP", "Command", "State", "global_options"]

# The tables each offline command reads, the only ones it validates (``State.config``):
# ``classify`` and ``diff`` the rules and the notes' limits; ``impact`` those, the [impact]
# settings (the package index of an atlas not bundled) and the store (atlases and "Not us"
# read from it); ``atlas`` the [impact] settings and the store. The bot's commands validate all.
NOTES_SECTIONS = ("classify", "poll")
IMPACT_SECTIONS = ("classify", "poll", "impact", "store")
ATLAS_SECTIONS = ("impact", "store")


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
        setup_logging(verbose=self.verbose, log_format=self.log_format,
                      secrets=self.deps.secret_values())

    def config_file(self) -> Any:
        """The config file's path (None: the built-in defaults), logging set up first."""
        self.deps  # noqa: B018 - logging (with the secrets masked) first, then the config
        from watcher.config import find_config_file

        return find_config_file(self.config_path)

    def config(self, *sections: str, settle: bool = True) -> Any:
        """The configuration, every table validated; with ``sections`` (an offline command:
        ``"classify", "poll"``), those tables only (``load_sections``), each problem in them
        said as a whole validation says it, a table the file names that none is still one.
        With it the console script's start-up is over (``startup.settle``), unless the
        command settles later (``settle=False``: a poll, once its runtime is built)."""
        from watcher.config import load_config, load_sections
        from watcher.logs import register_secrets

        path = self.config_file()
        if sections:
            config = load_sections(path, sections)
            written = config.written.get("notifiers")  # as written: [[notifiers]] unread
            notifiers = written if isinstance(written, list) else []
        else:
            try:
                config = load_config(path)
            except ConfigError as error:
                # Every problem, not only the top-level ones: the notifiers' too, as `config
                # check` lists them.
                from watcher.validate import check_file

                problems = check_file(path, self.deps).problems
                raise ConfigError("\n".join(problems) or str(error)) from None
            notifiers = config.notifiers
        register_secrets(str(n["webhook_url"]) for n in notifiers
                         if isinstance(n, dict) and n.get("webhook_url"))
        if settle:
            from watcher.cli import startup

            startup.settle()
        return config


CONFIG_HELP = ("Config file (else $RELEASE_WATCH_CONFIG, else ./release-watch.toml, else the "
                "built-in defaults).")
VERBOSE_HELP = "Debug logging and tracebacks on errors."
LOG_FORMAT_HELP = "Format of log lines on stderr."


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
                     help=LOG_FORMAT_HELP),
        click.option("-v", "--verbose", "verbose", is_flag=True, default=False,
                     expose_value=False, callback=_late_global, help=VERBOSE_HELP),
        click.option("--config", "config_path", metavar="PATH", default=None,
                     expose_value=False, callback=_late_global, help=CONFIG_HELP),
    ):
        command = option(command)
    return command


