"""Saved JSON reports read back: for `--replio-baseline`, `replio eval merge` and `report`.

Only the results are read; everything else in a report (summaries, trial aggregates) is
derived from them by `report.build_report`, so a merge of shards is the report one run of
all their items would have written.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from .metrics import Metrics, provider_order
from .report import REPORT_VERSION, build_report

_FIELDS = {"pass" if f.name == "passed" else f.name for f in fields(Metrics)}
_REQUIRED = {"fixture", "provider", "model", "source"}


class ReportError(Exception):
    """A file that is not a usable report; the text names the file and the problem."""


@dataclass
class SavedReport:
    path: str  # as the user gave it
    providers: list[str]  # the run's configured order
    results: list[Metrics]


def load_report(path: str) -> SavedReport:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReportError(f"{path}: cannot read: {exc.strerror}") from None
    except ValueError as exc:
        raise ReportError(f"{path}: invalid JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise ReportError(f"{path}: not a replio report (no results list)")
    version = data.get("version")
    if not isinstance(version, int) or not 1 <= version <= REPORT_VERSION:
        raise ReportError(f"{path}: unknown report version {version!r}")
    results = [_metrics(item, f"{path}: results[{i}]") for i, item in enumerate(data["results"])]
    providers = data.get("providers")
    if not (isinstance(providers, list) and all(isinstance(p, str) for p in providers)):
        providers = []
    return SavedReport(path, provider_order(results, providers), results)


def report_file(text: str) -> SavedReport:
    """argparse `type=`: a bad report is a usage error before anything runs."""
    try:
        return load_report(text)
    except ReportError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _metrics(item: Any, where: str) -> Metrics:
    if not isinstance(item, dict):
        raise ReportError(f"{where}: expected an object")
    unknown = sorted(set(item) - _FIELDS)
    if unknown:
        raise ReportError(f"{where}: unknown key {unknown[0]!r}")
    missing = sorted(_REQUIRED - set(item))
    if missing:
        raise ReportError(f"{where}: missing key {missing[0]!r}")
    return Metrics.from_dict(item)


def merge_reports(reports: Sequence[SavedReport]) -> dict[str, Any]:
    """One report of all the shards' results; the same item in two shards is an error."""
    seen: dict[tuple[str, str, int], str] = {}
    results: list[Metrics] = []
    providers: list[str] = []
    for report in reports:
        for m in report.results:
            key = (m.fixture, m.provider, m.trial)
            if key in seen:
                raise ReportError(
                    f"{seen[key]} and {report.path} both hold {m.fixture} [{m.provider}] "
                    f"trial {m.trial}"
                )
            seen[key] = report.path
            results.append(m)
        providers += [p for p in report.providers if p not in providers]
    return build_report(results, providers=providers)
