"""Option values -> what a run needs; plain functions so bad input fails before anything runs."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field, replace
from pathlib import Path

from .engine import TurnSettings
from .gate import Thresholds
from .providers.base import ProviderSpec, parse_spec
from .recording import Recording
from .saved import SavedReport


def spec_list(text: str) -> list[ProviderSpec]:
    """`a,b:m` -> specs; argparse `type=` so a bad value is a usage error at parse time."""
    try:
        specs = [parse_spec(part) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if not specs:
        raise argparse.ArgumentTypeError(f"no provider spec in {text!r}")
    return specs


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is less than 1")
    return value


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value:g} is not greater than 0")
    return value


def fraction(text: str) -> float:
    """A threshold such as 0.8: a number from 0 to 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value <= 1:  # also rejects nan
        raise argparse.ArgumentTypeError(f"{value:g} is not between 0 and 1")
    return value


INFRA_POLICIES = ("fail", "skip")


def infra_policy(text: str) -> str:
    """What becomes of an item whose provider failed: `fail` or `skip`."""
    if text not in INFRA_POLICIES:
        raise argparse.ArgumentTypeError(f"{text!r} is not one of: {', '.join(INFRA_POLICIES)}")
    return text


@dataclass(frozen=True)
class EvalOptions:
    specs: list[ProviderSpec]
    fixture_ids: list[str] = field(default_factory=list)
    settings: TurnSettings = field(default_factory=TurnSettings)
    json_path: Path | None = None
    only: bool = False
    concurrency: int = 1  # turns at once in this process, see prefetch.py
    record: Recording | None = None  # --replio-record
    baseline: SavedReport | None = None  # --replio-baseline
    fail_on_regression: bool = False
    trials: int = 1  # runs per fixture and spec, unless the fixture sets its own
    thresholds: Thresholds = field(default_factory=Thresholds)
    soft: bool = False  # failing items do not fail the run: only the thresholds gate
    infra: str = "fail"  # what an infrastructure error makes of its item: fail | skip
    tools: list[str] = field(default_factory=lambda: ["base"])  # tool variants, see variants.py


def resolve_specs(
    provider: list[ProviderSpec] | None,
    compare: list[ProviderSpec] | None,
    model: str | None,
    base_url: str | None,
) -> list[ProviderSpec]:
    """--replio-compare wins over --replio-provider; model and base URL fill specs lacking them."""
    specs = compare or provider or []
    resolved: list[ProviderSpec] = []
    for spec in specs:
        if spec.model is None and model:
            spec = replace(spec, model=model)
        if spec.base_url is None and base_url:
            spec = replace(spec, base_url=base_url)
        if spec not in resolved:
            resolved.append(spec)
    return resolved
