"""The Slack app manifest (``deploy/slack-app-manifest.yml``) asks for exactly the bot scopes
the code needs: every Web API method release-watch calls with the bot token is read from the
source and mapped to the scope Slack documents for it (api.slack.com/methods/METHOD, "Required
scopes"); a new call with no entry here fails, and so does a scope the code no longer needs."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).parent.parent
# slack-sdk's method name -> the bot scopes of which one suffices (api.slack.com/methods).
SCOPES: dict[str, set[str]] = {
    "chat_postMessage": {"chat:write"},
    "chat_update": {"chat:write"},
    "conversations_members": {"channels:read", "groups:read"},  # public, private channels
    "auth_test": set(),
}
# Not the bot's Web API: Socket Mode's own client (the app-level token, connections:write).
NOT_BOT_METHODS = {"apps_connections_open", "send_socket_mode_response", "is_connected"}
# A call on slack-sdk's WebClient, as the code names it (``web``, ``_web()``, ``client``).
_CALL = re.compile(r"\b_?(?:web(?:\(\))?|client)\.([a-z]+_\w+)\(")


def called() -> set[str]:
    found: set[str] = set()
    for path in ROOT.glob("handlers/**/*.py"):  # the core never calls Slack
        found |= set(_CALL.findall(path.read_text(encoding="utf-8")))
    return found


def test_every_web_api_call_has_its_scope_and_the_manifest_asks_for_exactly_those():
    methods = called()
    assert {"chat_postMessage", "chat_update", "conversations_members"} <= methods
    unknown = methods - set(SCOPES) - NOT_BOT_METHODS
    assert not unknown, f"add the scopes of {unknown} to SCOPES and the manifest"
    manifest = yaml.safe_load((ROOT / "deploy" / "slack-app-manifest.yml").read_text())
    asked = set(manifest["oauth_config"]["scopes"]["bot"])
    needed = set().union(*(SCOPES[method] for method in methods if method in SCOPES))
    assert asked == needed | {"commands"}  # the slash command needs "commands"
    assert manifest["settings"]["interactivity"]["is_enabled"] is True
    assert "event_subscriptions" not in manifest.get("settings", {})
