"""The ``feed`` notifier: an Atom feed (RFC 4287) of the newest events this notifier's filters
let through, written to a file and served by the daemon at ``/feeds/NAME.atom``.

The file is its own memory: each delivery reads the entries it holds, puts the event's entry
first (replacing one with the same id, so a delivery repeated after a crash is not listed
twice) and keeps the newest ``entries``. It is written whole to a temporary file beside it and
renamed over it, so a reader (or the daemon serving it) sees the old feed or the new one,
never half of one, and a failed write leaves the old feed as it was.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import tempfile
import xml.etree.ElementTree as ET
from collections import deque
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

from pydantic import Field

from handlers.base import Notifier, NotifierConfig, Progress
from watcher import __version__
from watcher.delivery import Digest
from watcher.errors import HandlerError
from watcher.models import Event
from watcher.present import changes_in_words, count_line, event_html, happened, headline
from watcher.untrusted import clean_line

logger = logging.getLogger(__name__)

ATOM = "http://www.w3.org/2005/Atom"
ID_PREFIX = "tag:release-watch,2026:"  # RFC 4151 tag URIs: ids that never change with a host
_QUALIFIED = f"{{{ATOM}}}"  # how ElementTree names Atom's elements when it reads a feed
# What XML 1.0 cannot carry at all (the controls are already shown as escapes by clean_text).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


class FeedConfig(NotifierConfig):
    path: str = Field(
        description="the Atom file to keep (written whole, atomically); "
        "relative paths start at the config file"
    )
    entries: int = Field(
        default=50, ge=1, le=1000, description="how many of the newest events the feed holds"
    )
    title: str | None = Field(
        default=None, description='the feed\'s title (default "release-watch: NAME")'
    )
    url: str | None = Field(
        default=None,
        description="the feed's public address, for its self link (default: /feeds/NAME.atom)",
    )


def _xml(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _stamp(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _add(parent: ET.Element, tag: str, text: str | None = None, **attributes: str) -> ET.Element:
    element = ET.SubElement(parent, tag, {k: _xml(v) for k, v in attributes.items()})
    if text is not None:
        element.text = _xml(text)
    return element


def _newest(entries: list[ET.Element]) -> datetime | None:
    """The feed's ``updated``: its newest entry's (one edited by hand may not parse)."""
    times = []
    for entry in entries:
        try:
            times.append(datetime.fromisoformat(entry.findtext("updated") or ""))
        except ValueError:
            continue
    return max(times, default=None)


def entry_id(event: Event) -> str:
    """The entry's id: the event's own id, which names the same change on every machine."""
    return ID_PREFIX + event.id


def _summary(event: Event) -> str:
    if event.event == "edited":
        return changes_in_words(event.items) or "title or prose edited"
    return count_line(event.items) if event.items else happened(event)


class FeedNotifier(Notifier):
    Config = FeedConfig

    @property
    def feed_config(self) -> FeedConfig:
        assert isinstance(self.config, FeedConfig)
        return self.config

    @property
    def path(self) -> Path:
        path = Path(os.path.expandvars(self.feed_config.path)).expanduser()
        return path if path.is_absolute() else self.context.base_dir / path

    def problems(self) -> list[str]:
        problems = super().problems()
        if self.path.is_dir():
            problems.append(f"path {self.path} is a directory; name the feed file")
        return problems

    def send(self, event: Event, progress: Progress) -> None:
        self._publish([event])

    def send_digest(self, digest: Digest, progress: Progress) -> None:
        """A digest's events as entries of their own, in one write: only the newest
        ``entries`` of them are held (a digest pages through a queue of any length)."""
        self._publish(list(deque(digest.events, maxlen=self.feed_config.entries)))

    def document(self, now: datetime) -> bytes:
        """The feed as served: the file, or an empty feed until the first event."""
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return self._render([], now)

    # ---- the file ---------------------------------------------------------------------------
    def _publish(self, events: list[Event]) -> None:
        entries = self._entries()
        for event in events:
            entries = [self._entry(event)] + [
                old for old in entries if old.findtext("id") != entry_id(event)
            ]
        kept = entries[: self.feed_config.entries]
        self._write(self._render(kept, _newest(kept)))

    def _entries(self) -> list[ET.Element]:
        """The entries the feed holds now. A file that is not a feed (damaged, or written by
        something else) is set aside, never silently lost, and the feed starts again."""
        try:
            root = ET.parse(self.path).getroot()
        except FileNotFoundError:
            return []
        except OSError as error:
            raise HandlerError(
                f"cannot read the feed {self.path}: {error.strerror or error}", notifier=self.name
            ) from None
        except ET.ParseError as error:
            root = ET.Element("unreadable", {"why": str(error)})
        if root.tag != _QUALIFIED + "feed":
            aside = self.path.with_name(self.path.name + ".broken")
            logger.warning(
                "%s: %s is not an Atom feed (%s); set aside as %s, starting a new feed",
                self.name,
                self.path,
                root.get("why", root.tag),
                aside,
            )
            with contextlib.suppress(OSError):
                os.replace(self.path, aside)
            return []
        entries = root.findall(_QUALIFIED + "entry")
        for element in (node for entry in entries for node in entry.iter()):
            # Atom's own elements written as the new ones are, under the feed's one xmlns.
            element.tag = element.tag.removeprefix(_QUALIFIED)
        return entries

    def _entry(self, event: Event) -> ET.Element:
        entry = ET.Element("entry")
        _add(entry, "id", entry_id(event))
        _add(entry, "title", headline(event), type="text")
        _add(entry, "updated", _stamp(event.detected_at))
        if event.published_at is not None:
            _add(entry, "published", _stamp(event.published_at))
        _add(entry, "link", rel="alternate", type="text/html", href=clean_line(event.url))
        _add(entry, "category", term=event.event, label=happened(event))
        _add(entry, "category", term=event.repo)
        _add(entry, "summary", _summary(event), type="text")
        _add(entry, "content", event_html(event, self.config.min_confidence), type="html")
        return entry

    def _render(self, entries: list[ET.Element], updated: datetime | None) -> bytes:
        config = self.feed_config
        feed = ET.Element("feed", {"xmlns": ATOM})
        _add(feed, "id", ID_PREFIX + "feed/" + quote(self.name, safe=""))
        _add(feed, "title", config.title or f"release-watch: {self.name}", type="text")
        _add(feed, "updated", _stamp(updated or datetime(1970, 1, 1, tzinfo=UTC)))
        _add(
            feed,
            "link",
            rel="self",
            type="application/atom+xml",
            href=config.url or f"/feeds/{quote(self.name, safe='')}.atom",
        )
        _add(_add(feed, "author"), "name", "release-watch")
        _add(feed, "generator", "release-watch", version=__version__)
        feed.extend(entries)
        document: bytes = ET.tostring(feed, encoding="utf-8", xml_declaration=True)
        return document

    def _write(self, data: bytes) -> None:
        """Whole or not at all: a temporary file beside the feed, flushed, then renamed."""
        path = self.path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(
                prefix=f".{path.name}.", suffix=".tmp", dir=path.parent
            )
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.chmod(temporary, 0o644)  # a feed is for reading: no secret in it
                os.replace(temporary, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
        except OSError as error:
            raise HandlerError(
                f"cannot write the feed {path}: {error.strerror or error}", notifier=self.name
            ) from None
