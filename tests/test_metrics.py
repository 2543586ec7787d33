from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_replio_eval.engine import Turn
from pytest_replio_eval.fixtures import Fixture
from pytest_replio_eval.metrics import (
    Metrics,
    Summary,
    aggregate,
    compute_metrics,
    redundant_calls,
    summarize,
)
from pytest_replio_eval.providers.base import Usage


def fixture(**kwargs: Any) -> Fixture:
    return Fixture(id=kwargs.pop("id", "count-lines"), task="t", source="local.json", **kwargs)


def call(name: str, arguments: dict[str, Any] | str | None = None) -> dict[str, Any]:
    return {"name": name, "arguments": {} if arguments is None else arguments}


def turn(trace: Sequence[dict[str, Any]] = (), **kwargs: Any) -> Turn:
    return Turn(provider="mock", model="oracle", trace=list(trace), **kwargs)


def test_compute_metrics_of_a_clean_turn() -> None:
    trace = [call("glob", {"pattern": "*.txt"}), call("file_read", {"path": "a.txt"})]
    got = compute_metrics(
        fixture(expected=["glob", "file_read"], verifier={"exact": True}),
        turn(
            trace,
            results=["a.txt", "1\n2\n"],
            text="2 lines",
            usage=[Usage(total_tokens=30), Usage(total_tokens=12)],
            duration_s=0.25,
        ),
    )
    assert got == Metrics(
        fixture="count-lines",
        provider="mock",
        model="oracle",
        source="local.json",
        trace=trace,
        names=["glob", "file_read"],
        accuracy=1.0,
        passed=True,
        calls=2,
        redundant=0,
        errors=0,
        tokens=42,
        status="ok",
        failures=[],
        duration_s=0.25,
    )


def test_trace_is_copied_not_shared() -> None:
    live = turn([call("glob")])
    got = compute_metrics(fixture(), live)
    live.trace[0]["name"] = "changed"
    assert got.trace == [call("glob")]


@pytest.mark.parametrize(
    ("expected", "names", "accuracy"),
    [
        (["glob", "file_read"], ["glob", "file_read"], 1.0),
        (["glob", "file_read"], ["file_read", "glob"], 0.0),
        (["glob"], ["glob", "glob"], 0.0),
        ([], [], 1.0),
        ([], ["glob"], 0.0),
        (None, ["glob"], None),
    ],
)
def test_accuracy(expected: list[str] | None, names: list[str], accuracy: float | None) -> None:
    got = compute_metrics(fixture(expected=expected), turn([call(n) for n in names]))
    assert got.accuracy == accuracy


def test_accuracy_does_not_decide_pass() -> None:
    got = compute_metrics(fixture(expected=["glob"]), turn([call("grep")]))
    assert (got.accuracy, got.passed, got.failures) == (0.0, True, [])


def test_verifier_failures_fail_the_fixture() -> None:
    got = compute_metrics(fixture(verifier={"must_include": ["grep"]}), turn([call("glob")]))
    assert (got.passed, got.failures) == (False, ["must_include: grep was not called"])


def test_verifier_sees_the_final_text_and_worktree(tmp_path: Path) -> None:
    (tmp_path / "out.txt").write_text("done")
    verifier = {"answer": {"contains": ["42"]}, "files": {"out.txt": {"equals": "done"}}}
    ok = compute_metrics(fixture(verifier=verifier), turn(text="it is 42", worktree=tmp_path))
    assert (ok.passed, ok.failures) == (True, [])
    bad = compute_metrics(fixture(verifier=verifier), turn(text="no idea", worktree=tmp_path / "x"))
    assert bad.failures == [
        'answer.contains: "42" not in the final answer',
        "files.out.txt: missing",
    ]


@pytest.mark.parametrize(
    ("trace", "redundant"),
    [
        ([call("glob", {"pattern": "*"})] * 3, 2),
        (
            [
                call("grep", {"pattern": "a", "path": "."}),
                call("grep", {"path": ".", "pattern": "a"}),
            ],
            1,
        ),
        ([call("grep", {"pattern": "a"}), call("grep", {"pattern": "b"})], 0),
        ([call("glob", {"pattern": "*"}), call("grep", {"pattern": "*"})], 0),
        ([call("glob", {"n": 1}), call("glob", {"n": "1"})], 0),
        ([call("glob", "{bad"), call("glob", "{bad"), call("glob", "{bad ")], 1),
        ([call("glob"), call("list"), call("glob"), call("list"), call("glob")], 3),
        ([], 0),
    ],
)
def test_redundant_counts_repeats_of_name_and_canonical_arguments(
    trace: list[dict[str, Any]], redundant: int
) -> None:
    assert redundant_calls(trace) == redundant
    assert compute_metrics(fixture(), turn(trace)).redundant == redundant


def test_errors_count_engine_errors_and_error_results() -> None:
    got = compute_metrics(
        fixture(),
        turn(
            [call("a"), call("b"), call("c"), call("d")],
            results=["Error: file not found: x", "ok", "Error: run_command denied", "error? no"],
            engine_errors=["provider returned no choices"],
        ),
    )
    assert got.errors == 3


def test_tokens_use_total_else_prompt_plus_completion() -> None:
    usage = [
        Usage(prompt_tokens=100, completion_tokens=20, total_tokens=125),
        Usage(prompt_tokens=40, completion_tokens=2),
        Usage(prompt_tokens=7),
        Usage(),
    ]
    assert compute_metrics(fixture(), turn(usage=usage)).tokens == 125 + 42 + 7


@pytest.mark.parametrize(
    ("status", "error", "steps", "line"),
    [
        ("cancelled", "turn timed out after 5s", 2, "status: cancelled: turn timed out after 5s"),
        ("truncated", None, 3, "status: truncated: no answer after 3 steps"),
        ("truncated", None, 1, "status: truncated: no answer after 1 step"),
        (
            "truncated",
            "model output cut off (length)",
            1,
            "status: truncated: model output cut off (length)",
        ),
    ],
)
def test_a_turn_that_did_not_finish_fails_with_its_status_first(
    status: str, error: str | None, steps: int, line: str
) -> None:
    got = compute_metrics(
        fixture(verifier={"min_calls": 1}),
        turn(status=status, error=error, usage=[Usage()] * steps),
    )
    assert got.passed is False
    assert got.status == status
    assert got.failures == [line, "min_calls: 0 calls made, at least 1 required"]


@pytest.mark.parametrize(
    ("error", "line"),
    [
        ("openai: HTTP 401 Unauthorized", "status: error: openai: HTTP 401 Unauthorized"),
        (None, "status: error"),
    ],
)
def test_a_provider_fault_fails_with_its_cause_alone(error: str | None, line: str) -> None:
    """The verifier would only judge an unfinished turn: its clauses are not shown."""
    got = compute_metrics(fixture(verifier={"min_calls": 1}), turn(status="error", error=error))
    assert (got.passed, got.status, got.failures) == (False, "error", [line])


def test_status_alone_fails_even_when_the_verifier_passes() -> None:
    got = compute_metrics(fixture(), turn(status="cancelled", error="timed out"))
    assert (got.passed, got.failures) == (False, ["status: cancelled: timed out"])


def sample() -> Metrics:
    return Metrics(
        fixture="count-lines",
        provider="openai:gpt-4o",
        model="gpt-4o",
        source="replio-core-eval",
        trace=[call("glob", {"pattern": "*.txt"}), call("file_read", "{bad")],
        names=["glob", "file_read"],
        accuracy=None,
        passed=True,
        calls=2,
        redundant=0,
        errors=1,
        tokens=77,
        status="ok",
        failures=[],
        duration_s=1.5,
    )


def test_metrics_to_dict_uses_the_report_keys_in_order() -> None:
    data = sample().to_dict()
    assert list(data) == [
        "fixture",
        "provider",
        "model",
        "source",
        "trial",
        "trace",
        "names",
        "accuracy",
        "pass",
        "calls",
        "redundant",
        "errors",
        "tokens",
        "status",
        "failures",
        "duration_s",
        "tools",
    ]
    assert (data["pass"], data["accuracy"], data["trace"][1]["arguments"]) == (True, None, "{bad")


def test_metrics_round_trip_through_json() -> None:
    original = sample()
    assert Metrics.from_dict(json.loads(json.dumps(original.to_dict()))) == original


def test_metrics_to_dict_does_not_share_lists() -> None:
    original = sample()
    original.to_dict()["names"].append("x")
    assert original.names == ["glob", "file_read"]


def result(provider: str = "mock", **kwargs: Any) -> Metrics:
    return Metrics(
        fixture=kwargs.pop("fixture", "f"), provider=provider, model="", source="", **kwargs
    )


def test_aggregate_means_accuracy_over_fixtures_with_expected() -> None:
    got = aggregate(
        [
            result(fixture="a", accuracy=1.0, passed=True, calls=2, redundant=1, tokens=10),
            result(fixture="b", accuracy=0.0, passed=False, calls=3, errors=2, tokens=20),
            result(fixture="c", accuracy=None, passed=True, calls=1, errors=1, tokens=5),
            result(fixture="d", accuracy=1.0, passed=True, calls=0, redundant=0, tokens=0),
        ]
    )
    assert got == Summary(
        fixtures=4,
        accuracy=2 / 3,
        pass_rate=0.75,
        calls=6,
        redundant=1,
        errors=3,
        tokens=35,
        judged=4,
        k=1,
        pass_hat_k=0.75,
    )
    assert got.passed == 3


def test_aggregate_without_expected_has_no_accuracy() -> None:
    got = aggregate([result(passed=False), result(passed=False)])
    assert (got.accuracy, got.pass_rate, got.passed) == (None, 0.0, 0)


def test_aggregate_of_nothing() -> None:
    assert aggregate([]) == Summary(fixtures=0, accuracy=None, pass_rate=0.0)


def test_summary_round_trips_through_json() -> None:
    summary = Summary(fixtures=3, accuracy=0.5, pass_rate=2 / 3, calls=9, tokens=1000)
    data = summary.to_dict()
    assert list(data) == [
        "fixtures",
        "accuracy",
        "pass_rate",
        "calls",
        "redundant",
        "errors",
        "tokens",
        "judged",
        "infra",
        "k",
        "pass_hat_k",
    ]
    assert Summary.from_dict(json.loads(json.dumps(data))) == summary


def test_summarize_groups_by_provider_in_first_seen_order() -> None:
    results = [
        result("ollama:qwen3", fixture="a", passed=True),
        result("mock", passed=False),
        result("ollama:qwen3", fixture="b", passed=False),
    ]
    got = summarize(results)
    assert list(got) == ["ollama:qwen3", "mock"]
    assert (got["ollama:qwen3"].fixtures, got["ollama:qwen3"].pass_rate) == (2, 0.5)
    assert (got["mock"].fixtures, got["mock"].pass_rate) == (1, 0.0)


def test_summarize_follows_the_configured_order_first() -> None:
    results = [result("b"), result("c"), result("a")]
    got = summarize(results, providers=["a", "d", "b"])
    assert list(got) == ["a", "d", "b", "c"]
    assert got["d"] == Summary()
