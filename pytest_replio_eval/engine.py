"""Headless agent loop (stub: interface only, filled by the engine work)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .providers.base import ProviderSettings, Usage


@dataclass(frozen=True)
class TurnSettings:
    max_steps: int = 20  # provider round-trips; reaching it without an answer: truncated
    timeout: float | None = 300.0  # whole turn, seconds; exceeded: cancelled
    tool_timeout: float = 30.0
    provider: ProviderSettings = field(default_factory=ProviderSettings)
    chdir: bool = True  # set the process cwd to the worktree during the turn (only when serial)


@dataclass
class Turn:
    provider: str  # spec label, e.g. "openai:gpt-4o"
    model: str
    trace: list[dict[str, Any]] = field(default_factory=list)  # [{name, arguments}]
    results: list[str] = field(default_factory=list)  # one tool result per trace entry
    text: str = ""  # the model's final answer
    usage: list[Usage] = field(default_factory=list)  # one per provider round-trip
    engine_errors: list[str] = field(default_factory=list)  # faults not shown as tool results
    status: str = "ok"  # ok | truncated | error | cancelled
    error: str | None = None  # one-line cause when status is error or cancelled
    duration_s: float = 0.0
    worktree: Path | None = None
