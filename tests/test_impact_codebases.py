"""Several codebases (``[[impact.codebases]]``): each with its name and link template, every
use naming its codebase, and ``[impact] code``/``link`` still working beside them."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from test_impact_bot import CKPT, JSONL, NOTES, REMOVAL, by_first_line, events

from handlers.base import HandlerContext
from watcher.config import load_config
from watcher.errors import ConfigError

TWO = textwrap.dedent("""\
    [impact]
    code = ["trainer"]
    link = "https://github.com/acme/trainer/blob/main/{path}#L{line}"

    [[impact.codebases]]
    name = "evals"
    path = "eval-suite"
    link = "https://git.example.com/acme/evals/-/blob/main/{path}#L{line}"

    [[impact.codebases]]
    name = "notebooks"
    path = "nb"
    """)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "release-watch.toml"
    path.write_text(text)
    return path


def test_codebases_carry_their_names_and_links(tmp_path):
    config = load_config(write(tmp_path, TWO))
    assert [(c.label, c.path, c.name, c.link) for c in config.impact_codebases()] == [
        ("trainer", tmp_path / "trainer", "trainer",
         "https://github.com/acme/trainer/blob/main/{path}#L{line}"),
        ("eval-suite", tmp_path / "eval-suite", "evals",
         "https://git.example.com/acme/evals/-/blob/main/{path}#L{line}"),
        ("nb", tmp_path / "nb", "notebooks", None)]


@pytest.mark.parametrize(("extra", "problem"), [
    ('[[impact.codebases]]\nname = "a"\npath = "x"\n[[impact.codebases]]\nname = "a"\n'
     'path = "y"\n', "the name 'a' is used twice"),
    ('[[impact.codebases]]\nname = "a"\npath = "x"\nlink = "https://h/x"\n', "needs {path}"),
    ('[[impact.codebases]]\nname = "a"\npath = "x"\nrepo = "y"\n', "repo"),
], ids=["duplicate-name", "link-without-path", "unknown-key"])
def test_a_wrong_codebase_entry_is_a_config_error(tmp_path, extra, problem):
    with pytest.raises(ConfigError) as error:
        load_config(write(tmp_path, extra))
    assert problem in str(error.value)


def test_a_use_links_only_through_its_own_codebase():
    context = HandlerContext(secrets=None, base_dir=Path("."), stdout=None,  # type: ignore[arg-type]
                             code_link="https://a/{path}", code_links={"trainer": "https://a/{path}"})
    assert context.link_template("trainer") == "https://a/{path}"
    assert context.link_template("notebooks") is None  # never the other codebase's link
    legacy = HandlerContext(secrets=None, base_dir=Path("."), stdout=None,  # type: ignore[arg-type]
                            code_link="https://a/{path}")
    assert legacy.link_template("anything") == "https://a/{path}"


def test_every_use_of_a_poll_names_its_codebase(fake_github, write_config, run_cli, tmp_path):
    for folder in ("trainer", "eval-suite"):
        (tmp_path / folder).mkdir()
    (tmp_path / "trainer" / "ckpt.py").write_text(CKPT)
    (tmp_path / "eval-suite" / "score.py").write_text(
        "from torch.utils.cpp_extension import include_paths\npaths = include_paths(cuda=True)\n")
    (tmp_path / "nb").mkdir()
    fake_github.add_release("pytorch/pytorch", tag="v2.6.0", name="PyTorch 2.6.0", body=NOTES)
    config = write_config(TWO, repos=("pytorch/pytorch",), notifiers=JSONL)
    result = run_cli("--config", str(config), "poll")
    assert result.code == 0, result.stderr
    flip = by_first_line(events(tmp_path)[0])[REMOVAL]
    assert sorted((use["codebase"], use["root"], use["path"]) for use in flip["affects"]) == [
        ("evals", "eval-suite", "score.py"), ("trainer", "trainer", "ckpt.py")]


def test_config_check_names_a_missing_codebase_by_its_name(run_cli, write_config, tmp_path):
    config = write_config('[[impact.codebases]]\nname = "evals"\npath = "gone"\n')
    result = run_cli("--config", str(config), "config", "check")
    assert result.code == 2
    assert f"impact.codebases \"evals\" path: 'gone' does not exist ({tmp_path / 'gone'})" in (
        result.stderr)
