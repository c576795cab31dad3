"""`config check` validates all that `run` would (cron and timezone through APScheduler's own
CronTrigger, the tokens and URLs each notifier needs) and lists every problem; `run` refuses
exactly the same; `--online` asks GitHub and Slack whether the tokens work."""

from __future__ import annotations

import io

import pytest
from conftest import SLACK_TOKEN, TOKEN

from watcher.app import Dependencies, build_daemon
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
        run_daemon(build_daemon(load_config(config), deps), install_signals=lambda handler: None)
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
    fake_github.add_repo("pytorch/pytorch")
    fake_github.add_repo("pytorch/xla")
    config = write_config(notifiers=SLACK_BOT + WEBHOOK, slack_url=fake_slack.api_url)
    env = {"SLACK_BOT_TOKEN": SLACK_TOKEN, "SLACK_WEBHOOK_URL": fake_slack.webhook_url}
    result = run_cli("--config", str(config), "config", "check", "--online", env=env)
    assert result.code == 0, result.stdout + result.stderr
    online = result.stdout.split("# online checks\n", 1)[1].splitlines()
    assert online[0] == (f"github ({fake_github.url}): ok: GITHUB_TOKEN accepted; 5000 of 5000 "
                         f"requests left this hour (resets {online[0].split('resets ')[1]}")
    assert online[1] == "watch list: ok: all 2 repos found"
    assert online[2] == (f"slack ({fake_slack.api_url}): ok: SLACK_BOT_TOKEN accepted: bot "
                         "release-watch in workspace T")
    assert online[3].startswith("notifier 'hook' (slack): not checked: only a real message")
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
    assert online[1] == ("watch list: not checked: GitHub did not answer as it should (the "
                         "line above)")
    assert online[2].endswith("FAILED: auth.test answered invalid_auth: the bot token is "
                              "invalid or revoked: set a valid SLACK_BOT_TOKEN")
    assert "xoxb-revoked-or-wrong" not in result.stdout + result.stderr


def test_online_check_of_an_unreachable_github(run_cli, write_config, fake_github):
    config = write_config(notifiers='[[notifiers]]\nname = "c"\ntype = "console"\n')
    host = fake_github.url.removeprefix("http://")
    fake_github.stop()
    result = run_cli("--config", str(config), "config", "check", "--online", token=None)
    assert result.code == 1
    assert (f"FAILED: cannot reach it: {host} refused the connection: nothing listens there, "
            "or a firewall rejects it; behind a proxy, set HTTPS_PROXY (and NO_PROXY for hosts "
            "reached directly); else check github.api_url\n") in result.stdout


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


EVERYTHING_WRONG = '''
[poll]
intervall = "5m"
retry_interval = "500ms"

[[repos]]
name = "pytorch/pytorch"

[[repos]]
name = "pytorch/xlaa"
include_prerelease = true

[[notifiers]]
name = "chan"
type = "slack"
channel = "#releases"
max_mesage_chars = 3000

[[notifiers]]
name = "weekly"
type = "console"
mode = "digest"
digest_schedule = "0 9 * *"
digest_timezone = "Mars/Olympus"
'''


def test_one_run_reports_every_problem_in_the_files_own_words(run_cli, tmp_path):
    """Top-level typos beside a notifier's, a missing token beside a typo, the timezone beside
    a bad cron; a repo by its name, a duration as written, the likely spelling; exit 2."""
    path = tmp_path / "rw.toml"
    path.write_text(EVERYTHING_WRONG)
    result = run_cli("--config", str(path), "config", "check")
    assert result.code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [f"release-watch: {path}: {line}" for line in [
        "poll.retry_interval: '500ms' is less than the minimum, 1s",
        "poll.intervall: unknown key; did you mean `interval`?",
        'repos "pytorch/xlaa": include_prerelease: unknown key; did you mean '
        "`include_prereleases`?",
        "notifier 'chan': max_mesage_chars: unknown key; did you mean `max_message_chars`?",
        "notifier 'chan': SLACK_BOT_TOKEN is not set (a bot token with chat:write; or set "
        'delivery = "webhook" and a webhook URL)',
        "notifier 'weekly': digest_schedule '0 9 * *' is not a 5-field cron expression (minute "
        "hour day month weekday)",
        "notifier 'weekly': digest_timezone 'Mars/Olympus' is not a known timezone (an IANA "
        "name such as Europe/Berlin or UTC)"]]
    # `run` (and every command) refuses with the same lines.
    assert run_cli("--config", str(path), "run").stderr == result.stderr


@pytest.mark.parametrize(("toml", "line"), [
    ("repos = []\n", "nothing to watch: add [[repos]] or [[orgs]]"),
    ('[store]\nretention = "30m"\n', "store.retention: '30m' is less than the minimum, 1h"),
    ('[github]\ntimeout = "0s"\n', "github.timeout: '0s' must be more than 0s"),
    ('[[repos]]\nname = "not a repo"\n', "repos \"not a repo\": name: 'not a repo' is not "
                                         "OWNER/NAME"),
    ('[[repos]]\nname = "a/b"\nfirst_run_announce = -1\n',
     'repos "a/b": first_run_announce: -1 is less than the minimum, 0'),
    ('[[repos]]\ninclude_prereleases = true\n', "repos table 1: name: required, but missing"),
    ('[[notifiers]]\ntype = "console"\n', "notifiers: [[notifiers]] table 1 needs a name"),
    ("[pol]\ninterval = 5\n", "pol: unknown key; did you mean `poll`?"),
], ids=["nothing", "retention", "timeout", "repo-name", "repo-number", "no-name",
        "no-notifier-name", "section"])
def test_problems_read_without_pydantic_artefacts(run_cli, tmp_path, toml, line):
    path = tmp_path / "rw.toml"
    path.write_text(toml)
    result = run_cli("--config", str(path), "config", "check")
    assert result.code == 2
    assert result.stderr == f"release-watch: {path}: {line}\n"
    assert "top level" not in result.stderr and "Value error" not in result.stderr


def test_a_digest_without_a_schedule_is_a_warning_not_an_error(run_cli, write_config):
    config = write_config(notifiers=DIGEST)
    result = run_cli("--config", str(config), "config", "check")
    assert result.code == 0, result.stderr
    assert result.stderr == (
        f"release-watch: warning: {config}: notifier 'weekly': mode = \"digest\" and no "
        "digest_schedule: `run` never sends its digest, only `release-watch digest` does (from "
        'cron, say); set digest_schedule, e.g. "0 9 * * MON"\n')
    assert f"# {config}: valid" in result.stdout


def test_the_effective_config_shows_durations_as_written(run_cli, write_config):
    config = write_config('[poll]\ninterval = "120s"\nretry_interval = 90\n',
                          notifiers=WEBHOOK + 'min_interval = "1500ms"\n')
    result = run_cli("--config", str(config), "config", "check",
                     env={"SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T/B/x"})
    assert result.code == 0, result.stderr
    assert '"interval": "120s"' in result.stdout and '"retry_interval": 90' in result.stdout
    assert '"min_interval": "1500ms"' in result.stdout and '"timeout": "30s"' in result.stdout


# -- --online: /rate_limit and the watch list ----------------------------------------------------

def _online(result) -> list[str]:
    return result.stdout.split("# online checks\n", 1)[1].splitlines()


@pytest.mark.parametrize("token", [TOKEN, None], ids=["token", "no-token"])
def test_a_404_from_rate_limit_is_never_ok(run_cli, write_config, fake_github, token):
    """A wrong github.api_url (a web server, GitHub's HTML host) answers /rate_limit with 404."""
    from fakes.github import Scripted

    fake_github.add_repo("pytorch/pytorch")
    fake_github.add_repo("pytorch/xla")
    fake_github.script("/rate_limit", Scripted(404, body='{"message": "Not Found"}'))
    fake_github.script("/", Scripted(404, body="<html>not here</html>"))
    config = write_config()
    result = run_cli("--config", str(config), "config", "check", "--online", token=token)
    assert result.code == 1
    assert _online(result)[:2] == [
        f"github ({fake_github.url}): FAILED: /rate_limit answered HTTP 404: github.api_url is "
        "not a GitHub API (GitHub.com: https://api.github.com; GitHub Enterprise: "
        "https://HOST/api/v3)",
        "watch list: not checked: GitHub did not answer as it should (the line above)"]


def test_a_server_without_rate_limits_is_not_checked_and_the_repos_are(run_cli, write_config,
                                                                      fake_github):
    """GitHub Enterprise Server with rate limiting off answers /rate_limit with 404 too; its
    API root tells it apart, and the repo checks then test the token and the URL."""
    from fakes.github import Scripted

    fake_github.add_repo("pytorch/pytorch")
    fake_github.add_repo("pytorch/xla")
    fake_github.script("/rate_limit", Scripted(404, body='{"message": "Not Found"}'))
    result = run_cli("--config", str(write_config()), "config", "check", "--online")
    assert result.code == 0, result.stdout
    assert _online(result)[:2] == [
        f"github ({fake_github.url}): not checked: /rate_limit answered 404 but the API root "
        "is GitHub's: a GitHub Enterprise Server without rate limits; the repo checks below "
        "test the token",
        "watch list: ok: all 2 repos found"]


def test_online_check_names_each_repo_that_does_not_exist(run_cli, write_config, fake_github):
    fake_github.add_release("pytorch/xla", tag="v2.0")
    fake_github.add_repo("pytorch/vision")
    config = write_config('[[orgs]]\nname = "pytorch"\n[[orgs]]\nname = "no-such-org"\n',
                          repos=("pytorch/xla", "pytorch/xlaa"))
    result = run_cli("--config", str(config), "config", "check", "--online")
    assert result.code == 1
    assert _online(result)[1:3] == [
        "repo pytorch/xlaa: FAILED: no such repository, or it is private and GITHUB_TOKEN "
        "cannot see it",
        "org no-such-org: FAILED: no such organisation, or none of its repositories is visible "
        "to this token"]
    assert not any(line.startswith("watch list:") for line in _online(result))
    assert len(fake_github.requests_to("/repos/pytorch/xla/releases")) == 1


def test_online_repo_checks_are_conditional_on_the_last_polls_etag(run_cli, write_config,
                                                                   fake_github):
    fake_github.add_release("pytorch/xla", tag="v2.0")
    config = write_config(repos=("pytorch/xla",))
    assert run_cli("--config", str(config), "poll").code == 0
    fake_github.reset_requests()
    result = run_cli("--config", str(config), "config", "check", "--online")
    assert result.code == 0, result.stdout
    assert _online(result)[1] == "watch list: ok: 1 repo found"
    [request] = fake_github.requests_to("/repos/pytorch/xla/releases")
    assert request.headers.get("if-none-match") and request.status == 304  # no quota spent


def test_each_notifier_type_s_keys_are_printed_once(run_cli, write_config, fake_slack):
    """Seven Slack channels share one type: its keys are one line, not seven."""
    channels = "".join(f'[[notifiers]]\nname = "chan-{n}"\ntype = "slack"\n'
                       f'channel = "#releases-{n}"\n' for n in range(7))
    console = '[[notifiers]]\nname = "screen"\ntype = "console"\n'
    config = write_config(notifiers=channels + console, slack_url=fake_slack.api_url)
    result = run_cli("--config", str(config), "config", "check",
                     env={"SLACK_BOT_TOKEN": SLACK_TOKEN})
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    types = lines[lines.index("# notifier types and their keys") + 1:]
    assert [line.split(":", 1)[0] for line in types] == ["#   slack", "#   console"]
    assert "channel (" in types[0]
