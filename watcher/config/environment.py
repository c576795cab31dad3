"""The environment variables that hold secrets, and their values read as they are: light (no
model, no pydantic), so that logging masks them from the first line of every command, before
a command that needs no configuration (``atlas diff`` of bundled releases) would load any."""

from __future__ import annotations

from collections.abc import Mapping

# ``GH_TOKEN`` is read where ``GITHUB_TOKEN`` is not set, as the gh CLI does.
SECRET_NAMES = ("GITHUB_TOKEN", "GH_TOKEN", "SLACK_BOT_TOKEN", "SLACK_WEBHOOK_URL",
                "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET")


def secret_variables(environ: Mapping[str, str]) -> dict[str, str]:
    """The secret variables set in ``environ``, their names in any case."""
    found = {name.upper(): value for name, value in environ.items()}
    return {name: found[name] for name in SECRET_NAMES if name in found}


def environment_secrets(environ: Mapping[str, str]) -> list[str]:
    """The secrets ``Secrets()`` would hold, as plain strings: ``GITHUB_TOKEN`` rather than
    ``GH_TOKEN`` when both are set."""
    found = secret_variables(environ)
    if "GITHUB_TOKEN" in found:
        found.pop("GH_TOKEN", None)
    return list(found.values())
