"""The run's verdict through the plugin: trials as items, minimum pass rate and accuracy,
--replio-soft, and infrastructure errors kept apart from the model's failures."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

# Imported before any in-process pytester run, whose cleanup of sys.modules could otherwise
# unload httpcore and leave later runs with exceptions httpx no longer recognises.
import httpcore  # noqa: F401
import pytest

from pytest_replio_eval.gate import Thresholds, missed_thresholds
from pytest_replio_eval.metrics import Summary
from pytest_replio_eval.options import fraction, infra_policy

NOTES = {
    "task": "What does notes.txt say?",
    "files": {"notes.txt": "hello\n"},
    "expected": ["file_read"],
    "verifier": {"must_include": ["file_read"]},
    "oracle_answer": "It says hello.",
}

# A provider whose outcome for the r-th run of a fixture, counted across xdist workers, is
# PLAN[fixture][r - 1]: P passes (the mock oracle), F answers without a tool call (the verifier
# fails it), E raises ProviderError as an HTTP provider does once its retries are spent. Which
# trial gets which outcome depends on the schedule; the counts do not.
PLANNED = """
import fcntl
from pathlib import Path

from pytest_replio_eval import hookimpl
from pytest_replio_eval.providers.base import Completion, ProviderError
from pytest_replio_eval.providers.mock import MockProvider

PLAN = {plan!r}
RUNS = Path(__file__).parent / "runs.log"


def run_number(fixture_id):
    with RUNS.open("a+") as log:
        fcntl.flock(log, fcntl.LOCK_EX)
        log.seek(0)
        number = log.read().split().count(fixture_id) + 1
        log.write(fixture_id + "\\n")
    return number


class Planned(MockProvider):
    def complete(self, request):
        if request.step == 0:
            outcome = PLAN[request.fixture.id][run_number(request.fixture.id) - 1]
            if outcome == "E":
                raise ProviderError("planned: service unavailable (HTTP 503)")
            if outcome == "F":
                return Completion(text="No idea.", finish_reason="stop")
        return super().complete(request)


@hookimpl
def register_providers(providers):
    providers["planned"] = Planned
"""


def project(pytester: pytest.Pytester, plan: dict[str, str]) -> None:
    """One NOTES fixture per plan entry, and the planned provider."""
    pytester.makeconftest(PLANNED.format(plan=plan))
    for fixture_id in plan:
        path = pytester.path / ".replio" / "eval" / f"{fixture_id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(NOTES), encoding="utf-8")


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """The project's own fixtures (not the bundled ones), each run starting its plans afresh."""
    (pytester.path / "runs.log").unlink(missing_ok=True)
    local = sorted((pytester.path / ".replio" / "eval").glob("*.json"))
    return pytester.runpytest(
        "--replio-provider=planned",
        "--replio-only",
        "-p",
        "no:cacheprovider",
        *(f"--replio-fixture={path.stem}" for path in local),
        *args,
    )


def replio_lines(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if line.startswith("replio: ")]


def report(path: Path) -> dict[str, Any]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    for entry in (*doc["results"], *doc["fixtures"]):
        entry.pop("duration_s")
    return doc


# --- option values -------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "value"), [("0", 0.0), ("0.8", 0.8), ("1", 1.0), (".25", 0.25)])
def test_a_threshold_is_a_fraction(text: str, value: float) -> None:
    assert fraction(text) == value


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("80%", "'80%' is not a number"),
        ("80", "80 is not between 0 and 1"),
        ("-0.1", "-0.1 is not between 0 and 1"),
        ("nan", "nan is not between 0 and 1"),
    ],
)
def test_a_bad_threshold_names_the_value(text: str, message: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as info:
        fraction(text)
    assert str(info.value) == message


def test_infra_policy_is_fail_or_skip() -> None:
    assert (infra_policy("fail"), infra_policy("skip")) == ("fail", "skip")
    with pytest.raises(argparse.ArgumentTypeError) as info:
        infra_policy("ignore")
    assert str(info.value) == "'ignore' is not one of: fail, skip"


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (
            "--replio-min-pass-rate=1.5",
            "argument --replio-min-pass-rate: 1.5 is not between 0 and 1",
        ),
        ("--replio-min-accuracy=high", "argument --replio-min-accuracy: 'high' is not a number"),
        ("--replio-trials=0", "argument --replio-trials: 0 is less than 1"),
        ("--replio-infra=retry", "argument --replio-infra: 'retry' is not one of: fail, skip"),
    ],
)
def test_bad_values_are_usage_errors_before_anything_runs(
    pytester: pytest.Pytester, option: str, message: str
) -> None:
    result = pytester.runpytest("--replio-provider=mock", option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_a_bad_ini_value_names_the_ini_key(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nreplio_min_pass_rate = 95\n")
    result = pytester.runpytest("--replio-provider=mock")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "ini replio_min_pass_rate = '95': 95 is not between 0 and 1" in result.stderr.str()


# --- thresholds as plain functions ---------------------------------------------------------------


def test_missed_thresholds_name_the_spec_the_figure_and_both_values() -> None:
    summaries = {
        "mock": Summary(fixtures=5, accuracy=0.5, pass_rate=0.6, judged=5),
        "ollama:qwen3": Summary(fixtures=5, accuracy=0.9, pass_rate=0.8, judged=5),
    }
    assert missed_thresholds(summaries, Thresholds(min_pass_rate=0.8, min_accuracy=0.75)) == [
        "replio: mock: pass rate 60.0% is below the minimum 80.0%",
        "replio: mock: accuracy 50.0% is below the minimum 75.0%",
    ]
    assert missed_thresholds(summaries, Thresholds(min_pass_rate=0.6, min_accuracy=0.5)) == []
    assert missed_thresholds(summaries, Thresholds()) == []


def test_a_figure_that_cannot_be_computed_misses_its_minimum() -> None:
    summaries = {
        "down": Summary(fixtures=2, infra=2),
        "unscored": Summary(fixtures=1, pass_rate=1.0, judged=1),
        "deselected": Summary(),
    }
    assert missed_thresholds(summaries, Thresholds(min_pass_rate=0.5, min_accuracy=0.5)) == [
        "replio: down: pass rate is not available (every run was an infra error); "
        "the minimum is 50.0%",
        "replio: down: accuracy is not available (every run was an infra error); "
        "the minimum is 50.0%",
        "replio: unscored: accuracy is not available (no fixture has `expected`); "
        "the minimum is 50.0%",
    ]


# --- trials --------------------------------------------------------------------------------------


def test_trials_become_items_suffixed_t1_to_tn_and_a_fixture_may_set_its_own(
    pytester: pytest.Pytester,
) -> None:
    project(pytester, {"notes": ""})
    for fixture_id, trials in (("twice", 2), ("once", 1)):
        path = pytester.path / ".replio" / "eval" / f"{fixture_id}.json"
        path.write_text(json.dumps({**NOTES, "trials": trials}), encoding="utf-8")
    result = run(pytester, "--replio-trials=3", "--collect-only", "-q")
    assert [line for line in result.outlines if "::" in line] == [
        ".replio/eval/notes.json::notes[planned-t1]",
        ".replio/eval/notes.json::notes[planned-t2]",
        ".replio/eval/notes.json::notes[planned-t3]",
        ".replio/eval/once.json::once[planned]",
        ".replio/eval/twice.json::twice[planned-t1]",
        ".replio/eval/twice.json::twice[planned-t2]",
    ]
    pytester.makeini("[pytest]\nreplio_trials = 2\n")
    by_ini = run(pytester, "--collect-only", "-q")
    assert [line for line in by_ini.outlines if "::" in line] == [
        ".replio/eval/notes.json::notes[planned-t1]",
        ".replio/eval/notes.json::notes[planned-t2]",
        ".replio/eval/once.json::once[planned]",
        ".replio/eval/twice.json::twice[planned-t1]",
        ".replio/eval/twice.json::twice[planned-t2]",
    ]


def test_trials_show_pass_counts_flaky_fixtures_and_pass_hat_k(pytester: pytest.Pytester) -> None:
    project(pytester, {"notes": "PPFPF", "steady": "PPPPP"})
    result = run(pytester, "--replio-trials=5", "-n", "2")
    result.assert_outcomes(passed=8, failed=2)
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "fixture  status  pass        acc  calls  redund  errors  tokens  secs",
            "notes    ok      3/5 flaky  0.60    0.6       0       0  * *",
            "steady   ok      5/5        1.00      1       0       0  * *",
            "planned: 2 fixtures, accuracy 0.80, pass rate 80% (8/10), pass^5 50%, calls 8,",
        ]
    )


def test_trials_give_the_same_report_under_xdist(pytester: pytest.Pytester) -> None:
    project(pytester, {"notes": "PPFPF", "steady": "PPPPP"})
    docs = {}
    for workers in ("0", "2"):
        path = pytester.path / f"report-{workers}.json"
        run(pytester, "--replio-trials=5", "-n", workers, f"--replio-json={path}")
        docs[workers] = report(path)
    doc = docs["0"]
    # Which trials failed follows the schedule; the ids, counts and estimates do not.
    for entry in (*docs["0"]["results"], *docs["2"]["results"]):
        for key in ("pass", "accuracy", "trace", "names", "calls", "tokens", "failures"):
            del entry[key]
    assert docs["0"] == docs["2"]
    assert [(r["fixture"], r["trial"]) for r in doc["results"]] == [
        (fixture, trial) for fixture in ("notes", "steady") for trial in range(1, 6)
    ]
    notes = doc["fixtures"][0]
    assert (notes["judged"], notes["passed"], notes["flaky"]) == (5, 3, True)
    assert (notes["pass_at_k"], notes["pass_hat_k"]) == (
        [0.6, 0.9, 1.0, 1.0, 1.0],
        [0.6, 0.3, 0.1, 0.0, 0.0],
    )
    assert (doc["summary"]["planned"]["k"], doc["summary"]["planned"]["pass_hat_k"]) == (5, 0.5)


# --- thresholds and --replio-soft -----------------------------------------------------------------


def test_a_missed_minimum_fails_the_run_with_one_line_per_figure(pytester: pytest.Pytester) -> None:
    project(pytester, {"notes": "PPFPF"})
    result = run(
        pytester,
        "--replio-trials=5",
        "--replio-min-pass-rate=0.8",
        "--replio-min-accuracy=0.6",
        "--replio-soft",
        "-n",
        "2",
    )
    result.assert_outcomes(passed=3, failed=2)  # the failures stay visible
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert replio_lines(result) == [
        "replio: 2 failed items left out of the exit status (--replio-soft)",
        "replio: planned: pass rate 60.0% is below the minimum 80.0%",
    ]


def test_soft_lets_only_the_minimums_gate(pytester: pytest.Pytester) -> None:
    project(pytester, {"notes": "PPFPF"})
    result = run(
        pytester, "--replio-trials=5", "--replio-min-pass-rate=0.6", "--replio-soft", "-n", "2"
    )
    result.assert_outcomes(passed=3, failed=2)
    assert result.ret == pytest.ExitCode.OK
    assert replio_lines(result) == [
        "replio: 2 failed items left out of the exit status (--replio-soft)"
    ]


def test_without_soft_a_failing_item_fails_the_run_even_when_the_minimums_hold(
    pytester: pytest.Pytester,
) -> None:
    project(pytester, {"notes": "PPFPF"})
    result = run(pytester, "--replio-trials=5", "--replio-min-pass-rate=0.6")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert replio_lines(result) == []


def test_thresholds_and_soft_come_from_the_ini_file_too(pytester: pytest.Pytester) -> None:
    project(pytester, {"notes": "PPFPF"})
    pytester.makeini("[pytest]\nreplio_trials = 5\nreplio_soft = true\nreplio_min_accuracy = 0.7\n")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert replio_lines(result)[-1] == "replio: planned: accuracy 60.0% is below the minimum 70.0%"
    pytester.makeini("[pytest]\nreplio_trials = 5\nreplio_soft = true\n")
    assert run(pytester).ret == pytest.ExitCode.OK


def test_soft_does_not_hide_a_broken_fixture(pytester: pytest.Pytester) -> None:
    project(pytester, {"notes": "P"})
    (pytester.path / ".replio" / "eval" / "bad.json").write_text('{"task": ', encoding="utf-8")
    result = run(pytester, "--replio-soft", "--continue-on-collection-errors")
    result.assert_outcomes(passed=1, errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


# --- infrastructure errors -----------------------------------------------------------------------


def test_infra_errors_fail_their_items_but_stay_out_of_the_figures(
    pytester: pytest.Pytester,
) -> None:
    project(pytester, {"notes": "PPPE"})
    path = pytester.path / "report.json"
    result = run(
        pytester,
        "--replio-trials=4",
        "--replio-min-pass-rate=1",
        "--replio-soft",  # forgives the model's failures, never an outage
        f"--replio-json={path}",
        "-n",
        "2",
    )
    result.assert_outcomes(passed=3, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*_ notes[[]planned-t?[]] _*",
            "status: error: planned: service unavailable (HTTP 503)",
            "trace: no tool calls",
            "notes    3 ok, 1 error  3/3   1.00  * *",
            "planned: 1 fixture, accuracy 1.00, pass rate 100% (3/3), pass^3 100%, calls 3,",
            "  redundant 0, errors 1 (1 infra), tokens *",
        ]
    )
    assert replio_lines(result) == []  # the minimum holds: the outage is not a regression
    summary = report(path)["summary"]["planned"]
    assert (summary["pass_rate"], summary["judged"], summary["infra"]) == (1.0, 3, 1)


def test_infra_skip_reports_the_cause_and_still_counts_the_error(pytester: pytest.Pytester) -> None:
    project(pytester, {"down": "E", "notes": "P"})
    path = pytester.path / "report.json"
    result = run(pytester, "--replio-infra=skip", "-rs", f"--replio-json={path}", "-n", "2")
    result.assert_outcomes(passed=1, skipped=1)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            "down     error   INFRA  *",
            "planned: 2 fixtures, accuracy 1.00, pass rate 100% (1/1), calls 1, redundant 0,",
            "  errors 1 (1 infra), tokens *",
            "SKIPPED [[]1[]] *: infra error: planned: service unavailable (HTTP 503)",
        ]
    )
    doc = report(path)
    assert [(r["fixture"], r["status"]) for r in doc["results"]] == [
        ("down", "error"),
        ("notes", "ok"),
    ]
    assert doc["summary"]["planned"]["infra"] == 1


def test_an_http_outage_after_retries_is_an_infra_error(
    pytester: pytest.Pytester, protocol_server: Any
) -> None:
    """A real server answering 503 three times: the OpenAI provider retries, then gives up."""
    project(pytester, {"notes": "P"})
    path = "/v1/chat/completions"
    overloaded = {"error": {"message": "The server is overloaded"}}
    spec = f"openai:m@{protocol_server.url}/v1"
    args = (f"--replio-compare=planned,{spec}", "--replio-min-pass-rate=1", "-rs")
    protocol_server.reply(path, overloaded, status=503, headers={"retry-after-ms": "1"}, times=3)

    failed = run(pytester, *args)

    failed.assert_outcomes(passed=1, failed=1)
    assert len(protocol_server.requests_to(path)) == 3  # the first try and two retries
    cause = "openai:m: The server is overloaded (HTTP 503)"
    failed.stdout.fnmatch_lines(
        [
            f"status: error: {cause}",
            "openai:m: 1 fixture, accuracy -, pass rate 0% (0/0), calls 0, redundant 0,",
            "  errors 1 (1 infra), tokens 0",
        ]
    )
    missed = "replio: openai:m: pass rate is not available (every run was an infra error); "
    assert replio_lines(failed) == [missed + "the minimum is 100.0%"]

    protocol_server.reply(path, overloaded, status=503, headers={"retry-after-ms": "1"}, times=3)
    skipped = run(pytester, *args, "--replio-infra=skip")
    skipped.assert_outcomes(passed=1, skipped=1)
    skipped.stdout.fnmatch_lines([f"SKIPPED [[]1[]] *: infra error: {cause}"])
    assert skipped.ret == pytest.ExitCode.TESTS_FAILED  # the minimum still cannot be checked
