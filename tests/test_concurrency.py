"""--replio-concurrency: turns run side by side in threads, items still report in order."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

# A provider that plays the mock oracle after sleeping `model` seconds per round-trip, and logs
# each round-trip: which fixture, how many were under way at once, and the process's cwd.
SLOW_PROVIDER = """
import json, os, threading, time

from pytest_replio_eval import hookimpl
from pytest_replio_eval.providers.mock import MockProvider

LOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "calls.log")
lock = threading.Lock()
running = [0]


class SlowMock(MockProvider):
    def complete(self, request):
        with lock:
            running[0] += 1
            entry = {"fixture": request.fixture.id, "step": request.step,
                     "running": running[0], "cwd": os.getcwd()}
            with open(LOG, "a") as log:
                log.write(json.dumps(entry) + "\\n")
        try:
            time.sleep(float(self.spec.model))
            return super().complete(request)
        finally:
            with lock:
                running[0] -= 1


@hookimpl
def register_providers(providers):
    providers["slow"] = SlowMock
"""


def fixture(index: int, passes: bool = True) -> dict[str, Any]:
    """Two round-trips with the oracle: file_read, then the answer."""
    return {
        "task": f"What does note{index}.txt say?",
        "files": {f"note{index}.txt": f"note {index}\n"},
        "expected": ["file_read"],
        "verifier": {
            "must_include": ["file_read" if passes else "grep"],
            "args": {"file_read": {"path": f"note{index}.txt"}},
        },
    }


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """Eight local fixtures zz0..zz7 (select them with `-k zz`) and the slow provider."""
    pytester.makeconftest(SLOW_PROVIDER)
    directory = pytester.path / ".replio" / "eval"
    directory.mkdir(parents=True)
    for index in range(8):
        (directory / f"zz{index}.json").write_text(json.dumps(fixture(index)), encoding="utf-8")
    return pytester


def calls(pytester: pytest.Pytester) -> list[dict[str, Any]]:
    log = pytester.path / "calls.log"
    if not log.exists():
        return []
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    log.unlink()
    return entries


def report(path: Path) -> dict[str, Any]:
    """The JSON report without durations, which differ from run to run."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "duration_s"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(json.loads(path.read_text(encoding="utf-8")))


def passed_ids(result: pytest.RunResult) -> list[str]:
    return [line.split(" ")[0] for line in result.stdout.lines if " PASSED" in line]


def test_turns_run_side_by_side_and_report_in_order_with_the_same_metrics(
    project: pytest.Pytester,
) -> None:
    runs = {}
    for concurrency in ("1", "4"):
        path = project.path / f"report-{concurrency}.json"
        result = project.runpytest(
            "--replio-provider=slow:0.1",
            f"--replio-concurrency={concurrency}",
            "-k",
            "zz",
            "-v",
            f"--replio-json={path}",
            "-p",
            "no:cacheprovider",
        )
        result.assert_outcomes(passed=8)
        assert passed_ids(result) == [f".replio/eval/zz{i}.json::zz{i}[slow:0.1]" for i in range(8)]
        runs[concurrency] = (report(path), calls(project))
    (serial, serial_calls), (concurrent, concurrent_calls) = runs["1"], runs["4"]
    assert concurrent == serial
    assert max(call["running"] for call in serial_calls) == 1
    assert max(call["running"] for call in concurrent_calls) == 4  # the pool's size, no more
    assert len(concurrent_calls) == len(serial_calls) == 16
    # Serial turns run in their worktree; concurrent ones never move the process's cwd.
    assert all(call["cwd"] != str(project.path) for call in serial_calls)
    assert {call["cwd"] for call in concurrent_calls} == {str(project.path)}


def test_the_header_names_the_concurrency(project: pytest.Pytester) -> None:
    result = project.runpytest("--replio-provider=slow:0", "--replio-concurrency=3", "-k", "zz")
    result.assert_outcomes(passed=8)
    result.stdout.fnmatch_lines(["replio: up to 3 turns at once (--replio-concurrency)"])


def test_the_ini_value_applies(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nreplio_concurrency = 2\n")
    result = project.runpytest("--replio-provider=slow:0.1", "-k", "zz")
    result.assert_outcomes(passed=8)
    assert max(call["running"] for call in calls(project)) == 2


def test_only_the_selected_items_turns_are_started(project: pytest.Pytester) -> None:
    result = project.runpytest(
        "--replio-provider=slow:0", "--replio-concurrency=4", "-k", "zz1 or zz6"
    )
    result.assert_outcomes(passed=2)
    assert sorted({call["fixture"] for call in calls(project)}) == ["zz1", "zz6"]


def test_last_failed_starts_only_the_failed_items_turns(project: pytest.Pytester) -> None:
    directory = project.path / ".replio" / "eval"
    (directory / "zz5.json").write_text(json.dumps(fixture(5, passes=False)), encoding="utf-8")
    args = ["--replio-provider=slow:0", "--replio-concurrency=4", "-k", "zz"]
    project.runpytest(*args).assert_outcomes(passed=7, failed=1)
    calls(project)
    project.runpytest(*args, "--lf").assert_outcomes(failed=1)
    assert [call["fixture"] for call in calls(project)] == ["zz5", "zz5"]


def test_exitfirst_stops_starting_turns(project: pytest.Pytester) -> None:
    directory = project.path / ".replio" / "eval"
    (directory / "zz0.json").write_text(json.dumps(fixture(0, passes=False)), encoding="utf-8")
    result = project.runpytest(
        "--replio-provider=slow:0.1", "--replio-concurrency=2", "-k", "zz", "-x"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*must_include: grep was not called*"])
    started = {call["fixture"] for call in calls(project)}
    # However long zz0 takes to fail, at most the 2N = 4 turns ahead of it were started.
    assert "zz0" in started
    assert started <= {"zz0", "zz1", "zz2", "zz3"}


def test_ctrl_c_does_not_wait_for_turns_under_way(project: pytest.Pytester) -> None:
    proc = project.popen(
        [sys.executable, "-m", "pytest", "--replio-provider=slow:30", "--replio-concurrency=4"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    log = project.path / "calls.log"
    deadline = time.monotonic() + 30
    try:
        while len(log.read_text().splitlines() if log.exists() else []) < 4:
            assert time.monotonic() < deadline, "the turns did not start"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == pytest.ExitCode.INTERRUPTED  # not 30 s for the turns
        assert b"KeyboardInterrupt" in proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_turn_that_raises_fails_only_its_item(project: pytest.Pytester) -> None:
    broken = {"task": "Read a.", "files": {"a": "x", "a/b": "y"}}  # a file and a dir at once
    (project.path / ".replio" / "eval" / "zz3.json").write_text(json.dumps(broken))
    outcomes = {}
    for concurrency in ("1", "4"):
        result = project.runpytest(
            "--replio-provider=slow:0", f"--replio-concurrency={concurrency}", "-k", "zz"
        )
        result.assert_outcomes(passed=7, failed=1)
        outcomes[concurrency] = [line for line in result.stdout.lines if "files.a/b" in line]
    assert outcomes["1"] == outcomes["4"]
    assert any("cannot write" in line for line in outcomes["4"])


def test_under_xdist_workers_run_turns_one_by_one_with_the_same_metrics(
    project: pytest.Pytester,
) -> None:
    path = project.path / "report.json"
    result = project.runpytest(
        "--replio-provider=slow:0.1",
        "--replio-concurrency=4",
        "-n",
        "2",
        "-k",
        "zz",
        f"--replio-json={path}",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=8)
    result.stdout.fnmatch_lines(
        [
            "replio: --replio-concurrency=4 is not used with -n: "
            "each xdist worker runs its turns one by one"
        ]
    )
    assert max(call["running"] for call in calls(project)) <= 2  # one per worker
    serial_path = project.path / "serial.json"
    project.runpytest("--replio-provider=slow:0.1", "-k", "zz", f"--replio-json={serial_path}")
    assert report(path) == report(serial_path)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--replio-concurrency=0"], "*--replio-concurrency: 0 is less than 1*"),
        (["--replio-concurrency=many"], "*--replio-concurrency: 'many' is not a whole number*"),
    ],
)
def test_bad_values_are_usage_errors(
    project: pytest.Pytester, args: list[str], message: str
) -> None:
    result = project.runpytest("--replio-provider=slow:0", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_a_bad_ini_value_is_a_usage_error(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nreplio_concurrency = 0\n")
    result = project.runpytest("--replio-provider=slow:0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini replio_concurrency = '0': 0 is less than 1*"])


@pytest.mark.parametrize("concurrency", ["1", "2"])
def test_items_whose_names_share_30_characters_get_their_own_worktrees(
    project: pytest.Pytester, concurrency: str
) -> None:
    directory = project.path / ".replio" / "eval"
    long = "zz-a-fixture-id-long-enough-to-be-cut"
    for index in (1, 2):
        (directory / f"{long}-{index}.json").write_text(json.dumps(fixture(index)))
    result = project.runpytest(
        "--replio-provider=slow:0",
        f"--replio-concurrency={concurrency}",
        "-k",
        "long",
        "--basetemp=bt",
    )
    result.assert_outcomes(passed=2)
    cut = "zz_a_fixture_id_long_enough_to"  # 30 characters of the item name, \W made _
    worktrees = sorted(
        p.name
        for p in (project.path / "bt").iterdir()
        if p.name.startswith(cut) and not p.is_symlink()
    )
    assert worktrees == [f"{cut}0", f"{cut}1"]
    notes = [sorted(p.name for p in (project.path / "bt" / w).glob("note*")) for w in worktrees]
    assert notes == [["note1.txt"], ["note2.txt"]]
