"""What the engine asks of a provider, and the provider-neutral records it gets back.

Messages are plain dicts in one neutral shape, translated by each provider to its wire format:
  {"role": "system" | "user", "content": str}
  {"role": "assistant", "content": str, "tool_calls": [{"id", "name", "arguments"}]}
  {"role": "tool", "tool_call_id": str, "name": str, "content": str}
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..fixtures import Fixture
    from ..tools.base import Tool


class ProviderError(Exception):
    """A provider fault, already phrased as the one line a user should read."""


@dataclass(frozen=True)
class ProviderSpec:
    """`name[:model][@base_url]`, e.g. `openai:gpt-4o`, `ollama:qwen3@http://gpu:11434`."""

    name: str
    model: str | None = None
    base_url: str | None = None

    @property
    def label(self) -> str:
        """The spec as shown in item ids, tables and reports (no base URL)."""
        return f"{self.name}:{self.model}" if self.model else self.name


def parse_spec(text: str, default_model: str | None = None) -> ProviderSpec:
    """Parse a provider spec; the model may itself hold colons (`ollama:qwen3:8b`)."""
    text = text.strip()
    base_url = None
    head, sep, tail = text.rpartition("@")
    if sep and tail.startswith(("http://", "https://")):
        text, base_url = head, tail
    name, _, model = text.partition(":")
    if not name:
        raise ValueError(f"invalid provider spec {text!r}: expected name[:model][@base_url]")
    return ProviderSpec(name=name, model=model or default_model, base_url=base_url)


def require_model(spec: ProviderSpec) -> str:
    """Servers that host many models need one named; say how before any request."""
    if not spec.model:
        raise ProviderError(
            f"{spec.name}: no model given; "
            f"use --replio-provider={spec.name}:MODEL or --replio-model"
        )
    return spec.model


@dataclass(frozen=True)
class ProviderSettings:
    temperature: float = 0.0
    seed: int | None = 1234
    max_tokens: int | None = None
    request_timeout: float = 120.0
    retries: int = 2
    num_ctx: int = 16384


@dataclass
class ToolCall:
    id: str
    name: str
    # A dict, or the raw string when the model emitted arguments that are not a JSON object.
    arguments: dict[str, Any] | str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


@dataclass
class Usage:
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None

    @property
    def tokens(self) -> int:
        """total_tokens, else prompt + completion (missing parts count 0)."""
        if self.total_tokens is not None:
            return self.total_tokens
        return (self.prompt_tokens or 0) + (self.completion_tokens or 0)


@dataclass
class Completion:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None  # "length" means the model was cut off: turn truncated
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class Request:
    """One round-trip: the conversation so far and what may be called."""

    messages: list[dict[str, Any]]
    tools: Sequence[Tool]
    settings: ProviderSettings
    fixture: Fixture  # the mock's oracle plans from it; real providers ignore it
    step: int  # 0-based round-trip number within the turn
    # Which run of the fixture this is: replay finds its cassette by them (cassettes.py).
    trial: int = 1  # 1-based (--replio-trials)
    variant: str = "base"  # tool-description variant (variants.py)


class Provider(Protocol):
    spec: ProviderSpec

    def complete(self, request: Request) -> Completion:
        """Raise ProviderError with a one-line cause on any fault."""
        ...

    def close(self) -> None: ...


ProviderFactory = Callable[[ProviderSpec, ProviderSettings], Provider]
