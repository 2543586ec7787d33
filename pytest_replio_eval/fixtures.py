"""Fixture model (stub: interface only, filled by the fixtures work)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Fixture:
    id: str
    task: str
    description: str = ""
    files: dict[str, str] = field(default_factory=dict)
    expected: list[str] | None = None
    verifier: dict[str, Any] = field(default_factory=dict)
    tool_permission: dict[str, str] = field(default_factory=dict)
    tools_deny: list[str] = field(default_factory=list)
    # Where it came from: "replio-core-eval", a plugin's name, or a global/local file path.
    source: str = ""
    # The sources it replaced by id, earliest first.
    overrides: list[str] = field(default_factory=list)


class FixtureError(Exception):
    """A bad fixture, named by source and JSON path: `<source>: <path>: <message>`."""

    def __init__(self, source: str, path: str, message: str) -> None:
        self.source, self.path, self.message = source, path, message
        where = f"{source}: {path}" if path else source
        super().__init__(f"{where}: {message}")
