"""Cassettes: the provider exchanges of one turn, as a JSON file a code review can read.

One file per fixture x spec x tool variant x trial:

    <DIR>/<spec label, sanitized>/<fixture id>[+tools=<variant>][@t<trial>].json

holding {"version", "provider", "model", "fixture", "trial", "exchanges": [{"key", "request",
"response" | "error"}]}, keys sorted and indented. A request is stored in its provider-neutral
form (messages, tools, model-facing settings), never as wire headers, and every value of a
secret-looking environment variable is replaced by `***` before it is hashed or written.

A request matches a recorded exchange when their keys agree: a stable hash of (provider, model,
trial, messages, tools, settings). When they do not, `first_difference` names the field.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .providers.base import Completion, ProviderError, Request
from .providers.mock import parse_completion
from .report import write_report

CASSETTE_VERSION = 1
# How a request reaches the model, not what the model sees: left out of the match.
_TRANSPORT = frozenset({"request_timeout", "retries"})
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)$", re.IGNORECASE)
_SECRET_MIN = 8  # shorter values ("1", "true") are too common to be secrets worth hiding
_EXCERPT = 40  # characters of each differing value quoted in a mismatch


def spec_dirname(label: str) -> str:
    """`openai:gpt-4o` -> `openai_gpt-4o`: a label made safe as one directory name."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", label)


def cassette_name(fixture: str, trial: int = 1, variant: str = "base") -> str:
    """Fixture ids and variant names never hold `+` or `@`, so names cannot collide."""
    tools = "" if variant == "base" else f"+tools={variant}"
    return f"{fixture}{tools}{'' if trial == 1 else f'@t{trial}'}.json"


def cassette_path(directory: Path, request: Request) -> Path:
    return directory / cassette_name(request.fixture.id, request.trial, request.variant)


def neutral_request(request: Request) -> dict[str, Any]:
    """What the model is asked, as plain JSON with secrets scrubbed: what is hashed and stored."""
    settings = asdict(request.settings)
    return scrub(
        {
            "settings": {key: value for key, value in settings.items() if key not in _TRANSPORT},
            "tools": [
                {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
                for tool in request.tools
            ],
            "messages": request.messages,
        }
    )


def request_key(provider: str, model: str | None, trial: int, request: dict[str, Any]) -> str:
    """A stable hash: canonical JSON (sorted keys, no spaces), so key order never matters."""
    identity = {"provider": provider, "model": model, "trial": trial, **request}
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def scrub(value: Any) -> Any:
    """A JSON copy of `value` with every secret from the environment replaced by `***`."""
    secrets = sorted(
        {
            text
            for name, text in os.environ.items()
            if _SECRET_NAME.search(name) and len(text) >= _SECRET_MIN
        },
        key=len,
        reverse=True,  # a secret that contains another is replaced whole
    )

    def clean(item: Any) -> Any:
        if isinstance(item, str):
            for secret in secrets:
                item = item.replace(secret, "***")
            return item
        if isinstance(item, dict):
            return {clean(key): clean(inner) for key, inner in item.items()}
        if isinstance(item, list):
            return [clean(inner) for inner in item]
        return item

    return clean(json.loads(json.dumps(value)))


def encode_completion(completion: Completion) -> dict[str, Any]:
    """The shape a mock script uses too, so a recorded response reads like one."""
    return scrub(
        {
            "text": completion.text,
            "tool_calls": [call.to_dict() for call in completion.tool_calls],
            "finish_reason": completion.finish_reason,
            "usage": asdict(completion.usage),
        }
    )


@dataclass
class Cassette:
    path: Path
    shown: str  # the path as the user gave it, for messages
    provider: str
    model: str | None
    fixture: str
    trial: int
    exchanges: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": CASSETTE_VERSION,
            "provider": self.provider,
            "model": self.model,
            "fixture": self.fixture,
            "trial": self.trial,
            "exchanges": self.exchanges,
        }

    def save(self) -> None:
        """Atomic, so a parallel reader or a crash never leaves half a cassette."""
        write_report(self.to_dict(), self.path, sort_keys=True)

    def key(self, request: dict[str, Any]) -> str:
        return request_key(self.provider, self.model, self.trial, request)

    def replay(self, step: int, request: dict[str, Any]) -> Completion:
        """The recorded answer to `request` at `step`, or ProviderError naming what differs."""
        where = f"replay: cassette {self.shown} step {step}"
        if step >= len(self.exchanges):
            count = len(self.exchanges)
            raise ProviderError(f"{where}: not recorded (the recorded turn made {count})")
        exchange = self.exchanges[step]
        if exchange.get("key") != self.key(request):
            recorded = exchange.get("request")
            difference = first_difference(recorded, request) or "key (edited by hand?)"
            raise ProviderError(f"{where}: request differs at {difference}")
        if "error" in exchange:
            raise ProviderError(str(exchange["error"]))
        try:
            return parse_completion(exchange.get("response"), "response", step)
        except ProviderError as exc:
            raise ProviderError(f"{where}: {exc}") from None

    def answers(self, step: int, request: dict[str, Any]) -> bool:
        """Whether the model's answer to `request` is recorded at `step`; a recorded provider
        error is not an answer, so recording mode `new` asks again."""
        if step >= len(self.exchanges):
            return False
        exchange = self.exchanges[step]
        return exchange.get("key") == self.key(request) and "error" not in exchange

    def record(self, step: int, request: dict[str, Any], outcome: Completion | str) -> None:
        """Keep the exchanges before `step` and end with this one (a str is a provider error)."""
        exchange: dict[str, Any] = {"key": self.key(request), "request": request}
        if isinstance(outcome, str):
            exchange["error"] = scrub(outcome)
        else:
            exchange["response"] = encode_completion(outcome)
        self.exchanges = [*self.exchanges[:step], exchange]
        self.save()


def load_cassette(path: Path, shown: str) -> Cassette:
    """Read a cassette; a file that is not one is a ProviderError naming it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ProviderError(f"replay: cassette {shown}: cannot read: {exc.strerror}") from None
    except ValueError as exc:
        raise ProviderError(f"replay: cassette {shown}: invalid JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("exchanges"), list):
        raise ProviderError(f"replay: cassette {shown}: not a cassette (no exchanges list)")
    if data.get("version") != CASSETTE_VERSION:
        version = data.get("version")
        raise ProviderError(f"replay: cassette {shown}: unknown version {version!r}")
    return Cassette(
        path=path,
        shown=shown,
        provider=data.get("provider", ""),
        model=data.get("model"),
        fixture=data.get("fixture", ""),
        trial=data.get("trial", 1),
        exchanges=[item if isinstance(item, dict) else {} for item in data["exchanges"]],
    )


def first_difference(recorded: Any, now: Any, path: str = "") -> str | None:
    """The JSON path of the first value that differs, with both values quoted, or None."""
    if isinstance(recorded, dict) and isinstance(now, dict):
        for key in [*now, *(key for key in recorded if key not in now)]:
            inner = f"{path}.{key}" if path else key
            if key not in recorded or key not in now:
                return f"{inner} (recorded {_show(recorded, key)}, now {_show(now, key)})"
            found = first_difference(recorded[key], now[key], inner)
            if found:
                return found
        return None
    if isinstance(recorded, list) and isinstance(now, list):
        for index, (old, new) in enumerate(zip(recorded, now, strict=False)):
            found = first_difference(old, new, f"{path}[{index}]")
            if found:
                return found
        if len(recorded) != len(now):
            return f"{path} (recorded {len(recorded)} items, now {len(now)})"
        return None
    if recorded == now and type(recorded) is type(now):
        return None
    return f"{path or 'request'} (recorded {_excerpt(recorded)}, now {_excerpt(now)})"


def _show(mapping: dict[str, Any], key: str) -> str:
    return _excerpt(mapping[key]) if key in mapping else "absent"


def _excerpt(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _EXCERPT else text[: _EXCERPT - 3] + "..."
