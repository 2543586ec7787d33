"""The built-in tools plugin ("replio-tools") and the one way the engine calls any tool."""

from __future__ import annotations

import json
from functools import cache
from typing import TYPE_CHECKING, Any

from ..hookspecs import hookimpl
from ..schemacheck import Check, compile_schema
from . import command, fs, web
from .base import Tool, ToolContext, ToolError
from .output import OUTPUT_CAP, cap

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = ["OUTPUT_CAP", "Tool", "ToolContext", "ToolError", "builtin_tools", "call_tool", "cap"]

_BUILTINS: tuple[Tool, ...] = (*fs.TOOLS, *command.TOOLS, *web.TOOLS)

# id(parameters) -> (parameters, validator); the identity check guards against a reused id.
_validators: dict[int, tuple[dict[str, Any], Validator]] = {}


def builtin_tools() -> dict[str, Tool]:
    """A fresh name -> Tool dict, safe for the caller to change."""
    return {tool.name: tool for tool in _BUILTINS}


@hookimpl(tryfirst=True)
def register_tools(tools: dict[str, Tool]) -> None:
    tools.update(builtin_tools())


@cache
def _builtin_checks() -> dict[int, Check]:
    """id(parameters) -> compiled check, for the built-in schemas (module constants, so their ids
    are never reused; valid, as tests check): a call they accept never imports jsonschema."""
    checks = {id(tool.parameters): compile_schema(tool.parameters) for tool in _BUILTINS}
    return {key: check for key, check in checks.items() if check is not None}


def _accepts(tool: Tool) -> Check:
    """Any other schema goes through jsonschema, which first says whether it is a valid schema."""
    return _builtin_checks().get(id(tool.parameters)) or _validator(tool).is_valid


def _validator(tool: Tool) -> Validator:
    cached = _validators.get(id(tool.parameters))
    if cached is None or cached[0] is not tool.parameters:
        import jsonschema  # deferred: 25 ms at import, and a run without a provider never calls

        cls = jsonschema.validators.validator_for(tool.parameters)
        cls.check_schema(tool.parameters)
        cached = _validators[id(tool.parameters)] = (tool.parameters, cls(tool.parameters))
    return cached[1]


def _arguments(tool: Tool, arguments: dict[str, Any] | str) -> dict[str, Any]:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise ToolError(f"arguments for {tool.name} are not valid JSON: {exc}") from None
    if not _accepts(tool)(arguments):
        from jsonschema.exceptions import best_match  # deferred: only a rejected call needs it

        error = best_match(_validator(tool).iter_errors(arguments))
        if error is not None:
            where = ".".join(str(part) for part in error.absolute_path)
            message = f"{where}: {error.message}" if where else error.message
            raise ToolError(f"invalid arguments for {tool.name}: {message}")
    return arguments  # type: ignore[return-value]  # the schema says it is an object


def call_tool(tool: Tool, ctx: ToolContext, arguments: dict[str, Any] | str) -> str:
    """Run one call; every failure becomes a result starting `Error:`, never an exception."""
    try:
        output = tool.func(ctx, _arguments(tool, arguments))
        if not isinstance(output, str):
            raise TypeError(f"returned {type(output).__name__}, not str")
    except ToolError as exc:
        output = f"Error: {exc}"
    except Exception as exc:
        output = f"Error: {tool.name} failed: {type(exc).__name__}: {exc}"
    return cap(output)
