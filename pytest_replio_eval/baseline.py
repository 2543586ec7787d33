"""`--replio-baseline=report.json`: this run against a saved report, per fixture and per suite.

Each side of a fixture is its pass count c of n judged runs (infrastructure errors left out,
as in trials.py). It regressed when each side's pass rate lies outside the other side's 95%
Wilson score interval, the new rate being the lower one. With one run a side that is exactly
"passed before, fails now"; with trials, a drop the samples can explain (5/5 -> 4/5) is shown
as a change but not called a regression. Fixed is the mirror image.

Results pair up by provider label; when the two runs share no label and each has one provider
(openai:gpt-4o against its replay, or against another model), those two are compared.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from math import sqrt

from .metrics import Metrics, Summary, provider_order, summarize
from .report import (
    format_accuracy,
    format_mean,
    format_pass_rate,
    format_passes,
    format_rule,
    format_table,
)
from .saved import SavedReport
from .trials import FixtureTrials, fixture_trials

Z = 1.959963984540054  # the two-sided 95% normal quantile
REGRESSION, FIXED = "regression", "fixed"


def wilson(passed: int, runs: int, z: float = Z) -> tuple[float, float]:
    """The Wilson score interval of a pass rate: sound for small n and for 0 or n passes."""
    rate = passed / runs
    scale = 1 + z * z / runs
    centre = (rate + z * z / (2 * runs)) / scale
    half = z * sqrt(rate * (1 - rate) / runs + z * z / (4 * runs * runs)) / scale
    return max(0.0, centre - half), min(1.0, centre + half)


def verdict(before: FixtureTrials, after: FixtureTrials) -> str:
    """REGRESSION, FIXED, or "" when the pass rates do not differ beyond the samples."""
    if not before.judged or not after.judged:
        return ""  # only infrastructure errors on one side: nothing to judge
    old, new = before.passed / before.judged, after.passed / after.judged
    old_low, old_high = wilson(before.passed, before.judged)
    new_low, new_high = wilson(after.passed, after.judged)
    if new < old_low and old > new_high:
        return REGRESSION
    if new > old_high and old < new_low:
        return FIXED
    return ""


@dataclass
class FixtureChange:
    fixture: str
    provider: str  # this run's label
    before: FixtureTrials
    after: FixtureTrials
    verdict: str

    def cells(self) -> list[tuple[str, str]]:
        """(before, after) of each compared figure: pass, accuracy, calls, tokens."""
        return [
            (format_passes(self.before), format_passes(self.after)),
            (format_accuracy(self.before.accuracy), format_accuracy(self.after.accuracy)),
            (format_mean(self.before.calls), format_mean(self.after.calls)),
            (format_mean(self.before.tokens), format_mean(self.after.tokens)),
        ]

    @property
    def changed(self) -> bool:
        return bool(self.verdict) or any(old != new for old, new in self.cells())


@dataclass
class SuiteChange:
    provider: str  # this run's label
    baseline_provider: str
    before: Summary
    after: Summary


@dataclass
class Comparison:
    baseline: str  # the report's path, as given
    fixtures: list[FixtureChange]
    suites: list[SuiteChange]
    new: int  # fixture runs of this run that the baseline lacks
    not_run: int  # fixture runs of the baseline that this run lacks

    @property
    def regressions(self) -> list[FixtureChange]:
        return [change for change in self.fixtures if change.verdict == REGRESSION]

    @property
    def fixes(self) -> list[FixtureChange]:
        return [change for change in self.fixtures if change.verdict == FIXED]


def compare(
    baseline: SavedReport, results: Iterable[Metrics], providers: Sequence[str] = ()
) -> Comparison:
    results = list(results)
    order = provider_order(results, providers)
    pairs = {label: label for label in order if label in baseline.providers}
    if not pairs and len(order) == 1 and len(baseline.providers) == 1:
        pairs = {order[0]: baseline.providers[0]}
    before = {(r.provider, r.fixture): r for r in fixture_trials(baseline.results)}
    rank = {label: index for index, label in enumerate(order)}
    changes: list[FixtureChange] = []
    new = 0
    for record in sorted(fixture_trials(results), key=lambda r: (rank[r.provider], r.fixture)):
        old = before.pop((pairs.get(record.provider, ""), record.fixture), None)
        if old is None:
            new += 1
        else:
            changes.append(
                FixtureChange(record.fixture, record.provider, old, record, verdict(old, record))
            )
    old_summaries = summarize(baseline.results, baseline.providers)
    now_summaries = summarize(results, order)
    suites = [
        SuiteChange(label, old_label, old_summaries[old_label], now_summaries[label])
        for label, old_label in pairs.items()
    ]
    return Comparison(baseline.path, changes, suites, new, len(before))


def regression_lines(comparison: Comparison) -> list[str]:
    """The verdict of --replio-fail-on-regression: one line, or none when nothing regressed."""
    regressions = comparison.regressions
    if not regressions:
        return []
    count = f"{len(regressions)} regression{'s' * (len(regressions) != 1)}"
    names = ", ".join(f"{c.fixture} [{c.provider}]" for c in regressions)
    return [f"replio: {count} against {comparison.baseline}: {names}"]


def render_comparison(comparison: Comparison, *, width: int = 80, quiet: bool = False) -> str:
    """The headline, the changed fixtures (not when quiet), the suite deltas, and the lists of
    regressions and fixes."""
    lines = [format_rule(f"baseline {comparison.baseline}", width), _headline(comparison)]
    lines += [
        f"{suite.provider} is compared with {suite.baseline_provider}"
        for suite in comparison.suites
        if suite.provider != suite.baseline_provider
    ]
    changed = [change for change in comparison.fixtures if change.changed]
    if changed and not quiet:
        header = ["fixture", "provider", "pass", "acc", "calls", "tokens", "change"]
        rows = [
            [c.fixture, c.provider, *(_arrow(old, new) for old, new in c.cells()), c.verdict]
            for c in changed
        ]
        lines += ["", *format_table(header, rows, set())]
    if comparison.suites:
        header = ["provider", "figure", "before", "after", "delta"]
        rows = [row for suite in comparison.suites for row in _suite_rows(suite)]
        lines += ["", *format_table(header, rows, {2, 3, 4})]
    lists = [
        f"{title}: " + ", ".join(f"{c.fixture} [{c.provider}]" for c in found)
        for title, found in (("regressions", comparison.regressions), ("fixed", comparison.fixes))
        if found
    ]
    if lists:
        lines += ["", *lists]
    return "\n".join(lines)


def _headline(comparison: Comparison) -> str:
    regressions = len(comparison.regressions)
    changed = sum(c.changed and not c.verdict for c in comparison.fixtures)
    counts = [
        (regressions, f"regression{'s' * (regressions != 1)}"),
        (len(comparison.fixes), "fixed"),
        (changed, "changed"),
        (len(comparison.fixtures) - sum(c.changed for c in comparison.fixtures), "unchanged"),
        (comparison.new, "new"),
        (comparison.not_run, "not run now"),
    ]
    return ", ".join(f"{n} {word}" for n, word in counts if n) or "nothing to compare"


def _arrow(old: str, new: str) -> str:
    return old if old == new else f"{old} -> {new}"


def _suite_rows(suite: SuiteChange) -> list[list[str]]:
    old, new = suite.before, suite.after
    figures = [
        ("fixtures", str(old.fixtures), str(new.fixtures), _delta(old.fixtures, new.fixtures)),
        (
            "accuracy",
            format_accuracy(old.accuracy),
            format_accuracy(new.accuracy),
            _accuracy_delta(old, new),
        ),
        ("pass rate", format_pass_rate(old), format_pass_rate(new), _points(old, new)),
        ("calls", str(old.calls), str(new.calls), _delta(old.calls, new.calls)),
        ("redundant", str(old.redundant), str(new.redundant), _delta(old.redundant, new.redundant)),
        ("errors", str(old.errors), str(new.errors), _delta(old.errors, new.errors)),
        ("tokens", str(old.tokens), str(new.tokens), _delta(old.tokens, new.tokens)),
    ]
    return [[suite.provider if i == 0 else "", *row] for i, row in enumerate(figures)]


def _delta(old: int, new: int) -> str:
    return "" if old == new else f"{new - old:+d}"


def _accuracy_delta(old: Summary, new: Summary) -> str:
    if old.accuracy is None or new.accuracy is None or old.accuracy == new.accuracy:
        return ""
    return f"{new.accuracy - old.accuracy:+.2f}"


def _points(old: Summary, new: Summary) -> str:
    """Pass rates differ in percentage points; none when either side judged nothing."""
    if not old.judged or not new.judged or old.pass_rate == new.pass_rate:
        return ""
    return f"{(new.pass_rate - old.pass_rate) * 100:+.0f} pts"
