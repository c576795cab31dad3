"""``/release-watch`` without a transport: the command parser, the words of the answers, the
store's subscriptions, and the service that answers one command (admins, read-only configured
notifiers, what an unsubscribe removes)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import SLACK_TOKEN

from watcher.config import Secrets, config_from_dict
from watcher.store import Store, Subscription
from watcher.subscribe import (
    SlashCommands,
    Vocabulary,
    parse_command,
    schedule_words,
    settings_from,
)
from watcher.subscribe.parse import Filters, Help, ListSubscriptions, Subscribe, Unsubscribe

WATCHED = ["pytorch/pytorch", "pytorch/xla"]
NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def vocabulary() -> Vocabulary:
    return Vocabulary(WATCHED, orgs=["meta-pytorch"])


PARSED = [
    (
        "subscribe distributed bc_breaking",
        Subscribe(Filters(subsystems=["distributed"], kinds=["bc_breaking"])),
    ),
    ("subscribe", Subscribe(Filters())),
    (
        'subscribe pytorch/xla spmd BC-breaking Deprecations --digest "0 9 * * MON"',
        Subscribe(
            Filters(["pytorch/xla"], ["spmd"], ["bc_breaking", "deprecation"]), "0 9 * * MON"
        ),
    ),
    ("subscribe distributed/fsdp FSDP fsdp", Subscribe(Filters(subsystems=["distributed/fsdp"]))),
    (
        "subscribe torch.compile inductor",
        Subscribe(Filters(subsystems=["compile", "compile/inductor"])),
    ),
    (
        "SUBSCRIBE PyTorch/PyTorch bug-fixes",
        Subscribe(Filters(["pytorch/pytorch"], None, ["bug_fix"])),
    ),
    ("subscribe meta-pytorch/torchtitan", Subscribe(Filters(["meta-pytorch/torchtitan"]))),
    ("subscribe kind:other subsystem:other", Subscribe(Filters(None, ["other"], ["other"]))),
    ("subscribe export --digest", Subscribe(Filters(subsystems=["export"]), "0 9 * * MON")),
    ("subscribe --digest daily export", Subscribe(Filters(subsystems=["export"]), "0 9 * * *")),
    (
        "subscribe export --digest 30 8 * * 1-5",
        Subscribe(Filters(subsystems=["export"]), "30 8 * * 1-5"),
    ),
    (
        "subscribe export \u2014digest=\u201c0 7 * * FRI\u201d",  # what a Mac's Slack types
        Subscribe(Filters(subsystems=["export"]), "0 7 * * FRI"),
    ),
    (
        "unsubscribe distributed bc_breaking",
        Unsubscribe(Filters(subsystems=["distributed"], kinds=["bc_breaking"])),
    ),
    ("unsubscribe all", Unsubscribe(everything=True)),
    ("unsubscribe 3 7", Unsubscribe(ids=(3, 7))),
    ("list", ListSubscriptions()),
    ("", Help()),
    ("help", Help()),
]


@pytest.mark.parametrize(("text", "expected"), PARSED, ids=[t or "(empty)" for t, _ in PARSED])
def test_commands_parse(text, expected, vocabulary):
    assert parse_command(text, vocabulary) == expected


UNCLEAR = [
    ("subscribe distributd bc_braking", ["did you mean `distributed`", "`bc_breaking`"]),
    ("subscribe other", ["both a subsystem and a kind", "`subsystem:other`"]),
    ("subscribe dynamic_shapes", ["`compile/dynamic_shapes` or `export/dynamic_shapes`"]),
    ("subscribe pytorch/vision", ["not a watched repository", "pytorch/pytorch, pytorch/xla"]),
    ("subscribe pytorch/pytroch", ["Did you mean `pytorch/pytorch`"]),
    ("subscribe distributed/fdsp", ["did you mean `distributed/fsdp`"]),
    ('subscribe --digest "0 25 * * *"', ["not a schedule I can read", "hour '25'"]),
    ('subscribe --digest "0 9 * *', ["quotation mark is not closed"]),
    ("subscribe --weekly", ["don't know the option `--weekly`"]),
    ("subscribe #other-team", ["type the command in #other-team"]),
    ("subscribe <@U123> <!channel>", ["`&lt;@U123&gt;`", "`&lt;!channel&gt;`"]),
    ("distributed", ["Did you mean `subscribe distributed`"]),
    ("frobnicate", ["don't know the command `frobnicate`"]),
    ("unsubscribe", ["Unsubscribe from what?"]),
]


@pytest.mark.parametrize(("text", "says"), UNCLEAR, ids=[t for t, _ in UNCLEAR])
def test_what_cannot_be_read_says_why(text, says, vocabulary):
    parsed = parse_command(text, vocabulary)
    message = getattr(parsed, "message", None)
    assert message is not None, parsed
    for words in says:
        assert words in message
    assert "<@" not in message and "<!" not in message  # typed text never pings anyone


@pytest.mark.parametrize(
    ("cron", "words"),
    [
        (None, "as they appear"),
        ("0 9 * * MON", "in a weekly digest, Mondays at 09:00 UTC"),
        ("30 17 * * 5", "in a weekly digest, Fridays at 17:30 UTC"),
        ("0 9 * * mon,thu", "in a digest, Mondays and Thursdays at 09:00 UTC"),
        ("0 8 * * 1-5", "in a digest on weekdays at 08:00 UTC"),
        ("0 6 * * *", "in a daily digest at 06:00 UTC"),
        ("0 */6 * * *", "in a digest on the schedule `0 */6 * * *` (cron, UTC)"),
    ],
)
def test_schedules_in_words(cron, words):
    assert schedule_words(cron) == words


# ---- the store ------------------------------------------------------------------------------


def subscription(**fields) -> Subscription:
    return Subscription(
        **{
            "channel": "C0DIST",
            "channel_name": "dist",
            "created_at": NOW,
            "created_by": "U1",
            **fields,
        }
    )


def test_subscriptions_survive_reopening_the_store(tmp_path):
    store = Store.open(tmp_path / "store")
    first = store.add_subscription(subscription(subsystems=["distributed"], kinds=["bc_breaking"]))
    second = store.add_subscription(
        subscription(channel="C0XLA", repos=["pytorch/xla"], digest_schedule="0 9 * * MON")
    )
    store.close()
    again = Store.open(tmp_path / "store", read_only=True)
    try:
        assert again.subscriptions() == [first, second]
        assert again.subscriptions("C0XLA") == [second]
        assert (first.id, second.id) == (1, 2) and second.notifier_name == "subscription-2"
    finally:
        again.close()


def test_a_store_written_before_the_table_has_no_subscriptions_read_only(tmp_path):
    Store.open(tmp_path / "store").close()
    with sqlite3.connect(tmp_path / "store" / "cache.db") as db:
        db.execute("DROP TABLE rw_subscription")
    old = Store.open(tmp_path / "store", read_only=True)
    assert old.subscriptions() == []  # status reads such a store without an error
    old.close()
    Store.open(tmp_path / "store").close()  # a writable open adds the table, same schema
    reopened = Store.open(tmp_path / "store")
    assert reopened.add_subscription(subscription()).id == 1
    reopened.close()


# ---- the service ---------------------------------------------------------------------------

CONFIG = {
    "repos": [{"name": name} for name in WATCHED],
    "slack": {"api_url": "http://127.0.0.1:9/api/"},
    "notifiers": [
        {
            "name": "dist-training",
            "type": "slack",
            "channel": "#dist",
            "subsystems": ["distributed"],
        },
        {"name": "elsewhere", "type": "slack", "channel": "#other"},
    ],
}


def commands(
    tmp_path: Path, *, admins: list[str] | None = None, bot_token: bool = True
) -> tuple[SlashCommands, Store]:
    raw = {**CONFIG, "slack": {**CONFIG["slack"], "admins": admins or []}}
    config = config_from_dict(raw, base_dir=tmp_path, source="test.toml")
    secrets = Secrets.model_validate({"SLACK_BOT_TOKEN": "xoxb-1"} if bot_token else {})
    store = Store.open(tmp_path / "store")
    return SlashCommands(store, lambda: settings_from(config, secrets, {}), lambda: NOW), store


def typed(text: str, *, user: str = "U01", channel: str = "C0DIST") -> dict[str, str]:
    return {
        "text": text,
        "channel_id": channel,
        "channel_name": "dist",
        "user_id": user,
        "team_id": "T01",
        "command": "/release-watch",
    }


def test_subscribe_says_exactly_what_will_be_posted(tmp_path):
    service, store = commands(tmp_path)
    answer = service.respond(typed("subscribe pytorch/pytorch distributed bc_breaking"))
    assert answer["response_type"] == "ephemeral"
    assert answer["text"].startswith(
        "Subscribed <#C0DIST> to pytorch/pytorch: BC-breaking items in Distributed, as they appear."
    )
    weekly = service.respond(typed('subscribe xla spmd --digest "0 9 * * MON"'))
    assert "I don't know `xla`" in weekly["text"]
    weekly = service.respond(typed('subscribe pytorch/xla spmd --digest "0 9 * * MON"'))
    assert weekly["text"].startswith(
        "Subscribed <#C0DIST> to pytorch/xla: every item in SPMD, "
        "in a weekly digest, Mondays at 09:00 UTC."
    )
    assert "1 other subscription" in weekly["text"]
    stored = store.subscriptions("C0DIST")
    assert [(s.repos, s.subsystems, s.kinds, s.digest_schedule, s.created_by) for s in stored] == [
        (["pytorch/pytorch"], ["distributed"], ["bc_breaking"], None, "U01"),
        (["pytorch/xla"], ["spmd"], None, "0 9 * * MON", "U01"),
    ]
    again = service.respond(typed("subscribe bc_breaking pytorch/pytorch distributed"))
    assert "already subscribed" in again["text"] and len(store.subscriptions()) == 2
    everything = service.respond(typed("subscribe", channel="C0ALL"))
    assert (
        "every watched repository (pytorch/pytorch, pytorch/xla): every item" in everything["text"]
    )


def test_a_new_schedule_replaces_the_same_subscription(tmp_path):
    service, store = commands(tmp_path)
    service.respond(typed("subscribe distributed"))
    answer = service.respond(typed("subscribe distributed --digest daily"))
    assert "replaces" in answer["text"]
    (only,) = store.subscriptions()
    assert only.digest_schedule == "0 9 * * *"


def test_only_admins_change_subscriptions_but_everyone_may_list(tmp_path):
    service, store = commands(tmp_path, admins=["UADMIN"])
    refused = service.respond(typed("subscribe distributed", user="U999"))
    assert "Only the release-watch admins (<@UADMIN>)" in refused["text"]
    assert store.subscriptions() == []
    assert "Subscribed" in service.respond(typed("subscribe distributed", user="UADMIN"))["text"]
    assert (
        "Only the release-watch admins"
        in service.respond(typed("unsubscribe all", user="U999"))["text"]
    )
    assert len(store.subscriptions()) == 1
    listed = service.respond(typed("list", user="U999"))["text"]
    assert "every item in Distributed, as they appear (subscribed by <@UADMIN>" in listed
    assert "<@UADMIN>" in service.respond(typed("help", user="U999"))["text"]


def test_configured_notifiers_are_listed_read_only_and_never_removed(tmp_path):
    service, store = commands(tmp_path)
    listed = service.respond(typed("list"))["text"]
    assert (
        "`dist-training` from the config file, read-only here: every watched repository "
        "(pytorch/pytorch, pytorch/xla): every item in Distributed, as they appear"
    ) in listed
    assert "elsewhere" not in listed  # it posts to another channel
    answer = service.respond(typed("unsubscribe distributed"))["text"]
    assert "has no subscriptions to remove" in answer
    assert "read-only from Slack" in answer and "`dist-training`" in answer
    service.respond(typed("subscribe distributed bc_breaking"))
    answer = service.respond(typed("unsubscribe all"))["text"]
    assert "Unsubscribed <#C0DIST> from:\n• every watched repository" in answer
    assert "Still posting here from release-watch's config file" in answer
    assert store.subscriptions() == []


def test_unsubscribe_by_words_number_or_all_and_its_queue_goes_too(tmp_path):
    service, store = commands(tmp_path)
    service.respond(typed("subscribe distributed bc_breaking"))
    service.respond(typed("subscribe compile --digest"))
    service.respond(typed("subscribe cuda", channel="C0CUDA"))
    first, second, other = store.subscriptions()
    store.db.execute(
        "INSERT INTO rw_delivery (id, event_id, notifier, record) VALUES ('d', 'e', ?, '{}')",
        (first.notifier_name,),
    )
    store.db.execute(
        "INSERT INTO rw_digest_queue (notifier, event_id) VALUES (?, 'e')", (second.notifier_name,)
    )
    answer = service.respond(typed("unsubscribe bc_breaking distributed"))["text"]
    assert "Unsubscribed <#C0DIST> from:\n• every watched repository" in answer
    assert store.pending_count() == 0  # its queued delivery went with it
    stranger = service.respond(typed(f"unsubscribe {other.id}"))["text"]
    assert f"has no subscription number {other.id}" in stranger  # another channel's
    nothing = service.respond(typed("unsubscribe mps"))["text"]
    assert "No subscription of <#C0DIST> asks for exactly that" in nothing
    assert f"• {second.id}: every watched repository" in nothing  # what there is
    service.respond(typed(f"unsubscribe {second.id}"))
    assert store.digest_sizes() == {} and store.subscriptions() == [other]


def test_no_subscription_without_a_bot_token_or_outside_a_channel(tmp_path):
    service, store = commands(tmp_path, bot_token=False)
    assert "no SLACK_BOT_TOKEN" in service.respond(typed("subscribe distributed"))["text"]
    service, store = commands(tmp_path / "2")
    assert (
        "not a direct message"
        in service.respond(typed("subscribe distributed", channel="D0123"))["text"]
    )
    assert store.subscriptions() == []


def test_a_failing_store_is_one_answer_and_one_log_line(tmp_path, caplog):
    service, store = commands(tmp_path)
    store.close()
    answer = service.respond(typed("subscribe distributed"))
    assert answer["text"].startswith("Sorry, release-watch could not do that")
    assert any("/release-watch failed" in r.getMessage() for r in caplog.records)


def test_one_shot_poll_and_digest_deliver_to_subscriptions(
    fake_github, fake_slack, write_config, run_cli
):
    """Not only the daemon: ``poll`` and ``digest`` run by hand route to the subscriptions
    too (without them, what was queued for a subscription would be dropped)."""
    fake_slack.add_token(SLACK_TOKEN, channels=["#dist", "#weekly"])
    config = write_config(
        "[poll]\nfirst_run_announce = 0\n", repos=("pytorch/pytorch",), slack_url=fake_slack.api_url
    )
    env = {"SLACK_BOT_TOKEN": SLACK_TOKEN}
    fake_github.add_release("pytorch/pytorch", tag="v1", body="## CUDA\n- Fix (#1)\n")
    assert run_cli("--config", str(config), "poll", env=env).code == 0
    store = Store.open(config.parent / "store")
    dist, weekly = fake_slack.channel_id("#dist"), fake_slack.channel_id("#weekly")
    store.add_subscription(subscription(channel=dist, subsystems=["distributed"]))
    store.add_subscription(subscription(channel=weekly, digest_schedule="0 9 * * MON"))
    store.close()
    body = "## Distributed\n- Fix `barrier` (#2)\n## CUDA\n- Fix `cudaMalloc` (#3)\n"
    fake_github.add_release("pytorch/pytorch", tag="v2", body=body)
    assert run_cli("--config", str(config), "poll", env=env).code == 0
    posted = "\n".join(m.all_text() for m in fake_slack.channel_messages(dist))
    assert "barrier" in posted and "cudaMalloc" not in posted
    assert fake_slack.channel_messages(weekly) == []  # queued for its digest
    digest = run_cli("--config", str(config), "digest", "--notifier", "subscription-2", env=env)
    assert digest.code == 0, digest.stderr
    weekly_text = "\n".join(m.all_text() for m in fake_slack.channel_messages(weekly))
    assert "barrier" in weekly_text and "cudaMalloc" in weekly_text
