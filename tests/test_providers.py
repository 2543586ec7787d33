"""The OpenAI and Ollama providers against real local HTTP servers speaking their protocols."""

from __future__ import annotations

import email.utils
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from pytest_replio_eval.engine import TurnSettings, run_turn
from pytest_replio_eval.fixtures import Fixture
from pytest_replio_eval.providers import http
from pytest_replio_eval.providers.base import (
    ProviderError,
    ProviderSettings,
    ProviderSpec,
    Request,
    ToolCall,
    Usage,
)
from pytest_replio_eval.providers.ollama import OllamaProvider, host_url
from pytest_replio_eval.providers.openai import OpenAIProvider
from pytest_replio_eval.tools.base import Tool

KEY = "sk-test-5e3c1d9a7b"
CHAT = "/v1/chat/completions"
OLLAMA_CHAT = "/api/chat"

READ = Tool(
    name="file_read",
    description="Read a file.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    category="read",
    func=lambda ctx, args: (ctx.worktree / args["path"]).read_text(),
)
FIXTURE = Fixture(id="read-a", task="What does a.txt say?", files={"a.txt": "hello"})
HISTORY = [
    {"role": "system", "content": "sys"},
    {"role": "user", "content": "What does a.txt say?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c1", "name": "file_read", "arguments": {"path": "a.txt"}},
            {"id": "c2", "name": "file_read", "arguments": "{bad"},
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "name": "file_read", "content": "hello"},
    {"role": "tool", "tool_call_id": "c2", "name": "file_read", "content": "Error: bad JSON"},
]
TOOLS_WIRE = [
    {
        "type": "function",
        "function": {
            "name": "file_read",
            "description": "Read a file.",
            "parameters": READ.parameters,
        },
    }
]


def request(
    messages: list[dict[str, Any]] | None = None,
    *,
    tools: tuple[Tool, ...] = (READ,),
    settings: ProviderSettings | None = None,
    step: int = 0,
) -> Request:
    return Request(
        messages=HISTORY if messages is None else messages,
        tools=tools,
        settings=settings or ProviderSettings(),
        fixture=FIXTURE,
        step=step,
    )


def openai_reply(
    text: str | None = "",
    calls: list[dict[str, Any]] | None = None,
    *,
    finish: str = "stop",
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls is not None:
        message["tool_calls"] = calls
    reply: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }
    if usage is not None:
        reply["usage"] = usage
    return reply


def openai_call(name: str, arguments: Any, call_id: str | None = "call_a") -> dict[str, Any]:
    call: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if call_id is not None:
        call["id"] = call_id
    return call


def ollama_reply(
    text: str = "",
    calls: list[dict[str, Any]] | None = None,
    *,
    done_reason: str = "stop",
    counts: tuple[int | None, int | None] = (10, 5),
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls is not None:
        message["tool_calls"] = calls
    reply: dict[str, Any] = {
        "model": "qwen3",
        "message": message,
        "done": True,
        "done_reason": done_reason,
    }
    for name, value in zip(("prompt_eval_count", "eval_count"), counts, strict=True):
        if value is not None:
            reply[name] = value
    return reply


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Retry waits, recorded instead of slept."""
    recorded: list[float] = []
    monkeypatch.setattr(http, "sleep", recorded.append)
    return recorded


@pytest.fixture
def make(protocol_server: Any) -> Iterator[Callable[..., Any]]:
    """Build a provider for the local server (`make("openai:gpt-4o", retries=0)`); closed after."""
    made: list[Any] = []

    def build(text: str, base_url: str | None = None, **settings: Any) -> Any:
        name, _, model = text.partition(":")
        if base_url is None:
            base_url = protocol_server.url + ("/v1" if name == "openai" else "")
        cls = OpenAIProvider if name == "openai" else OllamaProvider
        provider = cls(ProviderSpec(name, model or None, base_url), ProviderSettings(**settings))
        made.append(provider)
        return provider

    yield build
    for provider in made:
        provider.close()


# --- OpenAI wire format ---------------------------------------------------------------------


def test_openai_request_body_and_key(protocol_server, make, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    protocol_server.reply(CHAT, openai_reply("hi"))

    make("openai:gpt-4o").complete(request())

    [sent] = protocol_server.requests
    assert (sent.method, sent.path) == ("POST", CHAT)
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.body == {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "What does a.txt say?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "file_read", "arguments": '{"path": "a.txt"}'},
                    },
                    {
                        "id": "c2",
                        "type": "function",
                        "function": {"name": "file_read", "arguments": "{bad"},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "hello"},
            {"role": "tool", "tool_call_id": "c2", "content": "Error: bad JSON"},
        ],
        "temperature": 0.0,
        "seed": 1234,
        "tools": TOOLS_WIRE,
    }


def test_openai_settings_and_no_tools(protocol_server, make):
    protocol_server.reply(CHAT, openai_reply("hi"))
    settings = ProviderSettings(temperature=0.7, seed=None, max_tokens=256)

    make("openai:m").complete(request(HISTORY[:2], tools=(), settings=settings))

    body = protocol_server.requests[0].body
    assert body == {
        "model": "m",
        "messages": body["messages"],
        "temperature": 0.7,
        "max_tokens": 256,
    }
    assert "authorization" not in protocol_server.requests[0].headers  # no key: none sent


def test_openai_arguments_as_string_and_object(protocol_server, make):
    calls = [
        openai_call("file_read", '{"path": "a.txt"}', "call_1"),
        openai_call("file_read", {"path": "b.txt"}, "call_2"),
    ]
    usage = {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
    protocol_server.reply(CHAT, openai_reply(None, calls, finish="tool_calls", usage=usage))

    completion = make("openai:m").complete(request())

    assert completion.tool_calls == [
        ToolCall("call_1", "file_read", {"path": "a.txt"}),
        ToolCall("call_2", "file_read", {"path": "b.txt"}),
    ]
    assert (completion.text, completion.finish_reason) == ("", "tool_calls")
    assert completion.usage == Usage(12, 3, 15)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"path": ', '{"path": '),  # invalid JSON: raw, so the engine counts an error
        ('["a.txt"]', '["a.txt"]'),  # JSON, but not an object
        (["a.txt"], '["a.txt"]'),
        ("", {}),  # no arguments at all: a call without parameters
        (None, {}),
        ("null", {}),
    ],
)
def test_openai_arguments_not_an_object(protocol_server, make, arguments, expected):
    protocol_server.reply(CHAT, openai_reply("", [openai_call("file_read", arguments)]))

    [call] = make("openai:m").complete(request()).tool_calls

    assert call.arguments == expected


@pytest.mark.parametrize("kind", ["openai", "ollama"])
def test_lone_surrogates_become_replacement_characters(protocol_server, make, kind):
    """A model that splits an emoji's escape must not fail the next request or the report."""
    if kind == "openai":
        call = openai_call("grep", '{"pattern": "a\\ud83d"}', "c1")
        protocol_server.reply(CHAT, openai_reply("x\udfff \ud83d\ude00", [call]))
    else:
        call = {"function": {"name": "grep", "arguments": {"pattern": "a\ud83d"}}}
        message = {"role": "assistant", "content": "x\udfff \ud83d\ude00", "tool_calls": [call]}
        protocol_server.reply(OLLAMA_CHAT, {"message": message, "done_reason": "stop"})

    completion = make(f"{kind}:m").complete(request())

    assert completion.text == "x\ufffd \U0001f600"
    assert completion.tool_calls[0].arguments == {"pattern": "a\ufffd"}


def test_openai_missing_ids_are_generated_unique(protocol_server, make):
    calls = [openai_call("file_read", "{}", None), openai_call("file_read", "{}", None)]
    protocol_server.reply(CHAT, openai_reply("", calls))

    completion = make("openai:m").complete(request(step=3))

    assert [call.id for call in completion.tool_calls] == ["call_3_0", "call_3_1"]


@pytest.mark.parametrize(
    ("usage", "expected", "tokens"),
    [
        (None, Usage(None, None, None), 0),
        ({"prompt_tokens": 7, "completion_tokens": 2}, Usage(7, 2, None), 9),
        ({"total_tokens": "many"}, Usage(None, None, None), 0),
    ],
)
def test_openai_usage_optional(protocol_server, make, usage, expected, tokens):
    protocol_server.reply(CHAT, openai_reply("hi", usage=usage))

    completion = make("openai:m").complete(request())

    assert (completion.usage, completion.usage.tokens) == (expected, tokens)


def test_openai_length_is_reported(protocol_server, make):
    protocol_server.reply(CHAT, openai_reply("cut of", finish="length"))

    completion = make("openai:m").complete(request())

    assert (completion.text, completion.finish_reason) == ("cut of", "length")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"choices": []}, "openai:m: response has no choices"),
        (
            "<html>ok</html>",
            "openai:m: expected a JSON object from {url}/v1/chat/completions, "
            "got '<html>ok</html>' (HTTP 200)",
        ),
    ],
)
def test_openai_malformed_response(protocol_server, make, body, message):
    protocol_server.reply(CHAT, body)

    with pytest.raises(ProviderError) as info:
        make("openai:m").complete(request())

    assert str(info.value) == message.format(url=protocol_server.url)


def test_openai_base_url_from_environment(protocol_server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", protocol_server.url + "/v1/")
    protocol_server.reply(CHAT, openai_reply("hi"))
    provider = OpenAIProvider(ProviderSpec("openai", "m"), ProviderSettings())

    try:
        assert provider.complete(request()).text == "hi"
    finally:
        provider.close()
    assert provider.base_url == protocol_server.url + "/v1"


def test_openai_spec_base_url_wins_over_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env.invalid/v1")
    provider = OpenAIProvider(
        ProviderSpec("openai", "m", "http://spec.invalid/v1"), ProviderSettings()
    )
    provider.close()

    assert provider.base_url == "http://spec.invalid/v1"


@pytest.mark.parametrize("env", [None, "https://api.openai.com/v1/"])
def test_openai_key_required_for_the_openai_api(monkeypatch, env):
    if env:
        monkeypatch.setenv("OPENAI_BASE_URL", env)

    with pytest.raises(ProviderError) as info:
        OpenAIProvider(ProviderSpec("openai", "gpt-4o"), ProviderSettings())

    assert str(info.value) == (
        "openai:gpt-4o: OPENAI_API_KEY is not set (required for https://api.openai.com/v1)"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            ProviderSpec("openai"),
            "openai: no model given; use --replio-provider=openai:MODEL or --replio-model",
        ),
        (
            ProviderSpec("openai", "m", "localhost:8000/v1"),
            "openai:m: base URL 'localhost:8000/v1' must start with http:// or https://",
        ),
        (
            ProviderSpec("ollama"),
            "ollama: no model given; use --replio-provider=ollama:MODEL or --replio-model",
        ),
        (
            ProviderSpec("ollama", "qwen3", "ftp://gpu"),
            "ollama:qwen3: invalid Ollama host 'ftp://gpu': unsupported scheme 'ftp'",
        ),
        (
            ProviderSpec("ollama", "qwen3", "gpu:port"),
            "ollama:qwen3: invalid Ollama host 'gpu:port': Port could not be cast to integer "
            "value as 'port'",
        ),
    ],
)
def test_bad_spec_is_one_line_at_construction(spec, message):
    cls = OpenAIProvider if spec.name == "openai" else OllamaProvider

    with pytest.raises(ProviderError) as info:
        cls(spec, ProviderSettings())

    assert str(info.value) == message


# --- Ollama wire format ---------------------------------------------------------------------


def test_ollama_request_body(protocol_server, make, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)  # never sent to another provider
    protocol_server.reply(OLLAMA_CHAT, ollama_reply("hi"))
    settings = ProviderSettings(temperature=0.2, seed=7, max_tokens=100, num_ctx=32768)

    make("ollama:qwen3").complete(request(settings=settings))

    [sent] = protocol_server.requests
    assert (sent.method, sent.path) == ("POST", OLLAMA_CHAT)
    assert "authorization" not in sent.headers
    assert sent.body == {
        "model": "qwen3",
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "What does a.txt say?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"function": {"name": "file_read", "arguments": {"path": "a.txt"}}},
                    {"function": {"name": "file_read", "arguments": {}}},  # raw text: {}
                ],
            },
            {"role": "tool", "content": "hello", "tool_name": "file_read"},
            {"role": "tool", "content": "Error: bad JSON", "tool_name": "file_read"},
        ],
        "stream": False,
        "options": {"temperature": 0.2, "num_ctx": 32768, "seed": 7, "num_predict": 100},
        "tools": TOOLS_WIRE,
    }


def test_ollama_default_options_and_no_tools(protocol_server, make):
    protocol_server.reply(OLLAMA_CHAT, ollama_reply("hi"))

    make("ollama:qwen3").complete(request(HISTORY[:2], tools=()))

    body = protocol_server.requests[0].body
    assert "tools" not in body
    assert body["options"] == {"temperature": 0.0, "num_ctx": 16384, "seed": 1234}


def test_ollama_tool_calls_found_by_presence(protocol_server, make):
    calls = [
        {"function": {"name": "file_read", "arguments": {"path": "a.txt"}}},
        {"id": "call_x", "function": {"name": "file_read", "arguments": '{"path": "b.txt"}'}},
        {"function": {"name": "file_read", "arguments": "{bad"}},
    ]
    protocol_server.reply(OLLAMA_CHAT, ollama_reply("", calls, done_reason="stop"))

    completion = make("ollama:qwen3").complete(request(step=1))

    assert completion.tool_calls == [
        ToolCall("call_1_0", "file_read", {"path": "a.txt"}),
        ToolCall("call_x", "file_read", {"path": "b.txt"}),
        ToolCall("call_1_2", "file_read", "{bad"),
    ]
    assert completion.usage == Usage(10, 5, 15)


@pytest.mark.parametrize(
    ("counts", "expected", "tokens"),
    [((None, None), Usage(None, None, None), 0), ((40, None), Usage(40, None, None), 40)],
)
def test_ollama_counts_optional(protocol_server, make, counts, expected, tokens):
    protocol_server.reply(OLLAMA_CHAT, ollama_reply("hi", counts=counts))

    completion = make("ollama:qwen3").complete(request())

    assert (completion.usage, completion.usage.tokens) == (expected, tokens)


def test_ollama_length_is_reported(protocol_server, make):
    protocol_server.reply(OLLAMA_CHAT, ollama_reply("cut of", done_reason="length"))

    assert make("ollama:qwen3").complete(request()).finish_reason == "length"


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("", "http://127.0.0.1:11434"),
        ("gpu", "http://gpu:11434"),
        ("gpu:8080/", "http://gpu:8080"),
        ("0.0.0.0", "http://127.0.0.1:11434"),
        ("0.0.0.0:11435", "http://127.0.0.1:11435"),
        ("http://0.0.0.0:11434", "http://127.0.0.1:11434"),
        ("https://ollama.example.com/", "https://ollama.example.com"),
        ("http://gpu:11434/proxy/", "http://gpu:11434/proxy"),
        ("[::1]:11434", "http://[::1]:11434"),
    ],
)
def test_ollama_host_normalised(host, url):
    assert host_url(host) == url


def test_ollama_host_from_environment(protocol_server, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", protocol_server.url.removeprefix("http://"))
    protocol_server.reply(OLLAMA_CHAT, ollama_reply("hi"))
    provider = OllamaProvider(ProviderSpec("ollama", "qwen3"), ProviderSettings())

    try:
        assert provider.complete(request()).text == "hi"
    finally:
        provider.close()


def test_ollama_model_not_found(protocol_server, make, waits):
    protocol_server.reply(OLLAMA_CHAT, {"error": "model 'qwen3' not found"}, status=404)

    with pytest.raises(ProviderError) as info:
        make("ollama:qwen3").complete(request())

    assert str(info.value) == "ollama:qwen3: model 'qwen3' not found (HTTP 404)"
    assert (len(protocol_server.requests), waits) == (1, [])


# --- A whole turn through the engine ---------------------------------------------------------


@dataclass(frozen=True)
class Wire:
    spec: str
    path: str
    call: Callable[[], dict[str, Any]]
    text: Callable[..., dict[str, Any]]


WIRES = [
    Wire(
        "openai:m",
        CHAT,
        lambda: openai_reply("", [openai_call("file_read", '{"path": "a.txt"}', "call_1")]),
        lambda text, finish="stop": openai_reply(text, finish=finish),
    ),
    Wire(
        "ollama:m",
        OLLAMA_CHAT,
        lambda: ollama_reply(
            "", [{"function": {"name": "file_read", "arguments": {"path": "a.txt"}}}]
        ),
        lambda text, finish="stop": ollama_reply(text, done_reason=finish),
    ),
]


@pytest.mark.parametrize("wire", WIRES, ids=lambda wire: wire.spec)
def test_turn_over_http(protocol_server, make, tmp_path, wire):
    protocol_server.reply(wire.path, wire.call())
    protocol_server.reply(wire.path, wire.text("It says hello."))
    (tmp_path / "a.txt").write_text("hello")

    turn = run_turn(
        FIXTURE,
        make(wire.spec),
        TurnSettings(chdir=False),
        worktree=tmp_path,
        tools={"file_read": READ},
    )

    assert (turn.status, turn.text) == ("ok", "It says hello.")
    assert turn.trace == [{"name": "file_read", "arguments": {"path": "a.txt"}}]
    first, second = protocol_server.requests
    assert first.client_port == second.client_port  # one client: the connection is reused
    assert second.body["messages"][-1]["content"] == "hello"  # the tool result went back


@pytest.mark.parametrize("wire", WIRES, ids=lambda wire: wire.spec)
def test_turn_truncated_on_length(protocol_server, make, tmp_path, wire):
    protocol_server.reply(wire.path, wire.text("It sa", "length"))

    turn = run_turn(FIXTURE, make(wire.spec), TurnSettings(chdir=False), worktree=tmp_path)

    assert (turn.status, turn.text) == ("truncated", "It sa")


# --- Faults and retries ----------------------------------------------------------------------


def test_retry_after_seconds_honoured(protocol_server, make, waits):
    protocol_server.reply(
        CHAT, {"error": {"message": "slow down"}}, status=429, headers={"Retry-After": "2"}
    )
    protocol_server.reply(CHAT, openai_reply("hi"))

    assert make("openai:m").complete(request()).text == "hi"
    assert (len(protocol_server.requests), waits) == (2, [2.0])


@pytest.mark.parametrize(
    ("headers", "low", "high"),
    [
        ({"retry-after-ms": "250"}, 0.25, 0.25),
        ({"Retry-After": "3600"}, 30.0, 30.0),  # capped
        ({"Retry-After": "soon"}, 0.25, 0.5),  # unreadable: own backoff
        ({"Retry-After": "-5"}, 0.25, 0.5),
    ],
)
def test_retry_after_bounded(protocol_server, make, waits, headers, low, high):
    protocol_server.reply(CHAT, {"error": {"message": "slow down"}}, status=429, headers=headers)
    protocol_server.reply(CHAT, openai_reply("hi"))

    make("openai:m").complete(request())

    [wait] = waits
    assert low <= wait <= high


def test_retry_after_http_date(protocol_server, make, waits):
    when = email.utils.formatdate(time.time() + 10, usegmt=True)
    protocol_server.reply(
        CHAT, {"error": {"message": "busy"}}, status=503, headers={"Retry-After": when}
    )
    protocol_server.reply(CHAT, openai_reply("hi"))

    make("openai:m").complete(request())

    [wait] = waits
    assert 8.0 <= wait <= 10.0


def test_server_errors_retried_with_backoff(protocol_server, make, waits):
    protocol_server.reply(CHAT, {"error": {"message": "boom"}}, status=500, times=2)
    protocol_server.reply(CHAT, openai_reply("hi"))

    assert make("openai:m").complete(request()).text == "hi"
    assert len(protocol_server.requests) == 3
    first, second = waits
    assert 0.25 <= first <= 0.5
    assert 0.5 <= second <= 1.0


@pytest.mark.parametrize("retries", [0, 2, 4])
def test_retries_bounded(protocol_server, make, waits, retries):
    protocol_server.reply(CHAT, {"error": {"message": "boom"}}, status=500, times=10)

    with pytest.raises(ProviderError) as info:
        make("openai:m", retries=retries).complete(request())

    assert str(info.value) == "openai:m: boom (HTTP 500)"
    assert (len(protocol_server.requests), len(waits)) == (retries + 1, retries)
    assert max(waits, default=0) <= http.BACKOFF_CAP


@pytest.mark.parametrize("status", [408, 409, 429, 502, 503, 504])
def test_transient_statuses_retried(protocol_server, make, waits, status):
    protocol_server.reply(CHAT, {"error": {"message": "again"}}, status=status)
    protocol_server.reply(CHAT, openai_reply("hi"))

    assert make("openai:m").complete(request()).text == "hi"
    assert len(waits) == 1


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (
            401,
            {"error": {"message": "Incorrect API key provided.", "code": "invalid_api_key"}},
            "openai:m: Incorrect API key provided. (HTTP 401)",
        ),
        (403, {"error": {"message": "Forbidden"}}, "openai:m: Forbidden (HTTP 403)"),
        (
            404,
            {"error": {"message": "The model `m` does not exist", "code": "model_not_found"}},
            "openai:m: The model `m` does not exist (HTTP 404)",
        ),
        (400, {"object": "error", "message": "bad tools"}, "openai:m: bad tools (HTTP 400)"),
        (
            429,
            {"error": {"message": "You exceeded your quota.", "code": "insufficient_quota"}},
            "openai:m: You exceeded your quota. (HTTP 429)",
        ),
    ],
)
def test_client_errors_not_retried(protocol_server, make, waits, status, body, message):
    protocol_server.reply(CHAT, body, status=status)
    protocol_server.reply(CHAT, openai_reply("never reached"))

    with pytest.raises(ProviderError) as info:
        make("openai:m").complete(request())

    assert str(info.value) == message
    assert (len(protocol_server.requests), waits) == (1, [])


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"error": {"message": "nested"}}, "nested"),  # OpenAI
        ({"object": "error", "message": "flat"}, "flat"),  # vLLM
        ({"error": "plain"}, "plain"),  # Ollama
        ({"detail": "Not authenticated"}, "Not authenticated"),  # FastAPI-based servers
        ({"error": {"message": "line one\n  line two"}}, "line one line two"),
        ("<html>\n<h1>Bad Request</h1>\n</html>", "<html> <h1>Bad Request</h1> </html>"),
        ("x" * 500, "x" * 197 + "..."),
        (None, "Bad Request"),  # empty body: the reason phrase
        ({"error": {"message": ""}}, '{"error": {"message": ""}}'),
    ],
)
def test_server_message_shapes(protocol_server, make, body, message):
    protocol_server.reply(CHAT, body, status=400)

    with pytest.raises(ProviderError) as info:
        make("openai:m").complete(request())

    assert str(info.value) == f"openai:m: {message} (HTTP 400)"


def test_connection_refused(make, waits, refused_url):
    with pytest.raises(ProviderError) as info:
        make("ollama:qwen3", base_url=refused_url).complete(request())

    assert str(info.value) == (
        f"ollama:qwen3: cannot connect to {refused_url}/api/chat: "
        "connection refused (is the server running?)"
    )
    assert len(waits) == 2  # connection failures are retried


def test_timeout(protocol_server, make, waits):
    protocol_server.reply(CHAT, openai_reply("late"), delay=1.0)

    with pytest.raises(ProviderError) as info:
        make("openai:m", request_timeout=0.2).complete(request())

    assert str(info.value) == (
        f"openai:m: request to {protocol_server.url}/v1/chat/completions timed out after 0.2s"
    )
    assert (len(protocol_server.requests), waits) == (1, [])


# --- Secrets ---------------------------------------------------------------------------------


def test_key_never_in_output(protocol_server, make, monkeypatch, tmp_path, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    echo = {"error": {"message": f"key {KEY} rejected; Authorization: Bearer {KEY}"}}
    protocol_server.reply(CHAT, echo, status=401)
    provider = make("openai:m")

    with pytest.raises(ProviderError) as info:
        provider.complete(request())
    protocol_server.reply(CHAT, echo, status=401)
    turn = run_turn(FIXTURE, provider, TurnSettings(chdir=False), worktree=tmp_path)

    assert str(info.value) == "openai:m: key *** rejected; Authorization: Bearer *** (HTTP 401)"
    assert (turn.status, turn.error) == ("error", str(info.value))
    assert protocol_server.requests[0].headers["authorization"] == f"Bearer {KEY}"  # it was sent
    out, err = capsys.readouterr()
    shown = [repr(provider), repr(provider._http), repr(turn), caplog.text, out, err]
    assert not [text for text in shown if KEY in text]


@pytest.mark.parametrize("status", [401, 200])
def test_key_cut_by_the_excerpt_is_hidden_whole(protocol_server, make, monkeypatch, status):
    """A key echoed where the 200-character excerpt ends must not leave its first characters."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    text = "x" * 185 + f" key {KEY} rejected"
    body = {"error": {"message": text}} if status == 401 else text
    protocol_server.reply(CHAT, body, status=status)

    with pytest.raises(ProviderError) as info:
        make("openai:m").complete(request())

    assert KEY[:6] not in str(info.value)
    assert "x" * 185 + " key *** rej..." in str(info.value)
