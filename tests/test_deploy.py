"""The deployment files in deploy/: what can be checked without Docker, a cluster or a running
systemd. Every command line they contain is parsed by the real click CLI (nothing is invoked),
every config they carry is validated by the real config loader, and the places they keep the
store agree with each other."""

from __future__ import annotations

import configparser
import json
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any

import click
import pytest

from handlers.base import EVENT_TYPES, NotifierConfig, available_types, notifier_config
from watcher.cli.commandline import cli
from watcher.config import config_from_dict
from watcher.models import KINDS, SUBSYSTEMS

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "kubernetes"
SYSTEMD = DEPLOY / "systemd"
EXAMPLE_TOML = DEPLOY / "release-watch.example.toml"

STATE_DIR = "/var/lib/release-watch"
STORE = f"{STATE_DIR}/store"
CONFIG_PATH = "/etc/release-watch/release-watch.toml"
UID = 10001
SECRET_NAMES = {"GITHUB_TOKEN", "SLACK_BOT_TOKEN", "SLACK_WEBHOOK_URL", "APPRISE_URLS",
                "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET"}



@pytest.fixture(scope="module")
def yaml() -> Any:
    import yaml as module  # in the test extras

    return module


# ---- the command line ---------------------------------------------------------------------

def _rest(ctx: click.Context) -> list[str]:
    protected = getattr(ctx, "_protected_args", None)  # click >= 8.2
    if protected is None:
        protected = ctx.protected_args
    return [*protected, *ctx.args]


def parse_global(argv: list[str]) -> tuple[click.Context, list[str]]:
    """The global options of ``release-watch ARGS`` parsed by click; the rest of the line."""
    assert argv and PurePosixPath(argv[0]).name == "release-watch", argv
    ctx = cli.make_context("release-watch", list(argv[1:]))
    return ctx, _rest(ctx)


def parse_cli(argv: list[str]) -> tuple[tuple[str, ...], dict[str, Any]]:
    """Parse a whole command line as the real CLI would (a usage error raises); nothing is run.
    Returns the subcommand path, e.g. ``("status",)``, and that command's parsed options."""
    ctx, rest = parse_global(argv)
    group: click.Group = cli
    path: list[str] = []
    while True:
        name, command, rest = group.resolve_command(ctx, rest)
        assert name is not None and command is not None
        path.append(name)
        ctx = command.make_context(name, rest, parent=ctx)
        if not isinstance(command, click.Group):
            return tuple(path), ctx.params
        group, rest = command, _rest(ctx)


def test_the_cli_parser_helper_rejects_what_the_cli_rejects() -> None:
    assert parse_cli(["release-watch", "--log-format", "json", "status", "--check"]) == (
        ("status",), {"as_json": False, "check": True})
    assert parse_cli(["/opt/x/bin/release-watch", "config", "check"])[0] == ("config", "check")
    for bad in (["release-watch", "status", "--nope"], ["release-watch", "--log-format", "yaml",
                                                         "status"],
                ["release-watch", "no-such-command"]):
        with pytest.raises(click.UsageError):
            parse_cli(bad)


# ---- Dockerfile ---------------------------------------------------------------------------

def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    instructions, buffer = [], ""
    for raw in (DEPLOY / "Dockerfile").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            buffer += line[:-1] + " "
            continue
        keyword, _, args = (buffer + line).partition(" ")
        instructions.append((keyword.upper(), args.strip()))
        buffer = ""
    assert not buffer, "the Dockerfile ends inside a continued line"
    return instructions


def stages() -> list[list[tuple[str, str]]]:
    result: list[list[tuple[str, str]]] = []
    for keyword, args in dockerfile():
        if keyword == "FROM":
            result.append([])
        if result:
            result[-1].append((keyword, args))
    return result


def only(stage: list[tuple[str, str]], keyword: str) -> str:
    found = [args for kw, args in stage if kw == keyword]
    assert len(found) == 1, f"expected one {keyword}, found {found}"
    return found[0]


def env_of(stage: list[tuple[str, str]]) -> dict[str, str]:
    env: dict[str, str] = {}
    for keyword, args in stage:
        if keyword == "ENV":
            env.update(item.split("=", 1) for item in shlex.split(args))
    return env


def exec_form(args: str) -> list[str]:
    value = json.loads(args)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), args
    return value


def copy_sources(stage: list[tuple[str, str]]) -> list[str]:
    sources = []
    for keyword, args in stage:
        if keyword == "COPY":
            words = [w for w in shlex.split(args) if not w.startswith("--")]
            assert not any(w.startswith("--from") for w in shlex.split(args))
            sources += words[:-1]
    return sources


def test_dockerfile_builds_a_wheel_then_installs_it_without_build_tools() -> None:
    args = dict(a.split("=", 1) for kw, a in dockerfile() if kw == "ARG" and "=" in a)
    assert args.get("PYTHON_IMAGE") == "python:3.12-slim"
    builder, runtime = stages()
    assert re.fullmatch(r"\$\{PYTHON_IMAGE\} AS builder", only(builder, "FROM"), re.I)
    assert re.fullmatch(r"\$\{PYTHON_IMAGE\} AS runtime", only(runtime, "FROM"), re.I)
    assert any(kw == "RUN" and "pip wheel" in a for kw, a in builder)
    install = only(runtime, "RUN")
    assert "from=builder" in install and "--no-index" in install
    runtime_text = " ".join(a for _, a in runtime)
    for tool in ("gcc", "build-essential", "apt-get install", "pip wheel"):
        assert tool not in runtime_text


def test_dockerfile_copies_everything_the_wheel_build_needs() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wheel = project["tool"]["hatch"]["build"]["targets"]["wheel"]
    needed = {"pyproject.toml", project["project"]["readme"], *wheel["packages"],
              *wheel.get("force-include", {})}
    copied = {PurePosixPath(s).as_posix().rstrip("/") for s in copy_sources(stages()[0])}
    assert needed <= copied, f"the builder stage does not COPY {needed - copied}"


def test_dockerfile_runtime_settings() -> None:
    runtime = stages()[-1]
    env = env_of(runtime)
    assert env["PYTHONUNBUFFERED"] == "1"
    assert env["XDG_STATE_HOME"] == "/var/lib"
    assert env["RELEASE_WATCH_CONFIG"] == CONFIG_PATH
    assert env["PATH"].startswith("/opt/release-watch/bin:")
    assert exec_form(only(runtime, "VOLUME")) == [STATE_DIR]
    assert only(runtime, "USER") == f"{UID}:{UID}"
    assert only(runtime, "STOPSIGNAL") == "SIGTERM"
    assert exec_form(only(runtime, "ENTRYPOINT")) == ["release-watch"]
    # The config baked in where RELEASE_WATCH_CONFIG points is the example.
    copies = [shlex.split(a) for kw, a in runtime if kw == "COPY"]
    assert any(c[-2:] == ["deploy/release-watch.example.toml", CONFIG_PATH] for c in copies)


def image_healthcheck() -> tuple[str, list[str]]:
    """The runtime stage's HEALTHCHECK: its options and its command (exec form)."""
    healthcheck = only(stages()[-1], "HEALTHCHECK")
    options, _, command = healthcheck.partition(" CMD ")
    return options, exec_form(command)


def probe_codes(argv: list[str]) -> list[int]:
    """Run a health check command as written (python -c, its URL pointed at a listener on an
    ephemeral port) against a listener answering /readyz 200, then 503, then not at all: the
    three exit codes."""
    from watcher.server import Listener, Response

    address = f"http://127.0.0.1:{listen_port()}"
    assert argv[:2] == ["python", "-c"] and f"{address}/readyz" in argv[2]
    answers = [Response(200, b"{}"), Response(503, b"{}")]
    listener = Listener("127.0.0.1", 0, {"/readyz": lambda request: answers.pop(0)})
    listener.start()
    code = argv[2].replace(address, listener.url)

    def run() -> int:
        return subprocess.run([sys.executable, "-c", code], capture_output=True,
                              timeout=30).returncode

    try:
        codes = [run(), run()]
    finally:
        listener.stop()
    return [*codes, run()]  # nothing listens now


def test_dockerfile_healthcheck_asks_readyz_and_fails_on_503() -> None:
    """The image's own check asks the daemon's /readyz on the baked-in config's port, as it
    runs in the image (its python, no curl): healthy on 200, not on 503 or no answer."""
    options, argv = image_healthcheck()
    assert "--start-period=" in options and "--interval=" in options
    timeout = re.search(r"--timeout=(\d+)s", options)
    assert timeout is not None and int(timeout.group(1)) > 10  # urlopen's own timeout=10
    codes = probe_codes(argv)
    assert codes[0] == 0 and codes[1] != 0 and codes[2] != 0


def test_dockerfile_default_command_has_valid_global_options() -> None:
    runtime = stages()[-1]
    argv = exec_form(only(runtime, "ENTRYPOINT")) + exec_form(only(runtime, "CMD"))
    ctx, rest = parse_global(argv)
    assert ctx.params["log_format"] == "json"
    assert rest == ["run"]


def test_dockerfile_default_command_is_the_daemon() -> None:
    runtime = stages()[-1]
    argv = exec_form(only(runtime, "ENTRYPOINT")) + exec_form(only(runtime, "CMD"))
    assert parse_cli(argv)[0] == ("run",)


def dockerignore_rules() -> list[tuple[bool, re.Pattern[str]]]:
    """deploy/Dockerfile.dockerignore as (is-exception, regex), Docker's matching rules."""
    rules = []
    for raw in (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern, out, i = line.lstrip("!").strip("/"), "", 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                out, i = out + "(?:.*/)?", i + 3
            elif pattern.startswith("**", i):
                out, i = out + ".*", i + 2
            elif pattern[i] == "*":
                out, i = out + "[^/]*", i + 1
            elif pattern[i] == "?":
                out, i = out + "[^/]", i + 1
            else:
                out, i = out + re.escape(pattern[i]), i + 1
        rules.append((negate, re.compile(out + r"\Z")))
    return rules


def ignored(path: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
    parts = path.split("/")
    prefixes = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
    result = False
    for negate, regex in rules:  # the last matching rule wins; a match on a parent counts
        if any(regex.match(prefix) for prefix in prefixes):
            result = not negate
    return result


def test_dockerignore_sends_the_sources_and_keeps_secrets_and_clutter_out() -> None:
    rules = dockerignore_rules()
    for source in copy_sources(stages()[0]) + copy_sources(stages()[-1]):
        assert (ROOT / source).exists(), source
        files = [source] if (ROOT / source).is_file() else [
            p.relative_to(ROOT).as_posix() for p in (ROOT / source).rglob("*.*")
            if "__pycache__" not in p.parts]
        assert files and not any(ignored(f, rules) for f in files), source
    for path in (".git/config", ".venv/bin/python", "tests/test_deploy.py", "deploy/Dockerfile",
                 "deploy/release-watch.env", "deploy/release-watch.toml", "bench/x.py",
                 "watcher/__pycache__/cli.cpython-312.pyc", "events.jsonl"):
        assert ignored(path, rules), path


# ---- the example config -------------------------------------------------------------------

def validate_toml(text: str, source: str) -> Any:
    config = config_from_dict(tomllib.loads(text), base_dir=DEPLOY, source=source)
    for raw in config.notifiers:
        if raw["type"] in available_types():
            notifier_config(raw, source)
    return config


def test_example_config_is_valid_and_keeps_the_store_on_the_volume() -> None:
    config = validate_toml(EXAMPLE_TOML.read_text(), str(EXAMPLE_TOML))
    assert config.store_path() == Path(STORE)
    assert [repo.name for repo in config.repos] == ["pytorch/pytorch", "pytorch/xla"]
    assert [n["type"] for n in config.notifiers] == ["console"]


def test_example_config_commented_notifiers_are_valid_once_uncommented() -> None:
    text = EXAMPLE_TOML.read_text()
    uncommented = re.sub(r"(?m)^# (?=\[|[a-z_]+ = )", "", text)
    config = validate_toml(uncommented, "uncommented example")
    notifiers = {n["name"]: n for n in config.notifiers}
    assert {n["type"] for n in notifiers.values()} == {"console", "jsonl", "slack", "apprise"}
    assert notifiers["events-log"]["path"].startswith(STATE_DIR + "/")  # config dir is read-only
    slack = notifiers["releases-channel"]
    if "slack" not in available_types():  # check what the contract says, until it exists
        contract_keys = {*NotifierConfig.model_fields, "channel", "digest_schedule"}
        assert set(slack) <= contract_keys
        NotifierConfig.model_validate({k: v for k, v in slack.items()
                                       if k in NotifierConfig.model_fields})
    assert slack["type"] == "slack" and slack["channel"].startswith("#")
    assert {s.split("/")[0] for s in slack["subsystems"]} <= set(SUBSYSTEMS)
    assert set(slack["kinds"]) <= set(KINDS) and set(slack["events"]) <= set(EVENT_TYPES)
    assert not re.search(r"(?i)xox[bp]-|ghp_|hooks\.slack\.com", text), "no secrets in config"


def test_example_config_uncommented_passes_config_check_with_the_env_example_filled() -> None:
    from watcher.app import Dependencies
    from watcher.config import Secrets
    from watcher.validate import config_problems

    uncommented = re.sub(r"(?m)^# (?=\[|[a-z_]+ = )", "", EXAMPLE_TOML.read_text())
    config = config_from_dict(tomllib.loads(uncommented), base_dir=DEPLOY, source="example")
    filled = {"GITHUB_TOKEN": "t", "SLACK_BOT_TOKEN": "xoxb-1",
              "APPRISE_URLS": "discord://1234/abcd mailtos://u:p@smtp.example.com?to=a@b.org"}
    deps = Dependencies(secrets=Secrets.model_validate(filled), environ=filled)
    assert config_problems(config, deps) == []
    empty = Dependencies(secrets=Secrets.model_validate({}), environ={})
    problems = "\n".join(config_problems(config, empty))
    assert "SLACK_BOT_TOKEN is not set" in problems and "APPRISE_URLS" in problems


def test_no_deploy_file_says_a_notifier_may_be_missing() -> None:
    for path in DEPLOY.rglob("*"):
        if path.is_file():
            assert "may not be installed" not in path.read_text(), path


# "release-watch" (a path, an image:tag, a Compose service) and the arguments up to "config
# check": the command each target's smoke test runs.
SMOKE_TEST = re.compile(r"(?:^|[\s`])\S*release-watch(?::[\w.]+)?"
                        r"((?: (?!\S*release-watch(?::\S+)? )\S+)*? config check(?: --[a-z]+)*)")


def test_every_config_check_in_the_deploy_readme_is_a_valid_command_line() -> None:
    readme = (DEPLOY / "README.md").read_text().replace("\\\n", " ")
    commands = [shlex.split(rest) for rest in SMOKE_TEST.findall(readme)]
    assert sum("--online" in argv for argv in commands) >= 4  # Docker, Compose, systemd, k8s
    for argv in commands:
        assert parse_cli(["release-watch", *argv])[0] == ("config", "check"), argv


def test_env_example_holds_placeholders_only() -> None:
    text = (DEPLOY / "release-watch.env.example").read_text()
    entries = dict(re.findall(r"(?m)^#? ?([A-Z_]+)=(.*)$", text))
    assert set(entries) == SECRET_NAMES
    for name, value in entries.items():
        assert value == "" or "REPLACE" in value, f"{name} must be a placeholder"
    assert "release-watch.env" in (DEPLOY / ".gitignore").read_text().split()


# ---- Compose ------------------------------------------------------------------------------

def compose_service(yaml: Any) -> dict[str, Any]:
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    services = compose["services"]
    assert list(services) == ["release-watch"]
    service = services["release-watch"]
    for volume in service["volumes"]:
        if volume["type"] == "volume":
            assert volume["source"] in compose["volumes"]
    return service


def test_compose_service(yaml: Any) -> None:
    service = compose_service(yaml)
    build = service["build"]
    assert (DEPLOY / build["context"]).resolve() == ROOT
    assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == DEPLOY / "Dockerfile"
    assert service["env_file"] == "release-watch.env"
    assert (DEPLOY / "release-watch.env.example").is_file()
    assert service["restart"] == "unless-stopped"
    assert service["stop_grace_period"] == "30s"
    assert service.get("stop_signal", "SIGTERM") == "SIGTERM"
    assert "replicas" not in service.get("deploy", {})
    config = service["environment"]["RELEASE_WATCH_CONFIG"]
    mounts = {v["target"]: v for v in service["volumes"]}
    assert mounts[STATE_DIR]["type"] == "volume"
    assert mounts[config]["type"] == "bind" and mounts[config]["read_only"] is True
    assert (DEPLOY / mounts[config]["source"]).name == "release-watch.toml"
    assert "release-watch.toml" in (DEPLOY / ".gitignore").read_text().split()


def listen_port() -> int:
    """The port the example config's [server] listens on, on every interface (a container's
    probes and Prometheus come from outside it)."""
    address = validate_toml(EXAMPLE_TOML.read_text(), "example").server.address
    assert address is not None and address[0] == "0.0.0.0"
    return address[1]


def test_compose_healthcheck_asks_readyz_and_fails_on_503(yaml: Any) -> None:
    """The healthcheck runs as written (the image's python, no curl), against a listener
    answering /readyz 200 and then 503: exit 0, then not; it is the image's own check."""
    service = compose_service(yaml)
    assert service["ports"] == [f"127.0.0.1:{listen_port()}:{listen_port()}"]
    test = service["healthcheck"]["test"]
    assert test[0] == "CMD" and test[1:] == image_healthcheck()[1]  # one check, not two
    codes = probe_codes(test[1:])
    assert codes[0] == 0 and codes[1] != 0 and codes[2] != 0


def test_compose_command_has_valid_global_options(yaml: Any) -> None:
    ctx, rest = parse_global(["release-watch", *compose_service(yaml)["command"]])
    assert ctx.params["log_format"] == "json" and rest == ["run"]


def test_compose_command_is_the_daemon(yaml: Any) -> None:
    assert parse_cli(["release-watch", *compose_service(yaml)["command"]])[0] == ("run",)


# ---- systemd ------------------------------------------------------------------------------

def unit(name: str) -> configparser.RawConfigParser:
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read_string((SYSTEMD / name).read_text(), source=name)
    return parser


def unit_values(name: str, section: str, key: str) -> list[str]:
    """Every value of a key that may repeat (configparser keeps only the last)."""
    values, current = [], None
    for line in (SYSTEMD / name).read_text().splitlines():
        if line.startswith("["):
            current = line.strip()[1:-1]
        elif current == section and line.split("=", 1)[0].strip() == key:
            values.append(line.split("=", 1)[1].strip())
    return values


def test_systemd_daemon_unit_has_the_required_settings() -> None:
    service = unit("release-watch.service")["Service"]
    expected = {
        "Type": "exec", "Restart": "on-failure", "RestartSec": "10s", "DynamicUser": "yes",
        "User": "release-watch", "StateDirectory": "release-watch",
        "EnvironmentFile": "-/etc/release-watch/release-watch.env", "TimeoutStopSec": "30s",
        "KillSignal": "SIGTERM", "NoNewPrivileges": "yes", "ProtectSystem": "strict",
        "ProtectHome": "yes", "PrivateTmp": "yes", "SystemCallArchitectures": "native",
        "RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX",
    }
    assert {key: service.get(key) for key in expected} == expected
    assert service["ExecStart"] == ("/opt/release-watch/bin/release-watch --log-format json "
                                    f"--config {CONFIG_PATH} run")
    assert "XDG_STATE_HOME=/var/lib" in unit_values("release-watch.service", "Service",
                                                    "Environment")
    assert unit("release-watch.service")["Install"]["WantedBy"] == "multi-user.target"


def test_systemd_poll_timer_is_the_alternative_and_shares_the_store() -> None:
    daemon = unit("release-watch.service")["Service"]
    poll = unit("release-watch-poll.service")["Service"]
    assert poll["Type"] == "oneshot"
    for key in ("DynamicUser", "User", "StateDirectory", "EnvironmentFile",
                "ProtectSystem", "RestrictAddressFamilies"):
        assert poll[key] == daemon[key], key
    assert "release-watch.service" in poll["ExecCondition"]
    timer = unit("release-watch-poll.timer")
    assert timer["Timer"]["Unit"] == "release-watch-poll.service"
    assert timer["Timer"]["OnCalendar"] == "*:0/10"
    assert timer["Install"]["WantedBy"] == "timers.target"
    for name in ("release-watch-poll.service", "release-watch-poll.timer"):
        assert "never both" in (SYSTEMD / name).read_text()
    argv = shlex.split(poll["ExecStart"])
    assert parse_cli(argv) == (("poll",), {"repos": (), "dry_run": False, "short": False})
    # The poll timer keeps the store as fresh as the daemon's default interval expects.
    assert validate_toml(EXAMPLE_TOML.read_text(), "example").poll.interval == 600


def test_systemd_daemon_command_has_valid_global_options() -> None:
    argv = shlex.split(unit("release-watch.service")["Service"]["ExecStart"])
    ctx, rest = parse_global(argv)
    assert ctx.params == {"config_path": CONFIG_PATH, "log_format": "json", "verbose": False}
    assert rest == ["run"]


def test_systemd_daemon_command_is_the_daemon() -> None:
    argv = shlex.split(unit("release-watch.service")["Service"]["ExecStart"])
    assert parse_cli(argv)[0] == ("run",)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
def test_systemd_units_pass_systemd_analyze_verify(tmp_path: Path) -> None:
    # verify insists that ExecStart's program exists: point it at an executable that does.
    program = shutil.which("release-watch") or sys.executable
    names = sorted(p.name for p in SYSTEMD.iterdir())
    for name in names:
        text = (SYSTEMD / name).read_text()
        (tmp_path / name).write_text(text.replace("/opt/release-watch/bin/release-watch", program))
    result = subprocess.run(["systemd-analyze", "verify", *(str(tmp_path / n) for n in names)],
                            capture_output=True, text=True, timeout=120)
    ours = [line for line in (result.stdout + result.stderr).splitlines()
            if str(tmp_path) in line or any(n in line for n in names)]
    assert result.returncode == 0 and not ours, result.stdout + result.stderr


# ---- Kubernetes ---------------------------------------------------------------------------

def k8s(yaml: Any, name: str) -> dict[str, Any]:
    return yaml.safe_load((K8S / name).read_text())


def test_every_yaml_file_parses(yaml: Any) -> None:
    files = sorted([*DEPLOY.rglob("*.yaml"), *DEPLOY.rglob("*.yml")])
    assert len(files) >= 7
    for path in files:
        documents = list(yaml.safe_load_all(path.read_text()))
        assert documents and all(isinstance(d, dict) for d in documents), path


def test_slack_app_manifest_has_the_scopes_socket_mode_and_the_command(yaml: Any) -> None:
    """What /release-watch needs of the Slack app (README: "Running it for a team")."""
    manifest = yaml.safe_load((DEPLOY / "slack-app-manifest.yml").read_text())
    assert {"chat:write", "commands"} <= set(manifest["oauth_config"]["scopes"]["bot"])
    assert manifest["settings"]["socket_mode_enabled"] is True
    assert manifest["settings"]["interactivity"]["is_enabled"] is True  # the buttons
    (command,) = manifest["features"]["slash_commands"]
    assert command["command"] == "/release-watch" and "url" not in command  # Socket Mode
    assert command["usage_hint"].startswith("subscribe [OWNER/NAME] [subsystem ...] [kind ...]")
    assert manifest["features"]["bot_user"]["display_name"]  # chat:write posts as the bot


def test_kustomization_lists_existing_files_and_leaves_the_example_secret_out(yaml: Any) -> None:
    resources = k8s(yaml, "kustomization.yaml")["resources"]
    assert all((K8S / r).is_file() for r in resources)
    manifests = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(resources) == manifests - {"secret.example.yaml"}


def container(yaml: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    deployment = k8s(yaml, "deployment.yaml")
    pod = deployment["spec"]["template"]["spec"]
    (main,) = pod["containers"]
    return pod, main


def test_deployment_runs_exactly_one_pod_at_a_time(yaml: Any) -> None:
    deployment = k8s(yaml, "deployment.yaml")
    assert deployment["kind"] == "Deployment"
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    pod, _ = container(yaml)
    assert pod["terminationGracePeriodSeconds"] == 30


def test_deployment_security(yaml: Any) -> None:
    pod, main = container(yaml)
    security = pod["securityContext"]
    assert security["runAsNonRoot"] is True
    assert security["runAsUser"] == security["fsGroup"] == UID
    assert main["securityContext"]["readOnlyRootFilesystem"] is True
    assert main["securityContext"]["allowPrivilegeEscalation"] is False
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m for m in main["volumeMounts"]}
    assert "emptyDir" in volumes[mounts["/tmp"]["name"]]


def test_deployment_gets_store_config_and_secrets_from_the_right_objects(yaml: Any) -> None:
    pod, main = container(yaml)
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m for m in main["volumeMounts"]}
    env = {e["name"]: e.get("value") for e in main.get("env", [])}
    # the store: the PVC at the state directory, where the config puts it
    claim = volumes[mounts[STATE_DIR]["name"]]["persistentVolumeClaim"]["claimName"]
    pvc = k8s(yaml, "pvc.yaml")
    assert claim == pvc["metadata"]["name"]
    assert pvc["spec"]["accessModes"] == ["ReadWriteOnce"]
    assert pvc["spec"]["resources"]["requests"]["storage"] == "1Gi"
    # the config: the ConfigMap, read-only, named by RELEASE_WATCH_CONFIG
    config_path = PurePosixPath(env["RELEASE_WATCH_CONFIG"])
    config_mount = mounts[str(config_path.parent)]
    assert config_mount.get("readOnly") is True
    configmap = k8s(yaml, "configmap.yaml")
    assert volumes[config_mount["name"]]["configMap"]["name"] == configmap["metadata"]["name"]
    text = configmap["data"][config_path.name]
    assert text == EXAMPLE_TOML.read_text()
    assert str(validate_toml(text, "configmap").store_path()).startswith(STATE_DIR + "/")
    # the tokens: every variable of the Secret
    secret = k8s(yaml, "secret.example.yaml")
    assert [e["secretRef"]["name"] for e in main["envFrom"]] == [secret["metadata"]["name"]]
    assert set(secret["stringData"]) == SECRET_NAMES
    assert all(value == "" for value in secret["stringData"].values())


def test_deployment_resources(yaml: Any) -> None:
    _, main = container(yaml)
    assert main["resources"] == {"requests": {"cpu": "50m", "memory": "128Mi"},
                                 "limits": {"memory": "256Mi"}}


def test_deployment_probes_ask_readyz_and_healthz_on_the_listeners_port(yaml: Any) -> None:
    """Readiness is /readyz (`status --check`'s judgement), liveness /healthz (the scheduler
    runs): a GitHub outage makes the pod unready, never restarts it."""
    deployment = k8s(yaml, "deployment.yaml")
    _, main = container(yaml)
    (port,) = main["ports"]
    assert port["containerPort"] == listen_port() and port["name"] == "http"
    readiness, liveness = main["readinessProbe"], main["livenessProbe"]
    assert readiness["httpGet"] == {"path": "/readyz", "port": "http"}
    assert liveness["httpGet"] == {"path": "/healthz", "port": "http"}
    for probe in (readiness, liveness):
        assert "exec" not in probe and probe["timeoutSeconds"] >= 5
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/port"] == str(listen_port())
    assert annotations["prometheus.io/path"] == "/metrics"


def test_deployment_command_has_valid_global_options(yaml: Any) -> None:
    _, main = container(yaml)
    ctx, rest = parse_global([*main["command"], *main["args"]])
    assert ctx.params["log_format"] == "json" and rest == ["run"]


def test_deployment_command_is_the_daemon(yaml: Any) -> None:
    _, main = container(yaml)
    assert parse_cli([*main["command"], *main["args"]])[0] == ("run",)


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl here")
def test_kustomize_builds_offline(yaml: Any) -> None:
    result = subprocess.run(["kubectl", "kustomize", str(K8S)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    objects = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert sorted(o["kind"] for o in objects) == [
        "ConfigMap", "Deployment", "Namespace", "PersistentVolumeClaim"]
    assert all(o["metadata"].get("namespace") == "release-watch" for o in objects
               if o["kind"] != "Namespace")


# ---- across targets -----------------------------------------------------------------------

def test_every_target_keeps_the_store_in_the_same_persistent_place(yaml: Any) -> None:
    docker = exec_form(only(stages()[-1], "VOLUME"))
    compose = [v["target"] for v in compose_service(yaml)["volumes"] if v["type"] == "volume"]
    systemd = ["/var/lib/" + unit("release-watch.service")["Service"]["StateDirectory"]]
    _, main = container(yaml)
    kube = [m["mountPath"] for m in main["volumeMounts"] if m["name"] == "store"]
    assert docker == compose == systemd == kube == [STATE_DIR]
    assert STORE.startswith(STATE_DIR + "/")


def test_deploy_readme_covers_every_target_and_file() -> None:
    readme = (DEPLOY / "README.md").read_text()
    for heading in ("## Docker", "## Docker Compose", "## systemd", "## Kubernetes",
                    "## Upgrading"):
        assert heading in readme
    for path in DEPLOY.rglob("*"):
        if path.is_file() and path.name not in {"README.md", ".gitignore"}:
            assert path.name in readme or path.relative_to(DEPLOY).as_posix() in readme, path


# ---- two replicas on PostgreSQL --------------------------------------------------------------

REPLICAS = K8S / "replicas"


def test_the_replicas_overlay_takes_the_base_and_leaves_the_example_secret_out(yaml: Any) -> None:
    kustomization = yaml.safe_load((REPLICAS / "kustomization.yaml").read_text())
    assert kustomization["resources"][0] == ".."  # the single-replica base, unchanged
    assert all((REPLICAS / r).exists() for r in kustomization["resources"])
    patches = [patch["path"] for patch in kustomization["patches"]]
    assert all((REPLICAS / p).is_file() for p in patches)
    listed = set(kustomization["resources"]) | set(patches)
    assert {p.name for p in REPLICAS.glob("*.yaml")} - listed == {"kustomization.yaml",
                                                                 "secret.example.yaml"}
    assert "kubernetes/replicas/secret.yaml" in (DEPLOY / ".gitignore").read_text().split()


def test_the_replicas_overlay_runs_two_pods_on_the_url_in_a_secret(yaml: Any) -> None:
    patch = yaml.safe_load((REPLICAS / "deployment-patch.yaml").read_text())
    assert patch["metadata"]["name"] == k8s(yaml, "deployment.yaml")["metadata"]["name"]
    spec = patch["spec"]
    assert spec["replicas"] == 2
    assert spec["strategy"] == {"type": "RollingUpdate",
                                "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}
    (main,) = spec["template"]["spec"]["containers"]
    _, base = container(yaml)
    assert main["name"] == base["name"]
    env = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in main["env"]}
    assert env == {"RELEASE_WATCH_STORE_URL": {"name": "release-watch-store", "key": "url"},
                   "PGPASSWORD": {"name": "release-watch-store", "key": "password"}}
    (store,) = spec["template"]["spec"]["volumes"]
    assert store["name"] == "store" and store["persistentVolumeClaim"] is None
    gone = yaml.safe_load((REPLICAS / "no-pvc.yaml").read_text())
    assert gone["$patch"] == "delete"
    assert gone["metadata"]["name"] == k8s(yaml, "pvc.yaml")["metadata"]["name"]
    pdb = yaml.safe_load((REPLICAS / "pdb.yaml").read_text())
    assert pdb["spec"]["minAvailable"] == 1
    labels = k8s(yaml, "deployment.yaml")["spec"]["selector"]["matchLabels"]
    assert pdb["spec"]["selector"]["matchLabels"] == labels


def test_the_store_secret_example_keeps_the_password_out_of_the_url(yaml: Any) -> None:
    secret = yaml.safe_load((REPLICAS / "secret.example.yaml").read_text())
    assert secret["metadata"]["name"] == "release-watch-store"
    data = secret["stringData"]
    assert set(data) == {"url", "password"} and data["password"] == ""
    config = config_from_dict({"store": {"url": data["url"]}}, base_dir=ROOT, source="secret")
    assert config.store.url.startswith("postgresql://") and ":" not in data["url"].split(
        "@")[0].removeprefix("postgresql://")


def test_compose_with_replicas_runs_two_daemons_on_a_postgres_service(yaml: Any) -> None:
    compose = yaml.safe_load((DEPLOY / "docker-compose.replicas.yml").read_text())
    services = compose["services"]
    assert sorted(services) == ["postgres", "replica-a", "replica-b"]
    ports = set()
    for name in ("replica-a", "replica-b"):
        service = services[name]
        assert parse_cli(["release-watch", *service["command"]])[0] == ("run",)
        url = service["environment"]["RELEASE_WATCH_STORE_URL"]
        assert url.startswith("postgresql://release_watch@postgres:5432/")  # no password in it
        assert service["environment"]["PGPASSWORD"].startswith("${PGPASSWORD")
        assert service["depends_on"] == {"postgres": {"condition": "service_healthy"}}
        assert not [v for v in service["volumes"] if v["type"] == "volume"]  # no store on disk
        ports |= set(service["ports"])
    assert len(ports) == 2
    database = services["postgres"]
    assert "pg_isready" in database["healthcheck"]["test"]
    assert database["environment"]["POSTGRES_PASSWORD"].startswith("${PGPASSWORD")
    assert database["volumes"][0]["source"] in compose["volumes"]
    assert ".env" in (DEPLOY / ".gitignore").read_text().split()
