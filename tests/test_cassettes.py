"""Cassettes, the recorder and the replay provider, called directly."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_replio_eval.cassettes import (
    cassette_name,
    first_difference,
    load_cassette,
    neutral_request,
    request_key,
    scrub,
    spec_dirname,
)
from pytest_replio_eval.fixtures import load_fixture
from pytest_replio_eval.providers.base import (
    Completion,
    ProviderError,
    ProviderSettings,
    ProviderSpec,
    Request,
    ToolCall,
    Usage,
)
from pytest_replio_eval.providers.replay import ReplayProvider, with_cassettes
from pytest_replio_eval.recording import Recording, RecordingProvider
from pytest_replio_eval.tools.base import Tool

FIXTURE = load_fixture({"task": "Read notes.txt."}, "src", default_id="notes")
READ = Tool("file_read", "Read a file.", {"type": "object"}, "read", lambda ctx, args: "")
CALL = Completion(
    tool_calls=[ToolCall("call_1", "file_read", {"path": "notes.txt"})],
    finish_reason="tool_calls",
    usage=Usage(10, 2, 12),
)
ANSWER = Completion(text="It says hello.", finish_reason="stop", usage=Usage(20, 4, 24))


def request(step: int = 0, *, trial: int = 1, tools: tuple[Tool, ...] = (READ,)) -> Request:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": FIXTURE.task},
    ]
    if step:
        messages += [
            {"role": "assistant", "content": "", "tool_calls": [CALL.tool_calls[0].to_dict()]},
            {"role": "tool", "tool_call_id": "call_1", "name": "file_read", "content": "hello"},
        ]
    return Request(messages, tools, ProviderSettings(), FIXTURE, step, trial=trial)


class Scripted:
    """A provider answering from a list, counting what it was asked."""

    def __init__(self, *answers: Completion | ProviderError, model: str = "m") -> None:
        self.spec = ProviderSpec("openai", model)
        self.answers = list(answers)
        self.asked = 0

    def complete(self, request: Request) -> Completion:
        self.asked += 1
        answer = self.answers.pop(0)
        if isinstance(answer, ProviderError):
            raise answer
        return answer

    def close(self) -> None:
        pass


def test_names_keep_fixtures_variants_and_trials_apart() -> None:
    assert spec_dirname("ollama:library/qwen3:8b") == "ollama_library_qwen3_8b"
    assert cassette_name("read-file-lines") == "read-file-lines.json"
    assert cassette_name("read-file-lines", 3) == "read-file-lines@t3.json"
    assert cassette_name("a", 2, "terse") == "a+tools=terse@t2.json"


def test_the_key_ignores_key_order_and_transport_and_sees_what_the_model_sees() -> None:
    base = neutral_request(request())
    key = request_key("openai", "m", 1, base)
    reordered = json.loads(json.dumps(base, sort_keys=True))
    assert request_key("openai", "m", 1, reordered) == key
    slow = replace(request(), settings=ProviderSettings(request_timeout=5, retries=0))
    assert request_key("openai", "m", 1, neutral_request(slow)) == key
    assert len({key, request_key("openai", "m", 2, base), request_key("openai", "n", 1, base)}) == 3
    other = replace(READ, description="Read a text file.")
    assert request_key("openai", "m", 1, neutral_request(request(tools=(other,)))) != key
    hot = replace(request(), settings=ProviderSettings(temperature=0.7))
    assert request_key("openai", "m", 1, neutral_request(hot)) != key


def test_neutral_form_has_no_transport_settings() -> None:
    assert neutral_request(request()) == {
        "settings": {"temperature": 0.0, "seed": 1234, "max_tokens": None, "num_ctx": 16384},
        "tools": [
            {"name": "file_read", "description": "Read a file.", "parameters": {"type": "object"}}
        ],
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Read notes.txt."},
        ],
    }


def test_scrub_hides_secret_looking_environment_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    monkeypatch.setenv("GH_TOKEN", "ghp_abcdefgh")
    monkeypatch.setenv("SHORT_KEY", "1")  # too short to be a secret: "1" stays everywhere
    data = {"a": ["key sk-test-0123456789 and ghp_abcdefgh", 1], "sk-test-0123456789": None}
    assert scrub(data) == {"a": ["key *** and ***", 1], "***": None}


@pytest.mark.parametrize(
    ("recorded", "now", "where"),
    [
        ({"a": [1, {"b": "x"}]}, {"a": [1, {"b": "x"}]}, None),
        ({"a": [1, {"b": "x"}]}, {"a": [1, {"b": "y"}]}, 'a[1].b (recorded "x", now "y")'),
        ({"a": [1]}, {"a": [1, 2]}, "a (recorded 1 items, now 2)"),
        ({"a": 1}, {"a": 1, "b": 2}, "b (recorded absent, now 2)"),
        ({"a": 1, "b": 2}, {"a": 1}, "b (recorded 2, now absent)"),
        ({"a": 1}, {"a": 1.0}, "a (recorded 1, now 1.0)"),
        ({"a": "x" * 50}, {"a": "y"}, f'a (recorded "{"x" * 36}..., now "y")'),
    ],
)
def test_first_difference(recorded: Any, now: Any, where: str | None) -> None:
    assert first_difference(recorded, now) == where


def recorder(tmp_path: Path, inner: Scripted, mode: str = "all") -> RecordingProvider:
    return RecordingProvider(inner, Recording(tmp_path / "cassettes", mode))


def test_recording_writes_one_sorted_indented_cassette_per_turn(tmp_path: Path) -> None:
    provider = recorder(tmp_path, Scripted(CALL, ANSWER))
    assert provider.complete(request(0)) == CALL
    assert provider.complete(request(1)) == ANSWER
    path = tmp_path / "cassettes" / "openai_m" / "notes.json"
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    assert text == json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert {key: data[key] for key in ("version", "provider", "model", "fixture", "trial")} == {
        "version": 1,
        "provider": "openai",
        "model": "m",
        "fixture": "notes",
        "trial": 1,
    }
    assert [exchange["request"] for exchange in data["exchanges"]] == [
        neutral_request(request(0)),
        neutral_request(request(1)),
    ]
    assert data["exchanges"][0]["key"] == request_key("openai", "m", 1, neutral_request(request()))
    assert data["exchanges"][0]["response"] == {
        "text": "",
        "tool_calls": [{"id": "call_1", "name": "file_read", "arguments": {"path": "notes.txt"}}],
        "finish_reason": "tool_calls",
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    }


def test_replay_answers_as_recorded_with_no_provider(tmp_path: Path) -> None:
    provider = recorder(tmp_path, Scripted(CALL, ANSWER))
    provider.complete(request(0))
    provider.complete(request(1))
    replay = ReplayProvider(ProviderSpec("replay", str(tmp_path / "cassettes")), ProviderSettings())
    assert replay.complete(request(0)) == CALL
    assert replay.complete(request(1)) == ANSWER


def test_a_provider_error_is_recorded_and_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    fault = ProviderError("openai:m: server overloaded (HTTP 503)")
    provider = recorder(tmp_path, Scripted(fault))
    with pytest.raises(ProviderError) as recorded:
        provider.complete(request(0))
    assert recorded.value is fault
    replay = ReplayProvider(ProviderSpec("replay", "cassettes"), ProviderSettings())
    with pytest.raises(ProviderError, match=r"^openai:m: server overloaded \(HTTP 503\)$"):
        replay.complete(request(0))


def test_replay_names_the_first_difference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    recorder(tmp_path, Scripted(CALL)).complete(request(0))
    replay = ReplayProvider(ProviderSpec("replay", "cassettes"), ProviderSettings())
    changed = request(tools=(replace(READ, description="Read a text file."),))
    with pytest.raises(ProviderError) as info:
        replay.complete(changed)
    assert str(info.value) == (
        "replay: cassette cassettes/openai_m/notes.json step 0: request differs at "
        'tools[0].description (recorded "Read a file.", now "Read a text file.")'
    )
    with pytest.raises(ProviderError) as info:
        replay.complete(request(1))
    assert str(info.value) == (
        "replay: cassette cassettes/openai_m/notes.json step 1: not recorded "
        "(the recorded turn made 1)"
    )
    with pytest.raises(ProviderError) as info:
        replay.complete(request(0, trial=2))
    assert str(info.value) == "replay: no cassette for notes (trial 2) in cassettes/openai_m"


def test_replay_directory_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)

    def error(model: str | None) -> str:
        with pytest.raises(ProviderError) as info:
            ReplayProvider(ProviderSpec("replay", model), ProviderSettings())
        return str(info.value)

    assert error(None) == "replay: no cassette directory: use replay:DIR or --replio-cassettes=DIR"
    assert error("tapes") == "replay: cassette directory tapes does not exist"
    (tmp_path / "tapes").mkdir()
    assert error("tapes") == "replay: no cassettes in tapes"
    recorder(tmp_path, Scripted(CALL, model="a")).complete(request(0))
    recorder(tmp_path, Scripted(CALL, model="b")).complete(request(0))
    assert error("cassettes/") == (
        "replay: cassettes holds the recordings of 2 specs (openai_a, openai_b); "
        "replay one of them, e.g. replay:cassettes/openai_a"
    )
    assert ReplayProvider(ProviderSpec("replay", "cassettes/openai_b"), ProviderSettings())


def test_a_bad_cassette_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    recorder(tmp_path, Scripted(CALL)).complete(request(0))
    path = tmp_path / "cassettes" / "openai_m" / "notes.json"
    data = json.loads(path.read_text())
    data["exchanges"][0]["response"]["tool_calls"][0]["name"] = 7
    path.write_text(json.dumps(data))
    replay = ReplayProvider(ProviderSpec("replay", "cassettes"), ProviderSettings())
    with pytest.raises(ProviderError) as info:
        replay.complete(request(0))
    assert str(info.value) == (
        "replay: cassette cassettes/openai_m/notes.json step 0: "
        "response.tool_calls[0].name: expected a tool name"
    )
    path.write_text("{")
    with pytest.raises(ProviderError, match=r"^replay: cassette x: invalid JSON: "):
        load_cassette(path, "x")
    path.write_text('{"version": 9, "exchanges": []}')
    with pytest.raises(ProviderError, match=r"^replay: cassette x: unknown version 9$"):
        load_cassette(path, "x")


def test_mode_new_replays_what_matches_and_records_the_rest(tmp_path: Path) -> None:
    recorder(tmp_path, Scripted(CALL, ANSWER)).complete(request(0))
    path = tmp_path / "cassettes" / "openai_m" / "notes.json"
    before = path.read_bytes()
    inner = Scripted(ANSWER)
    provider = recorder(tmp_path, inner, mode="new")
    assert provider.complete(request(0)) == CALL  # from the cassette
    assert (inner.asked, path.read_bytes()) == (0, before)
    assert provider.complete(request(1)) == ANSWER  # missing: asked and recorded
    assert inner.asked == 1
    assert len(json.loads(path.read_text())["exchanges"]) == 2


def test_mode_new_rerecords_from_the_step_that_differs(tmp_path: Path) -> None:
    recorder(tmp_path, Scripted(CALL)).complete(request(0))
    inner = Scripted(ANSWER)
    provider = recorder(tmp_path, inner, mode="new")
    changed = request(tools=(replace(READ, description="Read a text file."),))
    assert provider.complete(changed) == ANSWER
    path = tmp_path / "cassettes" / "openai_m" / "notes.json"
    [exchange] = json.loads(path.read_text())["exchanges"]
    assert exchange["request"] == neutral_request(changed)


def test_mode_new_asks_again_after_a_recorded_error(tmp_path: Path) -> None:
    outage = recorder(tmp_path, Scripted(ProviderError("openai:m: overloaded (HTTP 503)")))
    with pytest.raises(ProviderError):
        outage.complete(request(0))
    inner = Scripted(CALL)
    assert recorder(tmp_path, inner, mode="new").complete(request(0)) == CALL
    assert inner.asked == 1
    path = tmp_path / "cassettes" / "openai_m" / "notes.json"
    [exchange] = json.loads(path.read_text())["exchanges"]
    assert "error" not in exchange and exchange["response"]["finish_reason"] == "tool_calls"


def test_mode_all_rewrites_the_cassette(tmp_path: Path) -> None:
    recorder(tmp_path, Scripted(CALL, ANSWER)).complete(request(0))
    provider = recorder(tmp_path, Scripted(ANSWER))
    assert provider.complete(request(0)) == ANSWER
    path = tmp_path / "cassettes" / "openai_m" / "notes.json"
    [exchange] = json.loads(path.read_text())["exchanges"]
    assert exchange["response"]["text"] == "It says hello."


def test_cassettes_fill_bare_replay_specs_only() -> None:
    specs = [ProviderSpec("replay"), ProviderSpec("replay", "mine"), ProviderSpec("mock")]
    assert with_cassettes(specs, "tapes") == [
        ProviderSpec("replay", "tapes"),
        ProviderSpec("replay", "mine"),
        ProviderSpec("mock"),
    ]
    assert with_cassettes(specs, None) is specs
    assert with_cassettes(None, "tapes") is None
