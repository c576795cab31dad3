"""An offline command validates only the tables of the configuration it reads (``classify``
and ``diff``: [classify] and [poll]; ``impact``: those, [impact] and [store]; ``atlas``:
[impact] and [store]): a broken table it does not read does not stop it, one it reads is
said exactly as ``config check`` says it, and a table no command knows is still one. The bot's
commands (``poll``, ``run``, ``config check``...) validate everything, as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from watcher.config import load_config, load_sections
from watcher.config.schema import Unread

RELEASES = Path(__file__).parent / "fixtures" / "releases"
NOTES = str(RELEASES / "pytorch" / "v2.7.0.md")
OLDER = str(RELEASES / "pytorch" / "v1.13.1.md")

# Tables no offline command reads, each broken.
UNREAD_BROKEN = """\
[github]
api_url = "ftp://example.com"
per_page = 0
[slack]
admins = ["nobody"]
[server]
listen = "nowhere"
[[repos]]
name = "not a repo"
[[notifiers]]
type = "carrier-pigeon"
"""


def code_dir(tmp_path: Path) -> str:
    code = tmp_path / "code"
    code.mkdir(exist_ok=True)
    (code / "use.py").write_text("import torch\n\ntorch.load('x.pt')\n")
    return str(code)


def offline_commands(tmp_path: Path) -> dict[str, list[str]]:
    return {"classify": ["classify", NOTES],
            "diff": ["diff", OLDER, NOTES],
            "impact": ["impact", "--code", code_dir(tmp_path), NOTES],
            "atlas diff": ["atlas", "diff", "2.6.0", "2.7.0"]}


@pytest.mark.parametrize("command", ["classify", "diff", "impact", "atlas diff"])
def test_a_broken_table_an_offline_command_does_not_read_does_not_stop_it(run_cli, tmp_path,
                                                                          command):
    path = tmp_path / "rw.toml"
    path.write_text(UNREAD_BROKEN)
    argv = offline_commands(tmp_path)[command]
    result = run_cli("--config", str(path), *argv)
    assert result.code in (0, 1), result.stderr  # impact exits 1 on a use in breaks
    assert result.stdout == run_cli(*argv).stdout  # as with the built-in defaults
    checked = run_cli("--config", str(path), "config", "check")
    assert checked.code == 2 and len(checked.stderr.splitlines()) >= 6  # all still refused
    assert run_cli("--config", str(path), "poll").stderr == checked.stderr


# A broken table each command reads, and the line ``config check`` says it with.
READ_BROKEN = [
    ("classify", '[poll]\nmax_body_chars = 10\n', "poll.max_body_chars: 10 is less than the "
                                                   "minimum, 1000"),
    ("classify", '[poll]\nintervall = "5m"\n', "poll.intervall: unknown key; did you mean "
                                               "`interval`?"),
    ("classify", '[[classify.rules]]\nsubsystem = "nn"\npatterns = ["("]\n',
     "classify.rules \"nn\": patterns: pattern '(' is not a valid regex: missing ), "
     "unterminated subpattern at position 0"),
    ("classify", '[classify]\nheadings = { "Foo" = "nope" }\n', None),
    ("classify", "[pol]\ninterval = 5\n", "pol: unknown key; did you mean `poll`?"),
    ("classify", "poll = 3\n", "poll: 3 is not a table"),
    ("diff", '[poll]\nmax_items_per_release = 0\n',
     "poll.max_items_per_release: 0 is less than the minimum, 1"),
    ("impact", '[impact]\nlink = "https://example.com/no-path"\n', None),
    ("impact", '[store]\nretention = "30m"\n', "store.retention: '30m' is less than the "
                                               "minimum, 1h"),
    ("impact", '[impact]\npackage_hosts = ["a/b"]\n', None),
    ("atlas diff", '[impact]\npackage_index = "pypi.org"\n', None),
]


@pytest.mark.parametrize(("command", "toml", "line"), READ_BROKEN)
def test_a_broken_table_an_offline_command_reads_is_said_as_config_check_says_it(
        run_cli, tmp_path, command, toml, line):
    """Every problem of the tables read, in the same words and order as ``config check``
    (which sees these and nothing else wrong in the file), one line each, exit 2."""
    path = tmp_path / "rw.toml"
    path.write_text(toml)
    checked = run_cli("--config", str(path), "config", "check")
    assert checked.code == 2
    if line is not None:
        assert checked.stderr == f"release-watch: {path}: {line}\n"
    argv = offline_commands(tmp_path)[command]
    if command == "atlas diff":  # a bundled pair reads no configuration: one that is not
        argv = ["atlas", "diff", "2.7.0", "9.9.9"]
    result = run_cli("--config", str(path), *argv)
    assert result.code == 2 and result.stdout == ""
    assert result.stderr == checked.stderr


def test_every_problem_of_the_tables_read_in_one_run(run_cli, tmp_path):
    path = tmp_path / "rw.toml"
    path.write_text('[poll]\nmax_body_chars = 10\nintervall = "5m"\n[classify]\nrule = 1\n'
                    "[pol]\nx = 1\n" + UNREAD_BROKEN)
    result = run_cli("--config", str(path), "classify", NOTES)
    assert result.code == 2
    assert result.stderr.splitlines() == [f"release-watch: {path}: {line}" for line in [
        "poll.max_body_chars: 10 is less than the minimum, 1000",
        "poll.intervall: unknown key; did you mean `interval`?",
        "classify.rule: unknown key; did you mean `rules`?",
        "pol: unknown key; did you mean `poll`?"]]


def test_the_tables_read_are_those_of_a_whole_validation(tmp_path):
    path = tmp_path / "rw.toml"
    path.write_text('[poll]\nmax_body_chars = 5000\n[classify]\nheadings = { "Foo" = "nn" }\n'
                    '[impact]\ncode = ["src"]\n[store]\npath = "state"\n')
    whole = load_config(path)
    some = load_sections(path, ("classify", "poll", "impact", "store"))
    for table in ("classify", "poll", "impact", "store"):
        assert getattr(some, table) == getattr(whole, table)
    assert some.store_path() == whole.store_path() == tmp_path / "state"
    assert some.impact_roots() == whole.impact_roots()
    assert some.written == whole.written


def test_a_table_not_validated_refuses_to_be_read():
    config = load_sections(None, ("classify", "poll"))
    assert isinstance(config.github, Unread)
    with pytest.raises(AttributeError, match=r"\[github\] was not validated"):
        config.github.api_url  # noqa: B018
    with pytest.raises(AttributeError, match=r"\[repos\] was not validated"):
        list(config.repos)
