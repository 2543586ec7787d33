"""Per-fixture metrics and per-provider aggregation.

Both records round-trip through JSON (`to_dict`/`from_dict`), since xdist workers send them
to the controller and the JSON report is built from the same dicts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from .trials import fixture_trials, suite_pass_hat_k
from .verifier import verify

if TYPE_CHECKING:
    from .engine import Turn
    from .fixtures import Fixture


@dataclass
class Metrics:
    fixture: str
    provider: str  # spec label
    model: str
    source: str
    trial: int = 1  # 1-based: which of the fixture's runs (--replio-trials) this is
    trace: list[dict[str, Any]] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    accuracy: float | None = None  # None when the fixture has no `expected`
    passed: bool = False  # "pass" in JSON
    calls: int = 0
    redundant: int = 0
    errors: int = 0
    tokens: int = 0
    status: str = "ok"
    failures: list[str] = field(default_factory=list)
    duration_s: float = 0.0
    # The tool-description variant (--replio-tools); other than base, `provider` ends +tools=NAME.
    tools: str = "base"

    @property
    def infra(self) -> bool:
        """A provider or transport fault (status error): it says nothing about the model."""
        return self.status == "error"

    def to_dict(self) -> dict[str, Any]:
        """The report's result object: field order, with `passed` spelled `pass`."""
        return {("pass" if key == "passed" else key): value for key, value in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Metrics:
        return cls(**{("passed" if key == "pass" else key): value for key, value in data.items()})


@dataclass
class Summary:
    fixtures: int = 0
    accuracy: float | None = None
    pass_rate: float = 0.0
    calls: int = 0
    redundant: int = 0
    errors: int = 0
    tokens: int = 0
    judged: int = 0  # runs without an infrastructure error: the pass-rate denominator
    infra: int = 0  # runs that ended in an infrastructure error (status error)
    k: int = 0  # the fewest judged trials of any fixture (see trials.suite_pass_hat_k)
    pass_hat_k: float | None = None  # mean pass^k over fixtures

    @property
    def passed(self) -> int:
        """How many judged runs passed (pass_rate is exactly passed / judged)."""
        return round(self.pass_rate * self.judged)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Summary:
        return cls(**data)


def compute_metrics(fixture: Fixture, turn: Turn) -> Metrics:
    """Judge one turn: the verifier's verdict plus counts taken from the trace and usage."""
    names = [entry["name"] for entry in turn.trace]
    verdict = verify(fixture, turn.trace, answer=turn.text, worktree=turn.worktree)
    # After a provider fault the verifier judges an unfinished turn: only the cause is shown.
    failures = [] if turn.status == "error" else list(verdict.failures)
    if turn.status != "ok":
        failures.insert(0, _status_line(turn))
    return Metrics(
        fixture=fixture.id,
        provider=turn.provider,
        model=turn.model,
        source=fixture.source,
        trace=[dict(entry) for entry in turn.trace],
        names=names,
        accuracy=None if fixture.expected is None else float(names == list(fixture.expected)),
        passed=turn.status == "ok" and verdict.passed,
        calls=len(names),
        redundant=redundant_calls(turn.trace),
        errors=len(turn.engine_errors) + sum(r.startswith("Error") for r in turn.results),
        tokens=sum(usage.tokens for usage in turn.usage),
        status=turn.status,
        failures=failures,
        duration_s=turn.duration_s,
        trial=turn.trial,
        tools=turn.variant,
    )


def redundant_calls(trace: Iterable[dict[str, Any]]) -> int:
    """Calls whose (name, canonical JSON arguments) pair was already seen in the turn."""
    seen: set[tuple[str, str]] = set()
    repeats = 0
    for entry in trace:
        key = (entry["name"], _canonical(entry["arguments"]))
        repeats += key in seen
        seen.add(key)
    return repeats


def aggregate(metrics: Iterable[Metrics]) -> Summary:
    """One provider's suite summary; accuracy averages only fixtures that have `expected`.
    Infrastructure errors are left out of accuracy, pass rate and pass^k, and counted apart."""
    results = list(metrics)
    judged = [m for m in results if not m.infra]
    scored = [m.accuracy for m in judged if m.accuracy is not None]
    k, hat = suite_pass_hat_k(fixture_trials(results))
    return Summary(
        fixtures=len({m.fixture for m in results}),
        accuracy=sum(scored) / len(scored) if scored else None,
        pass_rate=sum(m.passed for m in judged) / len(judged) if judged else 0.0,
        calls=sum(m.calls for m in results),
        redundant=sum(m.redundant for m in results),
        errors=sum(m.errors for m in results),
        tokens=sum(m.tokens for m in results),
        judged=len(judged),
        infra=len(results) - len(judged),
        k=k,
        pass_hat_k=hat,
    )


def provider_order(results: Iterable[Metrics], providers: Sequence[str] = ()) -> list[str]:
    """`providers` first (the configured order), then any other spec in first-seen order."""
    order = list(dict.fromkeys(providers))
    order += [spec for spec in dict.fromkeys(m.provider for m in results) if spec not in order]
    return order


def summarize(results: Iterable[Metrics], providers: Sequence[str] = ()) -> dict[str, Summary]:
    """A Summary per provider spec, in `provider_order`."""
    results = list(results)
    return {
        spec: aggregate(m for m in results if m.provider == spec)
        for spec in provider_order(results, providers)
    }


def _status_line(turn: Turn) -> str:
    if turn.error:
        return f"status: {turn.status}: {turn.error}"
    if turn.status == "truncated":
        steps = len(turn.usage)
        return f"status: truncated: no answer after {steps} step{'' if steps == 1 else 's'}"
    return f"status: {turn.status}"


def _canonical(arguments: dict[str, Any] | str) -> str:
    """Key order never makes two calls different; raw (invalid JSON) arguments stay as-is."""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
