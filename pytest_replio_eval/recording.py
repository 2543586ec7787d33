"""`--replio-record=DIR`: every provider exchange of the run written to cassettes as it happens.

The recorder wraps whatever provider a spec names, so no provider knows it is recorded. Each
request rewrites its own turn's cassette (one file per item, replaced atomically), so
recording is safe under xdist and needs no end-of-turn hook.

Modes: `all` sends every request to the provider and rewrites the cassettes; `new` answers
from an existing cassette as long as the turn's requests match it, and sends the rest to the
provider, so only what is missing (a new fixture, a turn that now goes another way) is recorded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .cassettes import Cassette, cassette_path, load_cassette, neutral_request, spec_dirname
from .providers.base import Completion, Provider, ProviderError, Request


@dataclass(frozen=True)
class Recording:
    directory: Path  # resolved: turns run with the worktree as the current directory
    mode: str = "all"


class RecordingProvider:
    """A provider that writes what its inner provider is asked and answers."""

    def __init__(self, inner: Provider, recording: Recording) -> None:
        self.inner = inner
        self.spec = inner.spec
        self.mode = recording.mode
        self.directory = recording.directory / spec_dirname(inner.spec.label)

    def complete(self, request: Request) -> Completion:
        now = neutral_request(request)
        cassette = self._cassette(request)
        if self.mode == "new" and cassette.answers(request.step, now):
            return cassette.replay(request.step, now)
        try:
            completion = self.inner.complete(request)
        except ProviderError as exc:
            cassette.record(request.step, now, str(exc))
            raise
        cassette.record(request.step, now, completion)
        return completion

    def close(self) -> None:
        self.inner.close()

    def _cassette(self, request: Request) -> Cassette:
        """This turn's cassette so far: at step 0 a fresh one, unless mode `new` finds one of
        this provider and model to keep."""
        path = cassette_path(self.directory, request)
        fresh = Cassette(
            path, str(path), self.spec.name, self.spec.model, request.fixture.id, request.trial, []
        )
        if (request.step == 0 and self.mode == "all") or not path.is_file():
            return fresh
        try:
            found = load_cassette(path, str(path))
        except ProviderError:
            return fresh  # unreadable: recorded anew
        same = (found.provider, found.model) == (fresh.provider, fresh.model)
        return found if same else fresh
