"""Memory: peak RSS of `-n 0` runs, which tool output caps and paged reads must keep flat.

Three runs with the mock oracle, each in its own child (peak RSS from os.wait4):
the bundled catalog alone (the baseline), N generated fixtures, and page-large-file with a
50 MB log in its worktree (a local fixture of that id overrides the bundled one; the needle
sits on the same line, the rest is filler). Target: every run under 150 MB.

    python benchmarks/memory.py [--n 500] [--mb 50]
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

from _project import (
    check,
    child_env,
    emit,
    print_table,
    project,
    run_pytest,
    workspace,
    write_fixtures,
)

from pytest_replio_eval.fixtures import discover
from pytest_replio_eval.plugins import plugin_manager

TARGET_MB = 150.0
LARGE_ID = "page-large-file"


def write_large_fixture(target: Path, megabytes: int) -> None:
    """The bundled page-large-file with its log grown to `megabytes`, needle unchanged.

    Written line by line: the benchmark process must stay small, since a child's peak RSS
    counts the parent's size at the fork (see _project.run_pytest)."""
    bundled = next(f for f in discover(None, plugin_manager()).fixtures if f.id == LARGE_ID)
    log = max(bundled.files, key=lambda name: len(bundled.files[name]))
    rest = {key: getattr(bundled, key) for key in ("task", "expected", "verifier", "oracle_answer")}
    others = {name: text for name, text in bundled.files.items() if name != log}
    filler = "line {n}: ok, nothing to see in this padding line of the server log\n"
    with target.open("w", encoding="utf-8") as out:
        out.write(json.dumps(rest)[:-1] + ', "files": ' + json.dumps(others)[:-1])
        out.write((", " if others else "") + json.dumps(log) + ': "')
        lines = bundled.files[log].splitlines(keepends=True)
        size = 0
        for n in itertools.count(1):
            line = lines[n - 1] if n <= len(lines) else filler.format(n=n)
            out.write(json.dumps(line)[1:-1])
            size += len(line)
            if size >= megabytes * 1_000_000:
                break
        out.write('"}}')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500, help="generated fixtures (default 500)")
    parser.add_argument("--mb", type=int, default=50, help="size of the large log (default 50)")
    args = parser.parse_args()
    mock = ["-q", "-n", "0", "--replio-provider=mock"]
    with workspace() as root:
        env = child_env(root)
        many, large = project(root, "many"), project(root, "large")
        write_fixtures(many, args.n)
        target = large / ".replio" / "eval" / f"{LARGE_ID}.json"
        target.parent.mkdir(parents=True)
        write_large_fixture(target, args.mb)
        runs = {
            "catalog only": (project(root, "empty"), mock),
            f"{args.n} fixtures": (many, mock),
            f"{LARGE_ID}, {args.mb} MB log": (large, [*mock, f"--replio-fixture={LARGE_ID}"]),
        }
        figures = {}
        for label, (cwd, command) in runs.items():
            run = run_pytest(cwd, command, env)
            check(run, command)
            figures[label] = {
                "peak_rss_mb": round(run.peak_rss_mb, 1),
                "wall_s": round(run.wall_s, 2),
            }
    print_table(
        "peak RSS of one pytest -n 0 run",
        ["run", "peak RSS (MB)", "wall (s)"],
        [[label, f"{f['peak_rss_mb']:.1f}", f"{f['wall_s']:.2f}"] for label, f in figures.items()],
    )
    worst = max(f["peak_rss_mb"] for f in figures.values())
    verdict = "meets" if worst < TARGET_MB else "misses"
    print(f"largest peak: {worst:.1f} MB ({verdict} the {TARGET_MB:g} MB target)")
    emit("memory", {"runs": figures, "target_mb": TARGET_MB, "meets_target": worst < TARGET_MB})


if __name__ == "__main__":
    main()
