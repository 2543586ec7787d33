"""Ollama's native chat API (`POST /api/chat`, not streamed).

The host is the spec's (`--replio-base-url` or `ollama:MODEL@URL`), else OLLAMA_HOST, else
http://127.0.0.1:11434, read the way the Ollama CLI reads it: `host`, `host:port` and full URLs,
with the bind-all address `0.0.0.0` meaning this machine.

A call whose arguments were not a JSON object is sent back in the history with `{}` as its
arguments: the server rejects anything but an object, and the tool result that follows already
tells the model its arguments were invalid.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .base import (
    Completion,
    ProviderError,
    ProviderSettings,
    ProviderSpec,
    Request,
    Usage,
    require_model,
)
from .http import JsonClient, function_tools, optional_int, tool_call

DEFAULT_PORT = 11434
DEFAULT_HOST = f"http://127.0.0.1:{DEFAULT_PORT}"


class OllamaProvider:
    def __init__(self, spec: ProviderSpec, settings: ProviderSettings) -> None:
        require_model(spec)
        self.spec = spec
        self.settings = settings
        host = spec.base_url or os.environ.get("OLLAMA_HOST", "")
        try:
            self.base_url = host_url(host)
        except ValueError as exc:
            raise ProviderError(f"{spec.label}: invalid Ollama host {host!r}: {exc}") from None
        self._http = JsonClient(spec.label, self.base_url, settings)

    def __repr__(self) -> str:
        return f"OllamaProvider({self.spec.label!r}, base_url={self.base_url!r})"

    def complete(self, request: Request) -> Completion:
        data = self._http.post_json("/api/chat", self.body(request))
        message = data.get("message") if isinstance(data.get("message"), dict) else {}
        content = message.get("content")
        # Tool calls are found by their presence: done_reason says "stop" when there are some.
        calls = message.get("tool_calls") if isinstance(message.get("tool_calls"), list) else []
        prompt = optional_int(data.get("prompt_eval_count"))
        completion = optional_int(data.get("eval_count"))
        return Completion(
            text=content if isinstance(content, str) else "",
            tool_calls=[tool_call(call, request.step, i) for i, call in enumerate(calls)],
            finish_reason=data.get("done_reason"),
            usage=Usage(
                prompt_tokens=prompt,
                completion_tokens=completion,
                total_tokens=None if prompt is None or completion is None else prompt + completion,
            ),
        )

    def body(self, request: Request) -> dict[str, Any]:
        """The wire request for one round-trip."""
        settings = request.settings
        # The server's default context (2048-4096 tokens) is too small for an agent turn.
        options: dict[str, Any] = {"temperature": settings.temperature, "num_ctx": settings.num_ctx}
        if settings.seed is not None:
            options["seed"] = settings.seed
        if settings.max_tokens is not None:
            options["num_predict"] = settings.max_tokens
        body: dict[str, Any] = {
            "model": self.spec.model,
            "messages": [_message(message) for message in request.messages],
            "stream": False,
            "options": options,
        }
        if request.tools:
            body["tools"] = function_tools(request.tools)
        return body

    def close(self) -> None:
        self._http.close()


def host_url(host: str) -> str:
    """OLLAMA_HOST -> base URL: scheme defaults to http, port to 11434 when no scheme is given."""
    text = host.strip().rstrip("/")
    if not text:
        return DEFAULT_HOST
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "http", text
    if scheme not in ("http", "https"):
        raise ValueError(f"unsupported scheme {scheme!r}")
    parts = urlsplit(f"{scheme}://{rest}")
    port = parts.port  # raises ValueError for a port that is not a number
    if port is None and not sep:
        port = DEFAULT_PORT
    hostname = parts.hostname or "127.0.0.1"
    hostname = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(hostname, hostname)
    netloc = f"[{hostname}]" if ":" in hostname else hostname
    if port is not None:
        netloc += f":{port}"
    return urlunsplit((scheme, netloc, parts.path.rstrip("/"), "", ""))


def _message(message: dict[str, Any]) -> dict[str, Any]:
    role = message["role"]
    if role == "tool":
        return {"role": "tool", "content": message["content"], "tool_name": message["name"]}
    wire = {"role": role, "content": message.get("content") or ""}
    if role == "assistant" and message.get("tool_calls"):
        wire["tool_calls"] = [
            {
                "function": {
                    "name": call["name"],
                    "arguments": call["arguments"] if isinstance(call["arguments"], dict) else {},
                }
            }
            for call in message["tool_calls"]
        ]
    return wire
