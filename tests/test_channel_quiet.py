"""What a channel muted and snoozed with a button: kept in the store (both backends), attached
to every notifier posting to that channel, and applied where events are routed."""

from __future__ import annotations

from datetime import UTC, datetime

from watcher.delivery import NotifierConfig, Quiet, release_ref, route
from watcher.models import Event, EventItem, Summary
from watcher.store import QuietEntry
from watcher.subscribe import quiet_notifiers

AT = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def _item(subsystem: str, kind: str = "bc_breaking") -> EventItem:
    return EventItem(subsystem=subsystem, kind=kind, text=f"{subsystem} change (#1)",
                     section=[], prs=[1])


def _event(kind: str = "published", release_id: int = 7, items=None) -> Event:
    items = [_item("distributed/fsdp"), _item("compile")] if items is None else items
    return Event(id=f"x:{release_id}:{kind}", event=kind, repo="pytorch/pytorch",
                 release_id=release_id, tag="v2.7.0", name=None, url="https://x",
                 prerelease=False, published_at=AT, detected_at=AT,
                 summary=Summary(items=len(items)), items=items)


def test_the_store_keeps_each_channels_mutes_and_snoozes_once(store):
    mute = QuietEntry("C1", "mute", "distributed", "team-dist", by="U1", at=AT.isoformat())
    assert store.put_quiet(mute)
    assert not store.put_quiet(mute)  # a second click of the same is no second row
    assert store.put_quiet(QuietEntry("C1", "snooze", release_ref("pytorch/pytorch", 7)))
    assert store.put_quiet(QuietEntry("C2", "mute", "compile"))
    assert [(e.what, e.target, e.by) for e in store.quiet_entries("C1")] == [
        ("snooze", "pytorch/pytorch#7", ""), ("mute", "distributed", "U1")]
    assert store.delete_quiet("C1", "mute", "distributed")
    assert not store.delete_quiet("C1", "mute", "distributed")
    assert {e.channel for e in store.quiet_entries()} == {"C1", "C2"}


def test_a_muted_subsystem_leaves_the_channel_from_the_next_event_its_finer_ones_too():
    config = NotifierConfig(name="n", type="slack").quieted(Quiet(muted=frozenset({"distributed"})))
    view = route(_event(), config)
    assert view is not None and [i.subsystem for i in view.items] == ["compile"]
    assert route(_event(items=[_item("distributed")]), config) is None
    deleted = _event("deleted", items=[])
    assert route(deleted, config) is deleted  # a mute keeps no deletion out


def test_a_snoozed_release_sends_nothing_more_but_other_releases_do():
    config = NotifierConfig(name="n", type="slack").quieted(
        Quiet(snoozed=frozenset({release_ref("PyTorch/PyTorch", 7)})))
    for kind in ("edited", "released", "deleted"):
        assert route(_event(kind), config) is None
    assert route(_event("edited", release_id=8), config) is not None


class _Notifier:
    def __init__(self, config: NotifierConfig) -> None:
        self.config = config


class _SlackConfig(NotifierConfig):
    channel: str | None = None


def test_every_notifier_posting_to_the_channel_gets_its_quiet_by_id_or_name_and_loses_it():
    by_name = _Notifier(_SlackConfig(name="a", type="slack", channel="#team-dist"))
    by_id = _Notifier(_SlackConfig(name="b", type="slack", channel="C1"))
    other = _Notifier(_SlackConfig(name="c", type="slack", channel="#elsewhere"))
    console = _Notifier(NotifierConfig(name="d", type="console"))
    notifiers = {n.config.name: n for n in (by_name, by_id, other, console)}
    quiet_notifiers(notifiers, [QuietEntry("C1", "mute", "compile", "team-dist")])
    assert by_name.config.quiet.muted == by_id.config.quiet.muted == {"compile"}
    assert not other.config.quiet and not console.config.quiet
    quiet_notifiers(notifiers, [])  # unmuted: the next job routes without it
    assert not by_name.config.quiet and not by_id.config.quiet
