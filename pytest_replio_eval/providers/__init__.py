"""The built-in providers, registered through the same hook as third-party ones."""

from __future__ import annotations

from ..hookspecs import hookimpl
from .base import Provider, ProviderFactory, ProviderSettings, ProviderSpec


def _mock(spec: ProviderSpec, settings: ProviderSettings) -> Provider:
    from .mock import MockProvider

    return MockProvider(spec, settings)


def _openai(spec: ProviderSpec, settings: ProviderSettings) -> Provider:
    from .openai import OpenAIProvider

    return OpenAIProvider(spec, settings)


def _ollama(spec: ProviderSpec, settings: ProviderSettings) -> Provider:
    from .ollama import OllamaProvider

    return OllamaProvider(spec, settings)


def _replay(spec: ProviderSpec, settings: ProviderSettings) -> Provider:
    from .replay import ReplayProvider

    return ReplayProvider(spec, settings)


@hookimpl(tryfirst=True)
def register_providers(providers: dict[str, ProviderFactory]) -> None:
    providers.update(mock=_mock, openai=_openai, ollama=_ollama, replay=_replay)
