"""Every TOML example in the README and the guide (docs/) is a valid configuration, and the quick
start is intact."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from watcher.config import config_from_dict
from watcher.notes import taxonomy_for
from watcher.validate import notifier_configs

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()
DOCS = README + "".join(page.read_text() for page in sorted((ROOT / "docs").glob("*.md")))
EXAMPLES = re.findall(r"```toml\n(.*?)```", DOCS, re.DOTALL)
CI = (Path(__file__).parent.parent / ".ci" / "run").read_text()


def test_readme_has_toml_examples():
    assert EXAMPLES


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.split("\n", 1)[0])
def test_readme_config_examples_validate(example, tmp_path):
    config = config_from_dict(tomllib.loads(example), base_dir=tmp_path, source="README")
    notifier_configs(config)
    taxonomy_for(config)


def test_quick_start_has_two_commands_and_ci_runs_the_test_one():
    quick = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```sh\n(.*?)\n```", quick, re.DOTALL)
    assert len(commands) == 2
    assert "release-watch poll" in commands[0]
    assert "pytest" in commands[1] and commands[1] in CI


def test_the_contract_example_config_is_valid(tmp_path):
    path = Path(__file__).parent / "fixtures" / "contract" / "config-example.toml"
    config = config_from_dict(tomllib.loads(path.read_text()), base_dir=tmp_path,
                              source="CONTRACT")
    names = [cfg.name for _, cfg in notifier_configs(config)]
    assert names == ["console", "events-log", "releases-channel"]


# ---- the Prometheus examples of docs/running.md --------------------------------------

PROMETHEUS = {
    block.split("\n", 1)[0].lstrip("# ").split()[0]: block
    for block in re.findall(r"```yaml\n(.*?)```", DOCS, re.DOTALL)
    if block.startswith(("# prometheus.yml", "# release-watch.rules.yml"))
}
METRIC = re.compile(r"\brelease_watch_[a-z0-9_]+\b")


def _rules() -> list[dict]:
    import yaml

    groups = yaml.safe_load(PROMETHEUS["release-watch.rules.yml"])["groups"]
    return [rule for group in groups for rule in group["rules"]]


def _scrape(served_config, clock, fake_github, fake_slack):
    """A real scrape of a daemon's listener after a poll found a release and its delivery
    to Slack failed once: every family the alerts can ask about has samples."""
    from conftest import SLACK_TOKEN
    from fakes.slack import Scripted as SlackScripted
    from server_support import Served

    fake_github.add_release("pytorch/xla", tag="v1", body="- Fix a crash (#1)")
    fake_slack.script("/api/chat.postMessage", SlackScripted.server_error())
    server = Served(served_config, clock, {"SLACK_BOT_TOKEN": SLACK_TOKEN})
    try:
        server.poll()
        return server.metrics()
    finally:
        server.close()


def test_readme_has_the_scrape_config_and_the_rules():
    import yaml

    assert set(PROMETHEUS) == {"prometheus.yml", "release-watch.rules.yml"}
    (job,) = yaml.safe_load(PROMETHEUS["prometheus.yml"])["scrape_configs"]
    (target,) = job["static_configs"][0]["targets"]
    assert target.endswith(":9464")  # the port README's [server] example listens on
    assert [rule["alert"] for rule in _rules()] == [
        "ReleaseWatchNoSuccessfulPoll",
        "ReleaseWatchDeliveriesFailing",
        "ReleaseWatchRateLimitLow",
    ]


def test_every_metric_and_label_the_alert_rules_use_is_in_a_real_scrape(
    write_config, clock, fake_github, fake_slack
):
    """The rules cannot drift from the metrics: each name in an ``expr`` is a sample of a
    scrape, each label they select, group or annotate by is one of its labels."""
    from server_support import LISTEN

    fake_github.set_token(None)
    config = write_config(
        LISTEN,
        repos=("pytorch/xla",),
        slack_url=fake_slack.api_url,
        notifiers='[[notifiers]]\nname = "releases"\ntype = "slack"\nchannel = "#releases"\n'
        'min_interval = "0s"\nretries = 0\n',
    )
    samples = _scrape(config, clock, fake_github, fake_slack)
    labels_of: dict[str, set[str]] = {}
    for name, labels in samples:
        labels_of.setdefault(name, set()).update(label for label, _ in labels)
    rules = _rules()
    assert rules
    for rule in rules:
        expr = rule["expr"]
        used = set(METRIC.findall(expr))
        assert used, rule["alert"]
        missing = used - set(labels_of)
        assert not missing, f"{rule['alert']}: {sorted(missing)} not in a scrape"
        for name, matchers in re.findall(r"\b(release_watch_[a-z0-9_]+)\{([^}]*)\}", expr):
            for label, wanted in re.findall(r'(\w+)\s*=~?\s*"([^"]*)"', matchers):
                assert label in labels_of[name], (rule["alert"], name, label)
                values = {v for (n, ls), _ in samples.items() if n == name for k, v in ls
                          if k == label}
                assert wanted in values, (rule["alert"], name, label, wanted)
        grouped = {
            label.strip()
            for clause in re.findall(r"\b(?:by|on|without|ignoring)\s*\(([^)]*)\)", expr)
            for label in clause.split(",")
        }
        annotated = set(re.findall(r"\$labels\.(\w+)", str(rule.get("annotations", {}))))
        for label in grouped | annotated:
            assert any(label in labels_of[name] for name in used), (rule["alert"], label)


def test_the_no_successful_poll_alert_waits_as_status_check_does():
    """``> 1800`` is 3 intervals of the default poll.interval, as its comment says."""
    from watcher.health import STALE_INTERVALS

    (rule,) = [r for r in _rules() if r["alert"] == "ReleaseWatchNoSuccessfulPoll"]
    threshold = float(re.search(r">\s*(\d+)", rule["expr"]).group(1))
    interval = config_from_dict({}, base_dir=Path("."), source="defaults").poll.interval
    assert threshold == STALE_INTERVALS * interval
