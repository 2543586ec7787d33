"""`replio eval check`: every problem of a project's fixtures and tool variants, one line each.

A linter for pre-commit: it needs no model. Beyond what loading checks (schema, paths), it
checks that the tools a fixture names exist, that its expected tools are permitted, and that
the mock oracle (the expected calls, with the verifier's arguments) passes the verifier.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import pluggy

from .engine import TurnSettings, provision, run_turn
from .fixtures import Fixture, FixtureError, discover, json_path_of
from .metrics import compute_metrics
from .permissions import HeadlessUI, Permissions, refusal
from .plugins import tool_registry
from .providers.base import ProviderSettings, ProviderSpec
from .providers.mock import MockProvider
from .tools.base import Tool
from .variants import BASE, VariantError, apply_variant, load_variant, variant_files, variant_name

ORACLE = ProviderSpec("mock")
_NAME_LISTS = ("must_include", "avoid", "in_order")  # verifier keys that list tool names


def check_project(project: Path, pm: pluggy.PluginManager) -> list[str]:
    """`<source>: <JSON path>: <message>` per problem, fixtures first, then variant files."""
    registry = tool_registry(pm)
    found = discover(project, pm)
    problems = [str(error) for error in found.errors]
    oracle = MockProvider(ORACLE, ProviderSettings())
    with tempfile.TemporaryDirectory(prefix="replio-check-") as tmp:
        for fixture in found.fixtures:
            named = [str(problem) for problem in _tool_problems(fixture, registry)]
            # Unknown or denied tools would only fail the oracle's run too: say it once.
            problems += named or _oracle_problems(fixture, oracle, registry, Path(tmp) / fixture.id)
    return problems + [str(p) for p in _variant_problems(project, registry)]


def _tool_problems(fixture: Fixture, registry: dict[str, Tool]) -> list[FixtureError]:
    """Names of tools that do not exist, and expected tools the fixture does not permit."""
    problems = []

    def add(where: list[str | int], message: str) -> None:
        problems.append(FixtureError(fixture.source, json_path_of(where), message))

    permissions, ui = Permissions.from_fixture(fixture), HeadlessUI()
    for index, name in enumerate(fixture.expected or []):
        refused = refusal(name, registry, permissions, ui)  # unknown or denied
        if refused is not None:
            add(["expected", index], refused.removeprefix("Error: "))
    named = {("tools_deny",): fixture.tools_deny}
    named.update({("verifier", key): fixture.verifier.get(key, []) for key in _NAME_LISTS})
    for where, names in named.items():
        for index, name in enumerate(names):
            if name not in registry:
                add([*where, index], f"unknown tool {name!r}")
    for name, params in fixture.verifier.get("args", {}).items():
        if name not in registry:
            add(["verifier", "args", name], f"unknown tool {name!r}")
            continue
        known = registry[name].parameters.get("properties", {})
        for param in params:
            if known and param not in known:
                message = f"{name} has no parameter {param!r} (it takes {', '.join(known)})"
                add(["verifier", "args", name, param], message)
    return problems


def _oracle_problems(
    fixture: Fixture, oracle: MockProvider, registry: dict[str, Tool], worktree: Path
) -> list[str]:
    """The oracle's failed calls, then what the verifier says of its turn, as a mock run
    would; a fixture without `expected` has no oracle to check, but its files still must fit."""
    try:
        worktree = provision(fixture, worktree, provider=ORACLE)
    except FixtureError as exc:  # files the worktree cannot hold
        return [str(exc)]
    if fixture.expected is None:
        return []
    turn = run_turn(fixture, oracle, TurnSettings(), worktree=worktree, tools=registry)
    calls = zip(turn.trace, turn.results, strict=True)
    problems = [
        f"call {number} {call['name']}: {result}"
        for number, (call, result) in enumerate(calls, 1)
        if result.startswith("Error")
    ]
    problems += compute_metrics(fixture, turn).failures
    return [f"{fixture.source}: oracle: {problem}" for problem in problems]


def _variant_problems(project: Path, registry: dict[str, Tool]) -> list[VariantError]:
    problems = []
    for path in variant_files(project):
        source = path.relative_to(project).as_posix()
        try:
            name = variant_name(path.stem)
        except argparse.ArgumentTypeError as exc:
            problems.append(VariantError(source, "", f"{exc}; it cannot be selected"))
            continue
        if name == BASE:
            message = "base is the tools as registered and takes no file; rename it"
            problems.append(VariantError(source, "", message))
            continue
        try:
            apply_variant(registry, load_variant(project, name))
        except VariantError as exc:
            problems.append(exc)
    return problems
