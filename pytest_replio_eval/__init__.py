"""pytest-replio-eval: measure how well a language model uses tools.

The public surface: the `hookimpl` marker for plugins that ship fixtures, tools or providers,
and the records those plugins and report readers handle.
"""

from __future__ import annotations

from importlib.metadata import version

from .fixtures import Fixture, FixtureError
from .hookspecs import hookimpl
from .metrics import Metrics, Summary
from .tools.base import Tool, ToolContext, ToolError

__version__ = version("pytest-replio-eval")

__all__ = [
    "Fixture",
    "FixtureError",
    "Metrics",
    "Summary",
    "Tool",
    "ToolContext",
    "ToolError",
    "__version__",
    "hookimpl",
]
