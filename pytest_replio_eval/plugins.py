"""The plugin manager: built-in plugins first, then entry-point plugins, then ones given in code."""

from __future__ import annotations

from collections.abc import Iterable

import pluggy

from . import catalog, hookspecs, providers, tools
from .providers.base import ProviderFactory
from .tools.base import Tool

BUILTINS = {"replio-core-eval": catalog, "replio-tools": tools, "replio-providers": providers}


def plugin_manager(plugins: Iterable[object] = ()) -> pluggy.PluginManager:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for name, plugin in BUILTINS.items():
        pm.register(plugin, name=name)
    pm.load_setuptools_entrypoints(hookspecs.PROJECT)
    for plugin in plugins:
        pm.register(plugin, name=_stable_name(plugin))
    return pm


def tool_registry(pm: pluggy.PluginManager) -> dict[str, Tool]:
    tools: dict[str, Tool] = {}
    pm.hook.register_tools(tools=tools)
    return tools


def provider_factories(pm: pluggy.PluginManager) -> dict[str, ProviderFactory]:
    factories: dict[str, ProviderFactory] = {}
    pm.hook.register_providers(providers=factories)
    return factories


def _stable_name(plugin: object) -> str:
    """Modules and classes by their name; instances by their class, not pluggy's id() default:
    names become fixture sources and item ids, which must match across xdist workers."""
    name = getattr(plugin, "__name__", None)
    if isinstance(name, str):
        return name
    cls = type(plugin)
    return f"{cls.__module__}.{cls.__qualname__}"
