"""Repeated runs of one fixture: unbiased pass@k and pass^k, and the per-fixture aggregate.

Models are not deterministic, so a fixture runs n times per provider spec and is judged by its
pass count c of n. Infrastructure errors (status `error`: the provider failed, not the model)
are left out of n, so an outage never reads as a model regression.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from math import comb
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .metrics import Metrics


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of k trials drawn from the n passes: 1 - C(n-c,k)/C(n,k)."""
    _check(n, c, k)
    total = comb(n, k)
    return (total - comb(n - c, k)) / total  # one division of integers: an exact float


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: the chance that all k trials drawn from the n pass: C(c,k)/C(n,k)."""
    _check(n, c, k)
    return comb(c, k) / comb(n, k)


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n:
        raise ValueError(f"pass count {c} is not between 0 and {n}")
    if not 1 <= k <= n:
        raise ValueError(f"k = {k} is not between 1 and {n}")


def trial_names(trials: int) -> Iterator[tuple[int, str]]:
    """(trial, item id suffix): `-t1`..`-tN` when a fixture runs more than once, else none."""
    for trial in range(1, trials + 1):
        yield trial, f"-t{trial}" if trials > 1 else ""


@dataclass
class FixtureTrials:
    """One fixture's trials against one provider spec."""

    fixture: str
    provider: str
    judged: int  # n: trials without an infrastructure error
    passed: int  # c
    infra: int  # trials that ended in an infrastructure error
    pass_rate: float | None  # c / n; None when no trial was judged
    pass_at_k: list[float] = field(default_factory=list)  # k = 1..n
    pass_hat_k: list[float] = field(default_factory=list)  # k = 1..n
    flaky: bool = False  # 0 < c < n
    statuses: dict[str, int] = field(default_factory=dict)  # status -> trials, in trial order
    # Means over the judged trials that have `expected`, and over all trials for the counts.
    accuracy: float | None = None
    calls: float = 0.0
    redundant: float = 0.0
    errors: float = 0.0
    tokens: float = 0.0
    duration_s: float = 0.0

    @property
    def trials(self) -> int:
        return self.judged + self.infra

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def fixture_trials(results: Iterable[Metrics]) -> list[FixtureTrials]:
    """One record per (provider, fixture), in the order each pair is first seen."""
    groups: dict[tuple[str, str], list[Metrics]] = {}
    for m in results:
        groups.setdefault((m.provider, m.fixture), []).append(m)
    return [_aggregate(sorted(runs, key=lambda m: m.trial)) for runs in groups.values()]


def _aggregate(runs: list[Metrics]) -> FixtureTrials:
    judged = [m for m in runs if not m.infra]
    n, c = len(judged), sum(m.passed for m in judged)
    scored = [m.accuracy for m in judged if m.accuracy is not None]
    statuses: dict[str, int] = {}
    for m in runs:
        statuses[m.status] = statuses.get(m.status, 0) + 1
    return FixtureTrials(
        fixture=runs[0].fixture,
        provider=runs[0].provider,
        judged=n,
        passed=c,
        infra=len(runs) - n,
        pass_rate=c / n if n else None,
        pass_at_k=[pass_at_k(n, c, k) for k in range(1, n + 1)],
        pass_hat_k=[pass_hat_k(n, c, k) for k in range(1, n + 1)],
        flaky=0 < c < n,
        statuses=statuses,
        accuracy=sum(scored) / len(scored) if scored else None,
        calls=_mean(m.calls for m in runs),
        redundant=_mean(m.redundant for m in runs),
        errors=_mean(m.errors for m in runs),
        tokens=_mean(m.tokens for m in runs),
        duration_s=_mean(m.duration_s for m in runs),
    )


def suite_pass_hat_k(records: Iterable[FixtureTrials]) -> tuple[int, float | None]:
    """(k, mean pass^k over fixtures). k is the fewest judged trials of any fixture, so every
    fixture has an unbiased estimate; fixtures with no judged trial are left out."""
    judged = [r for r in records if r.judged]
    if not judged:
        return 0, None
    k = min(r.judged for r in judged)
    return k, sum(r.pass_hat_k[k - 1] for r in judged) / len(judged)


def _mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items) if items else 0.0
