"""``release-watch config check [--online]``: validate everything ``run`` would, print the
effective config with secrets masked; ``--online`` also asks GitHub and Slack if they answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from watcher.app import Dependencies
from watcher.config import Config, format_duration, is_loopback, parse_duration
from watcher.delivery import Notifier
from watcher.errors import ConfigError
from watcher.logs import mask_url_credentials
from watcher.validate import check_file

_MASK = "*** (set)"
_SECRET_SHOWN = "**********"  # pydantic's SecretStr in a JSON dump


def _environment(deps: Dependencies, notifiers: dict[str, Notifier]) -> dict[str, str]:
    secrets = deps.get_secrets()
    shown = {
        "GITHUB_TOKEN": _MASK if secrets.github_token else "not set (60 requests/hour)",
        "SLACK_BOT_TOKEN": _MASK if secrets.slack_bot_token else "not set",
        "SLACK_WEBHOOK_URL": _MASK if secrets.slack_webhook_url else "not set",
        "SLACK_APP_TOKEN": _MASK if secrets.slack_app_token else "not set (no Socket Mode)",
        "SLACK_SIGNING_SECRET": _MASK if secrets.slack_signing_secret else "not set",
    }
    for notifier in notifiers.values():  # the variables notifiers read their secrets from
        for env in notifier.config.secret_sources.values():
            shown[env] = _MASK if deps.environ.get(env, "").strip() else "not set"
    return shown


def as_written(shown: Any, written: Any) -> Any:
    """The dumped config with each duration as the file wrote it (``"90s"``, ``"1.5h"``,
    ``600``), where the dump would say ``"90s"``, ``"90m"``, ``"10m"``."""
    if isinstance(shown, dict) and isinstance(written, dict):
        return {key: as_written(value, written.get(key)) for key, value in shown.items()}
    if isinstance(shown, list) and isinstance(written, list) and len(shown) == len(written):
        return [as_written(value, raw) for value, raw in zip(shown, written, strict=True)]
    if (not isinstance(shown, str) or shown == _SECRET_SHOWN or isinstance(written, bool)
            or not isinstance(written, str | int | float)):
        return shown
    try:
        same = format_duration(parse_duration(written)) == shown
    except ValueError:
        return shown
    return written if same else shown


def _effective(config: Config, deps: Dependencies,
               notifiers: dict[str, Notifier]) -> dict[str, Any]:
    effective: dict[str, Any] = as_written(config.model_dump(mode="json"), config.written)
    tables = {str(raw.get("name")): raw for raw in config.notifiers}
    effective["notifiers"] = [
        as_written(n.config.model_dump(mode="json", exclude_none=True), tables.get(name))
        for name, n in notifiers.items()]
    effective["store"]["effective_path"] = str(config.store_path())
    url = config.store_url()  # the file's, or $RELEASE_WATCH_STORE_URL's; masked below
    if url is not None:
        effective["store"]["effective_url"] = url
    effective["environment"] = _environment(deps, notifiers)
    return effective


def _masked(shown: Any) -> Any:
    """Every string of the dump with the credentials a URL in it carries masked
    (``[github] api_url = "https://user:pass@ghe.example/api/v3"``)."""
    if isinstance(shown, dict):
        return {key: _masked(value) for key, value in shown.items()}
    if isinstance(shown, list):
        return [_masked(value) for value in shown]
    return mask_url_credentials(shown) if isinstance(shown, str) else shown


def run_config_check(path: Path | None, deps: Dependencies, *, online: bool = False) -> int:
    """Every problem is one line on stderr (a ConfigError: exit 2), warnings too; a sound
    config is printed with its secrets masked."""
    checked = check_file(path, deps)
    for warning in checked.warnings:
        click.echo(f"release-watch: warning: {mask_url_credentials(warning)}", err=True)
    if checked.problems or checked.config is None:
        raise ConfigError("\n".join(checked.problems))
    config, notifiers = checked.config, checked.notifiers
    if config.store_url() is not None:  # what every command opening the store would say
        from watcher.store import require_psycopg

        require_psycopg()
    out = deps.stdout
    out.write(f"# {config.source}: valid\n")
    shown = _masked(_effective(config, deps, notifiers))
    out.write(json.dumps(shown, indent=2, ensure_ascii=False) + "\n")
    for notifier in notifiers.values():
        cfg = notifier.config
        if cfg.digest_schedule and cfg.mode != "digest":
            out.write(f'# note: notifier {cfg.name!r} has a digest_schedule but mode = '
                      f'"{cfg.mode}"; the schedule is unused until mode = "digest"\n')
    address = config.server.address
    if address is not None and not is_loopback(address[0]):
        out.write(f"# note: [server] listen = {config.server.listen} is reachable from other "
                  "machines, not only this one (/metrics, /readyz and the feeds hold no secret)\n")
    out.write("# notifier types and their keys\n")
    # Once per type, however many notifiers share it (seven Slack channels: one line).
    types = {notifier.config.type: type(notifier) for notifier in notifiers.values()}
    for type_name, cls in types.items():
        keys = ", ".join(f"{name}" + (f" ({info.description})" if info.description else "")
                         for name, info in cls.Config.model_fields.items())
        out.write(f"#   {type_name}: {keys}\n")
    if not online:
        return 0
    from watcher.cli.online import online_checks

    out.write("# online checks\n")
    checks = online_checks(config, deps, notifiers)
    for check in checks:
        out.write(mask_url_credentials(check.line()) + "\n")
    return 1 if any(check.ok is False for check in checks) else 0
