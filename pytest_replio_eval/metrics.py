"""Per-fixture metrics and suite aggregation (stub: interface only)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Metrics:
    fixture: str
    provider: str  # spec label
    model: str
    source: str
    trace: list[dict[str, Any]] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    accuracy: float | None = None  # None when the fixture has no `expected`
    passed: bool = False  # "pass" in JSON
    calls: int = 0
    redundant: int = 0
    errors: int = 0
    tokens: int = 0
    status: str = "ok"
    failures: list[str] = field(default_factory=list)
    duration_s: float = 0.0


@dataclass
class Summary:
    fixtures: int = 0
    accuracy: float | None = None
    pass_rate: float = 0.0
    calls: int = 0
    redundant: int = 0
    errors: int = 0
    tokens: int = 0
