"""OpenAI chat completions, and every server that speaks it (vLLM, llama.cpp, LiteLLM, ...).

The base URL is the spec's (`--replio-base-url` or `openai:MODEL@URL`), else OPENAI_BASE_URL,
else the OpenAI API. The key comes from OPENAI_API_KEY only; it is required for the OpenAI
API and optional for other hosts, and it appears in no repr and no error line.
"""

from __future__ import annotations

import json
import os
from typing import Any

import httpx

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

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_KEY_REQUIRED_HOST = "api.openai.com"


class OpenAIProvider:
    def __init__(self, spec: ProviderSpec, settings: ProviderSettings) -> None:
        require_model(spec)
        self.spec = spec
        self.settings = settings
        self.base_url = base_url(spec)
        key = os.environ.get("OPENAI_API_KEY", "").strip() or None
        if key is None and httpx.URL(self.base_url).host == _KEY_REQUIRED_HOST:
            raise ProviderError(
                f"{spec.label}: OPENAI_API_KEY is not set (required for {self.base_url})"
            )
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._http = JsonClient(spec.label, self.base_url, settings, headers=headers, secret=key)

    def __repr__(self) -> str:
        return f"OpenAIProvider({self.spec.label!r}, base_url={self.base_url!r})"

    def complete(self, request: Request) -> Completion:
        data = self._http.post_json("/chat/completions", self.body(request))
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise ProviderError(f"{self.spec.label}: response has no choices")
        choice = choices[0]
        message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
        content = message.get("content")
        calls = message.get("tool_calls") if isinstance(message.get("tool_calls"), list) else []
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        return Completion(
            text=content if isinstance(content, str) else "",
            tool_calls=[tool_call(call, request.step, i) for i, call in enumerate(calls)],
            finish_reason=choice.get("finish_reason"),
            usage=Usage(
                prompt_tokens=optional_int(usage.get("prompt_tokens")),
                completion_tokens=optional_int(usage.get("completion_tokens")),
                total_tokens=optional_int(usage.get("total_tokens")),
            ),
        )

    def body(self, request: Request) -> dict[str, Any]:
        """The wire request for one round-trip."""
        settings = request.settings
        body: dict[str, Any] = {
            "model": self.spec.model,
            "messages": [_message(message) for message in request.messages],
            "temperature": settings.temperature,
        }
        if settings.seed is not None:
            body["seed"] = settings.seed
        if settings.max_tokens is not None:
            body["max_tokens"] = settings.max_tokens
        if request.tools:  # the API rejects an empty list
            body["tools"] = function_tools(request.tools)
        return body

    def close(self) -> None:
        self._http.close()


def base_url(spec: ProviderSpec) -> str:
    url = spec.base_url or os.environ.get("OPENAI_BASE_URL", "").strip() or DEFAULT_BASE_URL
    url = url.rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise ProviderError(f"{spec.label}: base URL {url!r} must start with http:// or https://")
    return url


def _message(message: dict[str, Any]) -> dict[str, Any]:
    role = message["role"]
    if role == "tool":
        return {
            "role": "tool",
            "tool_call_id": message["tool_call_id"],
            "content": message["content"],
        }
    if role == "assistant" and message.get("tool_calls"):
        return {
            "role": "assistant",
            "content": message.get("content") or None,
            "tool_calls": [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": _encode(call["arguments"])},
                }
                for call in message["tool_calls"]
            ],
        }
    return {"role": role, "content": message.get("content") or ""}


def _encode(arguments: dict[str, Any] | str) -> str:
    """Arguments go back as a JSON string; raw text the model sent goes back as it was."""
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
