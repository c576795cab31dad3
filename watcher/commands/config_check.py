"""``release-watch config check``: validate everything, print the effective config."""

from __future__ import annotations

import json

from watcher.app import Dependencies, notifier_configs, taxonomy_for
from watcher.config import Config

_MASK = "*** (set)"


def run_config_check(config: Config, deps: Dependencies) -> None:
    taxonomy_for(config)  # user rules must compile and name real subsystems
    notifiers = notifier_configs(config)
    secrets = deps.get_secrets()
    effective = config.model_dump(mode="json")
    effective["notifiers"] = [cfg.model_dump(mode="json", exclude_none=True)
                              for _, cfg in notifiers]
    effective["store"]["effective_path"] = str(config.store_path())
    effective["environment"] = {
        "GITHUB_TOKEN": _MASK if secrets.github_token else "not set (60 requests/hour)",
        "SLACK_BOT_TOKEN": _MASK if secrets.slack_bot_token else "not set",
        "SLACK_WEBHOOK_URL": _MASK if secrets.slack_webhook_url else "not set",
    }
    out = deps.stdout
    out.write(f"# {config.source}: valid\n")
    out.write(json.dumps(effective, indent=2, ensure_ascii=False) + "\n")
    for _, cfg in notifiers:
        if cfg.digest_schedule and cfg.mode != "digest":
            out.write(f'# note: notifier {cfg.name!r} has a digest_schedule but mode = '
                      f'"{cfg.mode}"; the schedule is unused until mode = "digest"\n')
    out.write("# notifier types and their keys\n")
    for cls, cfg in notifiers:
        fields = cls.Config.model_fields
        keys = ", ".join(f"{name}" + (f" ({info.description})" if info.description else "")
                         for name, info in fields.items())
        out.write(f"#   {cfg.type}: {keys}\n")
