from __future__ import annotations

import json
import random
import stat
from pathlib import Path
from typing import Any

import pytest

from pytest_replio_eval.metrics import Metrics
from pytest_replio_eval.report import build_report, render_tables, write_report


def result(fixture: str, provider: str = "mock", **kwargs: Any) -> Metrics:
    return Metrics(
        fixture=fixture, provider=provider, model="", source="replio-core-eval", **kwargs
    )


def suite() -> list[Metrics]:
    """Two specs; `find-todo` only ran for mock."""
    return [
        result("find-todo", passed=False, calls=5, redundant=1, errors=1, status="truncated"),
        result("count-lines", "openai:gpt-4o", accuracy=0.0, calls=3, tokens=5321, duration_s=2.5),
        result("count-lines", accuracy=1.0, passed=True, calls=2, tokens=340, duration_s=0.013),
    ]


def test_build_report_document() -> None:
    doc = build_report(suite())
    assert list(doc) == ["version", "providers", "results", "fixtures", "summary"]
    assert doc["version"] == 2
    assert doc["providers"] == ["mock", "openai:gpt-4o"]
    assert [(r["provider"], r["fixture"]) for r in doc["results"]] == [
        ("mock", "count-lines"),
        ("mock", "find-todo"),
        ("openai:gpt-4o", "count-lines"),
    ]
    assert (
        doc["results"][0]
        == result(
            "count-lines", accuracy=1.0, passed=True, calls=2, tokens=340, duration_s=0.013
        ).to_dict()
    )
    assert doc["summary"] == {
        "mock": {
            "fixtures": 2,
            "accuracy": 1.0,
            "pass_rate": 0.5,
            "calls": 7,
            "redundant": 1,
            "errors": 1,
            "tokens": 340,
            "judged": 2,
            "infra": 0,
            "k": 1,
            "pass_hat_k": 0.5,
        },
        "openai:gpt-4o": {
            "fixtures": 1,
            "accuracy": 0.0,
            "pass_rate": 0.0,
            "calls": 3,
            "redundant": 0,
            "errors": 0,
            "tokens": 5321,
            "judged": 1,
            "infra": 0,
            "k": 1,
            "pass_hat_k": 0.0,
        },
    }
    assert json.loads(json.dumps(doc)) == doc


def test_build_report_is_the_same_for_any_arrival_order() -> None:
    specs = ["openai:gpt-4o", "mock"]
    results = [result(f"f{i}", spec) for i in range(6) for spec in specs]
    expected = build_report(results, providers=specs)
    for seed in range(5):
        shuffled = results[:]
        random.Random(seed).shuffle(shuffled)
        assert build_report(shuffled, providers=specs) == expected
    assert expected["providers"] == specs
    assert [r["fixture"] for r in expected["results"][:6]] == [f"f{i}" for i in range(6)]


def test_write_report_creates_directories_and_ends_with_newline(tmp_path: Path) -> None:
    doc = build_report(suite())
    path = tmp_path / "out" / "deep" / "report.json"
    write_report(doc, path)
    text = path.read_text(encoding="utf-8")
    assert text == json.dumps(doc, indent=2) + "\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert sorted(p.name for p in path.parent.iterdir()) == ["report.json"]


def test_write_report_replaces_and_leaves_old_report_on_failure(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    write_report({"version": 1}, str(path))
    write_report({"version": 1, "providers": ["mock"]}, path)
    assert json.loads(path.read_text()) == {"version": 1, "providers": ["mock"]}
    with pytest.raises(TypeError):
        write_report({"version": object()}, path)
    assert json.loads(path.read_text()) == {"version": 1, "providers": ["mock"]}
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_render_one_provider() -> None:
    results = [r for r in suite() if r.provider == "mock"]
    assert render_tables(results) == "\n".join(
        [
            "------------------------------------- mock -------------------------------------",
            "fixture      status     pass   acc  calls  redund  errors  tokens  secs",
            "-----------  ---------  ----  ----  -----  ------  ------  ------  ----",
            "count-lines  ok         PASS  1.00      2       0       0     340  0.01",
            "find-todo    truncated  FAIL     -      5       1       1       0  0.00",
            "",
            "mock: 2 fixtures, accuracy 1.00, pass rate 50% (1/2), calls 7, redundant 1,",
            "  errors 1, tokens 340",
        ]
    )


def test_render_one_provider_quiet() -> None:
    results = [result("a", accuracy=None, passed=True, calls=1, tokens=9)]
    assert render_tables(results, quiet=True, width=120) == (
        "mock: 1 fixture, accuracy -, pass rate 100% (1/1), calls 1, redundant 0, errors 0, "
        "tokens 9"
    )


def test_render_several_providers_compares_them() -> None:
    text = render_tables(suite(), width=60)
    tail = text.split("\n\n")[-2:]
    assert tail == [
        "\n".join(
            [
                "metric          mock  openai:gpt-4o",
                "---------  ---------  -------------",
                "accuracy        1.00           0.00",
                "pass rate  50% (1/2)       0% (0/1)",
                "calls              7              3",
                "redundant          1              0",
                "errors             1              0",
                "tokens           340           5321",
            ]
        ),
        "\n".join(
            [
                "fixture      mock  openai:gpt-4o",
                "-----------  ----  -------------",
                "count-lines  PASS  FAIL",
                "find-todo    FAIL  -",
            ]
        ),
    ]
    assert "-" * 22 + " openai:gpt-4o " + "-" * 23 in text.splitlines()
    assert (
        "count-lines  ok      FAIL  0.00      3       0       0    5321  2.50" in text.splitlines()
    )


def test_render_quiet_keeps_summaries_and_comparison() -> None:
    lines = render_tables(suite(), quiet=True).splitlines()
    assert lines[:4] == [
        "mock: 2 fixtures, accuracy 1.00, pass rate 50% (1/2), calls 7, redundant 1,",
        "  errors 1, tokens 340",
        "openai:gpt-4o: 1 fixture, accuracy 0.00, pass rate 0% (0/1), calls 3,",
        "  redundant 0, errors 0, tokens 5321",
    ]
    assert lines[5].split() == ["metric", "mock", "openai:gpt-4o"]
    assert lines[-1].split() == ["tokens", "340", "5321"]
    assert not any("PASS" in line or "fixture " in line for line in lines)


def test_render_grid_shows_repeated_runs_as_a_count() -> None:
    results = [
        result("a", passed=True),
        result("a", passed=False),
        result("a", "b", passed=True),
        result("a", "b", passed=True),
    ]
    assert render_tables(results).splitlines()[-3:] == [
        "fixture  mock  b",
        "-------  ----  ---",
        "a        1/2   2/2",
    ]


def test_render_summary_and_comparison_fit_80_columns_for_three_specs() -> None:
    specs = ["openai:gpt-4o-mini", "ollama:qwen3:8b", "mock"]
    results = [
        result(f"fixture-{i}", spec, accuracy=0.5, passed=i % 2 == 0, calls=123, tokens=1234567)
        for i in range(12)
        for spec in specs
    ]
    text = render_tables(results, quiet=True, providers=specs)
    assert text.splitlines()[:2] == [
        "openai:gpt-4o-mini: 12 fixtures, accuracy 0.50, pass rate 50% (6/12),",
        "  calls 1476, redundant 0, errors 0, tokens 14814804",
    ]
    assert text.splitlines()[4] == (  # exactly 80 columns
        "mock: 12 fixtures, accuracy 0.50, pass rate 50% (6/12), calls 1476, redundant 0,"
    )
    assert max(len(line) for line in text.splitlines()) <= 80


def test_render_long_fixture_ids_widen_the_table() -> None:
    name = "a-very-long-fixture-identifier-" * 3
    lines = render_tables([result(name, passed=True)]).splitlines()
    assert lines[3].startswith(name + "  ok      PASS")


def test_render_configured_spec_without_results_shows_only_its_summary() -> None:
    text = render_tables([result("a", passed=True)], providers=["openai:gpt-4o", "mock"])
    assert "- openai:gpt-4o -" not in text
    assert "openai:gpt-4o: 0 fixtures, accuracy -, pass rate 0% (0/0), calls 0," in text
    assert text.splitlines()[-1].split() == ["a", "-", "PASS"]


def test_render_nothing() -> None:
    assert render_tables([]) == ""
