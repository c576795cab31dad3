"""Start-up stays light: a console-only poll never loads Slack or the scheduler, and ``--help``
loads none of the libraries a poll needs. Each check runs in a fresh interpreter, since this
test process has imported everything already."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import TOKEN

# Each test starts fresh interpreters: slow.
pytestmark = pytest.mark.slow

TESTS = Path(__file__).parent

# Starts a fake GitHub serving the two default repos with real notes, polls twice through the
# real command line (the first poll announces to the console, the second is all 304s), and
# reports the exit codes and which of the modules named in argv[2:] got imported.
CONSOLE_POLL = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    tests, out, *watched = sys.argv[1:]
    sys.path.insert(0, tests)
    from fakes.github import FakeGitHub
    from watcher.cli import main

    releases = Path(tests) / "fixtures" / "releases"
    with FakeGitHub() as fake:
        fake.set_token({token!r})
        for repo, tag, notes in [("pytorch/pytorch", "v2.8.0", "pytorch/v2.8.0.md"),
                                 ("pytorch/xla", "v2.0.0", "xla/v2.0.0.md")]:
            fake.add_release(repo, tag=tag, body=(releases / notes).read_text())
        config = Path(out).with_name("release-watch.toml")
        config.write_text(f'[github]\\napi_url = "{{fake.url}}"\\n[store]\\npath = "store"\\n'
                          '[[notifiers]]\\nname = "console"\\ntype = "console"\\n')
        codes = [main(["--config", str(config), "poll"]) for _ in range(2)]
        # PR labels (GraphQL, on with a token) are asked for once, in the first poll.
        requests = len([r for r in fake.requests if r.path != "/graphql"])
        label_queries = len(fake.requests) - requests
    loaded = [name for name in watched
              if any(m == name or m.startswith(name + ".") for m in sys.modules)]
    Path(out).write_text(json.dumps({{"codes": codes, "requests": requests,
                                      "label_queries": label_queries, "loaded": loaded}}))
""").format(token=TOKEN)

# The same two repos, the first poll in a process of its own; then, in this one, a poll that
# finds nothing new and ``status``: neither needs a cached key, so neither opens diskcache.
QUIET_POLL = textwrap.dedent("""
    import json, os, subprocess, sys
    from pathlib import Path
    tests, out, *watched = sys.argv[1:]
    sys.path.insert(0, tests)
    from fakes.github import FakeGitHub
    from watcher.cli import main

    with FakeGitHub() as fake:
        fake.set_token({token!r})
        for repo in ("pytorch/pytorch", "pytorch/xla"):
            fake.add_release(repo, tag="v1", body="- Fix a crash (#1)")
        config = Path(out).with_name("release-watch.toml")
        config.write_text(f'[github]\\napi_url = "{{fake.url}}"\\n[store]\\npath = "store"\\n')
        first = subprocess.run([sys.executable, "-m", "watcher", "--config", str(config), "poll"],
                               capture_output=True, cwd=config.parent)
        codes = [first.returncode] + [main(["--config", str(config), command])
                                      for command in ("poll", "status")]
    loaded = [name for name in watched
              if any(m == name or m.startswith(name + ".") for m in sys.modules)]
    Path(out).write_text(json.dumps({{"codes": codes, "loaded": loaded}}))
""").format(token=TOKEN)

HELP = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    out, command, *watched = sys.argv[1:]
    from watcher.cli import main

    code = main([*command.split(), "--help"])
    loaded = [name for name in watched
              if any(m == name or m.startswith(name + ".") for m in sys.modules)]
    Path(out).write_text(json.dumps({"codes": [code], "loaded": loaded}))
""")

# Nothing a command needs to run, only click: help must be instant on a small container.
HEAVY = ("httpx", "pydantic", "pydantic_settings", "diskcache", "slack_sdk", "apscheduler",
         "markdown_it", "sqlite3", "psycopg")
COMMANDS = ("", "poll", "run", "digest", "classify", "diff", "impact", "status", "config",
            "config check", "store", "store check", "store reinit", "store copy")


def run_python(code: str, tmp_path: Path, *args: str) -> tuple[dict, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("RELEASE_WATCH", "SLACK_", "GITHUB_TOKEN", "GH_TOKEN"))}
    env.update(GITHUB_TOKEN=TOKEN, XDG_STATE_HOME=str(tmp_path / "state"))
    out = tmp_path / "result.json"
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text()), done.stdout


def test_console_only_poll_imports_neither_slack_nor_the_scheduler_nor_apprise(tmp_path):
    """Nor what trains the subsystem model: the poll classifies XLA items with no deciding
    heading through the shipped model, applied in pure Python."""
    result, stdout = run_python(CONSOLE_POLL, tmp_path, str(TESTS), str(tmp_path / "result.json"),
                                "slack_sdk", "apscheduler", "apprise", "sklearn", "scipy",
                                "numpy", "psycopg")  # the embedded store: no PostgreSQL
    assert result["codes"] == [0, 0]
    assert result["requests"] == 4  # one listing per repo per poll: the second poll was 304s
    assert result["label_queries"] > 0  # the label path ran too, and imported nothing heavy
    assert "PyTorch v2.8.0 released" in stdout  # the console notifier really ran
    assert result["loaded"] == []


def test_a_no_change_poll_and_status_leave_diskcache_unimported(tmp_path):
    result, _ = run_python(QUIET_POLL, tmp_path, str(TESTS), str(tmp_path / "result.json"),
                           "diskcache")
    assert result["codes"] == [0, 0, 0]
    assert (tmp_path / "store" / "cache.db").is_file()  # the first poll made the store
    assert result["loaded"] == []


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c or "top-level")
def test_help_imports_none_of_the_heavy_libraries(tmp_path, command):
    result, stdout = run_python(HELP, tmp_path, str(tmp_path / "result.json"), command, *HEAVY)
    assert result["codes"] == [0]
    assert f"Usage: release-watch {command}".rstrip() in stdout
    assert result["loaded"] == []


# An offline command in a fresh interpreter, through the console entry point's ``main``: its
# exit code, which of the modules named in argv[3:] got imported, and how many patterns the
# notes pipeline had ``re`` compile (its cache's misses), since each costs its compile on
# every run.
OFFLINE = textwrap.dedent("""
    import json, re._compiler, sys
    from pathlib import Path
    out, command, *watched = sys.argv[1:]
    compiled = 0
    compile = re._compiler.compile

    def counted(*args, **kwargs):
        global compiled
        caller = sys._getframe(1)
        while caller is not None and "/re/" in caller.f_code.co_filename:
            caller = caller.f_back
        if caller is not None and "/watcher/notes/" in caller.f_code.co_filename:
            compiled += 1
        return compile(*args, **kwargs)

    re._compiler.compile = counted
    from watcher.cli import main

    code = main(json.loads(command))
    loaded = [name for name in watched
              if any(m == name or m.startswith(name + ".") for m in sys.modules)]
    # The configuration's models whose schema was built: those of the tables validated.
    schema = sys.modules.get("watcher.config.schema")
    built = sorted(name for name, model in vars(schema).items()
                   if getattr(model, "__pydantic_complete__", False)) if schema else []
    Path(out).write_text(json.dumps({"codes": [code], "loaded": loaded,
                                     "compiled": compiled, "built": built}))
""")

# What only the bot needs: its composition root, daemon, listener, scheduler, Slack and HTTP
# clients, poller.
BOT = ("watcher.app", "watcher.daemon", "watcher.server", "watcher.poller", "watcher.github",
       "apscheduler", "slack_sdk", "httpx", "handlers",
       # the store's backends: an offline command over bundled atlases opens no store
       "watcher.store.db", "watcher.store.store", "watcher.store.cachekeys",
       "watcher.store.postgres", "sqlite3", "diskcache", "psycopg")
# The models of the tables each offline command reads, the only ones it builds the schema of
# (``State.config(*sections)``); an atlas diff of bundled releases reads no configuration.
NOTES_MODELS = ["ClassifyConfig", "PollConfig"]
BUILT = {"classify": NOTES_MODELS, "classify-json": NOTES_MODELS, "diff": NOTES_MODELS,
         "impact": sorted([*NOTES_MODELS, "ImpactConfig", "StoreConfig"]), "atlas-diff": [],
         "atlas-diff-computed": []}
RELEASES = TESTS / "fixtures" / "releases"
CODE = "import torch\n\ntorch.onnx.export(model, args, 'model.onnx')\n"
OFFLINE_COMMANDS = {
    "classify": ["classify", str(RELEASES / "pytorch" / "v2.7.0.md")],
    "classify-json": ["classify", "--format", "json", "--explain",
                      str(RELEASES / "pytorch" / "v2.8.0.md")],
    "diff": ["diff", str(RELEASES / "pytorch" / "v2.7.0.md"),
             str(RELEASES / "pytorch" / "v2.8.0.md")],
    "impact": ["impact", "--code", "code", str(RELEASES / "pytorch" / "v2.8.0.md")],
    "atlas-diff": ["atlas", "diff", "2.6.0", "2.7.0"],
    "atlas-diff-computed": ["atlas", "diff", "2.5.0", "2.7.0"],
}


@pytest.mark.parametrize("command", OFFLINE_COMMANDS)
def test_an_offline_command_loads_nothing_of_the_bot_and_compiles_few_patterns(tmp_path,
                                                                               command):
    """``classify``, ``diff``, ``impact`` and ``atlas diff`` of bundled releases read files
    and print: the daemon, the listener, the scheduler, Slack, the HTTP client and the
    store's backends are not imported, only the tables of the configuration the command reads
    are validated (no other table's model is built), and the taxonomy's ~630 patterns are
    compiled only where a text needs one (a classify of v2.7.0 once compiled ~850 patterns,
    ~660 of them the notes pipeline's; now about 110)."""
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "export.py").write_text(CODE)
    argv = OFFLINE_COMMANDS[command]
    result, stdout = run_python(OFFLINE, tmp_path, str(tmp_path / "result.json"),
                                json.dumps(argv), *BOT)
    assert result["codes"][0] in (0, 1, None), stdout  # impact exits 1 on a use in breaks
    assert stdout.strip()  # it ran and said something
    assert result["loaded"] == []
    assert result["compiled"] < 200
    assert result["built"] == BUILT[command]


def test_a_diff_of_two_bundled_releases_loads_no_model_nor_the_configuration(tmp_path):
    """``atlas diff 2.6.0 2.7.0`` reads two files that ship with release-watch: the
    configuration and the store are read only for a release that is not bundled, so pydantic
    (a third of the command's time, the whole of the margin its goal leaves) is never loaded;
    logging still masks the environment's secrets."""
    (tmp_path / "release-watch.toml").write_text('[store]\npath = "store"\n')
    argv = ["--config", "release-watch.toml", "atlas", "diff", "2.6.0", "2.7.0"]
    result, stdout = run_python(OFFLINE, tmp_path, str(tmp_path / "result.json"),
                                json.dumps(argv), "pydantic", "watcher.config.schema",
                                "watcher.store", "watcher.models")
    assert result["codes"][0] in (0, None) and "torch 2.6.0 -> 2.7.0" in stdout
    assert result["loaded"] == []
    assert not (tmp_path / "store").exists()
