"""The JSON report and the terminal tables, both built from a session's Metrics."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .metrics import Metrics, Summary, provider_order, summarize
from .trials import FixtureTrials, fixture_trials

# 2: results carry `trial`; `fixtures` holds per-fixture trial aggregates; in the summary,
# `fixtures` counts distinct fixtures and pass rate leaves out infrastructure errors.
REPORT_VERSION = 2
_NUMBERS = {3, 4, 5, 6, 7, 8}  # right-aligned columns of the per-provider table
_HEADER = ["fixture", "status", "pass", "acc", "calls", "redund", "errors", "tokens", "secs"]


def _ordered(results: Iterable[Metrics], providers: Sequence[str] = ()) -> list[Metrics]:
    """By provider (see `provider_order`), fixture id, trial: the same for any xdist schedule."""
    results = list(results)
    rank = {spec: index for index, spec in enumerate(provider_order(results, providers))}
    return sorted(results, key=lambda m: (rank[m.provider], m.fixture, m.trial))


def build_report(results: Iterable[Metrics], *, providers: Sequence[str] = ()) -> dict[str, Any]:
    """The contract's JSON document. Pass the configured specs as `providers` so the order
    does not depend on which worker finished first."""
    results = _ordered(results, providers)
    summaries = summarize(results, providers)
    return {
        "version": REPORT_VERSION,
        "providers": list(summaries),
        "results": [m.to_dict() for m in results],
        "fixtures": [record.to_dict() for record in fixture_trials(results)],
        "summary": {spec: summary.to_dict() for spec, summary in summaries.items()},
    }


def write_report(
    doc: dict[str, Any], path: str | os.PathLike[str], *, sort_keys: bool = False
) -> None:
    """Write atomically, so a reader never sees half a report and a crash leaves the old one.
    Cassettes (cassettes.py) are written this way too, with sorted keys."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(doc, out, indent=2, ensure_ascii=False, sort_keys=sort_keys)
            out.write("\n")
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a report is not
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def render_tables(
    results: Iterable[Metrics],
    *,
    width: int = 80,
    quiet: bool = False,
    providers: Sequence[str] = (),
) -> str:
    """Per-provider tables, one summary line per provider, and with several providers a
    comparison and a per-fixture pass grid. `quiet` keeps the summaries and comparison."""
    results = _ordered(results, providers)
    if not results:
        return ""
    summaries = summarize(results, providers)
    records = fixture_trials(results)
    lines: list[str] = []
    if not quiet:
        for spec in summaries:
            rows = [_row(record) for record in records if record.provider == spec]
            if rows:
                lines += [format_rule(spec, width), *format_table(_HEADER, rows, _NUMBERS), ""]
    for spec, summary in summaries.items():
        lines += _summary_lines(spec, summary, width)
    if len(summaries) > 1:
        lines += ["", *_comparison(summaries)]
        if not quiet:
            lines += ["", *_grid(records, list(summaries))]
    return "\n".join(lines)


def _summary_lines(spec: str, summary: Summary, width: int = 80) -> list[str]:
    """`mock: 5 fixtures, accuracy 1.00, ...`, wrapped at commas to fit `width`."""
    parts = [
        f"{summary.fixtures} fixture{'' if summary.fixtures == 1 else 's'}",
        f"accuracy {format_accuracy(summary.accuracy)}",
        f"pass rate {format_pass_rate(summary)}",
        *([f"pass^{summary.k} {_pass_hat_k(summary)}"] if summary.k > 1 else []),
        f"calls {summary.calls}",
        f"redundant {summary.redundant}",
        f"errors {_errors(summary)}",
        f"tokens {summary.tokens}",
    ]
    words = [f"{part}," for part in parts[:-1]] + parts[-1:]  # a comma ends every line but one
    lines = [f"{spec}: {words[0]}"]
    for word in words[1:]:
        if len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += f" {word}"
        else:
            lines.append(f"  {word}")
    return lines


def _row(record: FixtureTrials) -> list[str]:
    """One fixture: its one run as it was, or its trials as a pass count and means."""
    return [
        record.fixture,
        ", ".join(
            status if len(record.statuses) == 1 else f"{count} {status}"
            for status, count in record.statuses.items()
        ),
        format_passes(record) + (" flaky" if record.flaky else ""),
        format_accuracy(record.accuracy),
        *(
            format_mean(value)
            for value in (record.calls, record.redundant, record.errors, record.tokens)
        ),
        f"{record.duration_s:.2f}",
    ]


def format_passes(record: FixtureTrials) -> str:
    """PASS, FAIL or INFRA (a provider fault) for one run; c/n of the judged runs for several."""
    if record.trials == 1:
        return "INFRA" if record.infra else "PASS" if record.passed else "FAIL"
    return f"{record.passed}/{record.judged}" if record.judged else "INFRA"


def format_mean(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:.1f}"


def _comparison(summaries: dict[str, Summary]) -> list[str]:
    columns = list(summaries.values())
    rows = [
        ["accuracy", *(format_accuracy(s.accuracy) for s in columns)],
        ["pass rate", *(format_pass_rate(s) for s in columns)],
        ["calls", *(str(s.calls) for s in columns)],
        ["redundant", *(str(s.redundant) for s in columns)],
        ["errors", *(_errors(s) for s in columns)],
        ["tokens", *(str(s.tokens) for s in columns)],
    ]
    if any(s.k > 1 for s in columns):
        rows.insert(2, ["pass^k", *(_pass_hat_k(s, show_k=True) for s in columns)])
    return format_table(["metric", *summaries], rows, set(range(1, len(columns) + 1)))


def _grid(records: list[FixtureTrials], specs: list[str]) -> list[str]:
    """PASS/FAIL per fixture and spec; `-` where it did not run, `c/n` for repeated runs."""
    cells: dict[str, dict[str, str]] = {}
    for record in records:
        cells.setdefault(record.fixture, {})[record.provider] = format_passes(record)
    rows = [
        [fixture, *(by_spec.get(spec, "-") for spec in specs)]
        for fixture, by_spec in sorted(cells.items())
    ]
    return format_table(["fixture", *specs], rows, set())


def format_table(header: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        aligned = (
            cell.rjust(w) if i in right else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(cells, widths, strict=True))
        )
        return "  ".join(aligned).rstrip()

    return [line(header), line(["-" * w for w in widths]), *(line(row) for row in rows)]


def format_rule(title: str, width: int) -> str:
    text = f" {title} "
    fill = max(width - len(text), 4)
    return "-" * (fill // 2) + text + "-" * (fill - fill // 2)


def format_accuracy(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def format_pass_rate(summary: Summary) -> str:
    return f"{summary.pass_rate:.0%} ({summary.passed}/{summary.judged})"


def _pass_hat_k(summary: Summary, show_k: bool = False) -> str:
    if summary.pass_hat_k is None:
        return "-"
    return f"{summary.pass_hat_k:.0%}" + (f" (k={summary.k})" if show_k else "")


def _errors(summary: Summary) -> str:
    """Infrastructure errors are among the errors, and named apart: `5 (3 infra)`."""
    return f"{summary.errors} ({summary.infra} infra)" if summary.infra else str(summary.errors)
