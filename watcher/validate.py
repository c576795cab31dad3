"""Everything ``run`` needs, checked before anything is scheduled or sent: each notifier's keys,
its digest schedule and timezone (read by APScheduler's own CronTrigger, as ``run`` reads them),
the secrets and URLs it needs, and the classification rules.

``config check`` lists every problem and ``run`` refuses to start on any; both go through
``_check``, so what one accepts the other runs. A problem does not hide the others: a broken
top-level table leaves the notifiers to be checked, and a notifier's misspelled key leaves the
rest of its table (its token, its timezone) to be checked, all in one run.

A notifier is checked by building it, as the composition root (``watcher.app``) builds the ones
it runs, with the same ``notifier_configs`` and ``handler_context`` here: below the root, which
hands ``validated_notifiers`` to the daemon.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from watcher.config import Config, checked_file
from watcher.delivery import (
    HandlerContext,
    Notifier,
    NotifierConfig,
    notifier_config,
    secret_values,
)
from watcher.deps import Dependencies
from watcher.errors import ConfigError

logger = logging.getLogger(__name__)

_SALVAGE_ROUNDS = 3  # a table's keys dropped and checked again at most this often


@dataclass
class Checked:
    """A config file as ``config check`` sees it: ``config`` and ``notifiers`` are the ones
    ``run`` would use only when ``problems`` is empty."""

    config: Config | None
    notifiers: dict[str, Notifier] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def configured_notifier(raw: dict[str, Any], config: Config, environ: Mapping[str, str] | None,
                        ) -> tuple[type[Notifier], NotifierConfig]:
    """One ``[[notifiers]]`` table validated, its secrets masked in every log line from now on."""
    from watcher.logs import register_secrets

    cls, cfg = notifier_config(raw, config.source, environ)
    register_secrets(secret_values(cfg))
    return cls, cfg


def notifier_configs(config: Config, environ: Mapping[str, str] | None = None,
                     ) -> list[tuple[type[Notifier], NotifierConfig]]:
    return [configured_notifier(raw, config, environ) for raw in config.notifiers]


def handler_context(config: Config, deps: Dependencies) -> HandlerContext:
    return HandlerContext(secrets=deps.get_secrets(), base_dir=config.base_dir,
                          stdout=deps.stdout, slack_api_url=config.slack.api_url,
                          sleep=deps.sleep, monotonic=deps.epoch, code_link=config.impact.link,
                          code_links={codebase.name: codebase.link
                                      for codebase in config.impact_codebases() if codebase.link},
                          watch_order=tuple(repo.name for repo in config.repos))


def schedule_problems(config: NotifierConfig) -> list[str]:
    """A bad timezone and a bad cron are two problems; both are reported."""
    # Read by APScheduler's own trigger, as ``run`` reads them: imported only to check (a
    # poll builds its notifiers here too, and never loads the scheduler).
    from watcher.config import digest_trigger, digest_zone

    problems, zone = [], config.digest_timezone
    try:
        digest_zone(zone)
    except ConfigError as error:
        problems.append(str(error))
        zone = "UTC"  # so the schedule is still checked on its own
    if config.digest_schedule is not None:
        try:
            digest_trigger(config.digest_schedule, zone)
        except ConfigError as error:
            problems.append(str(error))
    return problems


def _salvaged(raw: dict[str, Any], config: Config, deps: Dependencies,
              error: ConfigError) -> tuple[Notifier | None, list[str]]:
    """A notifier table that was refused, checked again without the keys it was refused for,
    so its other problems are found in the same run; None when nothing is left to check (an
    unknown type, a required key missing)."""
    problems: list[str] = []
    for _ in range(_SALVAGE_ROUNDS):
        dropped = error.keys - {"name", "type"}
        if not dropped & set(raw):
            return None, problems
        raw = {key: value for key, value in raw.items() if key not in dropped}
        try:
            cls, cfg = configured_notifier(raw, config, deps.environ)
        except ConfigError as again:
            problems += str(again).splitlines()
            error = again
            continue
        return cls(cfg, handler_context(config, deps)), problems
    return None, problems


def _notifier_problems(notifier: Notifier, source: str) -> list[str]:
    where = f"{source}: notifier {notifier.name!r}"
    return [f"{where}: {problem}"
            for problem in schedule_problems(notifier.config) + notifier.problems()]


def _notifiers(config: Config, deps: Dependencies) -> tuple[dict[str, Notifier], list[str]]:
    """The notifiers whose keys are valid, and one line per problem found so far."""
    context = handler_context(config, deps)
    notifiers: dict[str, Notifier] = {}
    problems: list[str] = []
    for raw in config.notifiers:
        try:
            cls, cfg = configured_notifier(raw, config, deps.environ)
        except ConfigError as error:
            problems += str(error).splitlines()
            salvaged, more = _salvaged(raw, config, deps, error)
            problems += more
            if salvaged is not None:
                problems += _notifier_problems(salvaged, config.source)
            continue
        notifier = cls(cfg, context)
        problems += _notifier_problems(notifier, config.source)
        notifiers[cfg.name] = notifier
    return notifiers, problems


def config_problems(config: Config, deps: Dependencies) -> list[str]:
    """Every problem, one line each; empty when ``run`` would start."""
    return _check(config, deps)[1]


def config_warnings(config: Config, notifiers: dict[str, Notifier]) -> list[str]:
    """What works but is likely not what was meant, one line each."""
    return [f"{config.source}: notifier {name!r}: mode = \"digest\" and no digest_schedule: "
            "`run` never sends its digest, only `release-watch digest` does (from cron, say); "
            'set digest_schedule, e.g. "0 9 * * MON"'
            for name, notifier in notifiers.items()
            if notifier.config.mode == "digest" and notifier.config.digest_schedule is None]


def validated_notifiers(config: Config, deps: Dependencies) -> dict[str, Notifier]:
    """The notifiers ``run`` uses, or a ConfigError with one line per problem anywhere; the
    warnings are logged."""
    notifiers, problems = _check(config, deps)
    if problems:
        raise ConfigError("\n".join(problems))
    for warning in config_warnings(config, notifiers):
        logger.warning("%s", warning)
    return notifiers


def check_file(path: Path | None, deps: Dependencies) -> Checked:
    """Everything wrong with a config file, the top-level tables and every notifier alike."""
    config, problems = checked_file(path)
    if config is None:  # not TOML: nothing more can be read from it
        return Checked(None, problems=problems)
    notifiers, more = _check(config, deps)
    problems += more
    return Checked(None if problems else config, notifiers, problems,
                   config_warnings(config, notifiers))


def impact_problems(config: Config) -> list[str]:
    """Each ``[impact] code`` entry that is not a readable directory, one line each."""
    problems = []
    named = {codebase.path: codebase.name for codebase in config.impact.codebases}
    for entry, path in config.impact_roots():
        key = f'impact.codebases "{named[entry]}" path' if entry in named else "impact.code"
        if not path.exists():
            problems.append(f"{key}: {entry!r} does not exist ({path})")
        elif not path.is_dir():
            problems.append(f"{key}: {entry!r} is not a directory ({path})")
        elif not os.access(path, os.R_OK | os.X_OK):
            problems.append(f"{key}: {entry!r} cannot be read ({path})")
    return problems


def blank_secrets(config: Config, deps: Dependencies,
                  notifiers: dict[str, Notifier]) -> list[str]:
    """One line per secret variable set to nothing but whitespace, the environment's and
    the notifiers' (a webhook URL's variable: named by a table's ``{ env = "NAME" }``, or a
    notifier type's default), naming the variable and never its value."""
    names = deps.get_secrets().blank()
    sources = [env for notifier in notifiers.values()
               for env in notifier.config.secret_sources.values()]
    sources += [value["env"] for raw in config.notifiers for value in raw.values()
                if isinstance(value, dict) and set(value) == {"env"}
                and isinstance(value["env"], str)]
    names += [env for env in sources if deps.environ.get(env, "").isspace()]
    return [f"{name} is set to nothing but whitespace: set it to the real value, or unset it"
            for name in dict.fromkeys(names)]


def _check(config: Config, deps: Dependencies) -> tuple[dict[str, Notifier], list[str]]:
    from watcher.notes import taxonomy_for
    from watcher.subscribe import command_problems

    notifiers, problems = _notifiers(config, deps)
    problems += impact_problems(config)
    problems += command_problems(deps.get_secrets())  # /release-watch's tokens
    problems += blank_secrets(config, deps, notifiers)
    try:
        taxonomy_for(config)  # user rules must compile and name real subsystems
    except ConfigError as error:
        problems += str(error).splitlines()
    return notifiers, list(dict.fromkeys(problems))
