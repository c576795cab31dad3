"""PR labels as ground truth: the ``release notes: X`` and ``topic: Y`` labels maintainers put
on PyTorch PRs, read in batches through GitHub's GraphQL API (100 PRs a query) and cached in
the store for good. Opt-in (``classify.use_pr_labels``), needs a token, and never fails a poll:
without a token, or when GitHub says no, items keep what their text says."""

from __future__ import annotations

import logging
import tomllib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache

from watcher.errors import ConfigError, WatcherError
from watcher.github import GitHubClient
from watcher.models import KINDS, SUBSYSTEMS
from watcher.resources import defaults_dir
from watcher.store import Store

logger = logging.getLogger(__name__)

BATCH = 100  # GitHub GraphQL: up to 100 nodes per connection; one alias per PR


@dataclass(frozen=True)
class LabelMap:
    release_notes: dict[str, str] = field(default_factory=dict)
    topics: dict[str, str] = field(default_factory=dict)

    def decide(self, labels: Iterable[str]) -> tuple[str | None, str | None]:
        """(subsystem, kind) the labels give, the most frequent across an item's PRs."""
        subsystems: Counter[str] = Counter()
        kinds: Counter[str] = Counter()
        for label in labels:
            prefix, _, value = label.partition(":")
            value = value.strip().lower()
            if prefix.strip().lower() == "release notes" and value in self.release_notes:
                subsystems[self.release_notes[value]] += 1
            elif prefix.strip().lower() == "topic" and value in self.topics:
                kinds[self.topics[value]] += 1
        return _most_common(subsystems), _most_common(kinds)


def _most_common(counter: Counter[str]) -> str | None:
    return counter.most_common(1)[0][0] if counter else None


@cache
def builtin_label_map() -> LabelMap:
    with (defaults_dir() / "pr_labels.toml").open("rb") as handle:
        data = tomllib.load(handle)
    return LabelMap(dict(data["release_notes"]), dict(data["topics"]))


def label_map(overrides: Mapping[str, str]) -> LabelMap:
    """The built-in map with ``classify.label_map`` entries ("release notes: foo" = "nn",
    "topic: bar" = "bug_fix") put over it."""
    base = builtin_label_map()
    if not overrides:
        return base
    release_notes, topics = dict(base.release_notes), dict(base.topics)
    for label, target in overrides.items():
        prefix, _, value = label.partition(":")
        key = value.strip().lower()
        if prefix.strip().lower() == "release notes" and target.split("/")[0] in SUBSYSTEMS:
            release_notes[key] = target
        elif prefix.strip().lower() == "topic" and target in KINDS:
            topics[key] = target
        else:
            raise ConfigError(f"classify.label_map: {label!r} = {target!r} is neither "
                              "'release notes: X' = subsystem nor 'topic: Y' = kind")
    return LabelMap(release_notes, topics)


class LabelSource:
    """Looks PR labels up once per PR and remembers them in the store."""

    def __init__(self, client: GitHubClient, store: Store, mapping: LabelMap) -> None:
        self.client = client
        self.store = store
        self.mapping = mapping
        self._warned = False

    def labels(self, repo: str, prs: Iterable[int]) -> dict[int, list[str]]:
        wanted = sorted(set(prs))
        known = self.store.pr_labels(repo, wanted)
        missing = [number for number in wanted if number not in known]
        for start in range(0, len(missing), BATCH):
            batch = missing[start:start + BATCH]
            try:
                fetched = self.client.pr_labels(repo, batch)
            except WatcherError as error:
                if not self._warned:
                    logger.warning("PR labels unavailable (%s); classifying by text", error)
                    self._warned = True
                break
            self.store.put_pr_labels(repo, fetched)
            known.update(fetched)
        return known
