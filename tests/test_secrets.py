"""Where a notifier's secrets come from (``watcher.delivery.secrets``, re-exported as
``handlers.secrets``): the file, { env = NAME }, or the field's default variable; which one a
message should name when it is missing."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from handlers.base import NotifierConfig, notifier_config, secret_field
from handlers.secrets import missing_secrets, resolve_secrets, secret_values


class Plugin(NotifierConfig):
    token: SecretStr | None = secret_field(env="PLUGIN_TOKEN", required=True, description="t")
    urls: list[SecretStr] | None = secret_field(env="PLUGIN_URLS", description="u")
    hint: str | None = None  # not a secret: never read from the environment


BASE = {"name": "n", "type": "plugin"}


@pytest.mark.parametrize(("raw", "environ", "token", "source"), [
    ({}, {"PLUGIN_TOKEN": "from-default"}, "from-default", "PLUGIN_TOKEN"),
    ({"token": {"env": "MINE"}}, {"MINE": "from-named", "PLUGIN_TOKEN": "x"}, "from-named",
     "MINE"),
    ({"token": "literal"}, {"PLUGIN_TOKEN": "x"}, "literal", None),
    ({}, {"PLUGIN_TOKEN": "  "}, None, "PLUGIN_TOKEN"),
    ({"token": {"env": "UNSET"}}, {}, None, "UNSET"),
], ids=["default-variable", "named-variable", "literal-wins", "blank-is-unset", "named-unset"])
def test_a_secret_comes_from_the_first_place_that_has_it(raw, environ, token, source):
    resolved, sources = resolve_secrets(Plugin, {**BASE, **raw}, environ)
    config = Plugin.model_validate(resolved)
    assert (config.token.get_secret_value() if config.token else None) == token
    assert sources.get("token") == source
    missing = missing_secrets(config, sources)
    assert missing == ([] if token else
                       [f"token is not set: set the environment variable {source}"])


def test_a_list_from_one_variable_splits_on_spaces_and_on_commas_before_a_url():
    environ = {"PLUGIN_TOKEN": "t",
               "PLUGIN_URLS": "json://a/1?to=x,y  mailto://b,discord://c/d\n"}
    resolved, _ = resolve_secrets(Plugin, BASE, environ)
    urls = [url.get_secret_value() for url in Plugin.model_validate(resolved).urls]
    assert urls == ["json://a/1?to=x,y", "mailto://b", "discord://c/d"]


def test_values_are_masked_everywhere_but_where_the_handler_reads_them(monkeypatch):
    monkeypatch.setattr("watcher.delivery.plugins.notifier_class", lambda name, where="": type(
        "P", (), {"Config": Plugin}))
    _, config = notifier_config({**BASE, "urls": ["json://h/s3cret"]}, "t",
                                environ={"PLUGIN_TOKEN": "tok-s3cret"})
    assert "s3cret" not in repr(config) and "s3cret" not in str(config.model_dump(mode="json"))
    assert sorted(secret_values(config)) == ["json://h/s3cret", "tok-s3cret"]
    assert config.secret_sources == {"token": "PLUGIN_TOKEN"}
    assert config.hint is None
