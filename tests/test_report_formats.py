"""The formats CI reads, for ``impact`` (and so ``upgrade``): SARIF 2.1.0 held against the
OASIS schema by a real validator (``tests/fixtures/sarif/``, its source in SOURCES.md), and
GitHub workflow commands parsed as GitHub's toolkit writes and reads them."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import jsonschema
import pytest
from conftest import FIXTURES

from watcher.report.workflow import escape_data, escape_property

SCHEMA = json.loads((FIXTURES / "sarif" / "sarif-schema-2.1.0.json").read_text())
NOTES = FIXTURES / "releases" / "pytorch"
EXPORT = textwrap.dedent("""\
    import torch


    def export(model, args):
        torch.onnx.export(model, args, "model.onnx")


    def export_again(model, args):
        torch.onnx.export(model, args, "again.onnx")  # release-watch: ignore[156023]


    def load(path):
        return torch.load(path)
    """)
# GitHub's workflow command: ::NAME PROPERTIES::MESSAGE (docs.github.com, "Workflow commands
# for GitHub Actions"); properties are k=v separated by commas.
COMMAND = re.compile(r"^::(error|warning|notice) ([^:]*)::(.*)$")


OPSET_WHY = ("relies on the default of opset_version, changed in v2.8.0 (the notes' words; the "
             "2.8.0 package shows the same default of opset_version, None)")


def unescape_property(text: str) -> str:
    for code, char in (("%2C", ","), ("%3A", ":"), ("%0A", "\n"), ("%0D", "\r"), ("%25", "%")):
        text = text.replace(code, char)
    return text


def unescape_data(text: str) -> str:
    for code, char in (("%0A", "\n"), ("%0D", "\r"), ("%25", "%")):
        text = text.replace(code, char)
    return text


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    match = COMMAND.match(line)
    assert match, line
    properties = dict(part.split("=", 1) for part in match[2].split(","))
    return match[1], {k: unescape_property(v) for k, v in properties.items()}, unescape_data(
        match[3])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    (root / "app").mkdir(parents=True)
    (root / "app" / "export.py").write_text(EXPORT)
    return root


def notes(*versions: str) -> list[str]:
    return [str(NOTES / f"v{version}.md") for version in versions]


def test_sarif_validates_against_the_2_1_0_schema_with_every_kind_of_result(
        run_cli, project, tmp_path):
    baseline = tmp_path / "baseline.json"
    run_cli("impact", *notes("2.8.0"), "--code", str(project / "app"), "--write-baseline",
            str(baseline))
    data = json.loads(baseline.read_text())
    data["uses"] = [use for use in data["uses"] if use["item"] == "152478"]  # one accepted
    baseline.write_text(json.dumps(data))
    result = run_cli("impact", *notes("2.8.0", "2.9.0"), "--code", str(project / "app"),
                     "--format", "sarif", "--baseline", str(baseline), "--all")
    assert result.code == 1
    log = json.loads(result.stdout)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    run = log["runs"][0]
    assert run["tool"]["driver"]["name"] == "release-watch"
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    assert {"pr-156023", "pr-159646-162726"} <= set(rules)
    assert rules["pr-156023"]["helpUri"].endswith("/releases/tag/v2.8.0")
    levels = {(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]):
              (r["level"], [s["kind"] for s in r.get("suppressions", [])])
              for r in run["results"]}
    # 2.8's opset default: the words alone (the package keeps opset_version=None), so a
    # warning; 2.9's dynamo default the package changes, so an error.
    assert levels[("pr-156023", 5)] == ("warning", [])
    assert levels[("pr-156023", 9)] == ("warning", ["inSource"])  # the ignore comment
    assert levels[("pr-152478-155580", 5)] == ("warning", ["external"])  # the baseline
    assert levels[("pr-159646-162726", 5)] == ("error", [])  # 2.9's change to the same call
    first = next(r for r in run["results"] if r["ruleId"] == "pr-156023")
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "export.py"  # relative to its --code root
    base = run["originalUriBaseIds"][location["artifactLocation"]["uriBaseId"]]["uri"]
    assert base == (project / "app").resolve().as_uri() + "/"
    assert location["region"]["snippet"]["text"] == 'torch.onnx.export(model, args, "model.onnx")'
    assert first["message"]["text"] == OPSET_WHY
    assert {r["level"] for r in run["results"]} <= {"error", "warning", "note"}


def test_sarif_fingerprints_hold_across_line_moves_and_tell_twins_apart(run_cli, project):
    def fingerprints() -> list[tuple[int, str]]:
        log = json.loads(run_cli("impact", *notes("2.9.0"), "--code", str(project),
                                 "--format", "sarif").stdout)
        return sorted((r["locations"][0]["physicalLocation"]["region"]["startLine"],
                       r["partialFingerprints"]["releaseWatchUse/v1"])
                      for r in log["runs"][0]["results"] if r["ruleId"] == "pr-158802")

    before = fingerprints()
    assert len(before) == 2  # the same call on two lines: two results, two fingerprints
    path = project / "app" / "export.py"
    path.write_text("# a header comment\n\n" + path.read_text())
    after = fingerprints()
    assert [line + 2 for line, _ in before] == [line for line, _ in after]
    assert [print_ for _, print_ in before] == [print_ for _, print_ in after]
    assert len({print_ for _, print_ in after}) == len(after)


def test_github_annotations_parse_as_github_documents_them(run_cli, project, monkeypatch):
    monkeypatch.setenv("GITHUB_WORKSPACE", str(project))
    result = run_cli("impact", *notes("2.8.0", "2.9.0"), "--code", str(project / "app"),
                     "--format", "github")
    assert result.code == 1
    lines = result.stdout.splitlines()
    parsed = [parse_command(line) for line in lines]
    assert len(parsed) == len(lines) >= 4
    kinds = {(kind, props["line"], props["title"].split(":")[0]) for kind, props, _ in parsed}
    assert ("warning", "5", "BC-breaking in v2.8.0") in kinds
    assert ("warning", "5", "Deprecation in v2.8.0") in kinds
    assert ("error", "5", "BC-breaking in v2.9.0") in kinds
    # The path from the checkout's root, as GitHub resolves it, whatever --code was.
    assert {props["file"] for _, props, _ in parsed} == {"app/export.py"}
    # Errors first: 2.9's package-proven default, then the warnings.
    opset = next((props, message) for _, props, message in parsed
                 if props["title"].startswith("BC-breaking in v2.8.0: Default opset"))
    assert opset[1].split("\n") == [OPSET_WHY, 'torch.onnx.export(model, args, "model.onnx")']
    # The suppressed line (its ignore comment) has no annotation.
    assert all(not (props["line"] == "9" and "156023" in props["title"])
               for _, props, _ in parsed)


@pytest.mark.parametrize(("text", "data", "prop"), [
    ("50% done", "50%25 done", "50%25 done"),
    ("a\r\nb", "a%0D%0Ab", "a%0D%0Ab"),
    ("x: y, z", "x: y, z", "x%3A y%2C z"),
], ids=["percent", "line-breaks", "colon-comma"])
def test_escaping_follows_the_actions_toolkit(text, data, prop):
    assert escape_data(text) == data
    assert escape_property(text) == prop
    assert unescape_property(escape_property(text)) == text


def test_json_summary_and_only_affecting(run_cli, project):
    full = json.loads(run_cli("impact", *notes("2.8.0", "2.9.0"), "--code", str(project),
                              "--format", "json").stdout)
    only = json.loads(run_cli("impact", *notes("2.8.0", "2.9.0"), "--code", str(project),
                              "--format", "json", "--only-affecting").stdout)
    assert len(only["items"]) < len(full["items"])
    assert only["items"] and all(item["affects"] for item in only["items"])
    assert only["summary"] == full["summary"]
    summary = full["summary"]
    assert summary["items"] == len(full["items"])
    assert summary["releases"]["v2.9.0"]["breaks"] >= 2
    assert summary["suppressed"] == {"total": 1, "inline": 1, "baseline": 0, "store": 0}
    assert summary["items_touching"] == len([i for i in only["items"] if any(
        use["tier"] != "mentions" for use in i["affects"])])
