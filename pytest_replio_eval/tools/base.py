"""The Tool type and the context a tool call runs in."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class ToolError(Exception):
    """A failure the model should read: becomes a result `Error: <message>`."""


@dataclass(frozen=True)
class ToolContext:
    """Where a call runs. Tools never use the process's working directory."""

    worktree: Path  # already resolved (absolute, symlinks followed)
    timeout: float = 30.0  # default for run_command and web_fetch, in seconds
    deadline: float | None = None  # time.monotonic() when the turn is due

    def time_left(self, wanted: float) -> float:
        """`wanted` seconds, cut to what the turn has left: no call outlives its turn."""
        if self.deadline is None:
            return wanted
        return max(min(wanted, self.deadline - time.monotonic()), 0.001)


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON Schema of the arguments object
    category: str  # a permission category: read, list, web, edit, bash, mcp
    func: Callable[[ToolContext, dict[str, Any]], str]
