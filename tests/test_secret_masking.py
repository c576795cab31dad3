"""Secrets of any shape are masked wherever they could be printed. A webhook URL with a space,
a tab or a control character in it is refused before it is used, in one line that does not
quote it; the log filter masks each identifying fragment of a secret (the halves of a URL split
by a space, its path as an HTTP library quotes it), in messages, tracebacks and JSON lines,
from any logger; ``status`` masks recorded errors the same way."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import release_notes
from fakes.webhook import FakeWebhook

from handlers.apprise_notifier import AppriseNotifier
from handlers.base import HandlerContext, notifier_config
from watcher.config import Secrets
from watcher.deps import Dependencies
from watcher.logs import setup_logging
from watcher.store import Store

XLA = release_notes("xla/v2.0.0.md")
WEBHOOK = '[[notifiers]]\nname = "hook"\ntype = "slack"\ndelivery = "webhook"\n'
SECRET = "hush-s3cret"  # in every secret below; must never be printed or stored
PATH = f"/services/T000/B000/{SECRET}-a {SECRET}-b"  # a webhook's path, a space inside
REFUSED = ("contains a space, tab, line break or control character: set it to the URL exactly "
           "as Slack shows it")


def webhook_urls(base: str) -> list[tuple[str, str]]:
    return [("inner-space", base + PATH),
            ("inner-tab", f"{base}/services/T000/B000/{SECRET}-a\t{SECRET}-b"),
            ("trailing-tab", f"{base}/services/T000/B000/{SECRET}-a\t"),
            ("trailing-newline", f"{base}/services/T000/B000/{SECRET}-a\n"),
            ("control", f"{base}/services/T000/B000/{SECRET}\x7f-a")]


@pytest.mark.parametrize("case", [name for name, _ in webhook_urls("")])
def test_config_check_refuses_a_webhook_url_with_whitespace_without_printing_it(
        fake_slack, write_config, run_cli, case):
    url = dict(webhook_urls(fake_slack.url))[case]
    config = write_config(notifiers=WEBHOOK)
    result = run_cli("--config", str(config), "config", "check", env={"SLACK_WEBHOOK_URL": url})
    assert result.code == 2
    assert result.stderr.splitlines() == [
        f"release-watch: {config}: notifier 'hook': SLACK_WEBHOOK_URL {REFUSED}"]
    assert SECRET not in result.stdout + result.stderr


def test_a_webhook_url_in_the_file_names_its_key(fake_slack, write_config, run_cli):
    config = write_config(notifiers=WEBHOOK + f'webhook_url = "{fake_slack.url}{PATH}"\n')
    result = run_cli("--config", str(config), "config", "check")
    assert result.code == 2
    assert result.stderr == f"release-watch: {config}: notifier 'hook': webhook_url {REFUSED}\n"
    assert SECRET not in result.stdout


def test_run_refuses_it_before_scheduling(fake_slack, write_config, tmp_path):
    config = write_config(notifiers=WEBHOOK)
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("RELEASE_WATCH", "SLACK_", "GITHUB_TOKEN", "GH_TOKEN"))}
    env.update(SLACK_WEBHOOK_URL=fake_slack.url + PATH, XDG_STATE_HOME=str(tmp_path / "state"))
    try:
        result = subprocess.run([sys.executable, "-m", "watcher", "--config", str(config), "run"],
                                capture_output=True, text=True, env=env, cwd=tmp_path,
                                timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("run started with a webhook URL holding a space")
    assert result.returncode == 2, result.stderr
    assert f"SLACK_WEBHOOK_URL {REFUSED}" in result.stderr and SECRET not in result.stderr
    assert not (tmp_path / "store").exists()


def test_a_webhook_url_with_a_space_leaks_nowhere(fake_github, fake_slack, write_config,
                                                  run_cli, tmp_path):
    """``poll`` does not run ``config check`` first: the notifier refuses the URL itself, so
    no library quotes it in an error that would be logged, stored and shown by ``status``."""
    fake_github.add_release("pytorch/xla", tag="v2.0", body=XLA)
    config = write_config(repos=("pytorch/xla",), notifiers=WEBHOOK)
    env = {"SLACK_WEBHOOK_URL": fake_slack.url + PATH}
    text = run_cli("--config", str(config), "poll", env=env)
    assert text.code == 1 and f"SLACK_WEBHOOK_URL {REFUSED}" in text.stderr
    as_json = run_cli("--config", str(config), "--log-format", "json", "poll", env=env)
    assert as_json.code == 1
    status = run_cli("--config", str(config), "status", env=env)
    status_json = run_cli("--config", str(config), "status", "--json", env=env)
    assert json.loads(status_json.stdout)["pending_deliveries"] == 1
    for result in (text, as_json, status, status_json):
        assert SECRET not in result.stdout + result.stderr
    assert fake_slack.messages == [] and fake_slack.requests == []
    stored = b"".join(path.read_bytes() for path in (tmp_path / "store").rglob("*")
                      if path.is_file())
    assert SECRET.encode() not in stored


@pytest.mark.parametrize("log_format", ["text", "json"])
@pytest.mark.parametrize("secret", [
    f"https://hooks.slack.com{PATH}",
    f"https://hooks.slack.com/services/T000/B000/{SECRET}-a\t",
], ids=["space", "trailing-tab"])
def test_every_fragment_of_a_secret_is_masked_in_messages_and_tracebacks(capsys, log_format,
                                                                        secret):
    setup_logging(verbose=False, log_format=log_format, secrets=[secret])
    path = secret.removeprefix("https://hooks.slack.com")
    log = logging.getLogger("urllib.anything")
    try:
        log.error("the halves: %s", " | ".join(secret.split()))
        log.error("as http.client refuses it: URL can't contain control characters. %r", path)
        log.error("percent-encoded: %s", path.replace(" ", "%20").replace("\t", "%09"))
        try:
            raise ValueError(f"URL can't contain control characters. {path!r}")
        except ValueError:
            log.exception("unexpected")
        err = capsys.readouterr().err
    finally:
        logging.getLogger().handlers.clear()
    assert SECRET not in err
    assert err.count("***") >= 4 and "Traceback" in err


def test_status_masks_a_secret_quoted_in_a_recorded_error(fake_github, fake_slack, write_config,
                                                          run_cli, tmp_path):
    """An error recorded by older code, or quoted by a library, holding the webhook's path."""
    fake_github.add_release("pytorch/xla", tag="v2.0", body=XLA)
    config = write_config(repos=("pytorch/xla",), notifiers=WEBHOOK)
    env = {"SLACK_WEBHOOK_URL": fake_slack.url + PATH}
    assert run_cli("--config", str(config), "poll", env=env).code == 1
    store = Store.open(tmp_path / "store")
    try:
        (delivery,) = store.pending_deliveries()
        store.delivery_failed(delivery, "hook: unexpected InvalidURL: URL can't contain "
                              f"control characters. {PATH!r} (found at least ' ')",
                              permanent=False)
    finally:
        store.close()
    text = run_cli("--config", str(config), "status", env=env)
    as_json = run_cli("--config", str(config), "status", "--json", env=env)
    assert "unexpected InvalidURL: URL can't contain control characters. '***'" in text.stdout
    assert SECRET not in text.stdout and SECRET not in as_json.stdout
    assert json.loads(as_json.stdout)["failing_deliveries"][0]["error"].endswith(
        "'***' (found at least ' ')")


def test_apprise_debug_lines_never_show_a_url_token(fake_github, write_config, run_cli):
    """With --verbose apprise and urllib3 log the address a plugin posts to, built from the
    URL's token but never the URL as given."""
    fake_github.add_release("pytorch/xla", tag="v2.0", body=XLA)
    config = write_config(repos=("pytorch/xla",),
                          notifiers='[[notifiers]]\nname = "team"\ntype = "apprise"\n')
    with FakeWebhook() as hook:
        hook.answer(404)
        url = "json://" + hook.url.removeprefix("http://") + f"/hooks/tok3n-{SECRET}"
        result = run_cli("--config", str(config), "-v", "poll", env={"APPRISE_URLS": url})
    assert result.code == 1
    assert " debug apprise: " in result.stderr  # apprise's own lines were shown
    assert SECRET not in result.stderr and "tok3n" not in result.stderr


@pytest.mark.parametrize(("url", "posted_to"), [
    ("tgram://123456789:AAE-tok3n-s3cret/555",
     "https://api.telegram.org/bot123456789:AAE-tok3n-s3cret/sendMessage"),
    ("discord://112233445566/tok3n-s3cret-abcdef",
     "https://discord.com/api/webhooks/112233445566/tok3n-s3cret-abcdef"),
], ids=["telegram", "discord"])
def test_each_part_of_an_apprise_url_is_masked_in_any_loggers_lines(capsys, tmp_path, url,
                                                                     posted_to):
    """A plugin posts to an address built from the URL's parts; apprise logs that address."""
    setup_logging(verbose=True, log_format="text")
    try:
        _, config = notifier_config({"name": "team", "type": "apprise", "urls": [url]}, "t",
                                    environ={})
        notifier = AppriseNotifier(config, HandlerContext(
            secrets=Secrets.model_validate({}), base_dir=Path(tmp_path), stdout=sys.stdout))
        assert notifier.problems() == []
        logging.getLogger("apprise").debug("POST URL: %s", posted_to)
        logging.getLogger("urllib3.connectionpool").debug('"POST %s HTTP/1.1" 404', posted_to)
        err = capsys.readouterr().err
    finally:
        logging.getLogger().handlers.clear()
    assert "s3cret" not in err and "123456789" not in err and "112233445566" not in err
    assert err.count("POST ") == 2


@pytest.mark.parametrize("environ", [
    {"GITHUB_TOKEN": "ghp_first", "GH_TOKEN": "gho_second", "slack_bot_token": "xoxb-1"},
    {"GH_TOKEN": "gho_only", "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T/B/x",
     "SLACK_APP_TOKEN": "xapp-1", "SLACK_SIGNING_SECRET": "s3cr3t", "UNRELATED": "shown"},
    {},
], ids=["github-token-first", "every-other-secret", "none"])
def test_logging_masks_what_secrets_holds_without_building_it(monkeypatch, environ):
    """Logging is set up before a command knows whether it needs the configuration: it reads
    the same values ``Secrets()`` holds straight from the environment (no model built, so an
    offline command loads no pydantic)."""
    for name in list(os.environ):
        if name.upper().startswith(("GITHUB_TOKEN", "GH_TOKEN", "SLACK_")):
            monkeypatch.delenv(name)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    secrets = Secrets()
    held = [s.get_secret_value() for s in (secrets.github_token, secrets.slack_bot_token,
                                           secrets.slack_webhook_url, secrets.slack_app_token,
                                           secrets.slack_signing_secret) if s is not None]
    deps = Dependencies()
    assert deps.secret_values() == held
    assert deps.secrets is None  # read, not built
    assert Dependencies(secrets=secrets).secret_values() == held
