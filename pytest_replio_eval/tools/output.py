"""The output cap every tool result is held to, so one call cannot flood the context."""

from __future__ import annotations

OUTPUT_CAP = 20_000  # characters of one result


def cap(text: str, limit: int = OUTPUT_CAP) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[output cut: {limit} of {len(text)} characters shown]"
