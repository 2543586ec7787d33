"""--replio-baseline: regressions and fixes per fixture, suite deltas, and the exit status."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_replio_eval.baseline import (
    FIXED,
    REGRESSION,
    Z,
    compare,
    regression_lines,
    render_comparison,
    verdict,
    wilson,
)
from pytest_replio_eval.metrics import Metrics
from pytest_replio_eval.saved import SavedReport
from pytest_replio_eval.trials import fixture_trials


def runs(fixture: str, passes: int, total: int, provider: str = "mock", **kw: Any) -> list[Metrics]:
    return [
        Metrics(fixture, provider, "", "src", trial=t, passed=t <= passes, calls=1, **kw)
        for t in range(1, total + 1)
    ]


def record(passes: int, total: int, infra: int = 0) -> Any:
    results = runs("f", passes, total) + [
        Metrics("f", "mock", "", "src", trial=total + i + 1, status="error") for i in range(infra)
    ]
    [found] = fixture_trials(results)
    return found


def test_wilson_interval_by_hand() -> None:
    z2 = Z * Z
    assert wilson(1, 1) == pytest.approx((1 / (1 + z2), 1.0))
    assert wilson(0, 1) == pytest.approx((0.0, z2 / (1 + z2)))
    # p = 1/2, n = 4: centre 1/2, half-width z * sqrt(1/16 + z2/64) / (1 + z2/4)
    half = Z * (1 / 16 + z2 / 64) ** 0.5 / (1 + z2 / 4)
    assert wilson(2, 4) == pytest.approx((0.5 - half, 0.5 + half))
    assert wilson(5, 5)[0] == pytest.approx(0.5655, abs=1e-4)


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        ((1, 1), (0, 1), REGRESSION),  # one run a side: passed before, fails now
        ((0, 1), (1, 1), FIXED),
        ((1, 1), (1, 1), ""),
        ((0, 1), (0, 1), ""),
        ((5, 5), (4, 5), ""),  # within what five trials allow
        ((5, 5), (3, 5), ""),
        ((5, 5), (1, 5), REGRESSION),
        ((5, 5), (0, 5), REGRESSION),
        ((3, 5), (1, 5), ""),
        ((3, 5), (0, 5), REGRESSION),
        ((1, 5), (5, 5), FIXED),
        ((1, 1), (0, 5), REGRESSION),
        ((1, 1), (4, 5), ""),
    ],
)
def test_verdict(before: tuple[int, int], after: tuple[int, int], expected: str) -> None:
    assert verdict(record(*before), record(*after)) == expected


def test_only_infra_errors_on_one_side_is_no_verdict() -> None:
    assert verdict(record(1, 1), record(0, 0, infra=2)) == ""
    assert verdict(record(1, 1), record(0, 1, infra=2)) == REGRESSION


def saved(results: list[Metrics], providers: list[str] | None = None) -> SavedReport:
    return SavedReport("old.json", providers or ["mock"], results)


def test_compare_pairs_fixtures_and_counts_new_and_missing() -> None:
    before = saved(runs("a", 1, 1) + runs("b", 0, 1) + runs("c", 1, 1) + runs("gone", 1, 1))
    after = runs("a", 0, 1) + runs("b", 1, 1) + runs("c", 1, 1, tokens=5) + runs("new", 1, 1)
    comparison = compare(before, after, ["mock"])
    assert [(c.fixture, c.verdict, c.changed) for c in comparison.fixtures] == [
        ("a", REGRESSION, True),
        ("b", FIXED, True),
        ("c", "", True),
    ]
    assert (comparison.new, comparison.not_run) == (1, 1)
    assert [c.fixture for c in comparison.regressions] == ["a"]
    assert [c.fixture for c in comparison.fixes] == ["b"]
    [suite] = comparison.suites
    assert (suite.before.pass_rate, suite.after.pass_rate) == (0.75, 0.75)
    assert regression_lines(comparison) == ["replio: 1 regression against old.json: a [mock]"]


def test_one_provider_each_side_is_compared_whatever_the_labels() -> None:
    before = saved(runs("a", 1, 1, provider="openai:m"), ["openai:m"])
    comparison = compare(before, runs("a", 0, 1, provider="replay:c"), ["replay:c"])
    assert [(c.provider, c.verdict) for c in comparison.fixtures] == [("replay:c", REGRESSION)]
    several = saved(runs("a", 1, 1, provider="x") + runs("a", 1, 1, provider="y"), ["x", "y"])
    comparison = compare(several, runs("a", 0, 1, provider="z"), ["z"])
    assert (comparison.fixtures, comparison.suites, comparison.new) == ([], [], 1)


def test_render_comparison() -> None:
    before = saved(runs("a", 1, 1) + runs("b", 0, 1) + runs("c", 1, 1))
    after = runs("a", 0, 1, tokens=30) + runs("b", 1, 1) + runs("c", 1, 1) + runs("d", 1, 1)
    assert render_comparison(compare(before, after), width=60) == "\n".join(
        [
            "-------------------- baseline old.json ---------------------",
            "1 regression, 1 fixed, 1 unchanged, 1 new",
            "",
            "fixture  provider  pass          acc  calls  tokens   change",
            "-------  --------  ------------  ---  -----  -------  ----------",
            "a        mock      PASS -> FAIL  -    1      0 -> 30  regression",
            "b        mock      FAIL -> PASS  -    1      0        fixed",
            "",
            "provider  figure        before      after   delta",
            "--------  ---------  ---------  ---------  ------",
            "mock      fixtures           3          4      +1",
            "          accuracy           -          -",
            "          pass rate  67% (2/3)  75% (3/4)  +8 pts",
            "          calls              3          4      +1",
            "          redundant          0          0",
            "          errors             0          0",
            "          tokens             0         30     +30",
            "",
            "regressions: a [mock]",
            "fixed: b [mock]",
        ]
    )
    quiet = render_comparison(compare(before, after), quiet=True)
    assert "PASS -> FAIL" not in quiet and "regressions: a [mock]" in quiet


# --- through pytest ------------------------------------------------------------------------------

PASSES = {
    "task": "What does notes.txt say?",
    "files": {"notes.txt": "hello\n"},
    "expected": ["file_read"],
    "verifier": {"must_include": ["file_read"]},
}
FAILS = {**PASSES, "verifier": {"must_include": ["grep"]}}


def project(pytester: pytest.Pytester, **fixtures: dict[str, Any]) -> None:
    for name, data in fixtures.items():
        path = pytester.path / ".replio" / "eval" / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_a_baseline_run_lists_regressions_and_fails_on_them(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    common = ["--replio-provider=mock", "--replio-fixture=breaks", "--replio-fixture=mends"]
    common += ["--replio-fixture=steady", "--replio-soft", "-p", "no:cacheprovider", *workers]
    project(pytester, breaks=PASSES, mends=FAILS, steady=PASSES)
    assert pytester.runpytest(*common, "--replio-json=base.json").ret == 0
    project(pytester, breaks=FAILS, mends=PASSES)

    result = pytester.runpytest(*common, "--replio-baseline=base.json")
    assert result.ret == 0  # soft: only the gates fail the run, and none is asked for
    output = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*- baseline base.json -*",
            "1 regression, 1 fixed, 1 unchanged",
            "",
            "fixture  provider  pass          acc   calls  tokens  change",
            "-------  --------  ------------  ----  -----  ------  ----------",
            "breaks   mock      PASS -> FAIL  1.00  1      1136    regression",
            "mends    mock      FAIL -> PASS  1.00  1      1136    fixed",
            "",
            "provider  figure        before      after  delta",
            "--------  ---------  ---------  ---------  -----",
            "mock      fixtures           3          3",
            "          accuracy        1.00       1.00",
            "          pass rate  67% (2/3)  67% (2/3)",
            "          calls              3          3",
            "          redundant          0          0",
            "          errors             0          0",
            "          tokens          3408       3408",
            "",
            "regressions: breaks [mock]",
            "fixed: mends [mock]",
        ],
        consecutive=True,
    )
    assert "replio: 1 regression against" not in output

    gated = pytester.runpytest(
        *common, "--replio-baseline=base.json", "--replio-fail-on-regression"
    )
    assert gated.ret == 1
    gated.stdout.fnmatch_lines(["replio: 1 regression against base.json: breaks [mock]"])


def test_no_regression_passes_the_gate(pytester: pytest.Pytester) -> None:
    project(pytester, steady=PASSES)
    args = ["--replio-provider=mock", "--replio-fixture=steady", "-p", "no:cacheprovider"]
    assert pytester.runpytest(*args, "--replio-json=base.json").ret == 0
    result = pytester.runpytest(*args, "--replio-baseline=base.json", "--replio-fail-on-regression")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["1 unchanged"])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read: No such file or directory"),
        (
            "{",
            "invalid JSON: Expecting property name enclosed in double quotes: "
            "line 1 column 2 (char 1)",
        ),
        ("[]", "not a replio report (no results list)"),
        ('{"version": 9, "results": []}', "unknown report version 9"),
        ('{"version": 1, "results": [{"fixture": "a"}]}', "results[0]: missing key 'model'"),
        ('{"version": 1, "results": [{"x": 1}]}', "results[0]: unknown key 'x'"),
    ],
)
def test_a_bad_baseline_is_a_usage_error(
    pytester: pytest.Pytester, content: str | None, message: str
) -> None:
    if content is not None:
        Path(pytester.path / "base.json").write_text(content)
    result = pytester.runpytest("--replio-provider=mock", "--replio-baseline=base.json")
    assert result.ret == 4
    assert f"error: argument --replio-baseline: base.json: {message}\n" in result.stderr.str()


def test_fail_on_regression_needs_a_baseline(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--replio-provider=mock", "--replio-fail-on-regression")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["ERROR: --replio-fail-on-regression needs --replio-baseline=PATH"])
