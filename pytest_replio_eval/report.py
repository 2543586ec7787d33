"""The JSON report and the terminal tables, both built from a session's Metrics."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .metrics import Metrics, Summary, provider_order, summarize

REPORT_VERSION = 1
_NUMBERS = {3, 4, 5, 6, 7, 8}  # right-aligned columns of the per-provider table
_HEADER = ["fixture", "status", "pass", "acc", "calls", "redund", "errors", "tokens", "secs"]


def _ordered(results: Iterable[Metrics], providers: Sequence[str] = ()) -> list[Metrics]:
    """By provider (see `provider_order`), then fixture id: the same for any xdist schedule."""
    results = list(results)
    rank = {spec: index for index, spec in enumerate(provider_order(results, providers))}
    return sorted(results, key=lambda m: (rank[m.provider], m.fixture))


def build_report(results: Iterable[Metrics], *, providers: Sequence[str] = ()) -> dict[str, Any]:
    """The contract's JSON document. Pass the configured specs as `providers` so the order
    does not depend on which worker finished first."""
    results = _ordered(results, providers)
    summaries = summarize(results, providers)
    return {
        "version": REPORT_VERSION,
        "providers": list(summaries),
        "results": [m.to_dict() for m in results],
        "summary": {spec: summary.to_dict() for spec, summary in summaries.items()},
    }


def write_report(doc: dict[str, Any], path: str | os.PathLike[str]) -> None:
    """Write atomically, so a reader never sees half a report and a crash leaves the old one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(doc, out, indent=2, ensure_ascii=False)
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
    lines: list[str] = []
    if not quiet:
        for spec in summaries:
            rows = [_row(m) for m in results if m.provider == spec]
            if rows:
                lines += [_rule(spec, width), *_table(_HEADER, rows, _NUMBERS), ""]
    for spec, summary in summaries.items():
        lines += _summary_lines(spec, summary, width)
    if len(summaries) > 1:
        lines += ["", *_comparison(summaries)]
        if not quiet:
            lines += ["", *_grid(results, list(summaries))]
    return "\n".join(lines)


def _summary_lines(spec: str, summary: Summary, width: int = 80) -> list[str]:
    """`mock: 5 fixtures, accuracy 1.00, ...`, wrapped at commas to fit `width`."""
    parts = [
        f"{summary.fixtures} fixture{'' if summary.fixtures == 1 else 's'}",
        f"accuracy {_accuracy(summary.accuracy)}",
        f"pass rate {_pass_rate(summary)}",
        f"calls {summary.calls}",
        f"redundant {summary.redundant}",
        f"errors {summary.errors}",
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


def _row(m: Metrics) -> list[str]:
    return [
        m.fixture,
        m.status,
        "PASS" if m.passed else "FAIL",
        _accuracy(m.accuracy),
        str(m.calls),
        str(m.redundant),
        str(m.errors),
        str(m.tokens),
        f"{m.duration_s:.2f}",
    ]


def _comparison(summaries: dict[str, Summary]) -> list[str]:
    columns = list(summaries.values())
    rows = [
        ["accuracy", *(_accuracy(s.accuracy) for s in columns)],
        ["pass rate", *(_pass_rate(s) for s in columns)],
        ["calls", *(str(s.calls) for s in columns)],
        ["redundant", *(str(s.redundant) for s in columns)],
        ["errors", *(str(s.errors) for s in columns)],
        ["tokens", *(str(s.tokens) for s in columns)],
    ]
    return _table(["metric", *summaries], rows, set(range(1, len(columns) + 1)))


def _grid(results: list[Metrics], specs: list[str]) -> list[str]:
    """PASS/FAIL per fixture and spec; `-` where it did not run, `k/n` for repeated runs."""
    outcomes: dict[str, dict[str, list[bool]]] = {}
    for m in results:
        outcomes.setdefault(m.fixture, {}).setdefault(m.provider, []).append(m.passed)
    rows = [
        [fixture, *(_cell(by_spec.get(spec, [])) for spec in specs)]
        for fixture, by_spec in sorted(outcomes.items())
    ]
    return _table(["fixture", *specs], rows, set())


def _cell(passes: list[bool]) -> str:
    if not passes:
        return "-"
    if len(passes) == 1:
        return "PASS" if passes[0] else "FAIL"
    return f"{sum(passes)}/{len(passes)}"


def _table(header: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        aligned = (
            cell.rjust(w) if i in right else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(cells, widths, strict=True))
        )
        return "  ".join(aligned).rstrip()

    return [line(header), line(["-" * w for w in widths]), *(line(row) for row in rows)]


def _rule(title: str, width: int) -> str:
    text = f" {title} "
    fill = max(width - len(text), 4)
    return "-" * (fill // 2) + text + "-" * (fill - fill // 2)


def _accuracy(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _pass_rate(summary: Summary) -> str:
    return f"{summary.pass_rate:.0%} ({summary.passed}/{summary.fixtures})"
