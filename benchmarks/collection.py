"""Collection: N local fixture files against N trivial test functions, `--collect-only -q`.

Each side's collection time is wall(N) - wall(0) of the same command, so interpreter and
plugin start-up cancel out (the eval side runs with `--replio-provider=mock`; its 5 bundled
catalog fixtures are in both of its runs). Targets: eval collection at most 1.5x the trivial
tests' at the largest N, and linear in N (the per-fixture cost at the largest N within 1.5x of
that at the smallest).

    python benchmarks/collection.py [--n 500,1000,2000] [--repeat 3]
"""

from __future__ import annotations

import argparse

from _project import best, child_env, emit, print_table, project, workspace, write_fixtures
from _project import write_tests as write_test_functions

TARGET_RATIO = 1.5
LINEAR_SLACK = 1.5  # per-item cost may grow this much from the smallest N to the largest


def sizes(text: str) -> list[int]:
    values = sorted({int(part) for part in text.split(",")})
    if not values or values[0] < 1:
        raise argparse.ArgumentTypeError(f"expected positive counts like 500,1000,2000: {text!r}")
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=sizes, default=[500, 1000, 2000], help="default 500,1000,2000")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs, best kept (default 3)")
    args = parser.parse_args()
    eval_args = ["--collect-only", "-q", "--replio-provider=mock"]
    plain_args = ["--collect-only", "-q"]
    rows, figures = [], []
    with workspace() as root:
        env = child_env(root)
        eval_0 = best(project(root, "fixtures-0"), eval_args, env, args.repeat)
        plain_0 = best(project(root, "tests-0"), plain_args, env, args.repeat, allowed=(5,))
        for n in args.n:
            fixtures, tests = project(root, f"fixtures-{n}"), project(root, f"tests-{n}")
            write_fixtures(fixtures, n)
            write_test_functions(tests, n)
            eval_s = best(fixtures, eval_args, env, args.repeat).wall_s - eval_0.wall_s
            plain_s = best(tests, plain_args, env, args.repeat).wall_s - plain_0.wall_s
            figures.append(
                {
                    "n": n,
                    "fixtures_s": round(eval_s, 3),
                    "tests_s": round(plain_s, 3),
                    "ratio": round(eval_s / plain_s, 2),
                    "fixture_ms": round(eval_s / n * 1000, 3),
                }
            )
            rows.append(
                [n, f"{eval_s:.3f}", f"{plain_s:.3f}", f"{eval_s / plain_s:.2f}x",
                 f"{eval_s / n * 1000:.3f}"]
            )  # fmt: skip
    print_table(
        f"collection time beyond start-up (best of {args.repeat}; start-up: eval "
        f"{eval_0.wall_s:.2f}s, plain {plain_0.wall_s:.2f}s)",
        ["N", "fixtures (s)", "test functions (s)", "ratio", "ms/fixture"],
        rows,
    )
    largest, smallest = figures[-1], figures[0]
    growth = largest["fixture_ms"] / smallest["fixture_ms"]
    ratio_ok = largest["ratio"] <= TARGET_RATIO
    linear_ok = growth <= LINEAR_SLACK
    print(
        f"ratio at N = {largest['n']}: {largest['ratio']:.2f}x "
        f"({'meets' if ratio_ok else 'misses'} the {TARGET_RATIO:g}x target); "
        f"ms/fixture from N = {smallest['n']} to {largest['n']}: x{growth:.2f} "
        f"({'linear' if linear_ok else 'not linear'})"
    )
    emit(
        "collection",
        {
            "sizes": figures,
            "startup_s": {"eval": round(eval_0.wall_s, 3), "tests": round(plain_0.wall_s, 3)},
            "target_ratio": TARGET_RATIO,
            "meets_target": ratio_ok and linear_ok,
        },
    )


if __name__ == "__main__":
    main()
