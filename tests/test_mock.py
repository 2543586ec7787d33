from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_replio_eval import providers
from pytest_replio_eval.fixtures import Fixture
from pytest_replio_eval.providers.base import (
    Completion,
    ProviderError,
    ProviderFactory,
    ProviderSettings,
    ProviderSpec,
    Request,
    ToolCall,
    Usage,
)
from pytest_replio_eval.providers.mock import MockProvider
from pytest_replio_eval.tools.base import Tool

SETTINGS = ProviderSettings()
HI = [{"role": "user", "content": "hi"}]


def tool(name: str, required: list[str] | None = None) -> Tool:
    parameters: dict[str, Any] = {"type": "object"}
    if required is not None:
        parameters["required"] = required
    return Tool(name, "Read a file.", parameters, "read", lambda ctx, args: "")


def request(fixture: Fixture, step: int, tools: list[Tool] | None = None, messages=HI) -> Request:
    return Request(
        messages=list(messages), tools=tools or [], settings=SETTINGS, fixture=fixture, step=step
    )


def mock(model: str | None = None, script: Any = None) -> MockProvider:
    return MockProvider(ProviderSpec("mock", model), SETTINGS, script=script)


def factory() -> ProviderFactory:
    registered: dict[str, ProviderFactory] = {}
    providers.register_providers(registered)
    return registered["mock"]


FIXTURE = Fixture(id="f", task="t")


# scripted mode


def test_script_of_completions_is_replayed_by_step_then_says_done():
    first = Completion(tool_calls=[ToolCall("x", "file_read", {"path": "a"})])
    second = Completion(text="answer", usage=Usage(total_tokens=3))
    provider = mock(script=[first, second])
    # A step without usage gets the estimate the oracle uses; the script itself is not changed.
    assert provider.complete(request(FIXTURE, 0)) == replace(first, usage=Usage(8, 22, 30))
    assert first.usage == Usage()
    assert provider.complete(request(FIXTURE, 1)) is second
    past = provider.complete(request(FIXTURE, 2))
    assert (past.text, past.tool_calls, past.finish_reason) == ("done", [], "stop")
    assert past.usage == Usage(8, 8, 16)


def test_script_of_dicts_becomes_completions():
    provider = mock(
        script=[
            {
                "text": "Reading.",
                "tool_calls": [
                    {"name": "file_read", "arguments": {"path": "a.txt"}},
                    {"id": "mine", "name": "grep", "arguments": '{"pattern": '},
                ],
                "finish_reason": "tool_calls",
                "usage": {"prompt_tokens": 11, "completion_tokens": 4},
            },
            {"text": "Done."},
        ]
    )
    assert provider.complete(request(FIXTURE, 0)) == Completion(
        text="Reading.",
        tool_calls=[
            ToolCall("call_0_0", "file_read", {"path": "a.txt"}),
            ToolCall("mine", "grep", '{"pattern": '),
        ],
        finish_reason="tool_calls",
        usage=Usage(prompt_tokens=11, completion_tokens=4),
    )
    assert provider.complete(request(FIXTURE, 1)) == Completion(text="Done.", usage=Usage(8, 8, 16))


def test_a_model_ending_in_json_is_a_script_file(tmp_path: Path):
    path = tmp_path / "case.json"
    path.write_text(json.dumps([{"tool_calls": [{"name": "list"}]}, {"text": "bye"}]))
    provider = factory()(ProviderSpec("mock", str(path)), SETTINGS)
    assert isinstance(provider, MockProvider)
    assert provider.complete(request(FIXTURE, 0)).tool_calls == [ToolCall("call_0_0", "list", {})]
    assert provider.complete(request(FIXTURE, 1)).text == "bye"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[", "invalid JSON: Expecting value: line 1 column 2 (char 1)"),
        ('{"text": "x"}', "expected a list of completions"),
        ("[1]", "[0]: expected an object"),
        ('[{"txt": "x"}]', "[0]: unknown key 'txt'"),
        ('[{"text": 3}]', "[0].text: expected a string"),
        ('[{"finish_reason": 1}]', "[0].finish_reason: expected a string"),
        ('[{"tool_calls": {}}]', "[0].tool_calls: expected a list"),
        (
            '[{}, {"tool_calls": [{"arguments": {}}]}]',
            "[1].tool_calls[0].name: expected a tool name",
        ),
        ('[{"tool_calls": [{"name": "a", "id": 7}]}]', "[0].tool_calls[0].id: expected a string"),
        (
            '[{"tool_calls": [{"name": "a", "arguments": [1]}]}]',
            "[0].tool_calls[0].arguments: expected an object or a string",
        ),
        ('[{"usage": {"total": 1}}]', "[0].usage: unknown key 'total'"),
        ('[{"usage": {"total_tokens": "9"}}]', "[0].usage.total_tokens: expected an integer"),
    ],
)
def test_a_bad_script_file_is_a_provider_error_naming_file_and_place(
    tmp_path: Path, content: str, message: str
):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ProviderError) as info:
        mock(str(path))
    assert str(info.value) == f"mock script {path}: {message}"


def test_a_missing_script_file_is_a_provider_error(tmp_path: Path):
    path = tmp_path / "absent.json"
    with pytest.raises(ProviderError) as info:
        mock(str(path))
    assert str(info.value) == f"mock script {path}: cannot read: No such file or directory"


# oracle mode


def test_oracle_calls_expected_tools_in_order_then_answers():
    fixture = Fixture(
        id="f",
        task="t",
        files={"b.txt": "", "a.txt": ""},
        expected=["file_read", "grep", "list"],
        verifier={
            "args": {
                "grep": {"pattern": "TODO", "path": {"$regex": "\\.py$"}, "glob": {"$glob": "*"}},
                "list": {"depth": {"$any": [{"$regex": "x"}, 2, 3]}},
            }
        },
        oracle_answer="There are 3 TODOs.",
    )
    tools = [tool("file_read", ["path"]), tool("grep", ["pattern"]), tool("list")]
    provider = mock()
    steps = [provider.complete(request(fixture, step, tools)) for step in range(4)]
    assert [s.tool_calls for s in steps[:3]] == [
        [ToolCall("call_0", "file_read", {"path": "a.txt"})],
        [ToolCall("call_1", "grep", {"pattern": "TODO"})],
        [ToolCall("call_2", "list", {"depth": 2})],
    ]
    assert [s.finish_reason for s in steps] == ["tool_calls", "tool_calls", "tool_calls", "stop"]
    assert (steps[3].text, steps[3].tool_calls) == ("There are 3 TODOs.", [])


def test_oracle_keeps_a_path_the_verifier_gives():
    fixture = Fixture(
        id="f",
        task="t",
        files={"a.txt": ""},
        expected=["file_read"],
        verifier={"args": {"file_read": {"path": "src/main.py"}}},
    )
    completion = mock().complete(request(fixture, 0, [tool("file_read", ["path"])]))
    assert completion.tool_calls == [ToolCall("call_0", "file_read", {"path": "src/main.py"})]


def test_oracle_replays_a_contains_matcher_by_its_string():
    fixture = Fixture(
        id="f",
        task="t",
        expected=["file_edit"],
        verifier={
            "args": {
                "file_edit": {
                    "path": "calc.py",
                    "old": {"$contains": "a - b"},
                    "new": {"$any": [{"$regex": "\\+"}, {"$contains": "a + b"}, "b + a"]},
                }
            }
        },
    )
    completion = mock().complete(request(fixture, 0))
    assert completion.tool_calls == [
        ToolCall("call_0", "file_edit", {"path": "calc.py", "old": "a - b", "new": "a + b"})
    ]


def test_oracle_calls_a_tool_that_is_not_offered_without_guessing_arguments():
    fixture = Fixture(id="f", task="t", files={"a.txt": ""}, expected=["file_write"])
    completion = mock().complete(request(fixture, 0, [tool("file_read", ["path"])]))
    assert completion.tool_calls == [ToolCall("call_0", "file_write", {})]


@pytest.mark.parametrize("expected", [None, []])
def test_oracle_without_expected_answers_at_once(expected: list[str] | None):
    completion = mock().complete(request(Fixture(id="f", task="t", expected=expected), 0))
    assert (completion.text, completion.tool_calls, completion.finish_reason) == (
        "Done.",
        [],
        "stop",
    )


def test_oracle_usage_is_a_function_of_the_sizes():
    fixture = Fixture(id="f", task="t", files={"a.txt": ""}, expected=["file_read"])
    tools = [tool("file_read", ["path"])]
    provider = mock()
    first = provider.complete(request(fixture, 0, tools))
    assert first.usage == Usage(prompt_tokens=36, completion_tokens=24, total_tokens=60)
    assert provider.complete(request(fixture, 0, tools)).usage == first.usage
    longer = provider.complete(request(fixture, 0, tools, messages=HI * 3))
    assert longer.usage.prompt_tokens > first.usage.prompt_tokens


def test_the_registered_factory_builds_an_oracle_mock():
    provider = factory()(ProviderSpec("mock"), SETTINGS)
    assert (provider.spec, provider.settings, provider.script) == (
        ProviderSpec("mock"),
        SETTINGS,
        None,
    )
    provider.close()
