"""Headless agent loop: one turn of many provider round-trips, run in a throwaway worktree."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .fixtures import Fixture, FixtureError
from .permissions import HeadlessUI, Permissions, offered_tools, refusal
from .providers.base import (
    Provider,
    ProviderError,
    ProviderSettings,
    ProviderSpec,
    Request,
    ToolCall,
    Usage,
)
from .tools import builtin_tools, call_tool
from .tools.base import Tool, ToolContext

# Sent on every step, so it is kept short: it costs tokens on each round-trip.
SYSTEM_PROMPT = (
    "You are a coding agent. The current directory is the project's worktree; "
    "give paths relative to it. Use the tools to do the task, then answer in plain text."
)

CONFIG_PATH = ".replio/config.json"
INTERRUPTED = "interrupted"  # Turn.error of a turn stopped by KeyboardInterrupt


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
    trial: int = 1  # see Request
    variant: str = "base"


def provision(fixture: Fixture, root: Path, *, provider: ProviderSpec | None = None) -> Path:
    """Write the fixture's files and the turn's config under `root`; return it resolved.

    `root` must not exist or be empty, so nothing of an earlier turn leaks into this one.
    The config names the provider connection, never an API key.
    """
    root = Path(root)
    if root.exists() and any(root.iterdir()):
        raise FileExistsError(f"worktree {root} is not empty")
    root.mkdir(parents=True, exist_ok=True)
    base = root.resolve()
    for rel, content in fixture.files.items():
        target = (base / rel).resolve()
        if target == base or not target.is_relative_to(base):
            raise FixtureError(fixture.source, f"files.{rel}", "path escapes the worktree")
        if target == base / CONFIG_PATH:
            raise FixtureError(fixture.source, f"files.{rel}", "path is reserved for the engine")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8", newline="")
        except OSError as exc:  # e.g. both `a` and `a/b` given as files
            message = f"cannot write: {exc.strerror}"
            raise FixtureError(fixture.source, f"files.{rel}", message) from None
    config = {
        "fixture": fixture.id,
        "provider": None
        if provider is None
        else {"name": provider.name, "model": provider.model, "base_url": provider.base_url},
        "permissions": Permissions.from_fixture(fixture).to_dict(),
    }
    (base / CONFIG_PATH).parent.mkdir(exist_ok=True)
    (base / CONFIG_PATH).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return base


def run_turn(
    fixture: Fixture,
    provider: Provider,
    settings: TurnSettings,
    *,
    worktree: Path,
    tools: Mapping[str, Tool] | None = None,
    trial: int = 1,
    variant: str = "base",
) -> Turn:
    """Run one headless turn; every outcome, Ctrl-C included, comes back as a Turn.

    KeyboardInterrupt is not re-raised: the turn is returned with status cancelled and
    error INTERRUPTED, and the caller decides whether to stop the session.
    """
    spec = provider.spec
    turn = Turn(spec.label, spec.model or "", worktree=worktree, trial=trial, variant=variant)
    start = time.perf_counter()
    previous = os.getcwd() if settings.chdir else None
    try:
        if settings.chdir:
            os.chdir(worktree)
        _Loop(fixture, provider, settings, worktree, tools, turn).run()
    except KeyboardInterrupt:
        turn.status, turn.error = "cancelled", INTERRUPTED
    finally:
        if previous is not None:
            os.chdir(previous)
        turn.duration_s = time.perf_counter() - start
    return turn


class _Loop:
    """The state of one turn: the conversation so far and what may be called."""

    def __init__(
        self,
        fixture: Fixture,
        provider: Provider,
        settings: TurnSettings,
        worktree: Path,
        tools: Mapping[str, Tool] | None,
        turn: Turn,
    ) -> None:
        self.fixture, self.provider, self.settings, self.turn = fixture, provider, settings, turn
        self.registry = dict(builtin_tools() if tools is None else tools)
        self.permissions = Permissions.from_fixture(fixture)
        self.ui = HeadlessUI()
        self.offered = offered_tools(self.registry, self.permissions, self.ui)
        self.deadline = None if settings.timeout is None else time.monotonic() + settings.timeout
        self.ctx = ToolContext(Path(worktree).resolve(), settings.tool_timeout, self.deadline)
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": fixture.task},
        ]

    def run(self) -> None:
        turn = self.turn
        for step in range(self.settings.max_steps):
            if self._expired():
                return
            request = Request(
                messages=list(self.messages),
                tools=self.offered,
                settings=self.settings.provider,
                fixture=self.fixture,
                step=step,
                trial=turn.trial,
                variant=turn.variant,
            )
            try:
                completion = self.provider.complete(request)
            except ProviderError as exc:
                if not self._expired():  # a request cut short by the turn's deadline: cancelled
                    self._fail(str(exc))
                return
            except Exception as exc:
                self._fail(f"{type(exc).__name__}: {exc}")
                return
            turn.usage.append(completion.usage)
            if completion.finish_reason == "length":
                turn.text = completion.text
                turn.status, turn.error = "truncated", "model output cut off (finish_reason length)"
                return
            if not completion.tool_calls:
                turn.text = completion.text
                return
            self.messages.append(
                {
                    "role": "assistant",
                    "content": completion.text,
                    "tool_calls": [call.to_dict() for call in completion.tool_calls],
                }
            )
            for call in completion.tool_calls:
                if self._expired():
                    return
                self._execute(call)
        turn.status = "truncated"
        turn.error = f"no answer after {self.settings.max_steps} steps"

    def _execute(self, call: ToolCall) -> None:
        result = refusal(call.name, self.registry, self.permissions, self.ui)
        if result is None:
            try:
                result = call_tool(self.registry[call.name], self.ctx, call.arguments)
            except Exception as exc:  # call_tool reports tool faults itself; this is a backstop
                result = f"Error: {type(exc).__name__}: {exc}"
        self.turn.trace.append({"name": call.name, "arguments": call.arguments})
        self.turn.results.append(result)
        self.messages.append(
            {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": result}
        )

    def _expired(self) -> bool:
        if self.deadline is None or time.monotonic() < self.deadline:
            return False
        self.turn.status = "cancelled"
        self.turn.error = f"turn timed out after {self.settings.timeout:g}s"
        return True

    def _fail(self, message: str) -> None:
        self.turn.status, self.turn.error = "error", message
        self.turn.engine_errors.append(message)
