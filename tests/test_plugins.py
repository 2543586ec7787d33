"""The plugin manager and the register_fixtures hook: in code, by entry point, and bundled."""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bundled import BUNDLED

from pytest_replio_eval import catalog, providers, tools
from pytest_replio_eval.fixtures import discover, local_dir
from pytest_replio_eval.hookspecs import hookimpl
from pytest_replio_eval.plugins import plugin_manager, provider_factories, tool_registry
from pytest_replio_eval.tools.base import Tool


def fixture_plugin(name: str, contributed: dict[str, Any]) -> types.ModuleType:
    """A plugin module, as a conftest.py or a third-party package would be."""
    module = types.ModuleType(name)

    @hookimpl
    def register_fixtures(fixtures: dict[str, Any]) -> None:
        fixtures.update(contributed)

    module.register_fixtures = register_fixtures  # type: ignore[attr-defined]
    return module


def by_id(project: Path | None, *plugins: object) -> dict[str, tuple[str, str, list[str]]]:
    found = discover(project, plugin_manager(plugins))
    assert found.errors == []
    return {f.id: (f.task, f.source, f.overrides) for f in found.fixtures}


def test_builtins_are_registered_by_name() -> None:
    pm = plugin_manager()
    assert pm.get_plugin("replio-core-eval") is catalog
    assert pm.get_plugin("replio-tools") is tools
    assert pm.get_plugin("replio-providers") is providers
    assert pm.project_name == "replio"


def test_the_catalog_arrives_through_the_hook() -> None:
    pm = plugin_manager()
    contributed: dict[str, Any] = {}
    pm.hook.register_fixtures(fixtures=contributed)
    assert sorted(contributed) == BUNDLED
    pm.unregister(name="replio-core-eval")
    assert discover(None, pm).fixtures == []


def test_a_plugin_registered_in_code_adds_fixtures() -> None:
    found = by_id(None, fixture_plugin("my-plugin", {"say-hi": {"task": "Say hi."}}))
    assert found["say-hi"] == ("Say hi.", "my-plugin", [])
    assert sorted(found) == sorted([*BUNDLED, "say-hi"])


def test_a_plugin_object_is_named_by_its_class_not_its_id() -> None:
    class Plugin:
        @hookimpl
        def register_fixtures(self, fixtures: dict[str, Any]) -> None:
            fixtures["obj"] = {"task": "t"}

    source = f"{Plugin.__module__}.{Plugin.__qualname__}"
    assert by_id(None, Plugin())["obj"] == ("t", source, [])


def test_a_plugin_overrides_a_bundled_fixture_and_a_local_file_overrides_both(
    tmp_path: Path,
) -> None:
    plugin = fixture_plugin("my-plugin", {"grep-symbol": {"task": "plugin grep"}})
    assert by_id(tmp_path, plugin)["grep-symbol"] == (
        "plugin grep",
        "my-plugin",
        ["replio-core-eval"],
    )
    local_dir(tmp_path).mkdir(parents=True)
    (local_dir(tmp_path) / "grep-symbol.json").write_text(json.dumps({"task": "local grep"}))
    assert by_id(tmp_path, plugin)["grep-symbol"] == (
        "local grep",
        ".replio/eval/grep-symbol.json",
        ["replio-core-eval", "my-plugin"],
    )


def test_bad_plugin_fixtures_name_the_plugin_the_id_and_the_path() -> None:
    bad = fixture_plugin("my-plugin", {"x": {"verifier": {}}, "ok": {"task": "t"}, "y": [1]})

    class Broken:
        @hookimpl
        def register_fixtures(self, fixtures: dict[str, Any]) -> None:
            raise RuntimeError("catalog missing")

    found = discover(None, plugin_manager([bad, Broken()]))

    broken = f"{Broken.__module__}.{Broken.__qualname__}"
    assert sorted(str(e) for e in found.errors) == sorted(
        [
            "my-plugin: fixture 'x': task: is required",
            "my-plugin: fixture 'y': (root): must be a JSON object, not an array",
            f"{broken}: register_fixtures failed: RuntimeError: catalog missing",
        ]
    )
    assert [f.id for f in found.fixtures] == sorted([*BUNDLED, "ok"])


@pytest.fixture
def demo_distribution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """An installed distribution declaring a `replio` entry point, on sys.path for this test."""
    site = tmp_path / "site"
    info = site / "replio_demo_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: replio-demo-plugin\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text("[replio]\ndemo = replio_demo_plugin\n")
    (site / "replio_demo_plugin.py").write_text(
        "from pytest_replio_eval.hookspecs import hookimpl\n\n\n"
        "@hookimpl\n"
        "def register_fixtures(fixtures):\n"
        '    fixtures["demo-task"] = {"task": "Say hello."}\n'
    )
    monkeypatch.syspath_prepend(site)  # also invalidates importlib's caches
    yield "replio_demo_plugin"
    sys.modules.pop("replio_demo_plugin", None)


def test_an_entry_point_plugin_is_loaded(demo_distribution: str) -> None:
    pm = plugin_manager()
    assert pm.get_plugin("demo") is sys.modules[demo_distribution]
    assert by_id(None)["demo-task"] == ("Say hello.", "demo", [])


def test_plugins_add_and_replace_tools_and_providers() -> None:
    echo = Tool("echo", "Echo the text.", {"type": "object"}, "read", lambda ctx, args: "")

    def fake_mock(spec: Any, settings: Any) -> Any:
        raise NotImplementedError

    class Extras:
        @hookimpl
        def register_tools(self, tools: dict[str, Tool]) -> None:
            tools["echo"] = echo

        @hookimpl
        def register_providers(self, providers: dict[str, Any]) -> None:
            providers["mock"] = fake_mock

    pm = plugin_manager([Extras()])
    assert tool_registry(pm)["echo"] is echo
    factories = provider_factories(pm)
    assert factories["mock"] is fake_mock
    assert factories["openai"] is provider_factories(plugin_manager())["openai"]
