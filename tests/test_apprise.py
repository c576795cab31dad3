"""The apprise notifier delivers the console's summaries to a loopback endpoint (apprise's own
``json://`` plugin, through the real apprise and requests), keeps failed deliveries queued, and
never shows its URLs (they carry tokens)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest
from conftest import release_notes
from fakes.webhook import FakeWebhook

from handlers.summary_text import title_and_body, to_markdown
from watcher.models import Event
from watcher.present.plain import format_event

XLA = release_notes("xla/v2.0.0.md")
JSONL = '[[notifiers]]\nname = "log"\ntype = "jsonl"\npath = "events.jsonl"\n'
APPRISE = '[[notifiers]]\nname = "team"\ntype = "apprise"\n'


@pytest.fixture
def hook() -> Iterator[FakeWebhook]:
    with FakeWebhook() as server:
        yield server


def apprise_url(hook: FakeWebhook, path: str = "/hooks/tok3n-s3cret-1234") -> str:
    return "json://" + hook.url.removeprefix("http://") + path


def logged_event(config) -> Event:
    line = (config.parent / "events.jsonl").read_text().splitlines()[-1]
    return Event.model_validate(json.loads(line))


def test_an_event_reaches_the_endpoint_with_the_console_summary(fake_github, write_config,
                                                               run_cli, hook):
    fake_github.add_release("pytorch/xla", tag="v2.0", body=XLA)
    config = write_config(repos=("pytorch/xla",), notifiers=JSONL + APPRISE + 'format = "text"\n')
    result = run_cli("--config", str(config), "poll", env={"APPRISE_URLS": apprise_url(hook)})
    assert result.code == 0, result.stderr
    (received,) = hook.received
    assert received.path == "/hooks/tok3n-s3cret-1234"
    title, body = title_and_body(format_event(logged_event(config)), markdown=False)
    assert received.json()["title"] == title and "PyTorch/XLA" in title and "v2.0" in title
    assert received.json()["message"] == body
    assert "https://github.com/pytorch/xla/releases/tag/v2.0" in body


def test_markdown_body_and_urls_from_a_named_variable(fake_github, write_config, run_cli, hook):
    fake_github.add_release("pytorch/xla", tag="v2.0", body=XLA)
    config = write_config(repos=("pytorch/xla",),
                          notifiers=JSONL + APPRISE + 'urls = { env = "TEAM_URLS" }\n')
    env = {"TEAM_URLS": f"{apprise_url(hook, '/a')} {apprise_url(hook, '/b')}"}
    assert run_cli("--config", str(config), "poll", env=env).code == 0
    assert [r.path for r in hook.received] == ["/a", "/b"]
    _, body = title_and_body(format_event(logged_event(config)), markdown=True)
    assert hook.received[0].json()["message"] == body and "  \n" in body  # markdown breaks


def test_a_failed_send_stays_queued_and_a_retry_skips_urls_that_got_it(fake_github,
                                                                       write_config, run_cli,
                                                                       hook):
    fake_github.add_release("pytorch/xla", tag="v2.0", body=XLA)
    config = write_config(repos=("pytorch/xla",), notifiers=APPRISE)
    env = {"APPRISE_URLS": f"{apprise_url(hook, '/ok')} {apprise_url(hook, '/flaky')}"}
    hook.answer(200, 503)  # /ok gets it, /flaky answers 503
    first = run_cli("--config", str(config), "poll", env=env)
    assert first.code == 1
    assert "apprise notifier 'team': urls[1] (JSON) failed" in first.stderr
    assert "will retry" in first.stderr and "tok3n" not in first.stderr
    assert [r.path for r in hook.received] == ["/ok"]
    status = run_cli("--config", str(config), "status", "--json", env=env)
    assert json.loads(status.stdout)["pending_deliveries"] == 1
    second = run_cli("--config", str(config), "poll", env=env)
    assert second.code == 0, second.stderr
    assert [r.path for r in hook.received] == ["/ok", "/flaky"]  # /ok not twice


def test_an_unknown_webhook_is_a_permanent_failure(fake_github, write_config, run_cli, hook):
    fake_github.add_release("pytorch/xla", tag="v2.0", body=XLA)
    config = write_config(repos=("pytorch/xla",), notifiers=APPRISE)
    hook.answer(404)
    result = run_cli("--config", str(config), "poll", env={"APPRISE_URLS": apprise_url(hook)})
    assert result.code == 1
    assert "error=404" in result.stderr and "stays queued until this is fixed" in result.stderr
    data = json.loads(run_cli("--config", str(config), "status", "--json").stdout)
    assert data["failing_deliveries"][0]["permanent"] is True


def test_a_digest_goes_out_as_one_message(fake_github, write_config, run_cli, hook):
    fake_github.add_release("pytorch/xla", tag="v2.0", body=XLA)
    config = write_config(repos=("pytorch/xla",), notifiers=APPRISE + 'mode = "digest"\n')
    env = {"APPRISE_URLS": apprise_url(hook)}
    assert run_cli("--config", str(config), "poll", env=env).code == 0
    assert hook.received == []
    assert run_cli("--config", str(config), "digest", env=env).code == 0
    (received,) = hook.received
    assert "team" in received.json()["title"]
    assert "https://github.com/pytorch/xla/releases/tag/v2.0" in received.json()["message"]


@pytest.mark.parametrize(("notifier", "env", "message"), [
    (APPRISE, {}, "urls is not set: set the environment variable APPRISE_URLS"),
    (APPRISE + 'urls = { env = "TEAM_URLS" }\n', {},
     "urls is not set: set the environment variable TEAM_URLS"),
    (APPRISE, {"APPRISE_URLS": "nonsense://tok3n-s3cret-1234"},
     "urls[0] (nonsense://...) is not a URL apprise understands (appriseit.com/services "
     "shows each service's)"),
], ids=["no-urls", "named-variable-unset", "unknown-scheme"])
def test_config_check_refuses_what_apprise_cannot_use(write_config, run_cli, notifier, env,
                                                      message):
    config = write_config(notifiers=notifier)
    result = run_cli("--config", str(config), "config", "check", env=env)
    assert result.code == 2
    assert result.stderr == f"release-watch: {config}: notifier 'team': {message}\n"


def test_urls_are_masked_in_config_check(write_config, run_cli, hook):
    config = write_config(notifiers=APPRISE + f'urls = ["{apprise_url(hook)}"]\n')
    result = run_cli("--config", str(config), "config", "check")
    assert result.code == 0, result.stderr
    assert "tok3n" not in result.stdout and '"urls": [\n        "**********"' in result.stdout


def test_without_the_library_config_check_says_how_to_install_it(write_config, run_cli,
                                                                  monkeypatch, hook):
    monkeypatch.setitem(sys.modules, "apprise", None)  # import apprise → ImportError
    config = write_config(notifiers=APPRISE)
    result = run_cli("--config", str(config), "config", "check",
                     env={"APPRISE_URLS": apprise_url(hook)})
    assert result.code == 2
    assert ("the apprise notifier needs the apprise library: "
            "pip install 'release-watch[apprise]'") in result.stderr


def test_markdown_keeps_code_and_links_and_defuses_the_rest():
    body = ("https://github.com/o/r/releases/tag/v1\n"
            "BC-breaking (1):\n"
            "  - [nn] Rename `foo_bar` to *baz* <!channel> (#1)\n"
            "    was: old_text\n"
            "by kind: bug_fix 1")
    assert to_markdown(body).splitlines() == [
        "https://github.com/o/r/releases/tag/v1  ",
        "BC-breaking (1):  ",
        "",
        r"- \[nn\] Rename `foo_bar` to \*baz\* \<!channel\> (#1)",
        r"  - was: old\_text",
        "",
        r"by kind: bug\_fix 1",
    ]
