"""Tool-description variants: the same tools, described differently, to see the figures move.

A variants file `.replio/eval/tools/<name>.json` maps tool names to what replaces their
description and/or parameters (the JSON Schema the model sees and its arguments are checked
against):

    {"file_read": {"description": "Read a file."}, "grep": {"parameters": {...}}}

The name `base` is the registry as the plugins built it and needs no file.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .fixtures import FixtureError, json_path_of, json_type, local_dir
from .providers.base import ProviderSpec
from .tools.base import Tool

BASE = "base"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_KEYS = ("description", "parameters")


class VariantError(FixtureError):
    """A bad variants file, named like a bad fixture: `<source>: <JSON path>: <message>`."""


@dataclass(frozen=True)
class Variant:
    name: str
    source: str = ""  # the file, relative to the project; "" for base
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)  # tool -> fields


def variant_name(text: str) -> str:
    """argparse `type=`: a name that can be a file stem and part of an item id."""
    name = text.strip()
    if not _NAME.fullmatch(name):
        raise argparse.ArgumentTypeError(
            f"invalid tool variant name {text!r}: use letters, digits, '_', '.' and '-'"
        )
    return name


def variant_names(text: str) -> list[str]:
    """argparse `type=` for `base,terse`: names in order, each once."""
    names = [variant_name(part) for part in text.split(",") if part.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"no tool variant name in {text!r}")
    return list(dict.fromkeys(names))


def resolve_variants(tools: str | None, compare: list[str] | None) -> list[str]:
    """--replio-compare-tools wins over --replio-tools, as --replio-compare over the provider."""
    return compare or [tools or BASE]


def run_label(spec: ProviderSpec, variant: str) -> str:
    """What results group by: the spec label, plus `+tools=<name>` unless the tools are base."""
    return spec.label if variant == BASE else f"{spec.label}+tools={variant}"


def variants_dir(project: Path) -> Path:
    return local_dir(project) / "tools"


def variant_files(project: Path) -> list[Path]:
    """The variants files of a project, sorted; hidden files (editor backups) are skipped."""
    found = variants_dir(project).glob("*.json")
    return sorted(path for path in found if not path.name.startswith("."))


def load_variant(project: Path, name: str) -> Variant:
    """Read and check `.replio/eval/tools/<name>.json`; `base` needs no file."""
    if name == BASE:
        return Variant(BASE)
    path = variants_dir(project) / f"{name}.json"
    source = path.relative_to(project).as_posix()
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError:
        raise VariantError(source, "", "is not UTF-8 text") from None
    except OSError as exc:
        raise VariantError(source, "", f"cannot read: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        message = f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        raise VariantError(source, "", message) from None
    if not isinstance(data, dict):
        message = f"must be a JSON object of tool name -> overrides, not {json_type(data)}"
        raise VariantError(source, "(root)", message)
    for tool, override in data.items():
        problem = _override_problem(override)
        if problem is not None:
            where, message = problem
            raise VariantError(source, json_path_of([tool, *where]), message)
    return Variant(name, source, data)


def apply_variant(registry: Mapping[str, Tool], variant: Variant) -> dict[str, Tool]:
    """The registry with the variant's fields replaced; a tool it names must exist."""
    for name in variant.overrides:
        if name not in registry:
            known = ", ".join(sorted(registry))
            raise VariantError(
                variant.source, json_path_of([name]), f"unknown tool (known: {known})"
            )
    return {
        name: replace(tool, **variant.overrides.get(name, {})) for name, tool in registry.items()
    }


def _override_problem(override: Any) -> tuple[list[Any], str] | None:
    if not isinstance(override, dict):
        kind = json_type(override)
        return [], f"must be an object with description and/or parameters, not {kind}"
    unknown = [repr(key) for key in override if key not in _KEYS]
    if unknown:
        keys = f"key{'s' * (len(unknown) > 1)} {', '.join(unknown)}"
        return [], f"unknown {keys} (expected description, parameters)"
    if not override:
        return [], "must give description and/or parameters"
    description = override.get("description")
    if "description" in override and not (isinstance(description, str) and description.strip()):
        return ["description"], "must be a non-empty string"
    if "parameters" in override:
        return _parameters_problem(override["parameters"])
    return None


def _parameters_problem(schema: Any) -> tuple[list[Any], str] | None:
    if not isinstance(schema, dict):
        return ["parameters"], f"must be a JSON Schema object, not {json_type(schema)}"
    if schema.get("type") != "object":
        return ["parameters", "type"], 'must be "object": a tool takes an object of arguments'
    import jsonschema  # deferred: 25 ms at every pytest start, for a file most runs lack
    from jsonschema.exceptions import best_match

    cls = jsonschema.validators.validator_for(schema)
    error = best_match(cls(cls.META_SCHEMA).iter_errors(schema))
    if error is not None:
        return ["parameters", *error.absolute_path], f"invalid JSON Schema: {error.message}"
    return None
