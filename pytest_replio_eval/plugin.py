"""pytest hooks only: options, collection, items, summary and xdist glue.

The logic lives in plain modules (fixtures, runner, metrics, report); this module translates
pytest's life cycle into calls of them.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Any

import pluggy
import pytest

from .engine import TurnSettings
from .fixtures import Fixture, FixtureError, discover
from .metrics import Metrics
from .options import EvalOptions, positive_float, positive_int, resolve_specs, spec_list
from .plugins import plugin_manager, provider_factories, tool_registry
from .providers.base import ProviderSettings, ProviderSpec
from .report import build_report, render_tables, write_report
from .runner import Runner

PROPERTY_PREFIX = "replio."


@dataclass
class EvalState:
    options: EvalOptions
    pm: pluggy.PluginManager
    runner: Runner
    results: list[Metrics] = field(default_factory=list)
    overrides: list[str] = field(default_factory=list)


STATE = pytest.StashKey[EvalState]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("replio", "replio eval: measure how well a model uses tools")

    def add(flag: str, ini: str | None, help: str, **kwargs: Any) -> None:
        dest = flag.lstrip("-").replace("-", "_")
        group.addoption(flag, dest=dest, help=help + (f" [ini: {ini}]" if ini else ""), **kwargs)
        if ini:
            parser.addini(ini, help=help)

    add(
        "--replio-provider",
        "replio_provider",
        "provider spec name[:model][@base_url], e.g. openai:gpt-4o, ollama:qwen3, mock. "
        "Without it no eval items are collected.",
        type=spec_list,
        metavar="SPEC",
    )
    add("--replio-model", "replio_model", "model for a bare provider name", metavar="MODEL")
    add(
        "--replio-compare",
        None,
        "run every fixture once per spec and compare them side by side",
        type=spec_list,
        metavar="S1,S2",
    )
    add(
        "--replio-base-url",
        "replio_base_url",
        "base URL for specs without @base_url (else OPENAI_BASE_URL / OLLAMA_HOST)",
        metavar="URL",
    )
    add(
        "--replio-fixture",
        None,
        "run only this fixture id (repeatable)",
        action="append",
        default=[],
        metavar="ID",
    )
    add(
        "--replio-max-steps",
        "replio_max_steps",
        "provider round-trips per turn before it is truncated (default 20)",
        type=positive_int,
        metavar="N",
    )
    add(
        "--replio-timeout",
        "replio_timeout",
        "seconds per turn before it is cancelled (default 300)",
        type=positive_float,
        metavar="SECONDS",
    )
    add("--replio-json", None, "write the JSON report to PATH", metavar="PATH")
    add(
        "--replio-only",
        None,
        "collect only eval fixtures, not the project's Python tests (what `replio eval run` does)",
        action="store_true",
        default=False,
    )


def _value(config: pytest.Config, dest: str, parse: Any = None) -> Any:
    """The option if given, else the ini value parsed as the option would be."""
    value = config.getoption(dest)
    if value is None:
        raw = config.getini(dest)
        if raw:
            try:
                value = parse(raw) if parse else raw
            except Exception as exc:  # the argparse type errors carry the reason
                raise pytest.UsageError(f"ini {dest} = {raw!r}: {exc}") from None
    return value


def _read_options(config: pytest.Config) -> EvalOptions:
    specs = resolve_specs(
        _value(config, "replio_provider", spec_list),
        config.getoption("replio_compare"),
        _value(config, "replio_model"),
        _value(config, "replio_base_url"),
    )
    defaults = TurnSettings()
    settings = TurnSettings(
        max_steps=_value(config, "replio_max_steps", positive_int) or defaults.max_steps,
        timeout=_value(config, "replio_timeout", positive_float) or defaults.timeout,
        provider=ProviderSettings(),
    )
    json_path = config.getoption("replio_json")
    return EvalOptions(
        specs=specs,
        fixture_ids=list(config.getoption("replio_fixture")),
        settings=settings,
        json_path=Path(json_path).resolve() if json_path else None,
        only=config.getoption("replio_only"),
    )


def _replio_plugins(config: pytest.Config) -> list[ModuleType]:
    """conftest.py files and -p modules that implement replio hooks join the replio manager."""
    return [
        plugin
        for plugin in config.pluginmanager.get_plugins()
        if isinstance(plugin, ModuleType)
        and not plugin.__name__.startswith("pytest_replio_eval")
        and any(
            isinstance(value, FunctionType) and hasattr(value, "replio_impl")
            for value in vars(plugin).values()
        )
    ]


def pytest_configure(config: pytest.Config) -> None:
    options = _read_options(config)
    if not options.specs:
        return  # installing the plugin never changes an unrelated test run
    pm = plugin_manager(_replio_plugins(config))
    factories = provider_factories(pm)
    for spec in options.specs:
        if spec.name not in factories:
            known = ", ".join(sorted(factories))
            raise pytest.UsageError(f"unknown provider {spec.name!r} (available: {known})")
    state = EvalState(
        options=options, pm=pm, runner=Runner(factories, tool_registry(pm), options.settings)
    )
    config.stash[STATE] = state
    config.addinivalue_line("markers", "replio: an eval fixture item (select with -m replio)")
    config.pluginmanager.register(EvalSession(config, state), "replio-eval-session")


class EvalSession:
    """The hooks that only apply when a provider is given."""

    def __init__(self, config: pytest.Config, state: EvalState) -> None:
        self.config = config
        self.state = state
        self.is_worker = hasattr(config, "workerinput")
        # The configured order, so tables and reports do not depend on xdist's schedule.
        self._labels = [spec.label for spec in state.options.specs]

    def pytest_unconfigure(self) -> None:
        self.state.runner.close()

    def pytest_ignore_collect(self) -> bool | None:
        return True if self.state.options.only else None

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Any:
        report = yield
        if isinstance(collector, pytest.Session) and report.passed:
            report.result.extend(_fixture_collectors(collector, self.state))
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            metrics = from_properties(report.user_properties)
            if metrics is not None:
                self.state.results.append(metrics)

    def pytest_report_collectionfinish(self) -> list[str]:
        if self.config.get_verbosity() < 1:
            return []
        return [f"replio: {line}" for line in self.state.overrides]

    def pytest_sessionfinish(self) -> None:
        path = self.state.options.json_path
        if path is not None and not self.is_worker:
            write_report(build_report(self.state.results, providers=self._labels), path)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.is_worker or not self.state.results:
            return
        terminalreporter.write_sep("=", "replio eval")
        text = render_tables(
            self.state.results, quiet=self.config.get_verbosity() < 0, providers=self._labels
        )
        for line in text.splitlines():
            terminalreporter.write_line(line, red=" FAIL" in line)


def _fixture_collectors(session: pytest.Session, state: EvalState) -> list[pytest.Collector]:
    """One collector per fixture source, in precedence order, each yielding sorted items."""
    found = discover(session.config.rootpath, state.pm)
    wanted = set(state.options.fixture_ids)
    by_source: dict[str, list[Fixture]] = {}
    for fixture in found.fixtures:
        if wanted and fixture.id not in wanted:
            continue
        by_source.setdefault(fixture.source, []).append(fixture)
        state.overrides.extend(f"{fixture.source} overrides {old}" for old in fixture.overrides)
    collectors: list[pytest.Collector] = [
        FixtureSource.from_parent(
            session,
            name=source,
            nodeid=source,
            path=_source_path(session, source),
            fixtures=sorted(fixtures, key=lambda f: f.id),
            specs=state.options.specs,
        )
        for source, fixtures in by_source.items()
    ]
    collectors.extend(
        BrokenFixture.from_parent(
            session,
            name=error.source,
            nodeid=error.source,
            path=_source_path(session, error.source),
            error=error,
        )
        for error in found.errors
    )
    return collectors


def _source_path(session: pytest.Session, source: str) -> Path:
    path = session.config.rootpath / source
    return path if path.is_file() else session.config.rootpath


class FixtureSource(pytest.Collector):
    """The fixtures of one source: a fixture file, or a plugin such as replio-core-eval."""

    def __init__(self, *, fixtures: list[Fixture], specs: list[ProviderSpec], **kwargs: Any):
        super().__init__(**kwargs)
        self.fixtures = fixtures
        self.specs = specs

    def collect(self) -> list[pytest.Item]:
        return [
            EvalItem.from_parent(
                self,
                name=name,
                # Given as a string so pytest parses "[...]" as params, as for parametrized
                # tests: --lf and node ids on the command line then match.
                nodeid=f"{self.nodeid}::{name}",
                fixture=fixture,
                spec=spec,
            )
            for fixture in self.fixtures
            for spec in self.specs
            for name in [f"{fixture.id}[{spec.label}]"]
        ]


class BrokenFixture(pytest.Collector):
    """A fixture that failed to load: one collection error naming the file and the field."""

    def __init__(self, *, error: FixtureError, **kwargs: Any):
        super().__init__(**kwargs)
        self.error = error

    def collect(self) -> list[pytest.Item]:
        raise self.error

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str:  # type: ignore[override]
        if isinstance(excinfo.value, FixtureError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))


class EvalFailed(Exception):
    """The turn ran but did not pass: carries the metrics for a short report."""

    def __init__(self, metrics: Metrics) -> None:
        super().__init__(metrics.fixture)
        self.metrics = metrics


class EvalItem(pytest.Item):
    """One fixture against one provider spec."""

    def __init__(self, *, fixture: Fixture, spec: ProviderSpec, **kwargs: Any):
        super().__init__(**kwargs)
        self.fixture = fixture
        self.spec = spec
        self.add_marker("replio")

    def runtest(self) -> None:
        state = self.config.stash[STATE]
        # The tmp_path machinery (what the tmp_path fixture uses), so --basetemp applies.
        factory = self.config._tmp_path_factory  # type: ignore[attr-defined]
        worktree = factory.mktemp(re.sub(r"\W", "_", self.name)[:30], numbered=True)
        metrics = state.runner.run(self.fixture, self.spec, worktree)
        self.user_properties.extend(to_properties(metrics))
        if metrics.passed and factory._retention_policy == "failed":
            shutil.rmtree(worktree, ignore_errors=True)
        if not metrics.passed:
            raise EvalFailed(metrics)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str:  # type: ignore[override]
        if isinstance(excinfo.value, EvalFailed):
            return failure_text(excinfo.value.metrics)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.name


def failure_text(metrics: Metrics) -> str:
    """The failed clauses, then the trace, one call a line."""
    lines = list(metrics.failures)
    count = len(metrics.trace)
    lines.append(f"trace ({count} call{'s' * (count != 1)}):" if count else "trace: no tool calls")
    for number, call in enumerate(metrics.trace, 1):
        arguments = call["arguments"]
        shown = arguments if isinstance(arguments, str) else json.dumps(arguments, sort_keys=True)
        lines.append(f"  {number}. {call['name']} {shown}")
    return "\n".join(lines)


def to_properties(metrics: Metrics) -> list[tuple[str, Any]]:
    """Metrics as report user_properties: they travel to the xdist controller and to junitxml."""
    return [
        (PROPERTY_PREFIX + key, json.dumps(value) if isinstance(value, list | dict) else value)
        for key, value in metrics.to_dict().items()
    ]


def from_properties(properties: list[tuple[str, Any]]) -> Metrics | None:
    data = {
        name[len(PROPERTY_PREFIX) :]: value
        for name, value in properties
        if name.startswith(PROPERTY_PREFIX)
    }
    if not data:
        return None
    for key in ("trace", "names", "failures"):
        data[key] = json.loads(data[key])
    return Metrics.from_dict(data)
