"""Option values -> what a run needs; plain functions so bad input fails before anything runs."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .engine import TurnSettings
from .gate import Thresholds
from .providers.base import ProviderSettings, ProviderSpec, parse_spec
from .providers.replay import with_cassettes
from .recording import Recording
from .saved import SavedReport
from .variants import resolve_variants, variant_name


class OptionError(ValueError):
    """A bad option or ini value, phrased for the user (pytest shows it as a usage error)."""


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


def output_file(text: str) -> str:
    """A report path written at the end: refused now if it cannot be a file, not after the run."""
    if Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text}: is a directory")
    return _creatable(text)


def output_dir(text: str) -> str:
    """A directory written into during the run (cassettes): refused now if it cannot be one."""
    if Path(text).exists() and not Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text}: is not a directory")
    return _creatable(text)


def _creatable(text: str) -> str:
    parent = next(parent for parent in Path(text).absolute().parents if parent.exists())
    if not parent.is_dir():
        raise argparse.ArgumentTypeError(f"{text}: {parent} is not a directory")
    return text


def one_of(*choices: str) -> Callable[[str], str]:
    """An argparse `type=` for one word of a fixed list."""

    def parse(text: str) -> str:
        if text not in choices:
            raise argparse.ArgumentTypeError(f"{text!r} is not one of: {', '.join(choices)}")
        return text

    return parse


infra_policy = one_of("fail", "skip")  # what becomes of an item whose provider failed
record_mode = one_of("all", "new")  # all: record every request anew; new: only what is missing


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


def read_options(option: Callable[[str], Any], ini: Callable[[str], Any]) -> EvalOptions:
    """Each setting from its option (already parsed by its `type=`), else from the ini file,
    parsed the same way; `option` and `ini` are pytest's config.getoption and config.getini."""

    def value(name: str, parse: Callable[[str], Any] | None = None) -> Any:
        found = option(name)
        if found is None:
            raw = ini(name)
            if raw:
                try:
                    found = parse(raw) if parse else raw
                except (argparse.ArgumentTypeError, ValueError) as exc:
                    raise OptionError(f"ini {name} = {raw!r}: {exc}") from None
        return found

    cassettes = value("replio_cassettes")
    specs = resolve_specs(
        with_cassettes(value("replio_provider", spec_list), cassettes),
        with_cassettes(option("replio_compare"), cassettes),
        value("replio_model"),
        value("replio_base_url"),
    )
    defaults = TurnSettings()
    timeout = value("replio_timeout", positive_float) or defaults.timeout
    concurrency = value("replio_concurrency", positive_int) or 1
    settings = TurnSettings(
        max_steps=value("replio_max_steps", positive_int) or defaults.max_steps,
        timeout=timeout,
        chdir=concurrency == 1,  # turns side by side cannot share the process's cwd
        # No request outlives its turn: a hung server fails the item once the turn is due.
        provider=ProviderSettings(request_timeout=min(ProviderSettings.request_timeout, timeout)),
    )
    json_path = option("replio_json")
    record = option("replio_record")
    if option("replio_fail_on_regression") and not option("replio_baseline"):
        raise OptionError("--replio-fail-on-regression needs --replio-baseline=PATH")
    return EvalOptions(
        specs=specs,
        fixture_ids=list(option("replio_fixture")),
        settings=settings,
        json_path=Path(json_path).resolve() if json_path else None,
        only=option("replio_only"),
        concurrency=concurrency,
        record=Recording(Path(record).resolve(), option("replio_record_mode") or "all")
        if record
        else None,
        baseline=option("replio_baseline"),
        fail_on_regression=option("replio_fail_on_regression"),
        trials=value("replio_trials", positive_int) or 1,
        thresholds=Thresholds(
            min_pass_rate=value("replio_min_pass_rate", fraction),
            min_accuracy=value("replio_min_accuracy", fraction),
        ),
        soft=bool(value("replio_soft")),
        infra=value("replio_infra", infra_policy) or "fail",
        tools=resolve_variants(value("replio_tools", variant_name), option("replio_compare_tools")),
    )
