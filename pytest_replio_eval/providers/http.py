"""What the HTTP providers share: one client each, the retry policy, one-line errors, decoding.

Retried: connection failures, 408, 409, 429 and 5xx, with exponential backoff and jitter, or
the server's own `retry-after-ms` / `Retry-After` wait (capped). Not retried: other 4xx, a 429
whose code is `insufficient_quota` (waiting does not buy credit), and timeouts (a request that
ran out of time once would do so again, and the turn has its own time limit). The last failure
becomes a ProviderError whose text is the one line the user reads:

    <label>: <server message> (HTTP <status>)
    <label>: cannot connect to <url>: connection refused (is the server running?)
    <label>: request to <url> timed out after <N>s
"""

from __future__ import annotations

import json
import random
import re
import ssl
import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

import httpx

from .base import ProviderError, ProviderSettings, ToolCall

if TYPE_CHECKING:
    from ..tools.base import Tool

# Module attributes, not constants inlined below, so tests can record waits instead of sleeping.
sleep = time.sleep
BACKOFF_BASE = 0.5  # seconds before the first retry, doubled for each later one
BACKOFF_CAP = 8.0
RETRY_AFTER_CAP = 30.0  # the longest wait a server's Retry-After can ask of us
EXCERPT = 200  # characters of a non-JSON body quoted in an error line

# A JSON escape of a UTF-16 surrogate: only a pair of them is a character.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")

_RETRY_STATUSES = frozenset({408, 409, 429})


def _trusting_no_one() -> ssl.SSLContext:
    """For a plain-HTTP server, which is never asked for TLS (redirects are not followed): a
    context that trusts no certificate, instead of loading the CA bundle (35 ms a process)."""
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


class JsonClient:
    """POSTs JSON to one server for one provider; safe to share between threads."""

    def __init__(
        self,
        label: str,
        base_url: str,
        settings: ProviderSettings,
        *,
        headers: Mapping[str, str] | None = None,
        secret: str | None = None,
    ) -> None:
        self.label = label
        self.base_url = base_url.rstrip("/")
        self.timeout = settings.request_timeout
        self.retries = max(0, settings.retries)
        self._secret = secret  # redacted from every error line, whatever the server echoes
        self._client = httpx.Client(
            timeout=settings.request_timeout,
            headers=dict(headers or {}),
            verify=_trusting_no_one() if self.base_url.lower().startswith("http://") else True,
        )

    def __repr__(self) -> str:
        return f"JsonClient({self.label!r}, {self.base_url!r})"

    def post_json(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """The response's JSON object, or ProviderError once the retries are spent."""
        url = self.base_url + path
        for attempt in range(self.retries + 1):
            try:
                response = self._client.post(url, json=body)
            except httpx.TimeoutException:
                raise self._error(f"request to {url} timed out after {self.timeout:g}s") from None
            except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
                failure = _connection_failure(url, exc)
                wait = backoff(attempt)
            else:
                if response.is_success:
                    return self._decode(url, response)
                failure = f"{server_message(response, self._secret)} (HTTP {response.status_code})"
                if not retryable(response):
                    raise self._error(failure)
                wait = retry_after(response.headers)
                if wait is None:
                    wait = backoff(attempt)
            if attempt < self.retries:
                sleep(wait)
        raise self._error(failure)

    def close(self) -> None:
        self._client.close()

    def _decode(self, url: str, response: httpx.Response) -> dict[str, Any]:
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise self._error(
                f"expected a JSON object from {url}, "
                f"got {excerpt(response.text, self._secret)!r} "
                f"(HTTP {response.status_code})"
            )
        if _SURROGATE_ESCAPE.search(response.content):
            data = _without_surrogates(data)
        return data

    def _error(self, message: str) -> ProviderError:
        if self._secret:
            message = message.replace(self._secret, "***")
        return ProviderError(f"{self.label}: {message}")


def _without_surrogates(value: Any) -> Any:
    """A lone surrogate (a model that split an emoji's escape) is no text: it would fail the
    next request, the cassette and the report. It becomes U+FFFD, as undecodable bytes do."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_without_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    return value


def backoff(attempt: int) -> float:
    """Seconds before retry `attempt + 1`: doubling, capped, with jitter so clients spread out."""
    delay = min(BACKOFF_CAP, BACKOFF_BASE * 2**attempt)
    return random.uniform(delay / 2, delay)


def retryable(response: httpx.Response) -> bool:
    status = response.status_code
    if status == 429:
        return _error_code(response) != "insufficient_quota"
    return status in _RETRY_STATUSES or status >= 500


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The wait the server asked for, in seconds, capped; None when it asked for none we read."""
    seconds: float | None = None
    try:
        if "retry-after-ms" in headers:
            seconds = float(headers["retry-after-ms"]) / 1000
        elif "retry-after" in headers:
            seconds = _seconds_until(headers["retry-after"])
    except (TypeError, ValueError, OverflowError):
        return None
    if seconds is None or seconds != seconds or seconds < 0:  # NaN included
        return None
    return min(seconds, RETRY_AFTER_CAP)


def _seconds_until(value: str) -> float:
    """`Retry-After` is either seconds or an HTTP date."""
    try:
        return float(value)
    except ValueError:
        when = parsedate_to_datetime(value)
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def server_message(response: httpx.Response, secret: str | None = None) -> str:
    """The server's own words: OpenAI `{"error": {"message"}}`, Ollama `{"error": str}`,
    vLLM `{"message"}`, FastAPI `{"detail"}`; else an excerpt of the body; else the reason."""
    try:
        data = response.json()
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        candidates = [
            error.get("message") if isinstance(error, dict) else error,
            data.get("message"),
            data.get("detail"),
        ]
        for candidate in candidates:
            if isinstance(candidate, str) and candidate.strip():
                return excerpt(candidate, secret)
    return excerpt(response.text, secret) or response.reason_phrase or "no response body"


def excerpt(text: str, secret: str | None = None) -> str:
    """One line of at most EXCERPT characters; the secret is hidden before the cut, so no
    part of it survives at the end."""
    if secret:
        text = text.replace(secret, "***")
    line = " ".join(text.split())
    return line if len(line) <= EXCERPT else line[: EXCERPT - 3] + "..."


def _error_code(response: httpx.Response) -> str | None:
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        return None
    if not isinstance(error, dict):
        return None
    return error.get("code") or error.get("type")


def _connection_failure(url: str, exc: Exception) -> str:
    if isinstance(exc, httpx.ConnectError):
        if _caused_by(exc, ConnectionRefusedError):
            return f"cannot connect to {url}: connection refused (is the server running?)"
        return f"cannot connect to {url}: {excerpt(str(exc))}"
    return f"request to {url} failed: {excerpt(str(exc)) or type(exc).__name__}"


def _caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, kind):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def function_tools(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """Tools in the `{"type": "function", ...}` shape that OpenAI and Ollama both accept."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            },
        }
        for tool in tools
    ]


def tool_call(call: Any, step: int, index: int) -> ToolCall:
    """A call in the `{"id", "function": {"name", "arguments"}}` shape both servers send.

    A missing id gets one unique within the turn, so the tool result can still refer to it.
    """
    call = call if isinstance(call, dict) else {}
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    name = function.get("name")
    call_id = call.get("id")
    return ToolCall(
        id=call_id if isinstance(call_id, str) and call_id else f"call_{step}_{index}",
        name=name if isinstance(name, str) else "",
        arguments=tool_arguments(function.get("arguments")),
    )


def tool_arguments(value: Any) -> dict[str, Any] | str:
    """A call's arguments as the engine wants them: an object, or the raw text when the model's
    arguments are not a JSON object (the engine then counts the call as an error).

    Absent or empty arguments mean a call without parameters, not a malformed one.
    """
    if isinstance(value, dict):
        return value
    if value is None or (isinstance(value, str) and not value.strip()):
        return {}
    if not isinstance(value, str):
        return json.dumps(value)
    try:
        parsed = json.loads(value)
    except ValueError:
        return value
    if parsed is None:  # "null": the same as arguments null
        return {}
    return _without_surrogates(parsed) if isinstance(parsed, dict) else value


def optional_int(value: Any) -> int | None:
    """A token count from a response, or None when it is absent or not a count."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
