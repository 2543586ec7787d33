"""Which tools a fixture lets the model use: categories with defaults, plus name-level denials."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .fixtures import Fixture
    from .tools.base import Tool

CATEGORIES = ("read", "list", "web", "edit", "bash", "mcp")
ACTIONS = ("allow", "deny", "ask")
# Looking around is safe by default; changing the worktree or running code must be opted into.
DEFAULTS: Mapping[str, str] = MappingProxyType(
    {
        "read": "allow",
        "list": "allow",
        "web": "allow",
        "edit": "deny",
        "bash": "deny",
        "mcp": "deny",
    }
)


@dataclass(frozen=True)
class Permissions:
    categories: dict[str, str] = field(default_factory=lambda: dict(DEFAULTS))
    denied_tools: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        for category, action in self.categories.items():
            if category not in CATEGORIES:
                raise ValueError(
                    f"unknown permission category {category!r} (expected {', '.join(CATEGORIES)})"
                )
            if action not in ACTIONS:
                raise ValueError(
                    f"invalid action {action!r} for category {category!r} "
                    f"(expected {', '.join(ACTIONS)})"
                )

    @classmethod
    def from_fixture(cls, fixture: Fixture) -> Permissions:
        """`tool_permission` merged over DEFAULTS per category; `tools_deny` adds names."""
        return cls({**DEFAULTS, **fixture.tool_permission}, frozenset(fixture.tools_deny))

    def action(self, tool: Tool) -> str:
        """allow | deny | ask; a tool in a category nobody configured is denied."""
        if tool.name in self.denied_tools:
            return "deny"
        return self.categories.get(tool.category, "deny")

    def to_dict(self) -> dict[str, Any]:
        return {"categories": dict(self.categories), "tools_deny": sorted(self.denied_tools)}


@dataclass(frozen=True)
class HeadlessUI:
    """Nobody is there to answer `ask`: it resolves to `auto`."""

    auto: str = "allow"

    def __post_init__(self) -> None:
        if self.auto not in ("allow", "deny"):
            raise ValueError(f"invalid auto answer {self.auto!r} (expected allow or deny)")

    def allows(self, action: str) -> bool:
        if action == "ask":
            return self.auto == "allow"
        if action not in ACTIONS:
            raise ValueError(f"invalid action {action!r} (expected {', '.join(ACTIONS)})")
        return action == "allow"


def offered_tools(
    registry: Mapping[str, Tool], permissions: Permissions, ui: HeadlessUI
) -> list[Tool]:
    """The tools sent to the model, sorted by name: denied ones are never offered."""
    allowed = (tool for tool in registry.values() if ui.allows(permissions.action(tool)))
    return sorted(allowed, key=lambda tool: tool.name)


def refusal(
    name: str, registry: Mapping[str, Tool], permissions: Permissions, ui: HeadlessUI
) -> str | None:
    """The result for a call that must not run (unknown or denied tool), else None."""
    tool = registry.get(name)
    if tool is None:
        return f"Error: unknown tool {name!r}"
    action = permissions.action(tool)
    if ui.allows(action):
        return None
    if tool.name in permissions.denied_tools:
        return f"Error: tool {name!r} is denied (denied by tools_deny)"
    return f"Error: tool {name!r} is denied ({tool.category}: {action})"
