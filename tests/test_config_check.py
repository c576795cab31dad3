"""`config check` validates all that `run` would (cron and timezone through APScheduler's own
CronTrigger, the tokens and URLs each notifier needs) and lists every problem; `run` refuses
exactly the same; `--online` asks GitHub and Slack whether the tokens work."""

from __future__ import annotations

import io

import pytest
from conftest import SLACK_TOKEN, TOKEN

from watcher.app import Dependencies
from watcher.config import Secrets, load_config
from watcher.daemon.loop import run_daemon
from watcher.errors import ConfigError

DIGEST = '[[notifiers]]\nname = "weekly"\ntype = "console"\nmode = "digest"\n'
SLACK_BOT = '[[notifiers]]\nname = "chan"\ntype = "slack"\nchannel = "#releases"\n'
WEBHOOK = '[[notifiers]]\nname = "hook"\ntype = "slack"\ndelivery = "webhook"\n'


@pytest.mark.parametrize(("notifiers", "message"), [
    (DIGEST + 'digest_schedule = "99 99 * * *"\n', "digest_schedule '99 99 * * *' is not valid"),
    (DIGEST + 'digest_schedule = "0 9 * * 9"\n', "weekday '9' is out of range"),
    (DIGEST + 'digest_schedule = "0 9 * * MON"\ndigest_timezone = "Mars/Olympus"\n',
     "digest_timezone 'Mars/Olympus' is not a known timezone"),
    (SLACK_BOT, "SLACK_BOT_TOKEN is not set"),
    (WEBHOOK, "no webhook URL: set webhook_url or SLACK_WEBHOOK_URL"),
    (WEBHOOK + 'webhook_url = "http://hooks.example.com/services/T/B/secret-path"\n',
     "webhook_url is not an https:// URL"),
    (WEBHOOK + 'webhook_url = "hooks.slack.com/services/T/B/secret-path"\n',
     "webhook_url is not an https:// URL"),
], ids=["cron", "weekday", "timezone", "bot-token", "no-webhook", "http-webhook", "no-scheme"])
def test_config_check_refuses_what_run_would(run_cli, write_config, notifiers, message):
    config = write_config(notifiers=notifiers)
    result = run_cli("--config", str(config), "config", "check")
    assert result.code == 2, result.stdout
    assert message in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "secret-path" not in result.stderr + result.stdout
    assert "valid" not in result.stdout


def test_every_problem_is_listed_one_line_each(run_cli, write_config):
    config = write_config(notifiers=(
        DIGEST + 'digest_schedule = "99 99 * * *"\ndigest_timezone = "Mars/Olympus"\n'
        + SLACK_BOT + WEBHOOK
        + '[[notifiers]]\nname = "typo"\ntype = "console"\nkinds = ["bugfix"]\nchanel = "x"\n'))
    result = run_cli("--config", str(config), "config", "check")
    lines = result.stderr.splitlines()
    assert result.code == 2
    assert all(line.startswith(f"release-watch: {config}: notifier '") for line in lines)
    assert [line.split("notifier ", 1)[1].split(":", 1)[0] for line in lines] == [
        "'weekly'", "'weekly'", "'chan'", "'hook'", "'typo'", "'typo'"]
    assert "Mars/Olympus" in lines[0] and "'99 99 * * *' is not valid cron" in lines[1]
    assert "SLACK_BOT_TOKEN" in lines[2] and "no webhook URL" in lines[3]
    assert "is not a kind" in lines[4] and "unknown key" in lines[5]


def test_valid_digest_schedule_and_tokens_pass(run_cli, write_config, fake_slack):
    config = write_config(notifiers=DIGEST + 'digest_schedule = "0 9 * * 1-5"\n'
                          'digest_timezone = "Europe/Berlin"\n' + SLACK_BOT + WEBHOOK,
                          slack_url=fake_slack.api_url)
    env = {"SLACK_BOT_TOKEN": SLACK_TOKEN, "SLACK_WEBHOOK_URL": fake_slack.webhook_url}
    result = run_cli("--config", str(config), "config", "check", env=env)
    assert result.code == 0, result.stderr
    assert SLACK_TOKEN not in result.stdout and fake_slack.webhook_url not in result.stdout


@pytest.mark.parametrize("notifiers", [
    DIGEST + 'digest_schedule = "0 25 * * *"\n' + SLACK_BOT,
    DIGEST + 'digest_schedule = "0 9 * * MON"\ndigest_timezone = "Mars/Olympus"\n',
], ids=["cron-and-token", "timezone"])
def test_run_refuses_exactly_what_config_check_refuses(run_cli, write_config, notifiers):
    config = write_config(notifiers=notifiers)
    check = run_cli("--config", str(config), "config", "check")
    deps = Dependencies(stdout=io.StringIO(), secrets=Secrets.model_validate({}), environ={})
    with pytest.raises(ConfigError) as refused:
        run_daemon(load_config(config), deps, install_signals=lambda handler: None)
    assert check.code == 2
    assert check.stderr.splitlines() == [f"release-watch: {line}"
                                         for line in str(refused.value).splitlines()]


def test_durations_are_shown_as_written(run_cli, write_config):
    config = write_config('[poll]\ninterval = "10m"\nretry_interval = "90s"\n')
    result = run_cli("--config", str(config), "config", "check")
    assert result.code == 0
    assert '"interval": "10m"' in result.stdout and '"retry_interval": "90s"' in result.stdout
    assert '"timeout": "30s"' in result.stdout


def test_online_check_says_what_works(run_cli, write_config, fake_github, fake_slack):
    fake_github.set_token(TOKEN)
    config = write_config(notifiers=SLACK_BOT + WEBHOOK, slack_url=fake_slack.api_url)
    env = {"SLACK_BOT_TOKEN": SLACK_TOKEN, "SLACK_WEBHOOK_URL": fake_slack.webhook_url}
    result = run_cli("--config", str(config), "config", "check", "--online", env=env)
    assert result.code == 0, result.stdout + result.stderr
    online = result.stdout.split("# online checks\n", 1)[1].splitlines()
    assert online[0] == (f"github ({fake_github.url}): ok: GITHUB_TOKEN accepted; 5000 of 5000 "
                         f"requests left this hour (resets {online[0].split('resets ')[1]}")
    assert online[1] == (f"slack ({fake_slack.api_url}): ok: SLACK_BOT_TOKEN accepted: bot "
                         "release-watch in workspace T")
    assert online[2].startswith("notifier 'hook' (slack): not checked: only a real message")
    assert [r.path for r in fake_slack.requests] == ["/api/auth.test"]  # nothing was posted
    assert fake_github.requests_to("/rate_limit")[0].headers["authorization"] == f"Bearer {TOKEN}"
    assert SLACK_TOKEN not in result.stdout and TOKEN not in result.stdout


def test_online_check_names_what_fails_and_the_fix(run_cli, write_config, fake_github,
                                                    fake_slack):
    fake_github.set_token("the-right-token")
    config = write_config(notifiers=SLACK_BOT, slack_url=fake_slack.api_url)
    result = run_cli("--config", str(config), "config", "check", "--online",
                     env={"SLACK_BOT_TOKEN": "xoxb-revoked-or-wrong"})
    assert result.code == 1
    online = result.stdout.split("# online checks\n", 1)[1].splitlines()
    assert online[0].endswith("FAILED: 401 Bad credentials: GITHUB_TOKEN is invalid or expired; "
                              "create a new one (no scopes needed for public repos)")
    assert online[1].endswith("FAILED: auth.test answered invalid_auth: the bot token is "
                              "invalid or revoked: set a valid SLACK_BOT_TOKEN")
    assert "xoxb-revoked-or-wrong" not in result.stdout + result.stderr


def test_online_check_of_an_unreachable_github(run_cli, write_config, fake_github):
    config = write_config(notifiers='[[notifiers]]\nname = "c"\ntype = "console"\n')
    fake_github.stop()
    result = run_cli("--config", str(config), "config", "check", "--online", token=None)
    assert result.code == 1
    assert "FAILED: cannot reach it (ConnectError): check github.api_url" in result.stdout


def test_impact_code_paths_are_checked_one_line_each(run_cli, write_config, tmp_path):
    (tmp_path / "trainer").mkdir()
    (tmp_path / "a-file.py").write_text("import torch\n")
    config = write_config('[impact]\ncode = ["trainer", "missing", "a-file.py"]\n'
                          'link = "https://github.com/acme/trainer/blob/main/{path}#L{line}"\n')
    result = run_cli("--config", str(config), "config", "check")
    assert result.code == 2
    assert result.stderr.splitlines() == [
        f"release-watch: impact.code: 'missing' does not exist ({tmp_path / 'missing'})",
        f"release-watch: impact.code: 'a-file.py' is not a directory ({tmp_path / 'a-file.py'})"]


def test_an_impact_link_without_path_is_a_config_error(run_cli, write_config):
    config = write_config('[impact]\ncode = []\nlink = "https://github.com/acme/trainer"\n')
    result = run_cli("--config", str(config), "config", "check")
    assert result.code == 2
    assert "impact.link needs {path}" in result.stderr and "Traceback" not in result.stderr
