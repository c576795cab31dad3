"""A markdown link's label cannot pass for another address in Slack: a label that reads as a URL
or a host name, once NFKC-normalised with its look-alike dots taken for dots and its invisible
characters left out, shows the link's real address instead, unless it names the target's own
host."""

from __future__ import annotations

import pytest

from handlers.slack.text import to_mrkdwn

EVIL = "https://evil.example/x"


@pytest.mark.parametrize("label", [
    "pytorch.org",
    "pytorch\u2024org",  # ONE DOT LEADER
    "github\uff0ecom",  # FULLWIDTH FULL STOP
    "github\u3002com",  # IDEOGRAPHIC FULL STOP
    "github\uff61com",  # HALFWIDTH IDEOGRAPHIC FULL STOP
    "github\u2e33com",  # RAISED DOT
    "pytorch\ufe52org",  # SMALL FULL STOP
    "pytorch\u0701org",  # SYRIAC SUPRALINEAR FULL STOP (TR39 confusable)
    "pytorch\u00b7org",  # MIDDLE DOT
    "\uff50\uff59\uff54\uff4f\uff52\uff43\uff48.\uff4f\uff52\uff47",  # fullwidth letters
    "pytorch.\u200borg",  # a zero-width space after the dot
    "docs.pytorch.dev",
    "evil.zip",
    "see PyTorch.Org for the docs",
    "pytorch.org/get-started",
    "https://pytorch.org",
    "hxxps://anything",
    "www.pytorch",
    "10.0.0.1",
    "pytorch.org@evil.example",
], ids=["ascii", "one-dot-leader", "fullwidth-stop", "ideographic-stop", "halfwidth-stop",
        "raised-dot", "small-stop", "syriac-stop", "middle-dot", "fullwidth-letters",
        "zero-width-space", "dev-tld", "zip-tld", "inside-prose", "with-path", "with-scheme",
        "any-scheme", "www", "ipv4", "userinfo"])
def test_a_label_that_reads_as_another_address_shows_the_real_one(label):
    assert to_mrkdwn(f"Read [{label}]({EVIL}) now", "pytorch/pytorch") == f"Read <{EVIL}> now"


@pytest.mark.parametrize(("label", "url"), [
    ("pytorch.org", "https://pytorch.org/docs/stable"),
    ("PyTorch.org", "https://pytorch.org"),
    ("pytorch\u3002org", "https://pytorch.org/"),
    ("https://pytorch.org/get-started", "https://pytorch.org/get-started/locally"),
    ("the docs", "https://pytorch.org/docs"),
    ("Release v2.7.0", "https://github.com/pytorch/pytorch/releases"),
], ids=["same-host", "case", "look-alike-dot-same-host", "url-same-host", "prose", "version"])
def test_a_label_naming_its_own_host_or_no_address_is_kept(label, url):
    assert to_mrkdwn(f"[{label}]({url})", "pytorch/pytorch") == f"<{url}|{label}>"


def test_a_homograph_host_is_never_taken_for_its_own_label():
    """A label in another script equal to a look-alike target host reads as the name it
    imitates: the address is shown, percent-encoded."""
    url = "https://pyt\u043erch.org/x"  # a Cyrillic o
    assert to_mrkdwn(f"[pyt\u043erch.org]({url})", "o/r") == "<https://pyt%D0%BErch.org/x>"
