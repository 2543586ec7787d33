"""What every benchmark shares: generated projects, timed pytest children, the printed figures.

Each measurement runs `python -m pytest` in a child process of its own and reads that child's
wall time and peak RSS (os.wait4), so one benchmark run compares like with like on a noisy
machine. The children get an empty HOME and XDG config dir: a user's global fixtures must not
change the figures.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FIXTURE_PREFIX = "bench-"  # item names start with it, so `-k bench` leaves out the catalog


@dataclass(frozen=True)
class Run:
    wall_s: float
    peak_rss_mb: float
    returncode: int
    output: str


@contextmanager
def workspace() -> Iterator[Path]:
    """A throwaway dir holding the projects and the children's HOME."""
    with tempfile.TemporaryDirectory(prefix="replio-bench-") as tmp:
        root = Path(tmp)
        (root / "home" / ".config").mkdir(parents=True)
        yield root


def project(root: Path, name: str) -> Path:
    """An empty pytest project: its own rootdir, so no config above it applies."""
    path = root / name
    path.mkdir()
    (path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    return path


def fixture(index: int) -> dict[str, Any]:
    """A small fixture of 3 steps: grep, file_read, then the answer (the mock oracle's plan, and
    the parallel benchmark's server's)."""
    names = ["grep", "file_read"]
    return {
        "task": f"Which file defines VALUE_{index}, and what is it set to?",
        "files": {
            "README.md": f"# project {index}\n",
            "src/values.py": f"VALUE_{index} = {index * 7}\n",
            "src/other.py": "OTHER = 0\n",
        },
        "expected": names,
        "verifier": {
            "must_include": names,
            "max_calls": 3,
            "args": {"grep": {"pattern": f"VALUE_{index}"}, "file_read": {"path": "src/values.py"}},
            "answer": {"contains": [str(index * 7)]},
        },
        "oracle_answer": f"src/values.py sets VALUE_{index} = {index * 7}.",
    }


def write_fixtures(path: Path, count: int) -> None:
    """`count` local fixture files under `.replio/eval/`, ids bench-0000, bench-0001, ..."""
    directory = path / ".replio" / "eval"
    directory.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        data = json.dumps(fixture(index), indent=2)
        (directory / f"{FIXTURE_PREFIX}{index:04d}.json").write_text(data, encoding="utf-8")


def write_tests(path: Path, count: int, body: str = "pass") -> None:
    """`count` trivial test functions in one module: pytest's cheapest item."""
    lines = [f"def test_{index:04d}():\n    {body}\n" for index in range(count)]
    header = "import time\n\n\n" if "time." in body else ""
    (path / "test_trivial.py").write_text(header + "\n\n".join(lines), encoding="utf-8")


def child_env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "OPENAI_"))}
    env.update(HOME=str(root / "home"), XDG_CONFIG_HOME=str(root / "home" / ".config"))
    env.pop("OLLAMA_HOST", None)
    return env


def run_pytest(cwd: Path, args: Sequence[str], env: dict[str, str]) -> Run:
    """One pytest child: its wall time and its own peak RSS.

    The kernel counts the parent's resident size at the fork into the child's peak (the child
    shares the parent's memory until exec), so a benchmark must not hold large data itself.
    """
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args]
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        child = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        output = out.read().decode("utf-8", errors="replace")
    # ru_maxrss is in KiB on Linux.
    return Run(wall, usage.ru_maxrss / 1024, child.returncode, output)


def best(
    cwd: Path, args: Sequence[str], env: dict[str, str], repeat: int, allowed: Sequence[int] = (0,)
) -> Run:
    """The fastest of `repeat` runs after one warm-up (bytecode caches, page cache)."""
    run_pytest(cwd, args, env)
    runs = [run_pytest(cwd, args, env) for _ in range(repeat)]
    for run in runs:
        check(run, args, allowed)
    return min(runs, key=lambda run: run.wall_s)


def check(run: Run, args: Sequence[str], allowed: Sequence[int] = (0,)) -> None:
    """A failed child would make every figure meaningless: stop with its output."""
    if run.returncode not in allowed:
        sys.exit(f"pytest {' '.join(args)} exited {run.returncode}:\n{run.output[-3000:]}")


def print_table(title: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    cells = [[str(cell) for cell in row] for row in [header, *rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    print(title)
    for number, row in enumerate(cells):
        print("  ".join(_align(i, cell, widths[i]) for i, cell in enumerate(row)).rstrip())
        if number == 0:
            print("  ".join("-" * width for width in widths))


def emit(name: str, figures: dict[str, Any]) -> None:
    """The machine-readable line, last: `{"benchmark": name, ...}`."""
    print(json.dumps({"benchmark": name, **figures}, sort_keys=False))


def _align(column: int, cell: str, width: int) -> str:
    """Names left, figures right."""
    return cell.ljust(width) if column == 0 else cell.rjust(width)
