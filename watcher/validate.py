"""Everything ``run`` needs, checked before anything is scheduled or sent: each notifier's keys,
its digest schedule and timezone (read by APScheduler's own CronTrigger, as ``run`` reads them),
the secrets and URLs it needs, and the classification rules.

``config check`` lists every problem and ``run`` refuses to start on any; both call
``validated_notifiers``, so what one accepts the other runs.
"""

from __future__ import annotations

import os

from handlers.base import Notifier, NotifierConfig
from watcher.app import Dependencies, configured_notifier, handler_context, taxonomy_for
from watcher.config import Config
from watcher.daemon import digest_trigger, digest_zone
from watcher.errors import ConfigError


def schedule_problems(config: NotifierConfig) -> list[str]:
    """A bad timezone and a bad cron are two problems; both are reported."""
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
            continue
        notifier = cls(cfg, context)
        where = f"{config.source}: notifier {cfg.name!r}"
        problems += [f"{where}: {problem}"
                     for problem in schedule_problems(cfg) + notifier.problems()]
        notifiers[cfg.name] = notifier
    return notifiers, problems


def config_problems(config: Config, deps: Dependencies) -> list[str]:
    """Every problem, one line each; empty when ``run`` would start."""
    return _check(config, deps)[1]


def validated_notifiers(config: Config, deps: Dependencies) -> dict[str, Notifier]:
    """The notifiers ``run`` uses, or a ConfigError with one line per problem anywhere."""
    notifiers, problems = _check(config, deps)
    if problems:
        raise ConfigError("\n".join(problems))
    return notifiers


def impact_problems(config: Config) -> list[str]:
    """Each ``[impact] code`` entry that is not a readable directory, one line each."""
    problems = []
    for entry, path in config.impact_roots():
        if not path.exists():
            problems.append(f"impact.code: {entry!r} does not exist ({path})")
        elif not path.is_dir():
            problems.append(f"impact.code: {entry!r} is not a directory ({path})")
        elif not os.access(path, os.R_OK | os.X_OK):
            problems.append(f"impact.code: {entry!r} cannot be read ({path})")
    return problems


def _check(config: Config, deps: Dependencies) -> tuple[dict[str, Notifier], list[str]]:
    notifiers, problems = _notifiers(config, deps)
    problems += impact_problems(config)
    try:
        taxonomy_for(config)  # user rules must compile and name real subsystems
    except ConfigError as error:
        problems += str(error).splitlines()
    return notifiers, problems
