"""A deterministic provider: replays a script, or plays the fixture's oracle.

Scripted mode returns the script's completions in order (from code, or from a JSON file named
as the model: `mock:case.json`); past the end it answers "done". Oracle mode, for a fixture
without a script, calls the fixture's `expected` tools in order and then answers in text, so a
bundled fixture run with the oracle must pass: that checks the catalog, tools and verifier agree.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from .base import (
    Completion,
    ProviderError,
    ProviderSettings,
    ProviderSpec,
    Request,
    ToolCall,
    Usage,
)

_COMPLETION_KEYS = {"text", "tool_calls", "finish_reason", "usage"}
_CALL_KEYS = {"id", "name", "arguments"}
_USAGE_KEYS = {"prompt_tokens", "completion_tokens", "total_tokens"}


class MockProvider:
    def __init__(
        self,
        spec: ProviderSpec,
        settings: ProviderSettings,
        script: Sequence[Completion | dict[str, Any]] | None = None,
    ) -> None:
        self.spec = spec
        self.settings = settings
        if script is None and spec.model and spec.model.endswith(".json"):
            script = load_script(Path(spec.model))
        self.script = None if script is None else _completions(script, "script")

    def complete(self, request: Request) -> Completion:
        if self.script is None:
            completion = _oracle(request)
        elif request.step < len(self.script):
            completion = self.script[request.step]
        else:
            completion = Completion(text="done", finish_reason="stop")
        if completion.usage == Usage():  # none given: estimated, the same way for every step
            completion = replace(completion, usage=_usage(request, completion))
        return completion

    def close(self) -> None:
        pass


def load_script(path: Path) -> list[Completion]:
    """Read a script file: a JSON list of {text, tool_calls, finish_reason, usage}."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ProviderError(f"mock script {path}: cannot read: {exc.strerror}") from None
    except ValueError as exc:
        raise ProviderError(f"mock script {path}: invalid JSON: {exc}") from None
    return _completions(data, f"mock script {path}")


def _completions(items: Any, where: str) -> list[Completion]:
    if not isinstance(items, list):
        raise ProviderError(f"{where}: expected a list of completions")
    return [
        item if isinstance(item, Completion) else parse_completion(item, f"{where}: [{i}]", i)
        for i, item in enumerate(items)
    ]


def parse_completion(item: Any, where: str, step: int) -> Completion:
    _check_object(item, _COMPLETION_KEYS, where)
    text = item.get("text", "")
    finish_reason = item.get("finish_reason")
    calls = item.get("tool_calls", [])
    if not isinstance(text, str):
        raise ProviderError(f"{where}.text: expected a string")
    if finish_reason is not None and not isinstance(finish_reason, str):
        raise ProviderError(f"{where}.finish_reason: expected a string")
    if not isinstance(calls, list):
        raise ProviderError(f"{where}.tool_calls: expected a list")
    return Completion(
        text=text,
        tool_calls=[
            _tool_call(call, f"{where}.tool_calls[{j}]", f"call_{step}_{j}")
            for j, call in enumerate(calls)
        ],
        finish_reason=finish_reason,
        usage=_script_usage(item.get("usage", {}), f"{where}.usage"),
    )


def _tool_call(call: Any, where: str, default_id: str) -> ToolCall:
    _check_object(call, _CALL_KEYS, where)
    name, call_id = call.get("name"), call.get("id", default_id)
    arguments = call.get("arguments", {})
    if not isinstance(name, str) or not name:
        raise ProviderError(f"{where}.name: expected a tool name")
    if not isinstance(call_id, str):
        raise ProviderError(f"{where}.id: expected a string")
    # A string stands for what a model emits when its arguments are not a JSON object.
    if not isinstance(arguments, (dict, str)):
        raise ProviderError(f"{where}.arguments: expected an object or a string")
    return ToolCall(id=call_id, name=name, arguments=arguments)


def _script_usage(usage: Any, where: str) -> Usage:
    _check_object(usage, _USAGE_KEYS, where)
    for key, value in usage.items():
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise ProviderError(f"{where}.{key}: expected an integer")
    return Usage(**usage)


def _check_object(value: Any, keys: set[str], where: str) -> None:
    if not isinstance(value, dict):
        raise ProviderError(f"{where}: expected an object")
    unknown = sorted(set(value) - keys)
    if unknown:
        raise ProviderError(f"{where}: unknown key {unknown[0]!r}")


def _oracle(request: Request) -> Completion:
    """Step i calls expected[i]; after the last expected call, answer in text."""
    fixture = request.fixture
    expected = fixture.expected or []
    if request.step >= len(expected):
        return Completion(text=fixture.oracle_answer or "Done.", finish_reason="stop")
    name = expected[request.step]
    arguments = {}
    for param, value in fixture.verifier.get("args", {}).get(name, {}).items():
        replayed = _replay(value)
        if replayed is not _NO_VALUE:
            arguments[param] = replayed
    tool = next((tool for tool in request.tools if tool.name == name), None)
    required = tool.parameters.get("required", []) if tool else []
    if "path" in required and "path" not in arguments and fixture.files:
        arguments["path"] = min(fixture.files)
    call = ToolCall(id=f"call_{request.step}", name=name, arguments=arguments)
    return Completion(tool_calls=[call], finish_reason="tool_calls")


_NO_VALUE = object()


def _replay(value: Any) -> Any:
    """A verifier value the oracle can send: plain values as they are, `$contains` by its
    string (a string contains itself), `$any` by its first option that can be sent."""
    if not (isinstance(value, dict) and len(value) == 1 and next(iter(value)).startswith("$")):
        return value
    if isinstance(value.get("$contains"), str):
        return value["$contains"]
    options = value.get("$any")
    if isinstance(options, list):
        for option in options:
            replayed = _replay(option)
            if replayed is not _NO_VALUE:
                return replayed
    return _NO_VALUE


def _usage(request: Request, completion: Completion) -> Usage:
    """Tokens as a deterministic function of the sizes: about four characters a token."""
    schemas = [
        {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
        for tool in request.tools
    ]
    output = {
        "text": completion.text,
        "tool_calls": [call.to_dict() for call in completion.tool_calls],
    }
    prompt = len(json.dumps([*request.messages, *schemas])) // 4
    produced = len(json.dumps(output)) // 4
    return Usage(prompt_tokens=prompt, completion_tokens=produced, total_tokens=prompt + produced)
