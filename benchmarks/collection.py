"""Collection: N local fixture files against N trivial test functions, `--collect-only -q`.

Two ratios per N: of the commands' wall times (what a user waits for; the target: at most
1.5x at the largest N), and of collection alone, wall(N) - wall(0) of the same command, so
interpreter and plugin start-up cancel out (the eval side runs with `--replio-provider=mock`;
the bundled catalog is in both of its runs). Linear: the per-fixture cost at the largest N
within 1.5x of that at the smallest. The test functions share one module, pytest's cheapest
layout, so the baseline is as fast as collection gets.

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
            eval_run = best(fixtures, eval_args, env, args.repeat)
            plain_run = best(tests, plain_args, env, args.repeat)
            eval_s, plain_s = eval_run.wall_s - eval_0.wall_s, plain_run.wall_s - plain_0.wall_s
            figure = {
                "n": n,
                "fixtures_wall_s": round(eval_run.wall_s, 3),
                "tests_wall_s": round(plain_run.wall_s, 3),
                "wall_ratio": round(eval_run.wall_s / plain_run.wall_s, 2),
                "fixtures_s": round(eval_s, 3),
                "tests_s": round(plain_s, 3),
                "ratio": round(eval_s / plain_s, 2),
                "fixture_ms": round(eval_s / n * 1000, 3),
                "test_ms": round(plain_s / n * 1000, 3),
            }
            figures.append(figure)
            rows.append(
                [n, f"{eval_run.wall_s:.2f}", f"{plain_run.wall_s:.2f}",
                 f"{figure['wall_ratio']:.2f}x", f"{eval_s:.3f}", f"{plain_s:.3f}",
                 f"{figure['ratio']:.2f}x", f"{figure['fixture_ms']:.3f}",
                 f"{figure['test_ms']:.3f}"]
            )  # fmt: skip
    print_table(
        f"--collect-only -q (best of {args.repeat}); collection = wall - start-up "
        f"(eval {eval_0.wall_s:.2f} s, plain {plain_0.wall_s:.2f} s)",
        ["N", "fixtures s", "tests s", "ratio", "collect fixtures s", "collect tests s",
         "ratio", "ms/fixture", "ms/test"],
        rows,
    )  # fmt: skip
    largest, smallest = figures[-1], figures[0]
    growth = largest["fixture_ms"] / smallest["fixture_ms"]
    ratio_ok = largest["wall_ratio"] <= TARGET_RATIO
    linear_ok = growth <= LINEAR_SLACK
    print(
        f"at N = {largest['n']}: {largest['wall_ratio']:.2f}x the command's time "
        f"({'meets' if ratio_ok else 'misses'} the {TARGET_RATIO:g}x target), "
        f"{largest['ratio']:.2f}x counting collection alone; "
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
