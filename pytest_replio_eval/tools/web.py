"""web_fetch: one HTTP(S) GET, its status line and text body."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from .base import Tool, ToolContext, ToolError


def web_fetch(ctx: ToolContext, args: dict[str, Any]) -> str:
    import httpx  # imported on first use: most runs never fetch

    url = args["url"]
    scheme = urlsplit(url).scheme
    if scheme not in ("http", "https"):
        raise ToolError(f"cannot fetch {url!r}: only http and https URLs are supported")
    try:
        response = httpx.get(url, timeout=ctx.time_left(ctx.timeout), follow_redirects=True)
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        reason = str(exc) or type(exc).__name__
        raise ToolError(f"cannot fetch {url}: {reason}") from None
    return f"HTTP {response.status_code} {response.reason_phrase}\n\n{response.text}"


TOOLS = (
    Tool(
        name="web_fetch",
        description="Fetch an http(s) URL; returns the HTTP status and the response text.",
        parameters={
            "type": "object",
            "properties": {"url": {"type": "string"}},
            "required": ["url"],
            "additionalProperties": False,
        },
        category="web",
        func=web_fetch,
    ),
)
