"""`--replio-concurrency=N`: up to N turns at once, in threads of one pytest process.

A turn spends its time waiting on the provider, so threads overlap that wait without a process
per turn (what xdist's start-up costs). pytest still runs the items one by one, in order: each
item's runtest takes its turn's metrics, started ahead by the pool, and reports them itself, so
`-x`, `-k`, `--lf` and every report see an ordinary serial run. At most 2N turns are started and
not yet taken. When the loop ends early (`-x`, Ctrl-C) the turns not yet started are dropped;
those under way finish in the background and are never reported.

Under xdist (`-n`) a worker is handed its items a few at a time and may have them taken back,
so it cannot know which turns are its own to start: workers run their turns one by one.
"""

from __future__ import annotations

from collections.abc import Generator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import pytest

if TYPE_CHECKING:
    from .metrics import Metrics

PREFETCH = pytest.StashKey["Prefetch"]()


@runtime_checkable
class TurnItem(Protocol):
    """An item whose work is one turn: a worktree made in the main thread, then the turn."""

    def new_worktree(self) -> Path: ...

    def run_turn(self, worktree: Path) -> Metrics: ...


def install(config: pytest.Config, concurrency: int) -> None:
    """Register the pool for N > 1; an xdist worker keeps running turns one by one."""
    if concurrency > 1 and not hasattr(config, "workerinput"):
        config.stash[PREFETCH] = Prefetch(config, concurrency)
        config.pluginmanager.register(config.stash[PREFETCH], "replio-prefetch")


def take(item: TurnItem, config: pytest.Config) -> tuple[Path, Metrics]:
    """The item's worktree and metrics: from its turn started ahead, else from one run now."""
    prefetch = config.stash.get(PREFETCH, None)
    started = None if prefetch is None else prefetch.take(item)
    if started is None:
        worktree = item.new_worktree()
        return worktree, item.run_turn(worktree)
    worktree, future = started
    return worktree, future.result()


class Prefetch:
    """The pytest plugin behind --replio-concurrency (see `install`)."""

    def __init__(self, config: pytest.Config, concurrency: int) -> None:
        self.config = config
        self.concurrency = concurrency
        self.window = 2 * concurrency
        self._pool: ThreadPoolExecutor | None = None
        self._order: list[TurnItem] = []  # the turns of the run loop, in its order
        self._position: dict[TurnItem, int] = {}
        self._next = 0  # the position of the first turn not yet started
        self._started: dict[int, tuple[Path, Future[Metrics]]] = {}

    def pytest_report_header(self) -> str:
        if self.config.pluginmanager.has_plugin("dsession"):  # the xdist controller
            return (
                f"replio: --replio-concurrency={self.concurrency} is not used with -n: "
                "each xdist worker runs its turns one by one"
            )
        return f"replio: up to {self.concurrency} turns at once (--replio-concurrency)"

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, Any, Any]:
        # session.items is final here: -k, -m, --lf and deselection have run.
        self._order = [item for item in session.items if _runs(item)]
        self._position = {item: position for position, item in enumerate(self._order)}
        self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="replio-turn")
        try:
            self._fill()
            return (yield)
        finally:
            self._stop()

    def take(self, item: TurnItem) -> tuple[Path, Future[Metrics]] | None:
        """The item's started turn, or None when it has none (not planned: run it now)."""
        position = self._position.get(item)
        if position is None or self._pool is None:
            return None
        # Turns of items passed over without a runtest (skipped in setup) free their place.
        for passed in [p for p in self._started if p < position]:
            self._started.pop(passed)[1].cancel()
        self._next = max(self._next, position)
        self._fill()
        return self._started.pop(position, None)  # None: taken already (a rerun)

    def _fill(self) -> None:
        assert self._pool is not None
        while self._next < len(self._order) and len(self._started) < self.window:
            item = self._order[self._next]
            worktree = item.new_worktree()  # pytest's tmp_path factory: main thread only
            self._started[self._next] = (worktree, self._pool.submit(item.run_turn, worktree))
            self._next += 1

    def _stop(self) -> None:
        for _, future in self._started.values():
            future.cancel()
        self._started.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


def _runs(item: pytest.Item) -> bool:
    """A turn to start ahead; an item with a skip mark may never run: no request spent on it."""
    return (
        isinstance(item, TurnItem)
        and item.get_closest_marker("skip") is None
        and item.get_closest_marker("skipif") is None
    )
