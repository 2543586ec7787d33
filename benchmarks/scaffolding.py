"""Scaffolding cost: what the harness itself adds to every provider round-trip.

Each step sends the system prompt and the schemas of the tools the fixture's permissions offer,
whatever the task. For every bundled catalog fixture this prints those bytes as the OpenAI
provider sends them (compact JSON, as httpx encodes a body) and as the mock provider's token
estimate (about 4 characters a token) of a request holding nothing else.

    python benchmarks/scaffolding.py
"""

from __future__ import annotations

import argparse
import json
from statistics import mean
from typing import Any

from _project import emit, print_table

from pytest_replio_eval.engine import SYSTEM_PROMPT
from pytest_replio_eval.fixtures import Fixture, discover
from pytest_replio_eval.permissions import HeadlessUI, Permissions, offered_tools
from pytest_replio_eval.plugins import plugin_manager, tool_registry
from pytest_replio_eval.providers.base import ProviderSettings, ProviderSpec, Request
from pytest_replio_eval.providers.http import function_tools
from pytest_replio_eval.providers.mock import MockProvider

CATALOG = "replio-core-eval"


def wire_bytes(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def mock_tokens(tools: list[Any]) -> int:
    """The mock's prompt-token estimate for a step that holds only the scaffolding."""
    mock = MockProvider(ProviderSpec("mock"), ProviderSettings())
    request = Request(
        messages=[{"role": "system", "content": SYSTEM_PROMPT}],
        tools=tools,
        settings=ProviderSettings(),
        fixture=Fixture(id="scaffolding", task=""),  # no `expected`: the oracle just answers
        step=0,
    )
    usage = mock.complete(request).usage
    assert usage.prompt_tokens is not None
    return usage.prompt_tokens


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    pm = plugin_manager()
    registry = tool_registry(pm)
    fixtures = [f for f in discover(None, pm).fixtures if f.source == CATALOG]
    system = wire_bytes({"role": "system", "content": SYSTEM_PROMPT})
    rows, figures = [], []
    for fixture in fixtures:
        tools = offered_tools(registry, Permissions.from_fixture(fixture), HeadlessUI())
        schemas = wire_bytes(function_tools(tools))
        task = wire_bytes({"role": "user", "content": fixture.task})
        figure = {
            "fixture": fixture.id,
            "tools": len(tools),
            "system_bytes": system,
            "tools_bytes": schemas,
            "scaffolding_bytes": system + schemas,
            "mock_tokens": mock_tokens(tools),
            "share_of_first_request": round((system + schemas) / (system + schemas + task), 3),
        }
        figures.append(figure)
        rows.append(
            [fixture.id, len(tools), system, schemas, system + schemas, figure["mock_tokens"],
             f"{figure['share_of_first_request']:.0%}"]
        )  # fmt: skip
    print_table(
        "harness scaffolding per step (system prompt + offered tool schemas)",
        ["fixture", "tools", "system B", "tools B", "total B", "mock tokens", "of step 0"],
        rows,
    )
    average = {
        "bytes": round(mean(f["scaffolding_bytes"] for f in figures)),
        "mock_tokens": round(mean(f["mock_tokens"] for f in figures)),
    }
    print(
        f"mean per step: {average['bytes']} bytes, about {average['mock_tokens']} tokens "
        f"(system prompt {system} bytes; every offered tool about "
        f"{round(mean(f['tools_bytes'] / f['tools'] for f in figures if f['tools']))} bytes)"
    )
    emit("scaffolding", {"fixtures": figures, "mean": average})


if __name__ == "__main__":
    main()
