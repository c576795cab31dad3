"""Slack's ``auth.test`` for ``config check --online``: is the bot token accepted, and as whom.
It posts nothing (api.slack.com/methods/auth.test)."""

from __future__ import annotations

from urllib.error import URLError

from pydantic import SecretStr
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from handlers.slack.answers import PERMANENT, error_code


def auth_test(api_url: str, token: SecretStr, timeout: float = 10.0) -> tuple[bool, str]:
    """(works, one line saying who the token is, or what failed and the fix)."""
    # No retry handlers: a check answers at once; the daemon's own clients retry.
    client = WebClient(token=token.get_secret_value(), base_url=api_url, timeout=int(timeout),
                       retry_handlers=[])
    try:
        answer = client.auth_test()
    except SlackApiError as error:
        code = error_code(error)
        fix = PERMANENT.get(code, "see api.slack.com/methods/auth.test#errors")
        return False, f"auth.test answered {code or 'an error'}: {fix}"
    except (SlackClientError, URLError, OSError) as error:
        return False, (f"cannot reach {api_url} ({type(error).__name__}): check [slack] api_url "
                       "and the network")
    return True, (f"SLACK_BOT_TOKEN accepted: bot {answer.get('user')!s} in workspace "
                  f"{answer.get('team')!s}")
