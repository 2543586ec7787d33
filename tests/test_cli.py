"""`replio eval`: listing, running through pytest, output formats and exit codes."""

from __future__ import annotations

import json
import re
import types
from pathlib import Path
from typing import Any

import pytest

from pytest_replio_eval import cli
from pytest_replio_eval.hookspecs import hookimpl
from pytest_replio_eval.plugins import plugin_manager

READ_NOTES = {
    "task": "Read notes.txt and tell me what it says.",
    "description": "reads one file",
    "files": {"notes.txt": "hello\n"},
    "expected": ["file_read"],
    "verifier": {"must_include": ["file_read"], "answer": {"contains": ["hello"]}},
    "oracle_answer": "It says hello.",
}


def write_fixture(directory: Path, name: str, data: dict[str, Any] | str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def local(project: Path) -> Path:
    return project / ".replio" / "eval"


@pytest.fixture
def without_catalog(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """`list` sees only the test's own plugins, so its output can be compared exactly."""
    plugins: list[object] = []

    def manager() -> Any:
        pm = plugin_manager(plugins)
        pm.set_blocked("replio-core-eval")
        return pm

    monkeypatch.setattr(cli, "plugin_manager", manager)
    return plugins


def fixture_plugin(name: str, data: dict[str, dict[str, Any]]) -> types.ModuleType:
    plugin = types.ModuleType(name)

    @hookimpl
    def register_fixtures(fixtures: dict[str, dict[str, Any]]) -> None:
        fixtures.update(data)

    plugin.register_fixtures = register_fixtures  # type: ignore[attr-defined]
    return plugin


# --- list ---------------------------------------------------------------------------------


def test_list_prints_aligned_columns_and_marks_overrides(
    tmp_path: Path, isolated_home: Path, without_catalog: list[object], capsys
) -> None:
    without_catalog.append(fixture_plugin("acme_eval", {"shared": {"task": "t"}}))
    global_file = write_fixture(
        isolated_home / ".config" / "replio" / "eval", "shared", {"task": "t", "description": "g"}
    )
    write_fixture(local(tmp_path), "shared", {"task": "t", "description": "mine"})
    write_fixture(local(tmp_path), "a", {"task": "t", "description": "one\n  line"})
    write_fixture(local(tmp_path), "zeta", {"task": "t"})

    assert cli.main(["eval", "--path", str(tmp_path), "list"]) == 0

    assert capsys.readouterr() == (
        "a       .replio/eval/a.json       one line\n"
        f"shared  .replio/eval/shared.json  mine (overrides acme_eval, {global_file})\n"
        "zeta    .replio/eval/zeta.json\n",
        "",
    )


def test_list_reports_bad_files_and_exits_1(
    tmp_path: Path, without_catalog: list[object], capsys
) -> None:
    write_fixture(local(tmp_path), "good", READ_NOTES)
    write_fixture(local(tmp_path), "bad", {"task": "t", "verifier": {"exactly": True}})
    write_fixture(local(tmp_path), "broken", "{not json")

    assert cli.main(["eval", "--path", str(tmp_path), "list"]) == 1

    assert capsys.readouterr() == (
        "good  .replio/eval/good.json  reads one file\n",
        "error: .replio/eval/bad.json: verifier: unknown key 'exactly'\n"
        "error: .replio/eval/broken.json: invalid JSON at line 1, column 2: "
        "Expecting property name enclosed in double quotes\n",
    )


def test_list_includes_the_bundled_catalog(tmp_path: Path, capsys) -> None:
    write_fixture(local(tmp_path), "zz-mine", READ_NOTES)

    assert cli.main(["eval", "--path", str(tmp_path), "list"]) == 0

    rows = [line.split(None, 2) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) > 1
    assert [row[1] for row in rows[:-1]] == ["replio-core-eval"] * (len(rows) - 1)
    assert rows[-1] == ["zz-mine", ".replio/eval/zz-mine.json", "reads one file"]


# --- arguments ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "action"),
    [
        (["list", "--path", "{p}"], "list"),
        (["run", "--output", "json", "--path={p}"], "run"),
    ],
)
def test_path_after_the_subcommand_is_an_error_with_a_hint(
    tmp_path: Path, argv: list[str], action: str, capsys
) -> None:
    project = tmp_path / "my project"
    project.mkdir()

    code = cli.main(["eval", *(arg.format(p=project) for arg in argv)])

    assert code == 2
    assert capsys.readouterr() == (
        "",
        f"error: --path goes before the subcommand: replio eval --path '{project}' {action}\n",
    )


def test_path_that_is_not_a_directory_exits_2(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "missing"

    assert cli.main(["eval", "--path", str(missing), "list"]) == 2
    assert capsys.readouterr() == ("", f"error: --path {missing}: not a directory\n")


def test_path_defaults_to_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, without_catalog: list[object], capsys
) -> None:
    write_fixture(local(tmp_path), "here", READ_NOTES)
    monkeypatch.chdir(tmp_path)

    assert cli.main(["eval", "list"]) == 0
    assert capsys.readouterr().out == "here  .replio/eval/here.json  reads one file\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["eval"], "the following arguments are required: action"),
        (["eval", "run", "--provider", ":gpt"], "argument --provider: invalid provider spec"),
        (["eval", "run", "--compare", ","], "argument --compare: no provider spec in ','"),
        (["eval", "run", "--output", "xml"], "argument --output: invalid choice: 'xml'"),
    ],
)
def test_usage_errors_exit_2_before_pytest_runs(
    argv: list[str], message: str, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setattr(cli.pytest, "main", lambda *a, **k: pytest.fail("pytest ran"))

    assert cli.main(argv) == 2
    assert message in capsys.readouterr().err


# --- run, with pytest stood in for (what the CLI hands pytest and does with its output) -----


class FakePytest:
    """Records the call, prints like pytest does, and writes `report` when asked for JSON."""

    def __init__(self, code: int, report: str | None) -> None:
        self.code, self.report = code, report
        self.calls: list[tuple[list[str], Any]] = []

    def __call__(self, args: list[str], plugins: Any = None) -> int:
        self.calls.append((args, plugins))
        print("pytest chatter")
        json_args = [arg for arg in args if arg.startswith("--replio-json=")]
        if json_args and self.report is not None:
            Path(json_args[0].split("=", 1)[1]).write_text(self.report, encoding="utf-8")
        return self.code


def test_run_hands_its_options_to_pytest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    fake = FakePytest(code=1, report=None)
    monkeypatch.setattr(cli.pytest, "main", fake)

    argv = ["--provider", "openai:gpt-4o", "--model", "m", "--compare", "mock,ollama:qwen3"]
    code = cli.main(["eval", "--path", str(tmp_path), "run", *argv, "--fixture=a", "--fixture=b"])

    assert code == 1
    root = str(tmp_path)
    assert fake.calls == [
        (
            [
                *(root, "--rootdir", root, "--replio-only", "-p", "no:cacheprovider"),
                *("--replio-provider=openai:gpt-4o", "--replio-model=m"),
                *("--replio-compare=mock,ollama:qwen3", "--replio-fixture=a", "--replio-fixture=b"),
            ],
            [],
        )
    ]
    assert capsys.readouterr() == ("pytest chatter\n", "")


def test_run_defaults_to_the_mock_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakePytest(code=0, report=None)
    monkeypatch.setattr(cli.pytest, "main", fake)

    assert cli.main(["eval", "--path", str(tmp_path), "run"]) == 0
    assert fake.calls[0][0][6:] == ["--replio-provider=mock"]


def test_run_json_prints_only_the_report_on_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    document = '{"version": 1, "providers": ["mock"], "results": [], "summary": {}}'
    fake = FakePytest(code=1, report=document)
    monkeypatch.setattr(cli.pytest, "main", fake)

    assert cli.main(["eval", "--path", str(tmp_path), "run", "--output", "json"]) == 1

    args = fake.calls[0][0]
    assert args[-1].startswith("--replio-json=")
    assert not Path(args[-1].split("=", 1)[1]).exists()  # the temporary report is cleaned up
    assert capsys.readouterr() == (document + "\n", "pytest chatter\n")


def test_run_json_without_a_report_says_so_and_keeps_pytests_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setattr(cli.pytest, "main", FakePytest(code=4, report=None))

    assert cli.main(["eval", "--path", str(tmp_path), "run", "--output", "json"]) == 4
    assert capsys.readouterr() == (
        "",
        "pytest chatter\nerror: pytest exited 4 without writing a report\n",
    )


# --- run, end to end with the mock provider -------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose own failing test must not run: `run` collects eval fixtures only."""
    root = tmp_path / "project"
    write_fixture(local(root), "read-notes", READ_NOTES)
    write_fixture(
        local(root),
        "no-reading",
        {**READ_NOTES, "description": "fails on purpose", "verifier": {"avoid": ["file_read"]}},
    )
    (root / "test_own.py").write_text("def test_own():\n    assert False\n", encoding="utf-8")
    return root


def run_json(project: Path, *argv: str, capsys) -> tuple[int, dict[str, Any]]:
    code = cli.main(["eval", "--path", str(project), "run", "--output", "json", *argv])
    return code, json.loads(capsys.readouterr().out)


def test_run_table_passes_with_the_mock_oracle(project: Path, capsys) -> None:
    code = cli.main(["eval", "--path", str(project), "run", "--fixture", "read-notes"])

    out = capsys.readouterr().out
    assert code == 0
    assert re.search(r"^read-notes +ok +PASS +1\.00 +1 +0 +0 ", out, re.MULTILINE)
    assert "no-reading" not in out
    assert "test_own" not in out
    assert "1 passed" in out


def test_run_exit_code_is_pytests(project: Path, capsys) -> None:
    selected = ("--fixture", "read-notes", "--fixture=no-reading")
    code, report = run_json(project, *selected, capsys=capsys)

    assert code == 1
    by_fixture = {result["fixture"]: result for result in report["results"]}
    assert sorted(by_fixture) == ["no-reading", "read-notes"]
    assert by_fixture["read-notes"]["pass"] is True
    assert by_fixture["no-reading"]["pass"] is False
    assert by_fixture["no-reading"]["failures"] != []


def test_run_json_matches_the_report_file(project: Path, tmp_path: Path, capsys) -> None:
    code, printed = run_json(project, "--fixture", "read-notes", capsys=capsys)
    report_file = tmp_path / "report.json"
    pytest_code = pytest.main(
        [
            *(str(project), "--rootdir", str(project), "--replio-only", "-p", "no:cacheprovider"),
            *(
                "--replio-provider=mock",
                "--replio-fixture=read-notes",
                f"--replio-json={report_file}",
            ),
        ]
    )
    written = json.loads(report_file.read_text(encoding="utf-8"))
    capsys.readouterr()

    assert code == pytest_code == 0
    for result in (
        *printed["results"],
        *written["results"],
        *printed["fixtures"],
        *written["fixtures"],
    ):
        result.pop("duration_s")
    assert printed == written
    assert printed["providers"] == ["mock"]
    [result] = printed["results"]
    assert (result["fixture"], result["provider"], result["source"]) == (
        "read-notes",
        "mock",
        ".replio/eval/read-notes.json",
    )
    assert result["trace"] == [{"name": "file_read", "arguments": {"path": "notes.txt"}}]
    assert (result["accuracy"], result["pass"], result["status"]) == (1.0, True, "ok")
    assert printed["summary"]["mock"]["fixtures"] == 1
    assert printed["summary"]["mock"]["pass_rate"] == 1.0


def test_run_compare_reports_every_provider(project: Path, capsys) -> None:
    code, report = run_json(
        project, "--compare", "mock,mock:other", "--fixture", "read-notes", capsys=capsys
    )

    assert code == 0
    assert report["providers"] == ["mock", "mock:other"]
    assert [(r["fixture"], r["provider"]) for r in report["results"]] == [
        ("read-notes", "mock"),
        ("read-notes", "mock:other"),
    ]
    assert sorted(report["summary"]) == ["mock", "mock:other"]
