"""Record a run's provider exchanges, then replay them with no server and no key (pytester)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

KEY = "sk-test-not-a-real-key-0123456789"
CHAT = "/v1/chat/completions"
PORT = {
    "task": "Which port does the YAML file configure?",
    "files": {"deploy/service.yaml": "name: svc\nport: 8443\n"},
    "expected": ["glob", "file_read"],
    "verifier": {"must_include": ["glob", "file_read"], "answer": {"contains": ["8443"]}},
}
SAME = ("fixture", "source", "trial", "trace", "names", "accuracy", "pass", "calls")
SAME += ("redundant", "errors", "tokens", "status", "failures", "tools")


def reply(calls: list[tuple[str, dict[str, Any]]], text: str = "", tokens: int = 10) -> Any:
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [
            {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, (n, a) in enumerate(calls)
        ]
    return {
        "choices": [{"message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": tokens, "completion_tokens": 1, "total_tokens": tokens + 1},
    }


CLEAN = [
    reply([("glob", {"pattern": "**/*.yaml"})], tokens=90),
    reply([("file_read", {"path": "deploy/service.yaml"})], tokens=130),
    reply([], "Port 8443.", tokens=150),
]
LAZY = [reply([], "Probably 80.", tokens=40)]  # no tool call: the verifier fails it


def project(pytester: pytest.Pytester, *names: str) -> None:
    for name in names:
        path = pytester.path / ".replio" / "eval" / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(PORT), encoding="utf-8")


def script(server: Any, *turns: list[Any]) -> None:
    for turn in turns:
        for body in turn:
            server.reply(CHAT, body)


def report(pytester: pytest.Pytester, name: str) -> dict[str, Any]:
    return json.loads((pytester.path / name).read_text(encoding="utf-8"))


def same_results(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """What a replay must reproduce: all but the provider label, model and duration."""
    return [{key: result[key] for key in SAME} for result in doc["results"]]


def rows(output: str) -> list[str]:
    """The per-fixture table rows, without the secs column."""
    return [line.rsplit(None, 1)[0] for line in output.splitlines() if line.startswith("port-")]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_a_recorded_run_replays_without_server_or_key(
    pytester: pytest.Pytester,
    protocol_server: Any,
    monkeypatch: pytest.MonkeyPatch,
    workers: list[str],
) -> None:
    project(pytester, "port-a", "port-b")
    script(protocol_server, CLEAN, LAZY)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    recorded = pytester.runpytest(
        "--replio-provider=openai:m",
        f"--replio-base-url={protocol_server.url}/v1",
        "--replio-fixture=port-a",
        "--replio-fixture=port-b",
        "--replio-record=cassettes",
        "--replio-json=recorded.json",
        "-p",
        "no:cacheprovider",
    )
    recorded.assert_outcomes(passed=1, failed=1)
    assert len(protocol_server.requests) == 4
    cassettes = sorted(p.relative_to(pytester.path) for p in pytester.path.rglob("cassettes/*/*"))
    assert cassettes == [
        Path("cassettes/openai_m/port-a.json"),
        Path("cassettes/openai_m/port-b.json"),
    ]
    for path in cassettes:
        text = (pytester.path / path).read_text(encoding="utf-8")
        assert KEY not in text and "authorization" not in text.lower()

    protocol_server.close()
    monkeypatch.delenv("OPENAI_API_KEY")
    replayed = pytester.runpytest(
        "--replio-provider=replay:cassettes",
        "--replio-fixture=port-a",
        "--replio-fixture=port-b",
        "--replio-min-pass-rate=0.5",
        "--replio-json=replayed.json",
        "-p",
        "no:cacheprovider",
        *workers,
    )
    replayed.assert_outcomes(passed=1, failed=1)
    assert replayed.ret == 1  # the failing fixture, as when recorded
    assert same_results(report(pytester, "replayed.json")) == same_results(
        report(pytester, "recorded.json")
    )
    assert rows(replayed.stdout.str()) == rows(recorded.stdout.str())
    assert rows(replayed.stdout.str()) == [
        "port-a   ok      PASS  1.00      2       0       0     373",
        "port-b   ok      FAIL  0.00      0       0       0      41",
    ]
    assert report(pytester, "replayed.json")["results"][0]["provider"] == "replay:cassettes"


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_a_changed_tool_description_is_a_mismatch_naming_the_field(
    pytester: pytest.Pytester, protocol_server: Any, workers: list[str]
) -> None:
    project(pytester, "port-a")
    script(protocol_server, CLEAN)
    args = ["--replio-fixture=port-a", "-p", "no:cacheprovider"]
    pytester.runpytest(
        "--replio-provider=openai:m",
        f"--replio-base-url={protocol_server.url}/v1",
        "--replio-record=cassettes",
        *args,
    ).assert_outcomes(passed=1)
    cassette = json.loads((pytester.path / "cassettes/openai_m/port-a.json").read_text())
    tools = cassette["exchanges"][0]["request"]["tools"]
    index = [tool["name"] for tool in tools].index("glob")
    pytester.makeconftest(
        """
        from dataclasses import replace
        from pytest_replio_eval import hookimpl

        @hookimpl
        def register_tools(tools):
            tools["glob"] = replace(tools["glob"], description="Find files.")
        """
    )
    result = pytester.runpytest(
        "--replio-provider=replay",
        "--replio-cassettes=cassettes",
        "--replio-json=r.json",
        *args,
        *workers,
    )
    result.assert_outcomes(failed=1)
    recorded = json.dumps(tools[index]["description"])
    recorded = recorded if len(recorded) <= 40 else recorded[:37] + "..."
    line = (
        "status: error: replay: cassette cassettes/openai_m/port-a.json step 0: request differs"
        f' at tools[{index}].description (recorded {recorded}, now "Find files.")'
    )
    assert report(pytester, "r.json")["results"][0]["failures"] == [line]
    result.stdout.fnmatch_lines([line])
    assert "Traceback" not in result.stdout.str()


def test_record_mode_new_records_only_what_is_missing(
    pytester: pytest.Pytester, protocol_server: Any
) -> None:
    project(pytester, "port-a")
    script(protocol_server, CLEAN)
    record = [
        "--replio-provider=openai:m",
        f"--replio-base-url={protocol_server.url}/v1",
        "--replio-record=cassettes",
        "-p",
        "no:cacheprovider",
    ]
    pytester.runpytest(*record, "--replio-fixture=port-a").assert_outcomes(passed=1)
    first = (pytester.path / "cassettes/openai_m/port-a.json").read_bytes()
    project(pytester, "port-b")
    script(protocol_server, CLEAN)  # the server can answer one turn: port-b's
    result = pytester.runpytest(
        *record, "--replio-record-mode=new", "--replio-fixture=port-a", "--replio-fixture=port-b"
    )
    result.assert_outcomes(passed=2)
    assert len(protocol_server.requests) == 6  # three per recorded turn, none for the replayed
    assert (pytester.path / "cassettes/openai_m/port-a.json").read_bytes() == first
    assert (pytester.path / "cassettes/openai_m/port-b.json").is_file()


def test_a_missing_cassette_is_one_line(pytester: pytest.Pytester) -> None:
    (pytester.path / "cassettes" / "mock").mkdir(parents=True)
    (pytester.path / "cassettes" / "mock" / "other.json").write_text("{}")
    result = pytester.runpytest(
        "--replio-provider=replay:cassettes",
        "--replio-fixture=read-file-lines",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["status: error: replay: no cassette for read-file-lines (trial 1) in cassettes/mock"]
    )


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_record_then_replay_with_trials(pytester: pytest.Pytester, workers: list[str]) -> None:
    common = ["--replio-trials=2", "-p", "no:cacheprovider", *workers]
    recorded = pytester.runpytest(
        "--replio-provider=mock", "--replio-record=tapes", "--replio-json=a.json", *common
    )
    assert recorded.ret == 0
    names = sorted(path.name for path in (pytester.path / "tapes" / "mock").iterdir())
    fixtures = sorted({result["fixture"] for result in report(pytester, "a.json")["results"]})
    assert names == sorted(f"{f}{suffix}.json" for f in fixtures for suffix in ("", "@t2"))
    replayed = pytester.runpytest("--replio-provider=replay:tapes", "--replio-json=b.json", *common)
    assert replayed.ret == 0
    assert same_results(report(pytester, "b.json")) == same_results(report(pytester, "a.json"))
    assert [r["trial"] for r in report(pytester, "b.json")["results"]][:2] == [1, 2]


def test_record_mode_is_checked_at_parse_time(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--replio-provider=mock", "--replio-record-mode=some")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--replio-record-mode: 'some' is not one of: all, new"])


def test_the_cassette_directory_can_come_from_the_ini(pytester: pytest.Pytester) -> None:
    args = ["--replio-fixture=grep-symbol", "-p", "no:cacheprovider"]
    pytester.runpytest("--replio-provider=mock", "--replio-record=tapes", *args)
    # A project's default model must not be read as the replay directory.
    pytester.makeini("[pytest]\nreplio_cassettes = tapes\nreplio_model = gpt-4o\n")
    result = pytester.runpytest("--replio-provider=replay", "--replio-json=r.json", *args)
    result.assert_outcomes(passed=1)
    assert [r["provider"] for r in report(pytester, "r.json")["results"]] == ["replay:tapes"]
