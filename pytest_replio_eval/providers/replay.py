"""`replay:DIR`: answer from recorded cassettes, with no network and no key.

DIR is what `--replio-record=DIR` wrote, or one spec's directory inside it. When it holds
the recordings of exactly one spec, that one is replayed; with several, name one
(`replay:cassettes/openai_gpt-4o`). Each turn reads the cassette of its fixture, tool
variant and trial (see cassettes.py); a request that does not match the recorded one fails
the turn with a line naming the first field that differs.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..cassettes import cassette_path, load_cassette, neutral_request
from .base import Completion, ProviderError, ProviderSettings, ProviderSpec, Request


class ReplayProvider:
    def __init__(self, spec: ProviderSpec, settings: ProviderSettings) -> None:
        self.spec = spec
        if not spec.model:
            raise ProviderError(
                "replay: no cassette directory: use replay:DIR or --replio-cassettes=DIR"
            )
        self.shown, self.directory = _spec_directory(spec.model)

    def complete(self, request: Request) -> Completion:
        path = cassette_path(self.directory, request)
        if not path.is_file():
            variant = "" if request.variant == "base" else f", tools {request.variant}"
            raise ProviderError(
                f"replay: no cassette for {request.fixture.id} (trial {request.trial}{variant}) "
                f"in {self.shown}"
            )
        cassette = load_cassette(path, f"{self.shown}/{path.name}")
        return cassette.replay(request.step, neutral_request(request))

    def close(self) -> None:
        pass


def _spec_directory(given: str) -> tuple[str, Path]:
    """(as shown, resolved): DIR itself when it holds cassettes, else its only spec directory.
    Resolved now, since turns run with their worktree as the current directory."""
    shown = given.rstrip("/") or "/"
    directory = Path(given).resolve()
    if not directory.is_dir():
        raise ProviderError(f"replay: cassette directory {shown} does not exist")
    if any(directory.glob("*.json")):
        return shown, directory
    specs = sorted(path.name for path in directory.iterdir() if any(path.glob("*.json")))
    if len(specs) == 1:
        return f"{shown}/{specs[0]}", directory / specs[0]
    if not specs:
        raise ProviderError(f"replay: no cassettes in {shown}")
    raise ProviderError(
        f"replay: {shown} holds the recordings of {len(specs)} specs ({', '.join(specs)}); "
        f"replay one of them, e.g. replay:{shown}/{specs[0]}"
    )


def with_cassettes(
    specs: list[ProviderSpec] | None, directory: str | None
) -> list[ProviderSpec] | None:
    """--replio-cassettes=DIR: the directory of a bare `replay` spec (before --replio-model
    fills bare specs, so a project's default model never reads as a directory)."""
    if not specs or not directory:
        return specs
    return [
        replace(spec, model=directory) if spec.name == "replay" and not spec.model else spec
        for spec in specs
    ]
