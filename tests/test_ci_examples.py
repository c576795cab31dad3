"""The CI examples of ``deploy/ci/`` run as written: the command lines the GitHub workflow and
the GitLab job run (read from their YAML), in a shell, in a checkout of a fixture codebase
pinned at 2.5, against the fake GitHub; the SARIF they write validates, and the GitLab job's
Code Quality report points at the lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jsonschema
import pytest
import yaml
from conftest import FIXTURES, TOKEN
from test_upgrade import publish

ROOT = Path(__file__).resolve().parent.parent
CI = ROOT / "deploy" / "ci"
SCHEMA = json.loads((FIXTURES / "sarif" / "sarif-schema-2.1.0.json").read_text())
TRAIN = textwrap.dedent("""\
    import torch


    def export(model, args):
        torch.onnx.export(model, args, "model.onnx")
    """)


@pytest.fixture
def checkout(tmp_path: Path, fake_github) -> tuple[Path, dict[str, str]]:
    """A repository's checkout pinned at 2.5, and the environment a CI runner gives the
    command: the token, the state folder, a config pointing at the fake GitHub (and at a
    package index that refuses, so nothing leaves the machine)."""
    publish(fake_github)
    fake_github.set_token(TOKEN)
    root = tmp_path / "checkout"
    (root / "src").mkdir(parents=True)
    (root / "src" / "export.py").write_text(TRAIN)
    (root / "requirements.txt").write_text("torch==2.5.0\n")
    config = tmp_path / "release-watch.toml"
    config.write_text(f'[github]\napi_url = "{fake_github.url}"\nbackoff = "1s"\n'
                      '[impact]\npackage_index = "http://127.0.0.1:9"\n')
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("GITHUB_", "RELEASE_WATCH"))}
    env.update({"PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
                "GITHUB_TOKEN": TOKEN, "RELEASE_WATCH_CONFIG": str(config),
                "XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path)})
    return root, env


def shell(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def test_every_ci_example_parses_and_the_workflow_uploads_the_sarif_it_writes():
    workflow = yaml.safe_load((CI / "github-actions.yml").read_text())
    steps = workflow["jobs"]["upgrade"]["steps"]
    run = next(step["run"] for step in steps if "release-watch upgrade" in step.get("run", ""))
    upload = next(step for step in steps
                  if step.get("uses", "").startswith("github/codeql-action/upload-sarif"))
    assert run.endswith("> " + upload["with"]["sarif_file"])
    assert upload["if"] == "success() || failure()"  # uploaded when the check fails too
    assert workflow["permissions"]["security-events"] == "write"
    assert "GITHUB_TOKEN" in workflow["jobs"]["upgrade"]["env"]
    cache = next(step for step in steps if step.get("uses", "").startswith("actions/cache"))
    assert workflow["jobs"]["upgrade"]["env"]["XDG_STATE_HOME"].endswith(cache["with"]["path"])
    job = yaml.safe_load((CI / "gitlab-ci.yml").read_text())["release-watch-upgrade"]
    assert job["artifacts"]["reports"]["codequality"] == "gl-code-quality-report.json"
    assert job["artifacts"]["when"] == "always"


@pytest.mark.slow
def test_the_workflow_command_line_writes_sarif_that_validates_and_fails_the_job(checkout):
    root, env = checkout
    steps = yaml.safe_load((CI / "github-actions.yml").read_text())["jobs"]["upgrade"]["steps"]
    run = next(step["run"] for step in steps if "release-watch upgrade" in step.get("run", ""))
    done = shell(run, root, {**env, "GITHUB_WORKSPACE": str(root)})
    assert done.returncode == 1, done.stderr  # the export call breaks: the job fails
    assert "torch 2.5.0 -> 2.10.0: pinned at ./requirements.txt:1" in done.stderr
    log = json.loads((root / "release-watch.sarif").read_text())
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    places = {(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
               r["properties"]["release"]) for r in log["runs"][0]["results"]}
    assert {("src/export.py", "v2.8.0"), ("src/export.py", "v2.9.0")} <= places


@pytest.mark.slow
def test_the_gitlab_job_script_writes_a_code_quality_report_and_keeps_the_exit_code(checkout):
    root, env = checkout
    job = yaml.safe_load((CI / "gitlab-ci.yml").read_text())["release-watch-upgrade"]
    script = "\n".join(line for line in job["script"] if "pip install" not in line)
    done = shell(script, root, {**env, "CI_PROJECT_DIR": str(root)})
    assert done.returncode == 1, done.stderr
    report = json.loads((root / "gl-code-quality-report.json").read_text())
    assert report and all(entry["location"]["path"] == "src/export.py" for entry in report)
    assert {entry["severity"] for entry in report} <= {"critical", "major", "info"}
    assert all(entry["fingerprint"] and entry["location"]["lines"]["begin"] == 5
               for entry in report)
