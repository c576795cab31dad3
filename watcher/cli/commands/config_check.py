"""``release-watch config check [--online]``: validate everything ``run`` would, print the
effective config with secrets masked; ``--online`` also asks GitHub and Slack if they answer."""

from __future__ import annotations

import json
from typing import Any

from handlers.base import Notifier
from watcher.app import Dependencies
from watcher.config import Config
from watcher.validate import validated_notifiers

_MASK = "*** (set)"


def _environment(deps: Dependencies, notifiers: dict[str, Notifier]) -> dict[str, str]:
    secrets = deps.get_secrets()
    shown = {
        "GITHUB_TOKEN": _MASK if secrets.github_token else "not set (60 requests/hour)",
        "SLACK_BOT_TOKEN": _MASK if secrets.slack_bot_token else "not set",
        "SLACK_WEBHOOK_URL": _MASK if secrets.slack_webhook_url else "not set",
    }
    for notifier in notifiers.values():  # the variables notifiers read their secrets from
        for env in notifier.config.secret_sources.values():
            shown[env] = _MASK if deps.environ.get(env, "").strip() else "not set"
    return shown


def _effective(config: Config, deps: Dependencies,
               notifiers: dict[str, Notifier]) -> dict[str, Any]:
    effective = config.model_dump(mode="json")
    effective["notifiers"] = [n.config.model_dump(mode="json", exclude_none=True)
                              for n in notifiers.values()]
    effective["store"]["effective_path"] = str(config.store_path())
    effective["environment"] = _environment(deps, notifiers)
    return effective


def run_config_check(config: Config, deps: Dependencies, *, online: bool = False) -> int:
    notifiers = validated_notifiers(config, deps)  # a ConfigError lists every problem
    out = deps.stdout
    out.write(f"# {config.source}: valid\n")
    out.write(json.dumps(_effective(config, deps, notifiers), indent=2, ensure_ascii=False)
              + "\n")
    for notifier in notifiers.values():
        cfg = notifier.config
        if cfg.digest_schedule and cfg.mode != "digest":
            out.write(f'# note: notifier {cfg.name!r} has a digest_schedule but mode = '
                      f'"{cfg.mode}"; the schedule is unused until mode = "digest"\n')
    out.write("# notifier types and their keys\n")
    for notifier in notifiers.values():
        fields = type(notifier).Config.model_fields
        keys = ", ".join(f"{name}" + (f" ({info.description})" if info.description else "")
                         for name, info in fields.items())
        out.write(f"#   {notifier.config.type}: {keys}\n")
    if not online:
        return 0
    from watcher.cli.online import online_checks

    out.write("# online checks\n")
    checks = online_checks(config, deps, notifiers)
    for check in checks:
        out.write(check.line() + "\n")
    return 1 if any(check.ok is False for check in checks) else 0
