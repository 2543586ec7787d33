"""The plugin end to end, through pytester: collection, items, tables, xdist, reports."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from bundled import BUNDLED

NOTES = {
    "task": "What does notes.txt say?",
    "files": {"notes.txt": "hello\n"},
    "expected": ["file_read"],
    "verifier": {"must_include": ["file_read"], "max_calls": 2},
}
FAILING = {
    "task": "Find the word hello.",
    "files": {"notes.txt": "hello\n"},
    "expected": ["file_read"],
    "verifier": {"must_include": ["grep"], "avoid": ["file_read"]},
}


def write_fixture(pytester: pytest.Pytester, name: str, data: Any) -> Path:
    path = pytester.path / ".replio" / "eval" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def without_durations(doc: dict[str, Any]) -> dict[str, Any]:
    for result in (*doc["results"], *doc["fixtures"]):
        result.pop("duration_s")
    return doc


def test_without_a_provider_an_unrelated_suite_runs_as_before(pytester: pytest.Pytester) -> None:
    write_fixture(pytester, "notes", NOTES)
    pytester.makepyfile("def test_plain(): pass")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert result.ret == 0
    assert "replio eval" not in result.stdout.str()
    assert "notes" not in result.stdout.str()


def test_bundled_and_local_fixtures_become_items_with_source_ids(
    pytester: pytest.Pytester,
) -> None:
    write_fixture(pytester, "notes", NOTES)
    result = pytester.runpytest("--replio-provider=mock", "--collect-only", "-q")
    ids = [line for line in result.stdout.lines if "::" in line]
    assert ids == [f"replio-core-eval::{name}[mock]" for name in BUNDLED] + [
        ".replio/eval/notes.json::notes[mock]"
    ]


def test_mock_run_prints_the_metrics_table(pytester: pytest.Pytester) -> None:
    write_fixture(pytester, "notes", NOTES)
    result = pytester.runpytest("--replio-provider=mock", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=9)
    result.stdout.fnmatch_lines(
        [
            "*= replio eval =*",
            "fixture * status * pass * acc * calls * redund * errors * tokens * secs",
            "find-then-read * ok * PASS * 1.00 * 2 * 0 * 0 * *",
            "notes * ok * PASS * 1.00 * 1 * 0 * 0 * *",
            "mock: 9 fixtures, accuracy 1.00, pass rate 100% (9/9), calls 12, redundant 0,",
        ]
    )


def test_quiet_prints_only_the_summary(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--replio-provider=mock", "-q", "-p", "no:cacheprovider")
    output = result.stdout.str()
    assert "mock: 8 fixtures, accuracy 1.00, pass rate 100% (8/8)" in output
    assert "find-then-read" not in output


def test_k_and_replio_fixture_select_items(pytester: pytest.Pytester) -> None:
    write_fixture(pytester, "notes", NOTES)
    by_k = pytester.runpytest(
        "--replio-provider=mock", "-k", "notes or grep", "-p", "no:cacheprovider"
    )
    by_k.assert_outcomes(passed=2, deselected=7)
    by_option = pytester.runpytest(
        "--replio-provider=mock", "--replio-fixture=notes", "-p", "no:cacheprovider"
    )
    by_option.assert_outcomes(passed=1)
    # Deselected fixtures are not counted in the summary.
    by_k.stdout.fnmatch_lines(["mock: 2 fixtures, accuracy 1.00, pass rate 100% (2/2)*"])


def test_a_failing_fixture_exits_1_with_its_clauses_and_trace(pytester: pytest.Pytester) -> None:
    write_fixture(pytester, "fails", FAILING)
    result = pytester.runpytest("--replio-provider=mock", "--replio-fixture=fails")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*_ fails[[]mock[]] _*",
            "must_include: grep was not called",
            "avoid: file_read was called (call 1)",
            "trace (1 call):",
            '  1. file_read {"path": "notes.txt"}',
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert "def runtest" not in result.stdout.str()


@pytest.mark.parametrize("workers", ["0", "2"])
def test_files_the_worktree_cannot_hold_fail_the_item_with_one_line(
    pytester: pytest.Pytester, workers: str
) -> None:
    write_fixture(pytester, "clash", {"task": "Read a.", "files": {"a": "x", "a/b": "y"}})
    result = pytester.runpytest("--replio-provider=mock", "--replio-fixture=clash", "-n", workers)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ clash[[]mock[]] _*",
            ".replio/eval/clash.json: files.a/b: cannot write: File exists",
            "*= short test summary info =*",  # the one line is the whole failure
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert "def provision" not in result.stdout.str()


def test_a_bad_fixture_is_one_collection_error_naming_file_and_field(
    pytester: pytest.Pytester,
) -> None:
    write_fixture(pytester, "notes", NOTES)
    write_fixture(pytester, "bad", {"task": "x", "verifier": {"max_calls": -1}})
    result = pytester.runpytest("--replio-provider=mock", "-p", "no:cacheprovider")
    assert result.ret == 2
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting .replio/eval/bad.json*",
            ".replio/eval/bad.json: verifier.max_calls: -1 is less than the minimum of 0",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    going_on = pytester.runpytest(
        "--replio-provider=mock", "--continue-on-collection-errors", "-p", "no:cacheprovider"
    )
    going_on.assert_outcomes(passed=9, errors=1)


def test_invalid_json_names_line_and_column(pytester: pytest.Pytester) -> None:
    write_fixture(pytester, "broken", '{"task": "x",\n  "files": }')
    result = pytester.runpytest("--replio-provider=mock", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*.replio/eval/broken.json: invalid JSON at line 2, column 12*"])


def test_compare_prints_side_by_side_table_and_pass_grid(pytester: pytest.Pytester) -> None:
    write_fixture(pytester, "fails", FAILING)
    result = pytester.runpytest(
        "--replio-compare=mock,mock:other",
        "--replio-fixture=fails",
        "--replio-fixture=read-file-lines",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            "metric * mock * mock:other",
            "accuracy * 1.00 * 1.00",
            "pass rate * 50% (1/2) * 50% (1/2)",
            "calls * 2 * 2",
            "fixture * mock * mock:other",
            "fails * FAIL * FAIL",
            "read-file-lines * PASS * PASS",
        ]
    )


def test_json_report_holds_every_result_and_the_summary(pytester: pytest.Pytester) -> None:
    write_fixture(pytester, "fails", FAILING)
    report = pytester.path / "out" / "report.json"
    pytester.runpytest(
        "--replio-provider=mock", f"--replio-json={report}", "-p", "no:cacheprovider"
    )
    doc = json.loads(report.read_text())
    assert doc["providers"] == ["mock"]
    assert sorted(r["fixture"] for r in doc["results"]) == sorted([*BUNDLED, "fails"])
    failed = next(r for r in doc["results"] if r["fixture"] == "fails")
    assert failed["pass"] is False
    assert failed["source"] == ".replio/eval/fails.json"
    assert failed["trace"] == [{"name": "file_read", "arguments": {"path": "notes.txt"}}]
    assert failed["failures"] == [
        "must_include: grep was not called",
        "avoid: file_read was called (call 1)",
    ]
    assert doc["summary"]["mock"]["fixtures"] == 9
    assert doc["summary"]["mock"]["pass_rate"] == pytest.approx(8 / 9)
    assert not list(report.parent.glob("*.tmp*"))  # written atomically, nothing left beside it


def test_xdist_gives_the_same_metrics_summary_and_report(pytester: pytest.Pytester) -> None:
    write_fixture(pytester, "notes", NOTES)
    write_fixture(pytester, "fails", FAILING)
    docs = {}
    for workers in ("0", "2"):
        report = pytester.path / f"report-{workers}.json"
        result = pytester.runpytest(
            "--replio-compare=mock,mock:b",
            "-n",
            workers,
            f"--replio-json={report}",
            "-p",
            "no:cacheprovider",
        )
        result.assert_outcomes(passed=18, failed=2)
        docs[workers] = without_durations(json.loads(report.read_text()))
        assert result.stdout.str().count("= replio eval =") == 1
    assert docs["0"] == docs["2"]


def test_junitxml_carries_the_metrics_as_properties(pytester: pytest.Pytester) -> None:
    write_fixture(pytester, "notes", NOTES)
    xml = pytester.path / "junit.xml"
    pytester.runpytest("--replio-provider=mock", "--replio-fixture=notes", f"--junitxml={xml}")
    case = ET.parse(xml).getroot().find(".//testcase")
    assert case is not None
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["replio.fixture"] == "notes"
    assert props["replio.calls"] == "1"
    assert props["replio.status"] == "ok"
    assert props["replio.pass"] == "True"


def test_conftest_plugin_fixtures_are_collected_and_local_files_override_them(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(
        """
        from pytest_replio_eval import hookimpl

        @hookimpl
        def register_fixtures(fixtures):
            fixtures["shared"] = {"task": "List the files.", "files": {"a.txt": "a"},
                                  "expected": ["list"]}
            fixtures["notes"] = {"task": "overridden below", "expected": ["glob"]}
        """
    )
    write_fixture(pytester, "notes", NOTES)
    result = pytester.runpytest(
        "--replio-provider=mock", "-v", "--replio-fixture=shared", "--replio-fixture=notes"
    )
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "replio: .replio/eval/notes.json overrides conftest",
            ".replio/eval/notes.json::notes[[]mock[]] PASSED*",
            "conftest::shared[[]mock[]] PASSED*",
        ]
    )


def test_ini_settings_select_the_provider(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nreplio_provider = mock\nreplio_max_steps = 5\n")
    result = pytester.runpytest("--replio-fixture=read-file-lines", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--replio-provider=nope"],
            "unknown provider 'nope' (available: mock, ollama, openai, replay)",
        ),
        (["--replio-provider=mock", "--replio-max-steps=0"], "0 is less than 1"),
        (["--replio-provider=mock", "--replio-timeout=soon"], "'soon' is not a number"),
        # A report path that cannot be a file is refused before the run, not after it.
        (
            ["--replio-provider=mock", "--replio-json=."],
            "argument --replio-json: .: is a directory",
        ),
        (
            ["--replio-provider=mock", "--replio-record=notes.txt"],
            "argument --replio-record: notes.txt: is not a directory",
        ),
    ],
)
def test_bad_option_values_are_usage_errors(
    pytester: pytest.Pytester, args: list[str], message: str
) -> None:
    pytester.makefile(".txt", notes="a file, not a directory")
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_max_steps_truncates_the_turn(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        "--replio-provider=mock", "--replio-fixture=find-then-read", "--replio-max-steps=1"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["status: truncated: no answer after 1 steps", "trace (1 call):"])


def test_worktree_is_provisioned_under_basetemp(pytester: pytest.Pytester) -> None:
    write_fixture(pytester, "notes", NOTES)
    basetemp = pytester.path / "bt"
    pytester.runpytest("--replio-provider=mock", "--replio-fixture=notes", f"--basetemp={basetemp}")
    worktree = basetemp / "notes_mock_0"  # the tmp_path naming: item name, numbered
    assert (worktree / "notes.txt").read_text() == "hello\n"
    config = json.loads((worktree / ".replio" / "config.json").read_text())
    assert config["provider"] == {"name": "mock", "model": None, "base_url": None}


def test_last_failed_reruns_only_the_failed_fixture(pytester: pytest.Pytester) -> None:
    write_fixture(pytester, "fails", FAILING)
    first = pytester.runpytest("--replio-provider=mock")
    first.assert_outcomes(passed=8, failed=1)
    again = pytester.runpytest("--replio-provider=mock", "--lf")
    again.assert_outcomes(failed=1, deselected=8)
    stopped = pytester.runpytest("--replio-provider=mock", "--ff", "-x", "-p", "no:randomly")
    stopped.assert_outcomes(failed=1)


def test_an_unknown_replio_fixture_id_is_a_collection_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        "--replio-provider=mock", "--replio-fixture=read-file-lines", "--replio-fixture=nope"
    )
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["--replio-fixture: no fixture 'nope' (see `replio eval list`)"])
