"""Run state of one process: providers built once per spec, turns run into metrics."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from pathlib import Path

from .engine import INTERRUPTED, Turn, TurnSettings, provision, run_turn
from .fixtures import Fixture
from .metrics import Metrics, compute_metrics
from .providers.base import Provider, ProviderError, ProviderFactory, ProviderSpec
from .recording import Recording, RecordingProvider
from .tools.base import Tool
from .variants import BASE, Variant, apply_variant, run_label


class Runner:
    """Holds what every item of a session shares, so nothing is rebuilt per fixture."""

    def __init__(
        self,
        factories: Mapping[str, ProviderFactory],
        tools: Mapping[str, Tool],
        settings: TurnSettings,
        variants: Iterable[Variant] = (),
        record: Recording | None = None,
    ) -> None:
        self.factories = factories
        self.record = record
        self.settings = settings
        # One registry per tool-description variant, built once per process, not per item.
        self.toolsets = {BASE: tools, **{v.name: apply_variant(tools, v) for v in variants}}
        self._providers: dict[ProviderSpec, Provider | ProviderError] = {}
        self._lock = threading.Lock()

    def provider(self, spec: ProviderSpec) -> Provider:
        """One provider (one HTTP client) per spec per process; a failed start is remembered."""
        with self._lock:
            if spec not in self._providers:
                try:
                    provider = self.factories[spec.name](spec, self.settings.provider)
                    if self.record is not None:
                        provider = RecordingProvider(provider, self.record)
                    self._providers[spec] = provider
                except ProviderError as exc:
                    self._providers[spec] = exc
            found = self._providers[spec]
        if isinstance(found, ProviderError):
            raise found
        return found

    def run(
        self,
        fixture: Fixture,
        spec: ProviderSpec,
        worktree: Path,
        trial: int = 1,
        variant: str = BASE,
    ) -> Metrics:
        """Provision the worktree, run one turn and judge it; provider faults become metrics."""
        worktree = provision(fixture, worktree, provider=spec)
        try:
            provider = self.provider(spec)
        except ProviderError as exc:
            turn = Turn(
                provider=spec.label,
                model=spec.model or "",
                engine_errors=[str(exc)],
                status="error",
                error=str(exc),
                worktree=worktree,
                trial=trial,
                variant=variant,
            )
        else:
            turn = run_turn(
                fixture,
                provider,
                self.settings,
                worktree=worktree,
                tools=self.toolsets[variant],
                trial=trial,
                variant=variant,
            )
            if turn.error == INTERRUPTED:
                raise KeyboardInterrupt  # the engine kept the turn; Ctrl-C still ends the session
        metrics = compute_metrics(fixture, turn)
        metrics.provider = run_label(spec, variant)  # results group by spec and tool variant
        return metrics

    def close(self) -> None:
        for provider in self._providers.values():
            if not isinstance(provider, ProviderError):
                provider.close()
        self._providers.clear()
