"""``/release-watch`` command text → what it asks for: ``subscribe [OWNER/NAME] [subsystem ...]
[kind ...] [--digest "cron"]``, ``unsubscribe <the same words> | N ... | all``, ``list``,
``help``. Pure: every word is checked against the ``Vocabulary``; what cannot be read becomes an
``Unclear`` whose message says why, and what was probably meant.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from watcher.config import digest_trigger
from watcher.errors import ConfigError
from watcher.subscribe.vocabulary import Vocabulary

# Slack clients type typographic quotes ("smart punctuation") where people typed plain ones.
_QUOTES = str.maketrans(
    {"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2018": "'", "\u2019": "'"}
)
DIGEST_WORDS = {"weekly": "0 9 * * MON", "daily": "0 9 * * *", "weekdays": "0 9 * * MON-FRI"}
DEFAULT_DIGEST = DIGEST_WORDS["weekly"]
_CRON_FIELD = re.compile(r"[0-9*/,A-Za-z-]+")
_CHANNEL = re.compile(r"^(?:#\S+|<#[A-Z0-9]+(?:\|[^>]*)?>)$")
_VERBS = {
    "subscribe": "subscribe",
    "sub": "subscribe",
    "unsubscribe": "unsubscribe",
    "unsub": "unsubscribe",
    "remove": "unsubscribe",
    "list": "list",
    "ls": "list",
    "show": "list",
    "help": "help",
}


@dataclass(frozen=True)
class Filters:
    """None: all (every watched repo, every subsystem, every kind)."""

    repos: list[str] | None = None
    subsystems: list[str] | None = None
    kinds: list[str] | None = None


@dataclass(frozen=True)
class Subscribe:
    filters: Filters
    digest: str | None = None  # a cron line; None: each event as it is found


@dataclass(frozen=True)
class Unsubscribe:
    filters: Filters | None = None  # None with neither ids nor everything: nothing named
    ids: tuple[int, ...] = ()
    everything: bool = False


@dataclass(frozen=True)
class ListSubscriptions:
    pass


@dataclass(frozen=True)
class Help:
    pass


@dataclass(frozen=True)
class Unclear:
    """The command cannot be read; ``message`` says why (mrkdwn, user text escaped)."""

    message: str


Command = Subscribe | Unsubscribe | ListSubscriptions | Help | Unclear


def escape(text: str) -> str:
    """What someone typed, shown back in Slack as text: no mention, link or markup of it
    takes effect (api.slack.com/reference/surfaces/formatting#escaping)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


MAX_SHOWN = 60  # characters of a word shown back; what someone typed need not be echoed whole
MAX_NAMED = 3  # unknown words an answer names (with what was meant); the rest are counted


def code(text: str) -> str:
    shown = text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"
    return f"`{escape(shown).replace('`', '')}`"


def parse_command(text: str, vocabulary: Vocabulary) -> Command:
    try:
        words = shlex.split(text.translate(_QUOTES))
    except ValueError:
        return Unclear(
            'A quotation mark is not closed: quote a digest schedule like `--digest "0 9 * * MON"`.'
        )
    if not words or words[0].lower() == "help":
        return Help()
    verb = _VERBS.get(words[0].lower())
    if verb == "list":
        return ListSubscriptions()
    if verb == "subscribe":
        return _subscribe(words[1:], vocabulary)
    if verb == "unsubscribe":
        return _unsubscribe(words[1:], vocabulary)
    if vocabulary.meaning(words[0]) is not None:
        return Unclear(
            f"Did you mean {code('subscribe ' + ' '.join(words))}? Commands: "
            "`subscribe`, `unsubscribe`, `list`, `help`."
        )
    return Unclear(
        f"I don't know the command {code(words[0])}. Commands: `subscribe`, "
        "`unsubscribe`, `list`, `help`."
    )


def _subscribe(words: list[str], vocabulary: Vocabulary) -> Command:
    rest, digest, problem = _take_digest(words)
    if problem:
        return Unclear(problem)
    filters, problems = _filters(rest, vocabulary)
    return Unclear(" ".join(problems)) if problems else Subscribe(filters, digest)


def _unsubscribe(words: list[str], vocabulary: Vocabulary) -> Command:
    if [w.lower() for w in words] == ["all"]:
        return Unsubscribe(everything=True)
    if words and all(w.isdigit() for w in words):
        return Unsubscribe(ids=tuple(int(w) for w in words))
    rest, _, problem = _take_digest(words)  # "the same words": the schedule is not needed
    if problem:
        return Unclear(problem)
    if not rest:
        return Unclear(
            "Unsubscribe from what? Give the words you subscribed with, the number "
            "`list` shows, or `all`."
        )
    filters, problems = _filters(rest, vocabulary)
    return Unclear(" ".join(problems)) if problems else Unsubscribe(filters)


def _take_digest(words: list[str]) -> tuple[list[str], str | None, str | None]:
    """The words without ``--digest [SCHEDULE]``, the schedule, and what is wrong with it.
    The schedule is one quoted argument, five cron fields typed unquoted, a word (``daily``,
    ``weekly``, ``weekdays``), or nothing (weekly, Mondays 09:00 UTC)."""
    rest: list[str] = []
    digest: str | None = None
    index = 0
    while index < len(words):
        word = words[index]
        flag, equals, value = word.partition("=")
        if flag.lower() not in ("--digest", "—digest", "-digest"):
            if word.startswith("-"):
                return (
                    [],
                    None,
                    (
                        f"I don't know the option {code(word)}; the one option is "
                        '`--digest "0 9 * * MON"`.'
                    ),
                )
            rest.append(word)
            index += 1
            continue
        following = words[index + 1 :]
        if equals:
            digest, used = value, 0
        elif following and (" " in following[0] or following[0].lower() in DIGEST_WORDS):
            digest, used = following[0], 1
        elif (
            len(following) >= 5
            and all(_CRON_FIELD.fullmatch(f) for f in following[:5])
            and following[0][0] in "0123456789*"
        ):
            digest, used = " ".join(following[:5]), 5
        else:
            digest, used = DEFAULT_DIGEST, 0
        index += 1 + used
    if digest is None:
        return rest, None, None
    digest = DIGEST_WORDS.get(digest.strip().lower(), " ".join(digest.split()))
    try:
        digest_trigger(digest, "UTC")
    except ConfigError as error:
        reason = str(error).split("is not valid cron: ", 1)[-1]
        return (
            [],
            None,
            (
                f"{code(digest)} is not a schedule I can read ({escape(reason)}). "
                "Write it as cron, minute hour day month weekday, in UTC: "
                '`--digest "0 9 * * MON"` is Mondays at 09:00.'
            ),
        )
    return rest, digest, None


def _filters(words: list[str], vocabulary: Vocabulary) -> tuple[Filters, list[str]]:
    found: dict[str, list[str]] = {"repo": [], "subsystem": [], "kind": []}
    unknown: list[str] = []
    for word in words:
        meaning = vocabulary.meaning(word)
        if meaning is not None:
            if meaning.value not in found[meaning.kind]:
                found[meaning.kind].append(meaning.value)
        elif word not in unknown:
            unknown.append(word)
    if len(unknown) <= MAX_NAMED:  # each one's nearest words are worth their cost
        problems = [_unknown(word, vocabulary) for word in unknown]
    else:  # an answer as long as the command helps nobody: the first few, and a count
        named = ", ".join(code(word) for word in unknown[:MAX_NAMED])
        problems = [
            f"I don't know these words: {named} and {len(unknown) - MAX_NAMED} more "
            "(`/release-watch help` lists the subsystems, kinds and repositories)."
        ]
    filters = Filters(
        repos=found["repo"] or None,
        subsystems=found["subsystem"] or None,
        kinds=found["kind"] or None,
    )
    return filters, problems


def _unknown(word: str, vocabulary: Vocabulary) -> str:
    if vocabulary.ambiguous(word):
        return (
            f"{code(word)} is both a subsystem and a kind: write "
            f"{code('subsystem:' + word)} or {code('kind:' + word)}."
        )
    if _CHANNEL.match(word):
        return (
            f"A subscription posts where it is made: type the command in {escape(word)} "
            "itself (and invite the app there)."
        )
    shared = vocabulary.shared(word)
    if shared:
        return f"{code(word)} is in several subsystems: write {' or '.join(map(code, shared))}."
    near = vocabulary.suggestions(word)
    if vocabulary.looks_like_repo(word):
        watched = ", ".join(vocabulary.repos) or "none"
        guess = f" Did you mean {' or '.join(map(code, near))}?" if near else ""
        return f"{code(word)} is not a watched repository (watched: {escape(watched)})." + guess
    if near:
        return f"I don't know {code(word)}: did you mean {' or '.join(map(code, near))}?"
    return (
        f"I don't know {code(word)}: it is no subsystem, kind or watched repository "
        "(`/release-watch help` lists them)."
    )
