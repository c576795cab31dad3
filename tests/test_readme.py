"""Every TOML example in the README is a valid configuration, and the quick start is intact."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from watcher.app import notifier_configs, taxonomy_for
from watcher.config import config_from_dict

README = (Path(__file__).parent.parent / "README.md").read_text()
EXAMPLES = re.findall(r"```toml\n(.*?)```", README, re.DOTALL)
CI = (Path(__file__).parent.parent / ".ci" / "run").read_text()


def test_readme_has_toml_examples():
    assert EXAMPLES


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.split("\n", 1)[0])
def test_readme_config_examples_validate(example, tmp_path):
    config = config_from_dict(tomllib.loads(example), base_dir=tmp_path, source="README")
    notifier_configs(config)
    taxonomy_for(config)


def test_quick_start_has_two_commands_and_ci_runs_the_test_one():
    quick = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```sh\n(.*?)\n```", quick, re.DOTALL)
    assert len(commands) == 2
    assert "release-watch poll" in commands[0]
    assert "pytest" in commands[1] and commands[1] in CI


def test_the_contract_example_config_is_valid(tmp_path):
    path = Path(__file__).parent / "fixtures" / "contract" / "config-example.toml"
    config = config_from_dict(tomllib.loads(path.read_text()), base_dir=tmp_path,
                              source="CONTRACT")
    names = [cfg.name for _, cfg in notifier_configs(config)]
    assert names == ["console", "events-log", "releases-channel"]
