"""The bundled replio-core-eval plugin: the fixture files next to this module, one per id."""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib.resources import files as package_files
from typing import Any

from ..hookspecs import hookimpl


@cache
def _catalog() -> dict[str, dict[str, Any]]:
    """Read once per process; ids are the file stems, as for a user's own fixture files."""
    found = (p for p in package_files(__name__).iterdir() if p.name.endswith(".json"))
    return {
        p.name.removesuffix(".json"): json.loads(p.read_text(encoding="utf-8"))
        for p in sorted(found, key=lambda p: p.name)
    }


@hookimpl(tryfirst=True)
def register_fixtures(fixtures: dict[str, dict[str, Any]]) -> None:
    fixtures.update(copy.deepcopy(_catalog()))
