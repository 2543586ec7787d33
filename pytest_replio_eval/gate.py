"""The run's own verdict, beyond its items: minimum pass rate and accuracy per provider spec.

A missed minimum fails the session the way pytest-cov's --cov-fail-under does: the
pytest_runtestloop wrapper in plugin.py adds to session.testsfailed once the items have run,
before pytest derives the exit status from it (by pytest_sessionfinish it is fixed).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .metrics import Summary


@dataclass(frozen=True)
class Thresholds:
    min_pass_rate: float | None = None  # 0..1
    min_accuracy: float | None = None  # 0..1


def missed_thresholds(summaries: Mapping[str, Summary], thresholds: Thresholds) -> list[str]:
    """One line per provider spec and figure below its minimum. A figure that cannot be
    computed misses too: a gate that cannot be checked must not pass. Specs without any
    result (all deselected) are not judged."""
    lines: list[str] = []
    for spec, summary in summaries.items():
        if not summary.fixtures:
            continue
        for name, value, minimum in (
            ("pass rate", summary.pass_rate if summary.judged else None, thresholds.min_pass_rate),
            ("accuracy", summary.accuracy, thresholds.min_accuracy),
        ):
            if minimum is None:
                continue
            if value is None:
                why = (
                    "no fixture has `expected`"
                    if summary.judged
                    else "every run was an infra error"
                )
                lines.append(
                    f"replio: {spec}: {name} is not available ({why}); the minimum is {minimum:.1%}"
                )
            elif value < minimum:
                lines.append(
                    f"replio: {spec}: {name} {value:.1%} is below the minimum {minimum:.1%}"
                )
    return lines
