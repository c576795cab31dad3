"""Configuration: the TOML file merged over the built-in defaults, validated strictly.

A misspelled key is an error (``extra="forbid"``), never silently ignored. Secrets do not live in
the file: they come from the environment (see ``Secrets``) and are ``SecretStr`` everywhere.
``schema`` is the tables' models, ``durations`` how ``10m`` is read and shown, ``cron`` how a
digest schedule is read (APScheduler's own cron trigger), ``load`` reads and merges the file,
``problems`` says what is wrong with it in the file's own words, ``environment`` which variables
hold secrets (read there without a model, so that logging masks them from the start).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from watcher.config.cron import cron_weekdays as cron_weekdays
    from watcher.config.cron import digest_trigger as digest_trigger
    from watcher.config.cron import digest_zone as digest_zone
    from watcher.config.durations import Duration as Duration
    from watcher.config.durations import format_duration as format_duration
    from watcher.config.durations import parse_duration as parse_duration
    from watcher.config.environment import environment_secrets as environment_secrets
    from watcher.config.impact import ImpactConfig as ImpactConfig
    from watcher.config.load import checked_config as checked_config
    from watcher.config.load import checked_file as checked_file
    from watcher.config.load import config_from_dict as config_from_dict
    from watcher.config.load import find_config_file as find_config_file
    from watcher.config.load import load_config as load_config
    from watcher.config.load import load_sections as load_sections
    from watcher.config.problems import describe_validation_error as describe_validation_error
    from watcher.config.problems import invalid_keys as invalid_keys
    from watcher.config.schema import REPO_NAME as REPO_NAME
    from watcher.config.schema import ClassifyConfig as ClassifyConfig
    from watcher.config.schema import ClassifyRule as ClassifyRule
    from watcher.config.schema import Config as Config
    from watcher.config.schema import GitHubConfig as GitHubConfig
    from watcher.config.schema import OrgConfig as OrgConfig
    from watcher.config.schema import PollConfig as PollConfig
    from watcher.config.schema import RepoConfig as RepoConfig
    from watcher.config.schema import Secrets as Secrets
    from watcher.config.schema import Section as Section
    from watcher.config.schema import ServerConfig as ServerConfig
    from watcher.config.schema import SlackConfig as SlackConfig
    from watcher.config.schema import StoreConfig as StoreConfig
    from watcher.config.schema import is_loopback as is_loopback
    from watcher.config.schema import parse_listen as parse_listen

_EXPORTS = {
    "checked_config": "load",
    "checked_file": "load",
    "ClassifyConfig": "schema",
    "ClassifyRule": "schema",
    "Config": "schema",
    "config_from_dict": "load",
    "cron_weekdays": "cron",
    "digest_trigger": "cron",
    "digest_zone": "cron",
    "describe_validation_error": "problems",
    "Duration": "durations",
    "find_config_file": "load",
    "format_duration": "durations",
    "GitHubConfig": "schema",
    "ImpactConfig": "impact",
    "invalid_keys": "problems",
    "is_loopback": "schema",
    "load_config": "load",
    "load_sections": "load",
    "OrgConfig": "schema",
    "parse_duration": "durations",
    "parse_listen": "schema",
    "PollConfig": "schema",
    "REPO_NAME": "schema",
    "environment_secrets": "environment",
    "RepoConfig": "schema",
    "Secrets": "schema",
    "Section": "schema",
    "ServerConfig": "schema",
    "SlackConfig": "schema",
    "StoreConfig": "schema",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
