"""The extension points of replio: plugins fill the dicts they are handed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from .providers.base import ProviderFactory
    from .tools.base import Tool

PROJECT = "replio"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_fixtures(fixtures: dict[str, dict[str, Any]]) -> None:
    """Add fixtures as id -> fixture data (the JSON object of a fixture file)."""


@hookspec
def register_tools(tools: dict[str, Tool]) -> None:
    """Add tools by name, or replace an existing one (to tune its description, say)."""


@hookspec
def register_providers(providers: dict[str, ProviderFactory]) -> None:
    """Add provider factories by name (the part of a spec before the colon)."""
