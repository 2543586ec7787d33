"""Trials: the pass@k / pass^k estimators, per-fixture aggregates, and how reports show them."""

from __future__ import annotations

from fractions import Fraction
from math import comb
from typing import Any

import pytest

from pytest_replio_eval.metrics import Metrics, Summary, aggregate
from pytest_replio_eval.report import build_report, render_tables
from pytest_replio_eval.trials import (
    FixtureTrials,
    fixture_trials,
    pass_at_k,
    pass_hat_k,
    suite_pass_hat_k,
    trial_names,
)

# n = 5 trials, c = 0..5 passes, k = 1..5, worked out by hand from C(5,k) = 5, 10, 10, 5, 1:
# pass@k = 1 - C(5-c,k)/C(5,k), pass^k = C(c,k)/C(5,k).
PASS_AT_K = {
    0: [0.0, 0.0, 0.0, 0.0, 0.0],
    1: [0.2, 0.4, 0.6, 0.8, 1.0],  # 1 - 4/5, 1 - 6/10, 1 - 4/10, 1 - 1/5, 1 - 0/1
    2: [0.4, 0.7, 0.9, 1.0, 1.0],  # 1 - 3/5, 1 - 3/10, 1 - 1/10, 1 - 0, 1 - 0
    3: [0.6, 0.9, 1.0, 1.0, 1.0],  # 1 - 2/5, 1 - 1/10
    4: [0.8, 1.0, 1.0, 1.0, 1.0],  # 1 - 1/5
    5: [1.0, 1.0, 1.0, 1.0, 1.0],
}
PASS_HAT_K = {
    0: [0.0, 0.0, 0.0, 0.0, 0.0],
    1: [0.2, 0.0, 0.0, 0.0, 0.0],  # 1/5
    2: [0.4, 0.1, 0.0, 0.0, 0.0],  # 2/5, 1/10
    3: [0.6, 0.3, 0.1, 0.0, 0.0],  # 3/5, 3/10, 1/10
    4: [0.8, 0.6, 0.4, 0.2, 0.0],  # 4/5, 6/10, 4/10, 1/5
    5: [1.0, 1.0, 1.0, 1.0, 1.0],
}


@pytest.mark.parametrize("c", range(6))
def test_pass_at_k_and_pass_hat_k_for_five_trials_match_the_hand_computed_values(c: int) -> None:
    assert [pass_at_k(5, c, k) for k in range(1, 6)] == PASS_AT_K[c]
    assert [pass_hat_k(5, c, k) for k in range(1, 6)] == PASS_HAT_K[c]


@pytest.mark.parametrize(
    ("n", "c", "k"),
    sorted({(n, c, k) for n in (1, 7, 12) for c in (0, 1, n - 1, n) for k in (1, n // 2 or 1, n)}),
)
def test_the_estimators_are_the_exact_rationals_rounded_once(n: int, c: int, k: int) -> None:
    exact_at = 1 - Fraction(comb(n - c, k), comb(n, k))
    exact_hat = Fraction(comb(c, k), comb(n, k))
    assert pass_at_k(n, c, k) == float(exact_at)
    assert pass_hat_k(n, c, k) == float(exact_hat)


@pytest.mark.parametrize(
    ("n", "c", "k", "message"),
    [
        (5, 6, 1, "pass count 6 is not between 0 and 5"),
        (5, -1, 1, "pass count -1 is not between 0 and 5"),
        (5, 2, 0, "k = 0 is not between 1 and 5"),
        (5, 2, 6, "k = 6 is not between 1 and 5"),
        (0, 0, 1, "k = 1 is not between 1 and 0"),
    ],
)
def test_the_estimators_reject_impossible_counts(n: int, c: int, k: int, message: str) -> None:
    for estimator in (pass_at_k, pass_hat_k):
        with pytest.raises(ValueError) as info:
            estimator(n, c, k)
        assert str(info.value) == message


def test_trial_names_suffix_ids_only_when_a_fixture_runs_more_than_once() -> None:
    assert list(trial_names(1)) == [(1, "")]
    assert list(trial_names(3)) == [(1, "-t1"), (2, "-t2"), (3, "-t3")]


def run(fixture: str, trial: int, provider: str = "mock", **kwargs: Any) -> Metrics:
    return Metrics(
        fixture=fixture, provider=provider, model="", source="src", trial=trial, **kwargs
    )


def flaky_runs() -> list[Metrics]:
    """`notes` passes 3 of 5 trials; `steady` 2 of 2 judged, its third was a provider error."""
    outcomes = [True, True, False, True, False]
    notes = [
        run("notes", t, passed=p, accuracy=float(p), calls=1 + t, tokens=100 * t, duration_s=0.5)
        for t, p in enumerate(outcomes, 1)
    ]
    steady = [
        run("steady", 2, passed=True, accuracy=1.0, calls=2, errors=0, tokens=30),
        run("steady", 3, status="error", failures=["status: error: x"], errors=1),
        run("steady", 1, passed=True, accuracy=1.0, calls=2, errors=0, tokens=30),
    ]
    return [*notes, *steady]


def test_fixture_trials_aggregate_each_fixture_and_leave_infra_errors_out() -> None:
    notes, steady = fixture_trials(flaky_runs())
    assert notes == FixtureTrials(
        fixture="notes",
        provider="mock",
        judged=5,
        passed=3,
        infra=0,
        pass_rate=0.6,
        pass_at_k=PASS_AT_K[3],
        pass_hat_k=PASS_HAT_K[3],
        flaky=True,
        statuses={"ok": 5},
        accuracy=0.6,
        calls=4.0,  # (2 + 3 + 4 + 5 + 6) / 5
        redundant=0.0,
        errors=0.0,
        tokens=300.0,
        duration_s=0.5,
    )
    assert steady == FixtureTrials(
        fixture="steady",
        provider="mock",
        judged=2,
        passed=2,
        infra=1,
        pass_rate=1.0,
        pass_at_k=[1.0, 1.0],
        pass_hat_k=[1.0, 1.0],
        flaky=False,
        statuses={"ok": 2, "error": 1},  # in trial order: 1 ok, 2 ok, 3 error
        accuracy=1.0,
        calls=4 / 3,  # the counts are means over every trial, the error's included
        redundant=0.0,
        errors=1 / 3,
        tokens=20.0,
        duration_s=0.0,
    )
    assert steady.trials == 3


def test_a_fixture_whose_every_trial_was_an_infra_error_has_no_pass_rate() -> None:
    [down] = fixture_trials([run("down", t, status="error") for t in (1, 2)])
    assert (down.judged, down.infra, down.pass_rate, down.pass_at_k, down.flaky) == (
        0,
        2,
        None,
        [],
        False,
    )


def test_suite_pass_hat_k_takes_k_from_the_fewest_judged_trials() -> None:
    records = fixture_trials(flaky_runs())
    # k = 2 (steady has 2 judged): (pass^2 of notes 3/10 + pass^2 of steady 1) / 2
    assert suite_pass_hat_k(records) == (2, (0.3 + 1.0) / 2)
    assert suite_pass_hat_k(fixture_trials([run("down", 1, status="error")])) == (0, None)
    assert suite_pass_hat_k([]) == (0, None)


def test_aggregate_counts_fixtures_once_and_keeps_infra_errors_out_of_the_figures() -> None:
    assert aggregate(flaky_runs()) == Summary(
        fixtures=2,
        accuracy=5 / 7,  # 3 of notes' 5 and both judged runs of steady
        pass_rate=5 / 7,
        calls=24,
        redundant=0,
        errors=1,
        tokens=1560,
        judged=7,
        infra=1,
        k=2,
        pass_hat_k=0.65,
    )


def test_an_outage_does_not_lower_the_pass_rate() -> None:
    healthy = [run(f"f{i}", 1, passed=i < 4, accuracy=1.0) for i in range(5)]
    outage = [run(f"g{i}", 1, status="error", accuracy=0.0) for i in range(3)]
    before, during = aggregate(healthy), aggregate([*healthy, *outage])
    assert (during.pass_rate, during.accuracy) == (before.pass_rate, before.accuracy) == (0.8, 1.0)
    assert (during.fixtures, during.judged, during.infra) == (8, 5, 3)


def test_the_report_holds_trials_in_order_and_the_per_fixture_aggregates() -> None:
    doc = build_report(list(reversed(flaky_runs())))
    assert doc["version"] == 2
    assert [(r["fixture"], r["trial"]) for r in doc["results"]] == [
        *(("notes", t) for t in range(1, 6)),
        *(("steady", t) for t in range(1, 4)),
    ]
    assert [record["fixture"] for record in doc["fixtures"]] == ["notes", "steady"]
    assert doc["fixtures"][0] == {
        "fixture": "notes",
        "provider": "mock",
        "judged": 5,
        "passed": 3,
        "infra": 0,
        "pass_rate": 0.6,
        "pass_at_k": [0.6, 0.9, 1.0, 1.0, 1.0],
        "pass_hat_k": [0.6, 0.3, 0.1, 0.0, 0.0],
        "flaky": True,
        "statuses": {"ok": 5},
        "accuracy": 0.6,
        "calls": 4.0,
        "redundant": 0.0,
        "errors": 0.0,
        "tokens": 300.0,
        "duration_s": 0.5,
    }
    assert (doc["summary"]["mock"]["k"], doc["summary"]["mock"]["pass_hat_k"]) == (2, 0.65)
    assert doc["summary"]["mock"]["infra"] == 1


def test_a_report_of_version_1_still_loads() -> None:
    old = {
        "fixture": "a",
        "provider": "mock",
        "model": "",
        "source": "s",
        "pass": True,
        "status": "ok",
    }
    assert Metrics.from_dict(old).trial == 1
    summary = {"fixtures": 1, "accuracy": None, "pass_rate": 1.0, "calls": 0}
    assert Summary.from_dict(summary).pass_hat_k is None


def test_the_table_shows_pass_counts_a_flaky_marker_and_means() -> None:
    assert render_tables(flaky_runs()).splitlines() == [
        "------------------------------------- mock -------------------------------------",
        "fixture  status         pass        acc  calls  redund  errors  tokens  secs",
        "-------  -------------  ---------  ----  -----  ------  ------  ------  ----",
        "notes    ok             3/5 flaky  0.60      4       0       0     300  0.50",
        "steady   2 ok, 1 error  2/2        1.00    1.3       0     0.3      20  0.00",
        "",
        "mock: 2 fixtures, accuracy 0.71, pass rate 71% (5/7), pass^2 65%, calls 24,",
        "  redundant 0, errors 1 (1 infra), tokens 1560",
    ]


def test_single_runs_keep_their_table_and_an_infra_error_reads_infra() -> None:
    results = [run("a", 1, passed=True, calls=2), run("b", 1, status="error", errors=1)]
    assert render_tables(results).splitlines()[1:] == [
        "fixture  status  pass   acc  calls  redund  errors  tokens  secs",
        "-------  ------  -----  ---  -----  ------  ------  ------  ----",
        "a        ok      PASS     -      2       0       0       0  0.00",
        "b        error   INFRA    -      0       0       1       0  0.00",
        "",
        "mock: 2 fixtures, accuracy -, pass rate 100% (1/1), calls 2, redundant 0,",
        "  errors 1 (1 infra), tokens 0",
    ]


def test_the_comparison_adds_pass_hat_k_and_the_grid_counts_trials() -> None:
    other = [run("notes", t, "b", passed=True) for t in (1, 2, 3, 4, 5)]
    other.append(run("steady", 1, "b", status="error", errors=1))
    lines = render_tables([*flaky_runs(), *other], quiet=True).split("\n\n")
    assert lines[1].splitlines() == [
        "metric            mock            b",
        "---------  -----------  -----------",
        "accuracy          0.71            -",
        "pass rate    71% (5/7)   100% (5/5)",
        "pass^k       65% (k=2)   100% (k=5)",
        "calls               24            0",
        "redundant            0            0",
        "errors     1 (1 infra)  1 (1 infra)",
        "tokens            1560            0",
    ]
    grid = render_tables([*flaky_runs(), *other]).splitlines()[-4:]
    assert grid == [
        "fixture  mock  b",
        "-------  ----  -----",
        "notes    3/5   5/5",
        "steady   2/2   INFRA",
    ]
