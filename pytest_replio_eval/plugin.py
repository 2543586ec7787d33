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
from typing import Any, Literal

import pluggy
import pytest

from .baseline import Comparison, compare, regression_lines, render_comparison
from .fixtures import Fixture, FixtureError, discover
from .gate import missed_thresholds
from .metrics import Metrics, summarize
from .options import (
    EvalOptions,
    OptionError,
    fraction,
    infra_policy,
    output_dir,
    output_file,
    positive_float,
    positive_int,
    read_options,
    record_mode,
    spec_list,
)
from .plugins import plugin_manager, provider_factories, tool_registry
from .prefetch import install as install_prefetch
from .prefetch import take as take_turn
from .providers.base import ProviderSpec
from .report import build_report, render_tables, write_report
from .runner import Runner
from .saved import report_file
from .trials import trial_names
from .variants import (
    BASE,
    VariantError,
    load_variant,
    run_label,
    variant_name,
    variant_names,
)

PROPERTY_PREFIX = "replio."
_AS_JSON = ("trace", "names", "failures")  # the list values of Metrics.to_dict


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

    def add(
        flag: str,
        ini: str | None,
        help: str,
        ini_type: Literal["string", "bool"] = "string",
        **kwargs: Any,
    ) -> None:
        dest = flag.lstrip("-").replace("-", "_")
        group.addoption(flag, dest=dest, help=help + (f" [ini: {ini}]" if ini else ""), **kwargs)
        if ini:
            parser.addini(ini, help=help, type=ini_type)

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
        "--replio-tools",
        "replio_tools",
        "tool-description variant: .replio/eval/tools/NAME.json overrides tool descriptions "
        "and parameters (default base: the tools as registered)",
        type=variant_name,
        metavar="NAME",
    )
    add(
        "--replio-compare-tools",
        None,
        "run every fixture once per tool variant and compare them side by side, e.g. base,terse",
        type=variant_names,
        metavar="V1,V2",
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
    add(
        "--replio-concurrency",
        "replio_concurrency",
        "run up to N turns at once in threads of this process, for providers that make you "
        "wait (default 1; not used with -n)",
        type=positive_int,
        metavar="N",
    )
    add("--replio-json", None, "write the JSON report to PATH", type=output_file, metavar="PATH")
    add(
        "--replio-trials",
        "replio_trials",
        "run each fixture N times per spec, as items suffixed -t1..-tN (a fixture's own "
        "`trials` wins; default 1)",
        type=positive_int,
        metavar="N",
    )
    add(
        "--replio-min-pass-rate",
        "replio_min_pass_rate",
        "fail the session when a spec's pass rate is below R (0..1)",
        type=fraction,
        metavar="R",
    )
    add(
        "--replio-min-accuracy",
        "replio_min_accuracy",
        "fail the session when a spec's mean accuracy is below R (0..1)",
        type=fraction,
        metavar="R",
    )
    add(
        "--replio-soft",
        "replio_soft",
        "failing fixtures do not fail the run: only the minimums above gate it",
        ini_type="bool",
        action="store_true",
        default=None,
    )
    add(
        "--replio-infra",
        "replio_infra",
        "an item whose provider failed (status error, after retries): fail or skip "
        "(default fail); either way it is left out of accuracy and pass rate",
        type=infra_policy,
        metavar="fail|skip",
    )
    add(
        "--replio-record",
        None,
        "write every provider exchange to cassettes under DIR, one JSON file per item",
        type=output_dir,
        metavar="DIR",
    )
    add(
        "--replio-record-mode",
        None,
        "all: record every request anew (default); new: keep the cassettes that still match "
        "and record only what is missing",
        type=record_mode,
        metavar="all|new",
    )
    add(
        "--replio-cassettes",
        "replio_cassettes",
        "cassette directory for a bare `replay` provider (same as replay:DIR)",
        metavar="DIR",
    )
    add(
        "--replio-baseline",
        None,
        "compare this run with a saved --replio-json report: changes, regressions, fixes",
        type=report_file,
        metavar="PATH",
    )
    add(
        "--replio-fail-on-regression",
        None,
        "fail the session when a fixture regressed against --replio-baseline",
        action="store_true",
        default=False,
    )
    add(
        "--replio-only",
        None,
        "collect only eval fixtures, not the project's Python tests (what `replio eval run` does)",
        action="store_true",
        default=False,
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
    try:
        options = read_options(config.getoption, config.getini)
    except OptionError as exc:
        raise pytest.UsageError(str(exc)) from None
    if not options.specs:
        return  # installing the plugin never changes an unrelated test run
    pm = plugin_manager(_replio_plugins(config))
    factories = provider_factories(pm)
    labels = [spec.label for spec in options.specs]
    for spec in options.specs:
        if spec.name not in factories:
            known = ", ".join(sorted(factories))
            raise pytest.UsageError(f"unknown provider {spec.name!r} (available: {known})")
        if labels.count(spec.label) > 1:  # ids, tables and reports know a spec by its label
            raise pytest.UsageError(
                f"provider {spec.label!r} is given more than once with different base URLs; "
                "results are told apart by name:model only"
            )
    try:
        variants = [load_variant(config.rootpath, name) for name in options.tools]
        runner = Runner(
            factories, tool_registry(pm), options.settings, variants, record=options.record
        )
    except VariantError as exc:
        raise pytest.UsageError(str(exc)) from None
    state = EvalState(options=options, pm=pm, runner=runner)
    config.stash[STATE] = state
    config.addinivalue_line("markers", "replio: an eval fixture item (select with -m replio)")
    config.pluginmanager.register(EvalSession(config, state), "replio-eval-session")
    install_prefetch(config, options.concurrency)


class EvalSession:
    """The hooks that only apply when a provider is given."""

    def __init__(self, config: pytest.Config, state: EvalState) -> None:
        self.config = config
        self.state = state
        self.is_worker = hasattr(config, "workerinput")
        # The configured order, so tables and reports do not depend on xdist's schedule.
        self._labels = [
            run_label(spec, variant)
            for spec in state.options.specs
            for variant in state.options.tools
        ]
        self.forgiven = 0  # failed items that --replio-soft keeps out of the exit status
        self.missed: list[str] = []  # the run's own verdicts: one line per missed minimum
        self.comparison: Comparison | None = None  # with --replio-baseline

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
                # Soft forgives the model's failures, never an infrastructure error.
                if report.failed and self.state.options.soft and not metrics.infra:
                    self.forgiven += 1

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Any:
        """As pytest-cov's --cov-fail-under: pytest derives the exit status from testsfailed
        right after this loop, so the run's verdict is settled here, not in sessionfinish."""
        result = yield
        if not self.is_worker:
            summaries = summarize(self.state.results, self._labels)
            self.missed = missed_thresholds(summaries, self.state.options.thresholds)
            if self.state.options.baseline is not None:
                self.comparison = compare(
                    self.state.options.baseline, self.state.results, self._labels
                )
                if self.state.options.fail_on_regression:
                    self.missed += regression_lines(self.comparison)
            session.testsfailed += bool(self.missed) - self.forgiven
        return result

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
        if self.comparison is not None:
            quiet = self.config.get_verbosity() < 0
            text += "\n\n" + render_comparison(self.comparison, quiet=quiet)
        for line in text.splitlines():
            terminalreporter.write_line(line, red=" FAIL" in line)
        if self.forgiven:
            items = f"{self.forgiven} failed item{'s' * (self.forgiven != 1)}"
            terminalreporter.write_line(
                f"replio: {items} left out of the exit status (--replio-soft)"
            )
        for line in self.missed:
            terminalreporter.write_line(line, red=True, bold=True)


def _fixture_collectors(session: pytest.Session, state: EvalState) -> list[pytest.Collector]:
    """One collector per fixture source, ordered by fixture id (the same on every xdist worker)."""
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
            trials=state.options.trials,
            variants=state.options.tools,
        )
        for source, fixtures in by_source.items()
    ]
    # A mistyped --replio-fixture must not pass as a run of nothing (a broken file is already
    # reported under its own name, which gives its id by default).
    known = {fixture.id for fixture in found.fixtures} | {Path(e.source).stem for e in found.errors}
    unknown = sorted(wanted - known)
    errors = found.errors + [
        FixtureError("--replio-fixture", "", f"no fixture {name!r} (see `replio eval list`)")
        for name in unknown
    ]
    collectors.extend(
        BrokenFixture.from_parent(
            session,
            name=error.source,
            nodeid=error.source,
            path=_source_path(session, error.source),
            error=error,
        )
        for error in errors
    )
    return collectors


def _source_path(session: pytest.Session, source: str) -> Path:
    path = session.config.rootpath / source
    return path if path.is_file() else session.config.rootpath


class FixtureSource(pytest.Collector):
    """The fixtures of one source: a fixture file, or a plugin such as replio-core-eval."""

    def __init__(
        self,
        *,
        fixtures: list[Fixture],
        specs: list[ProviderSpec],
        trials: int,
        variants: list[str],
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        self.fixtures = fixtures
        self.specs = specs
        self.trials = trials
        self.variants = variants

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
                trial=trial,
                variant=variant,
            )
            for fixture in self.fixtures
            for spec in self.specs
            for variant in self.variants
            for trial, suffix in trial_names(fixture.trials or self.trials)
            for name in [f"{fixture.id}[{run_label(spec, variant)}{suffix}]"]
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
    """One trial of one fixture against one provider spec, with one tool-description variant."""

    def __init__(
        self,
        *,
        fixture: Fixture,
        spec: ProviderSpec,
        trial: int = 1,
        variant: str = BASE,
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        self.fixture = fixture
        self.spec = spec
        self.trial = trial
        self.variant = variant
        self.add_marker("replio")

    def new_worktree(self) -> Path:
        """`<name>0` from the tmp_path machinery, so --basetemp applies. Item names are unique,
        so the first try skips the `<name>current` symlink a numbered dir costs (a third of
        an item's file system time); a name cut to the same 30 characters goes on numbered."""
        factory = self.config._tmp_path_factory  # type: ignore[attr-defined]
        name = re.sub(r"\W", "_", self.name)[:30]
        try:
            return factory.mktemp(f"{name}0", numbered=False)
        except FileExistsError:
            return factory.mktemp(name, numbered=True)

    def run_turn(self, worktree: Path) -> Metrics:
        """May run in a thread (--replio-concurrency): it touches no pytest state."""
        runner = self.config.stash[STATE].runner
        return runner.run(self.fixture, self.spec, worktree, trial=self.trial, variant=self.variant)

    def runtest(self) -> None:
        state = self.config.stash[STATE]
        factory = self.config._tmp_path_factory  # type: ignore[attr-defined]
        worktree, metrics = take_turn(self, self.config)  # started ahead, or run now
        self.user_properties.extend(to_properties(metrics))
        if metrics.passed and factory._retention_policy == "failed":
            shutil.rmtree(worktree, ignore_errors=True)
        if metrics.infra and state.options.infra == "skip":
            # The metrics travel with the skipped call report, so the summary still counts it.
            pytest.skip(f"infra error: {metrics.failures[0].removeprefix('status: error: ')}")
        if not metrics.passed:
            raise EvalFailed(metrics)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str:  # type: ignore[override]
        if isinstance(excinfo.value, EvalFailed):
            return failure_text(excinfo.value.metrics)
        if isinstance(excinfo.value, FixtureError):  # files the worktree cannot hold
            return str(excinfo.value)
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
        shown = (
            arguments
            if isinstance(arguments, str)
            else json.dumps(arguments, sort_keys=True, ensure_ascii=False)
        )
        lines.append(f"  {number}. {call['name']} {shown}")
    return "\n".join(lines)


def to_properties(metrics: Metrics) -> list[tuple[str, Any]]:
    """Metrics as report user_properties: they travel to the xdist controller and to junitxml
    (which shows each value as text, so the lists go as JSON)."""
    return [
        (PROPERTY_PREFIX + key, json.dumps(value) if key in _AS_JSON else value)
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
    for key in _AS_JSON:
        data[key] = json.loads(data[key])
    return Metrics.from_dict(data)
