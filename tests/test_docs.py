"""The README and the guide in docs/ hold to the code: every relative link and anchor resolves,
every ``release-watch`` command line shown parses with the real CLI (nothing is run), the
commands listed are the CLI's, the configuration reference names every key and variable the
code reads, the generated parts are what their sources make now, and no figure is typed by
hand (a ratio appears only in the tables ``bench/run_all.py --write`` makes)."""

from __future__ import annotations

import difflib
import re
import shlex
import sys
import tomllib
import typing
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from pydantic import BaseModel
from test_deploy import parse_cli

from watcher.cli.commandline import cli
from watcher.config import Config

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = [README, *sorted(DOCS.glob("*.md"))]
REFERENCE = DOCS / "configuration.md"
README_MAX_LINES = 250

_FENCE = re.compile(r"^(```|~~~)(\S*)\n(.*?)^\1\s*$", re.MULTILINE | re.DOTALL)
_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_LINK = re.compile(r"(?<!!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.MULTILINE)
# A command line starts with the console script's name (not /release-watch, Slack's command).
_INVOKED = re.compile(r"(?<![\w/.-])(?:\.venv/bin/)?release-watch(?=\s)")
# A figure times another (1.5x, or with the times sign); not a count the product writes
# (Slack's "edited 2" and the times sign).
_RATIO = re.compile(r"(?<![\w.])(?<!edited )\d+(?:\.\d+)?\s?[x\u00d7](?!\w)")
_SHELL_BREAKS = {"|", "||", "&&", ";"}
_REDIRECTS = re.compile(r"^\d?[<>]")


def _text(page: Path) -> str:
    return page.read_text()


def _name(page: Path) -> str:
    return str(page.relative_to(ROOT))


def _prose(text: str) -> str:
    """The page without its fenced code blocks and code spans (no link lives in them)."""
    return _SPAN.sub("", _FENCE.sub("", text))


def _blocks(text: str) -> Iterator[tuple[str, str]]:
    for match in _FENCE.finditer(text):
        yield match[2], match[3]


def slug(heading: str) -> str:
    """The anchor GitHub (and MkDocs' toc) gives a heading: its text lowercased, punctuation
    dropped, spaces made hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    for match in _HEADING.finditer(_FENCE.sub("", _text(page))):
        name, number = slug(match[2]), 0
        while (name if not number else f"{name}-{number}") in found:
            number += 1
        found.add(name if not number else f"{name}-{number}")
    return found


# ---- links ----------------------------------------------------------------------------------

def _links() -> Iterator[tuple[Path, str]]:
    for page in PAGES:
        for target in _LINK.findall(_prose(_text(page))):
            if not re.match(r"[a-z][a-z+.-]*:", target):  # http:, https:, mailto:
                yield page, target


LINKS = list(_links())


def test_every_page_of_the_guide_is_linked_from_another():
    assert len(LINKS) > 50
    reached = {(page.parent / target.split("#")[0]).resolve() for page, target in LINKS
               if target.split("#")[0]}
    assert sorted(page.name for page in DOCS.glob("*.md") if page not in reached) == []


@pytest.mark.parametrize(("page", "target"), LINKS, ids=[f"{_name(p)}:{t}" for p, t in LINKS])
def test_every_relative_link_and_anchor_resolves(page, target):
    path, _, anchor = target.partition("#")
    where = (page.parent / path).resolve() if path else page
    assert where.exists(), f"{_name(page)}: {target} leads nowhere"
    if anchor:
        assert where.suffix == ".md", f"{_name(page)}: {target}: an anchor into a non-page"
        assert anchor in anchors(where), (
            f"{_name(page)}: {target}: no heading of {where.name} has the anchor #{anchor}")


def test_a_broken_link_or_anchor_is_caught(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# A title\n\n## Two: `words`\n")
    assert anchors(page) == {"a-title", "two-words"}
    assert _LINK.findall(_prose("[x](a.md#b) `[y](c.md)` [z](https://e.org)")) == [
        "a.md#b", "https://e.org"]


# ---- command lines --------------------------------------------------------------------------

def _commands(words: list[str]) -> Iterator[list[str]]:
    """The simple commands of a shell line's words, redirections dropped."""
    command: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in _SHELL_BREAKS:
            yield command
            command = []
        elif _REDIRECTS.match(word):
            skip = word.rstrip("0123456789&") in {"<", ">", ">>", "2>"}  # the file follows
        else:
            command.append(word)
    yield command


def _is_synopsis(line: str) -> bool:
    """A usage synopsis (``[--format text|json]``, ``NOTES...``) rather than a command line."""
    return bool(re.search(r"\[|\.\.\.|\\\||\S\|\S", line))


def shown_command_lines() -> Iterator[tuple[Path, str, bool]]:
    """Every ``release-watch`` command line a page shows, in a shell block or a code span."""
    for page in PAGES:
        text = _text(page)
        for language, body in _blocks(text):
            if language not in ("", "sh", "bash", "shell", "console"):
                continue
            for line in body.replace("\\\n", " ").splitlines():
                line = line.strip().removeprefix("$ ")
                if _INVOKED.search(line) and _runs_the_cli(line):  # not a line of output
                    yield page, line, True
        for _, span in _SPAN.findall(_FENCE.sub("", text)):
            if _INVOKED.match(span) and _names_a_command(span):
                yield page, span.replace("\\|", "|"), False



def _names_a_command(span: str) -> bool:
    """Whether a code span starting ``release-watch`` is a command (``release-watch poll
    --dry-run``, ``release-watch COMMAND --help``, a misspelled ``release-watch pol``) rather
    than words the tool says (``release-watch could not change its store ...``)."""
    words = span.split()
    if len(words) < 2 or words[1].startswith("-") or words[1].isupper():
        return True
    return bool(difflib.get_close_matches(words[1], list(cli.commands), cutoff=0.6))


def _runs_the_cli(line: str) -> bool:
    try:
        return bool(_argvs(line))
    except ValueError:  # unbalanced quotes: output, not a command
        return False


def _argvs(line: str) -> list[list[str]]:
    words = shlex.split(line, comments=True)
    return [command for command in _commands(words)
            if command and Path(command[0]).name == "release-watch"]


LINES = sorted(set(shown_command_lines()))


def _options(command: click.Command) -> set[str]:
    return {name for param in command.params for name in param.opts + param.secondary_opts}


def synopsis_problems(line: str) -> list[str]:
    """What a synopsis names that the CLI lacks: its command (and subcommand), or a flag."""
    words = [word for word in re.split(r"[\s\[\]]+", line) if word]
    group: click.Command = cli
    allowed = _options(cli) | {"--help", "-h", "--version"}
    path = []
    for word in words[1:]:
        if not isinstance(group, click.Group) or word.startswith("-") or word.isupper():
            break
        found = group.get_command(click.Context(group), word)
        if found is None:
            return [f"no command {' '.join([*path, word])}"]
        group, path = found, [*path, word]
    allowed |= _options(group)
    flags = {flag.split("=")[0].rstrip(".,;:)")
             for word in words for alternative in word.split("|") for flag in
             alternative.split("/") if re.fullmatch(r"--?[a-z][\w-]*(=\S*)?\W*", flag)}
    return [f"{' '.join(path)} takes no {flag}" for flag in sorted(flags - allowed)]


@pytest.mark.parametrize(("page", "line", "whole"), LINES,
                         ids=[f"{_name(p)}:{ln[:60]}" for p, ln, _ in LINES])
def test_every_command_line_shown_parses(page, line, whole):
    """A command in a shell block is parsed whole; one in a sentence or a table (often a
    synopsis, or a command named with one of its flags) names a command the CLI has and only
    flags that command takes."""
    if not whole or _is_synopsis(line):
        assert synopsis_problems(line) == [], f"{_name(page)}: {line}"
        return
    argvs = _argvs(line)
    assert argvs, f"{_name(page)}: no release-watch command in {line!r}"
    for argv in argvs:
        try:
            parse_cli(argv)
        except click.UsageError as error:
            pytest.fail(f"{_name(page)}: {line!r} does not parse: {error.format_message()}")


def test_command_lines_that_do_not_parse_are_caught():
    assert sum(whole for _, _, whole in LINES) > 20 and len(LINES) > 60
    assert synopsis_problems("release-watch impact NOTES... [--nope] [--fail-on a|b]") == [
        "impact takes no --nope"]
    assert synopsis_problems("release-watch atlas bogus [--x]") == ["no command atlas bogus"]
    assert synopsis_problems("release-watch COMMAND --help") == []
    assert _names_a_command("release-watch pol") and not _names_a_command(
        "release-watch could not change its store")
    assert _argvs("cd x && .venv/bin/release-watch poll --dry-run | head > out.txt") == [
        [".venv/bin/release-watch", "poll", "--dry-run"]]
    with pytest.raises(click.UsageError):
        parse_cli(["release-watch", "impact", "x.md", "--code", ".", "--format", "yaml"])


def cli_commands() -> set[str]:
    """Every command the CLI runs, by its path: ``poll``, ``atlas diff``, ..."""
    def walk(group: click.Group, prefix: str) -> Iterator[str]:
        for name, command in group.commands.items():
            if isinstance(command, click.Group):
                yield from walk(command, f"{prefix}{name} ")
            else:
                yield f"{prefix}{name}"
    return set(walk(cli, ""))


def listed_commands(page: Path) -> set[str]:
    """The commands a page's command table lists (its first column's command paths)."""
    commands = set()
    for cell in re.findall(r"^\| `release-watch ([^`]*)`", _text(page), re.MULTILINE):
        words = cell.split()
        name = words[0]
        if len(words) > 1 and name in {"atlas", "config", "store"}:
            name += " " + words[1]
        commands.add(name)
    return commands


def test_the_commands_page_lists_exactly_the_commands_the_cli_has():
    assert listed_commands(DOCS / "commands.md") == cli_commands()


def test_the_readme_lists_only_commands_the_cli_has():
    listed = listed_commands(README)
    assert len(listed) == 5 and listed <= cli_commands()


# ---- the configuration reference ------------------------------------------------------------

def _models(model: type[BaseModel]) -> Iterator[type[BaseModel]]:
    yield model
    for field in model.model_fields.values():
        for inner in _types(field.annotation):
            yield from _models(inner)


def _types(annotation: object) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for argument in typing.get_args(annotation):
        yield from _types(argument)


def config_keys() -> set[str]:
    """Every key a config file may hold outside ``[[notifiers]]``, from the settings models."""
    return {name for model in _models(Config) for name, field in model.model_fields.items()
            if not field.exclude and name != "notifiers"}


def _documents(text: str, key: str) -> bool:
    """Whether the reference names ``key``: in a code span, as a key of a TOML example (set or
    commented out), or as a table (``[store]``, ``[[impact.codebases]]``)."""
    key = re.escape(key)
    return bool(re.search(rf"`{key}`|^#?\s*{key} = |^#?\s*\[\[?([a-z_]+\.)?{key}\]", text,
                          re.MULTILINE))


def test_the_reference_names_every_key_of_the_settings_models():
    text = _text(REFERENCE)
    keys = config_keys()
    assert {"api_url", "max_requests_per_minute", "lease", "package_retry", "backlog"} <= keys
    assert sorted(key for key in keys if not _documents(text, key)) == []


def test_the_reference_names_every_environment_variable_the_code_reads():
    from importlib.metadata import entry_points

    from watcher.config.schema import STORE_URL_VARIABLE, Secrets

    names = {"RELEASE_WATCH_CONFIG", STORE_URL_VARIABLE}
    for field in Secrets.model_fields.values():
        alias = field.validation_alias
        names |= set(getattr(alias, "choices", [alias]))
    for entry in entry_points(group="release_watch.notifiers"):
        for field in entry.load().Config.model_fields.values():
            extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
            if extra.get("secret_env"):
                names.add(str(extra["secret_env"]))
    table = _text(REFERENCE).split("## Environment variables", 1)[1].split("\n## ", 1)[0]
    assert "APPRISE_URLS" in names and "GH_TOKEN" in names
    assert sorted(name for name in names if f"`{name}`" not in table) == []


def contract_keys() -> set[str]:
    """The keys of the interface contract's example config (``tests/fixtures/contract``, a
    verbatim copy of shared/CONTRACT.md's), the commented ones too."""
    text = (ROOT / "tests" / "fixtures" / "contract" / "config-example.toml").read_text()
    keys = set(re.findall(r"^#?\s*([a-z_]+) = ", text, re.MULTILINE))

    def walk(value: object) -> Iterator[str]:
        if isinstance(value, dict):
            for key, inner in value.items():
                yield key
                yield from walk(inner)
        elif isinstance(value, list):
            for inner in value:
                yield from walk(inner)

    return keys | set(walk(tomllib.loads(text)))


def test_the_contract_fixture_is_the_contracts_example():
    contract = ROOT.parent / "shared" / "CONTRACT.md"
    if not contract.exists():
        pytest.skip("../shared/CONTRACT.md is not beside this checkout")
    example = re.search(r"```toml\n(.*?)```", contract.read_text(), re.DOTALL)
    assert example is not None
    fixture = (ROOT / "tests" / "fixtures" / "contract" / "config-example.toml").read_text()
    assert fixture.split("\n", 1)[1] == example[1]


def test_the_reference_names_every_key_of_the_contract():
    keys = contract_keys()
    assert {"api_url", "interval", "include_prereleases", "digest_schedule", "affects_only",
            "url", "package_index", "codebases"} <= keys
    text = _text(REFERENCE)
    assert sorted(key for key in keys if not _documents(text, key)) == []


# ---- generated and copied parts -------------------------------------------------------------

def _between(text: str, begin: str, end: str) -> str:
    assert begin in text and end in text, (begin, end)
    return text.split(begin, 1)[1].split(end, 1)[0].strip("\n")


def _script(name: str, folder: str = "scripts"):
    """A module of ``scripts/`` (or ``bench/``), imported as those folders' scripts are run."""
    sys.path.insert(0, str(ROOT / folder))
    try:
        return __import__(name)
    finally:
        sys.path.remove(str(ROOT / folder))


def test_the_configuration_reference_is_what_its_script_makes_now():
    reference = _script("config_reference")
    text = _text(REFERENCE)
    for name, made in reference.made().items():
        assert _between(text, *reference.MARKERS[name]) == made, (
            f"docs/configuration.md's {name} are stale: run scripts/config_reference.py --write")


@pytest.mark.slow
def test_the_readme_examples_are_what_the_tool_says_now():
    """The README's Slack message and impact answer (and the impact page's) are the tool's own
    output for PyTorch 2.9.0 on the pytorch/examples fixture, never typed."""
    examples = _script("readme_examples")
    made = examples.examples()
    assert "Affects your code" in made["slack"] and "word_language_model/main.py:216" in made[
        "impact"]
    for page, names in examples.PAGES.items():
        for name in names:
            assert _between(_text(page), *examples.MARKERS[name]) == made[name], (
                f"{_name(page)}'s {name} example is stale: run scripts/readme_examples.py "
                "--write")


@pytest.mark.parametrize(("page", "source"), [
    ("slack.md", "deploy/slack-app-manifest.yml"),
    ("ci.md", "deploy/ci/github-actions.yml"),
    ("ci.md", "deploy/ci/gitlab-ci.yml"),
])
def test_the_deploy_files_the_guide_shows_are_shown_whole(page, source):
    shown = [body for language, body in _blocks(_text(DOCS / page)) if language == "yaml"]
    assert (ROOT / source).read_text() in shown, f"docs/{page} shows an old {source}"


# ---- figures --------------------------------------------------------------------------------

def test_no_ratio_is_typed_outside_the_generated_tables():
    bench = _script("run_all", "bench")
    for page in PAGES:
        text = _text(page)
        if bench.BEGIN in text:
            text = text.split(bench.BEGIN, 1)[0] + text.split(bench.END, 1)[1]
        typed = [match[0] for match in _RATIO.finditer(text)]
        assert typed == [], f"{_name(page)} types figures by hand: {typed}"


def test_a_typed_ratio_is_caught():
    typed = "1.5x the bare client, 3\u00d7 faster, 0x10, 5xx, 2.x, edited 2\u00d7, last Monday"
    assert [m[0] for m in _RATIO.finditer(typed)] == ["1.5x", "3\u00d7"]


def test_the_performance_page_holds_generated_tables():
    bench = _script("run_all", "bench")
    block = _between(_text(DOCS / "performance.md"), bench.BEGIN, bench.END)
    assert re.search(r"^#### bench_\w+\n\n\d{4}-\d\d-\d\d, \d+ CPUs \(", block, re.MULTILINE)
    assert "| benchmark | measured | baseline (same run) | goal | note |" in block


# ---- the site -------------------------------------------------------------------------------

def test_the_readme_is_a_landing_page():
    assert len(_text(README).splitlines()) <= README_MAX_LINES


def test_the_site_navigation_lists_every_page():
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    listed = [next(iter(entry.values())) for entry in config["nav"]]
    assert config["docs_dir"] == "docs"
    assert sorted(listed) == sorted(page.name for page in DOCS.glob("*.md"))
