"""`replio eval merge` of CI shard reports, and `replio eval report` of a saved one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_replio_eval.cli import main

SHARD_A = "read or grep"


def without_durations(doc: dict[str, Any]) -> dict[str, Any]:
    for section in ("results", "fixtures"):
        for entry in doc[section]:
            entry.pop("duration_s")
    return doc


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_merged_shards_equal_one_run(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str], workers: list[str]
) -> None:
    common = ["--replio-compare=mock,mock:b", "--replio-trials=2", "-p", "no:cacheprovider"]
    common += workers
    assert pytester.runpytest(*common, "--replio-json=all.json").ret == 0
    assert pytester.runpytest(*common, "-k", SHARD_A, "--replio-json=a.json").ret == 0
    assert pytester.runpytest(*common, "-k", f"not ({SHARD_A})", "--replio-json=b.json").ret == 0
    shards = [load(pytester.path / name) for name in ("a.json", "b.json")]
    assert all(shard["results"] for shard in shards)
    capsys.readouterr()

    paths = [str(pytester.path / name) for name in ("b.json", "a.json", "merged.json")]
    assert main(["eval", "merge", paths[0], paths[1], "-o", paths[2]]) == 0
    total = len(load(pytester.path / "all.json")["results"])
    assert capsys.readouterr().out == f"{paths[2]}: {total} results from 2 reports\n"
    merged = without_durations(load(pytester.path / "merged.json"))
    assert merged == without_durations(load(pytester.path / "all.json"))
    assert merged["providers"] == ["mock", "mock:b"]


def test_an_item_in_two_shards_is_an_error(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--replio-provider=mock", "--replio-fixture=grep-symbol", "-p", "no:cacheprovider"]
    assert pytester.runpytest(*args, "--replio-json=a.json").ret == 0
    path = str(pytester.path / "a.json")
    capsys.readouterr()
    assert main(["eval", "merge", path, path, "-o", str(pytester.path / "m.json")]) == 1
    assert capsys.readouterr().err == (
        f"error: {path} and {path} both hold grep-symbol [mock] trial 1\n"
    )
    assert not (pytester.path / "m.json").exists()


def test_a_bad_report_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 2, "results": [1]}')
    assert main(["eval", "merge", str(bad), "-o", str(tmp_path / "m.json")]) == 2
    assert capsys.readouterr().err.endswith(
        f"error: argument REPORT: {bad}: results[0]: expected an object\n"
    )
    assert main(["eval", "merge", "-o", str(bad / "m.json"), str(bad)]) == 2
    assert capsys.readouterr().err.endswith(
        f"error: argument -o/--output: {bad / 'm.json'}: {bad} is not a directory\n"
    )
    assert main(["eval", "report", str(tmp_path / "none.json")]) == 2
    assert capsys.readouterr().err.endswith(
        f"error: argument REPORT: {tmp_path / 'none.json'}: cannot read: "
        "No such file or directory\n"
    )


def test_report_prints_the_tables_the_run_printed(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    run = pytester.runpytest(
        "--replio-compare=mock,mock:b", "--replio-json=all.json", "-p", "no:cacheprovider"
    )
    lines = run.stdout.lines
    start = lines.index(next(line for line in lines if line.startswith("---") and " mock " in line))
    end = lines.index(next(line for line in lines if line.startswith("=") and " passed" in line))
    capsys.readouterr()
    assert main(["eval", "report", str(pytester.path / "all.json")]) == 0
    assert capsys.readouterr().out.splitlines() == lines[start:end]


def test_report_with_a_baseline_and_its_gate(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    fixture = pytester.path / ".replio" / "eval" / "notes.json"
    fixture.parent.mkdir(parents=True)
    data = {"task": "Read notes.txt.", "files": {"notes.txt": "hi\n"}, "expected": ["file_read"]}
    fixture.write_text(json.dumps({**data, "verifier": {"must_include": ["file_read"]}}))
    args = ["--replio-provider=mock", "--replio-fixture=notes", "-p", "no:cacheprovider"]
    assert pytester.runpytest(*args, "--replio-json=old.json").ret == 0
    fixture.write_text(json.dumps({**data, "verifier": {"must_include": ["grep"]}}))
    assert pytester.runpytest(*args, "--replio-json=new.json").ret == 1
    new, old = (str(pytester.path / name) for name in ("new.json", "old.json"))
    capsys.readouterr()

    assert main(["eval", "report", new, "--baseline", old]) == 0
    out = capsys.readouterr().out
    assert "notes    mock      PASS -> FAIL  1.00  1      1130    regression\n" in out
    assert out.endswith("regressions: notes [mock]\n")

    assert main(["eval", "report", new, "--baseline", old, "--fail-on-regression"]) == 1
    out = capsys.readouterr().out
    assert out.endswith(
        f"regressions: notes [mock]\nreplio: 1 regression against {old}: notes [mock]\n"
    )

    assert main(["eval", "report", new, "--fail-on-regression"]) == 2
    assert capsys.readouterr().err == "error: --fail-on-regression needs --baseline\n"
