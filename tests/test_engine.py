from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_replio_eval import engine
from pytest_replio_eval.engine import (
    INTERRUPTED,
    SYSTEM_PROMPT,
    TurnSettings,
    provision,
    run_turn,
)
from pytest_replio_eval.fixtures import Fixture, FixtureError
from pytest_replio_eval.providers.base import (
    Completion,
    ProviderError,
    ProviderSpec,
    Request,
    ToolCall,
    Usage,
)
from pytest_replio_eval.providers.mock import MockProvider
from pytest_replio_eval.tools.base import Tool, ToolContext


def _echo(ctx: ToolContext, args: dict[str, Any]) -> str:
    return "echo " + json.dumps(args, sort_keys=True)


def _boom(ctx: ToolContext, args: dict[str, Any]) -> str:
    raise RuntimeError("disk on fire")


def _nap(ctx: ToolContext, args: dict[str, Any]) -> str:
    time.sleep(0.2)
    return "rested"


OBJECT = {"type": "object"}
TOOLS = {
    "echo": Tool("echo", "Echo the arguments.", OBJECT, "read", _echo),
    "boom": Tool("boom", "Always fails.", OBJECT, "read", _boom),
    "nap": Tool("nap", "Sleeps a while.", OBJECT, "read", _nap),
    "write": Tool("write", "Writes.", OBJECT, "edit", _echo),
}
FIXTURE = Fixture(id="t1", task="Do the thing.", files={"a.txt": "alpha\n"})
FAST = TurnSettings(max_steps=5, timeout=None, chdir=False)


class Recorder:
    """Plays steps in order (a Completion, or an exception to raise) and records requests."""

    def __init__(self, *steps: Completion | BaseException, spec: str = "fake:m1") -> None:
        self.steps = list(steps)
        self.requests: list[Request] = []
        self.cwds: list[str] = []
        name, _, model = spec.partition(":")
        self.spec = ProviderSpec(name, model or None)

    def complete(self, request: Request) -> Completion:
        self.requests.append(request)
        self.cwds.append(os.getcwd())
        step = self.steps[request.step]
        if isinstance(step, BaseException):
            raise step
        return step

    def close(self) -> None:
        pass


def call(name: str, arguments: dict[str, Any] | str, call_id: str = "c1") -> Completion:
    return Completion(tool_calls=[ToolCall(call_id, name, arguments)], finish_reason="tool_calls")


def answer(text: str, **usage: int) -> Completion:
    return Completion(text=text, finish_reason="stop", usage=Usage(**usage))


def turn_of(*steps: Completion | BaseException, settings: TurnSettings = FAST, tmp: Path):
    provider = Recorder(*steps)
    turn = run_turn(FIXTURE, provider, settings, worktree=tmp, tools=TOOLS)
    return turn, provider


# provision


def test_provision_writes_files_and_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")
    fixture = Fixture(id="f", task="t", files={"a.txt": "one\r\n", "src/deep/b.py": "x = 1\n"})
    spec = ProviderSpec("openai", "gpt-4o", "http://localhost:9")
    root = provision(fixture, tmp_path / "wt", provider=spec)
    assert root == (tmp_path / "wt").resolve()
    assert (root / "a.txt").read_bytes() == b"one\r\n"
    assert (root / "src/deep/b.py").read_text() == "x = 1\n"
    text = (root / ".replio/config.json").read_text()
    assert "sk-secret-123" not in text
    config = json.loads(text)
    assert list(config) == ["fixture", "provider", "permissions"]
    assert config["fixture"] == "f"
    assert config["provider"] == {
        "name": "openai",
        "model": "gpt-4o",
        "base_url": "http://localhost:9",
    }
    assert config["permissions"] == engine.Permissions.from_fixture(fixture).to_dict()
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()) == [
        "wt/.replio/config.json",
        "wt/a.txt",
        "wt/src/deep/b.py",
    ]


def test_provision_without_provider_accepts_an_existing_empty_root(tmp_path: Path):
    root = provision(Fixture(id="f", task="t"), tmp_path)
    assert json.loads((root / ".replio/config.json").read_text())["provider"] is None


def test_provision_refuses_a_root_with_content(tmp_path: Path):
    (tmp_path / "left-over.txt").write_text("old")
    with pytest.raises(FileExistsError, match=f"worktree {tmp_path} is not empty"):
        provision(FIXTURE, tmp_path)


@pytest.mark.parametrize("rel", ["../escape.txt", "a/../../escape.txt", "/abs/escape.txt", "."])
def test_provision_refuses_paths_that_escape(tmp_path: Path, rel: str):
    fixture = Fixture(id="f", task="t", files={rel: "x"}, source="local.json")
    with pytest.raises(FixtureError) as info:
        provision(fixture, tmp_path / "wt")
    assert str(info.value) == f"local.json: files.{rel}: path escapes the worktree"
    assert not (tmp_path / "escape.txt").exists()


def test_provision_refuses_the_config_path(tmp_path: Path):
    fixture = Fixture(id="f", task="t", files={".replio/config.json": "{}"}, source="s")
    with pytest.raises(FixtureError) as info:
        provision(fixture, tmp_path)
    assert str(info.value) == "s: files..replio/config.json: path is reserved for the engine"


def test_provision_reports_a_file_it_cannot_write(tmp_path: Path):
    fixture = Fixture(id="f", task="t", files={"a": "file", "a/b": "under a file"}, source="s")
    with pytest.raises(FixtureError) as info:
        provision(fixture, tmp_path)
    assert str(info.value) == "s: files.a/b: cannot write: File exists"


# the loop


def test_ok_turn_runs_tools_in_order_and_keeps_the_conversation(tmp_path: Path):
    two_calls = Completion(
        text="Looking.",
        tool_calls=[ToolCall("c1", "echo", {"n": 1}), ToolCall("c2", "echo", {"n": 2})],
    )
    turn, provider = turn_of(two_calls, answer("All done."), tmp=tmp_path)
    assert (turn.status, turn.error, turn.text) == ("ok", None, "All done.")
    assert turn.trace == [
        {"name": "echo", "arguments": {"n": 1}},
        {"name": "echo", "arguments": {"n": 2}},
    ]
    assert turn.results == ['echo {"n": 1}', 'echo {"n": 2}']
    assert (turn.provider, turn.model, turn.worktree) == ("fake:m1", "m1", tmp_path)
    assert turn.engine_errors == []
    assert turn.duration_s > 0
    first, second = provider.requests
    assert first.messages == [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "Do the thing."},
    ]
    assert second.messages[2:] == [
        {
            "role": "assistant",
            "content": "Looking.",
            "tool_calls": [
                {"id": "c1", "name": "echo", "arguments": {"n": 1}},
                {"id": "c2", "name": "echo", "arguments": {"n": 2}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "echo", "content": 'echo {"n": 1}'},
        {"role": "tool", "tool_call_id": "c2", "name": "echo", "content": 'echo {"n": 2}'},
    ]
    assert [r.step for r in provider.requests] == [0, 1]
    assert first.fixture is FIXTURE and first.settings is FAST.provider


def test_each_request_gets_its_own_copy_of_the_messages(tmp_path: Path):
    _, provider = turn_of(call("echo", {}), answer("ok"), tmp=tmp_path)
    assert len(provider.requests[0].messages) == 2
    assert len(provider.requests[1].messages) == 4


def test_denied_tools_are_not_offered_and_calls_to_them_are_refused(tmp_path: Path):
    turn, provider = turn_of(call("write", {}), call("nosuch", {}), answer("ok"), tmp=tmp_path)
    assert [tool.name for tool in provider.requests[0].tools] == ["boom", "echo", "nap"]
    assert [entry["name"] for entry in turn.trace] == ["write", "nosuch"]
    assert all(result.startswith("Error") for result in turn.results)
    assert "denied" in turn.results[0]
    assert turn.status == "ok"


def test_fixture_permissions_decide_what_is_offered(tmp_path: Path):
    fixture = Fixture(id="p", task="t", tool_permission={"edit": "allow"}, tools_deny=["boom"])
    provider = Recorder(call("write", {"x": 1}), answer("ok"))
    turn = run_turn(fixture, provider, FAST, worktree=tmp_path, tools=TOOLS)
    assert [tool.name for tool in provider.requests[0].tools] == ["echo", "nap", "write"]
    assert turn.results == ['echo {"x": 1}']


def test_invalid_json_arguments_become_an_error_result_the_model_can_recover_from(tmp_path: Path):
    turn, provider = turn_of(
        call("echo", '{"n": 1', "bad"), call("echo", {"n": 1}, "good"), answer("ok"), tmp=tmp_path
    )
    assert turn.trace[0] == {"name": "echo", "arguments": '{"n": 1'}
    assert turn.results[0].startswith("Error")
    assert turn.results[1] == 'echo {"n": 1}'
    assert provider.requests[1].messages[-1]["content"] == turn.results[0]
    assert (turn.status, turn.engine_errors) == ("ok", [])


def test_a_tool_exception_becomes_an_error_result(tmp_path: Path):
    turn, _ = turn_of(call("boom", {}), answer("recovered"), tmp=tmp_path)
    assert turn.results[0].startswith("Error")
    assert "disk on fire" in turn.results[0]
    assert (turn.status, turn.text) == ("ok", "recovered")


def test_an_exception_escaping_call_tool_becomes_an_error_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    def broken(tool: Tool, ctx: ToolContext, arguments: Any) -> str:
        raise ValueError("bad schema")

    monkeypatch.setattr(engine, "call_tool", broken)
    turn, _ = turn_of(call("echo", {}), answer("ok"), tmp=tmp_path)
    assert turn.results == ["Error: ValueError: bad schema"]
    assert turn.status == "ok"


def test_usage_is_kept_per_step(tmp_path: Path):
    first = call("echo", {})
    first.usage = Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15)
    turn, _ = turn_of(first, answer("ok", prompt_tokens=20, completion_tokens=7), tmp=tmp_path)
    assert turn.usage == [Usage(10, 5, 15), Usage(20, 7, None)]
    assert sum(usage.tokens for usage in turn.usage) == 42


def test_max_steps_without_an_answer_truncates(tmp_path: Path):
    settings = TurnSettings(max_steps=2, timeout=None, chdir=False)
    turn, provider = turn_of(
        call("echo", {"n": 1}), call("echo", {"n": 2}), answer("late"), settings=settings,
        tmp=tmp_path,
    )  # fmt: skip
    assert (turn.status, turn.error) == ("truncated", "no answer after 2 steps")
    assert len(provider.requests) == 2
    assert len(turn.trace) == 2
    assert turn.text == ""


def test_finish_reason_length_truncates(tmp_path: Path):
    cut = Completion(text="The answer is", finish_reason="length", usage=Usage(total_tokens=9))
    turn, _ = turn_of(cut, tmp=tmp_path)
    assert turn.status == "truncated"
    assert turn.error == "model output cut off (finish_reason length)"
    assert (turn.text, turn.usage) == ("The answer is", [Usage(total_tokens=9)])


def test_a_provider_error_ends_the_turn_and_keeps_it_so_far(tmp_path: Path):
    turn, _ = turn_of(call("echo", {}), ProviderError("openai: HTTP 500 from server"), tmp=tmp_path)
    assert (turn.status, turn.error) == ("error", "openai: HTTP 500 from server")
    assert turn.engine_errors == ["openai: HTTP 500 from server"]
    assert turn.trace == [{"name": "echo", "arguments": {}}]


def test_any_other_provider_exception_is_an_error_named_by_type(tmp_path: Path):
    turn, _ = turn_of(RuntimeError("boom"), tmp=tmp_path)
    assert (turn.status, turn.error, turn.engine_errors) == (
        "error",
        "RuntimeError: boom",
        ["RuntimeError: boom"],
    )


def test_timeout_cancels_between_tool_calls_and_keeps_the_turn(tmp_path: Path):
    two_naps = Completion(tool_calls=[ToolCall("c1", "nap", {}), ToolCall("c2", "nap", {})])
    settings = TurnSettings(max_steps=5, timeout=0.05, chdir=False)
    turn, provider = turn_of(two_naps, answer("never"), settings=settings, tmp=tmp_path)
    assert (turn.status, turn.error) == ("cancelled", "turn timed out after 0.05s")
    assert turn.trace == [{"name": "nap", "arguments": {}}]
    assert turn.results == ["rested"]
    assert len(provider.requests) == 1


def test_a_command_does_not_outlive_the_turn(tmp_path: Path):
    fixture = Fixture(id="t1", task="Wait.", tool_permission={"bash": "allow"})
    long_nap = call("run_command", {"command": "sleep 20", "timeout": 60})
    settings = TurnSettings(max_steps=5, timeout=0.5, tool_timeout=30.0, chdir=False)
    started = time.monotonic()
    turn = run_turn(fixture, Recorder(long_nap, answer("never")), settings, worktree=tmp_path)
    assert time.monotonic() - started < 5  # not the 20 s of the command
    assert (turn.status, turn.error) == ("cancelled", "turn timed out after 0.5s")
    assert turn.results[0].startswith("Error: command timed out after 0.")


def test_keyboard_interrupt_cancels_and_returns_the_turn(tmp_path: Path):
    before = os.getcwd()
    settings = TurnSettings(max_steps=5, timeout=None, chdir=True)
    turn, _ = turn_of(call("echo", {}), KeyboardInterrupt(), settings=settings, tmp=tmp_path)
    assert (turn.status, turn.error) == ("cancelled", INTERRUPTED)
    assert turn.trace == [{"name": "echo", "arguments": {}}]
    assert os.getcwd() == before


# working directory


def test_chdir_runs_the_turn_in_the_worktree_and_restores_the_cwd(tmp_path: Path):
    before = os.getcwd()
    settings = TurnSettings(max_steps=5, timeout=None, chdir=True)
    _, provider = turn_of(call("echo", {}), answer("ok"), settings=settings, tmp=tmp_path)
    assert provider.cwds == [str(tmp_path), str(tmp_path)]
    assert os.getcwd() == before


def test_cwd_is_restored_when_the_provider_raises(tmp_path: Path):
    before = os.getcwd()
    settings = TurnSettings(max_steps=5, timeout=None, chdir=True)
    turn, provider = turn_of(ProviderError("down"), settings=settings, tmp=tmp_path)
    assert provider.cwds == [str(tmp_path)]
    assert (turn.status, os.getcwd()) == ("error", before)


def test_without_chdir_the_cwd_is_never_touched(tmp_path: Path):
    before = os.getcwd()
    _, provider = turn_of(answer("ok"), tmp=tmp_path)
    assert provider.cwds == [before]


def test_tools_get_the_resolved_worktree(tmp_path: Path):
    seen: list[Path] = []

    def where(ctx: ToolContext, args: dict[str, Any]) -> str:
        seen.append(ctx.worktree)
        return str(ctx.timeout)

    link = tmp_path / "link"
    (tmp_path / "real").mkdir()
    link.symlink_to(tmp_path / "real")
    tools = {"where": Tool("where", "d", OBJECT, "read", where)}
    settings = TurnSettings(max_steps=5, timeout=None, tool_timeout=7.5, chdir=False)
    provider = Recorder(call("where", {}), answer("ok"))
    turn = run_turn(FIXTURE, provider, settings, worktree=link, tools=tools)
    assert seen == [(tmp_path / "real").resolve()]
    assert turn.results == ["7.5"]


def test_no_tools_given_means_the_builtin_tools(tmp_path: Path):
    from pytest_replio_eval.tools import builtin_tools

    provider = Recorder(answer("ok"))
    run_turn(FIXTURE, provider, FAST, worktree=tmp_path)
    offered = {tool.name for tool in provider.requests[0].tools}
    assert offered <= set(builtin_tools())


# the bundled catalog, end to end with the oracle


def test_bundled_fixtures_pass_with_the_oracle_mock(tmp_path: Path):
    from pytest_replio_eval.fixtures import discover
    from pytest_replio_eval.metrics import compute_metrics

    discovery = discover(None)
    bundled = [f for f in discovery.fixtures if f.source == "replio-core-eval"]
    assert discovery.errors == []
    assert len(bundled) == 8
    provider = MockProvider(ProviderSpec("mock"), FAST.provider)
    start = time.perf_counter()
    for fixture in bundled:
        worktree = provision(fixture, tmp_path / fixture.id, provider=provider.spec)
        turn = run_turn(fixture, provider, TurnSettings(chdir=False), worktree=worktree)
        metrics = compute_metrics(fixture, turn)
        assert (fixture.id, turn.status, metrics.passed, metrics.accuracy, metrics.failures) == (
            fixture.id,
            "ok",
            True,
            1.0,
            [],
        )
        assert metrics.tokens > 0
    assert time.perf_counter() - start < 1.0
