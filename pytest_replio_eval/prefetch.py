"""`--replio-concurrency=N`: up to N turns at once, in threads of one pytest process.

A turn spends its time waiting on the provider, so threads overlap that wait without a process
per turn (what xdist's start-up costs). pytest still runs the items one by one, in order: each
item's runtest takes its turn's metrics, started ahead by the pool, and reports them itself, so
`-x`, `-k`, `--lf` and every report see an ordinary serial run. At most 2N turns are started and
not yet taken. When the loop ends early (`-x`, Ctrl-C) the turns not yet under way are dropped;
those under way are abandoned (daemon threads: the process does not wait for them) and never
reported.

Under xdist (`-n`) a worker is handed its items a few at a time and may have them taken back,
so it cannot know which turns are its own to start: workers run their turns one by one.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator
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
    return started.worktree, started.result()


class _Turn:
    """One turn handed to the pool, and its outcome."""

    def __init__(self, item: TurnItem, worktree: Path) -> None:
        self.item, self.worktree = item, worktree
        self.cancelled = False
        self._done = threading.Event()
        self._metrics: Metrics | None = None
        self._error: BaseException | None = None

    def run(self) -> None:
        try:
            self._metrics = self.item.run_turn(self.worktree)
        except BaseException as exc:  # re-raised in the item, as if it had run there
            self._error = exc
        finally:
            self._done.set()

    def result(self) -> Metrics:
        self._done.wait()
        if self._error is not None:
            raise self._error
        assert self._metrics is not None
        return self._metrics


class _Pool:
    """N daemon threads taking turns in order: Ctrl-C must not wait for a turn under way."""

    def __init__(self, size: int) -> None:
        self._turns: queue.SimpleQueue[_Turn | None] = queue.SimpleQueue()
        for number in range(size):
            name = f"replio-turn-{number}"
            threading.Thread(target=self._work, name=name, daemon=True).start()
        self._size = size

    def submit(self, turn: _Turn) -> None:
        self._turns.put(turn)

    def close(self) -> None:
        for _ in range(self._size):
            self._turns.put(None)  # each thread ends at its first None

    def _work(self) -> None:
        for turn in iter(self._turns.get, None):
            if not turn.cancelled:
                turn.run()


class Prefetch:
    """The pytest plugin behind --replio-concurrency (see `install`)."""

    def __init__(self, config: pytest.Config, concurrency: int) -> None:
        self.config = config
        self.concurrency = concurrency
        self.window = 2 * concurrency
        self._pool: _Pool | None = None
        self._order: list[TurnItem] = []  # the turns of the run loop, in its order
        self._position: dict[TurnItem, int] = {}
        self._next = 0  # the position of the first turn not yet started
        self._started: dict[int, _Turn] = {}

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
        self._pool = _Pool(self.concurrency)
        try:
            self._fill()
            return (yield)
        finally:
            self._stop()

    def take(self, item: TurnItem) -> _Turn | None:
        """The item's started turn, or None when it has none (not planned: run it now)."""
        position = self._position.get(item)
        if position is None or self._pool is None:
            return None
        # Turns of items passed over without a runtest (skipped in setup) free their place.
        for passed in [p for p in self._started if p < position]:
            self._started.pop(passed).cancelled = True
        self._next = max(self._next, position)
        self._fill()
        return self._started.pop(position, None)  # None: taken already (a rerun)

    def _fill(self) -> None:
        assert self._pool is not None
        while self._next < len(self._order) and len(self._started) < self.window:
            item = self._order[self._next]
            # pytest's tmp_path factory is not thread-safe: worktrees are made here.
            turn = _Turn(item, item.new_worktree())
            self._started[self._next] = turn
            self._pool.submit(turn)
            self._next += 1

    def _stop(self) -> None:
        for turn in self._started.values():
            turn.cancelled = True
        self._started.clear()
        if self._pool is not None:
            self._pool.close()
            self._pool = None


def _runs(item: pytest.Item) -> bool:
    """A turn to start ahead; an item with a skip mark may never run: no request spent on it."""
    return (
        isinstance(item, TurnItem)
        and item.get_closest_marker("skip") is None
        and item.get_closest_marker("skipif") is None
    )
