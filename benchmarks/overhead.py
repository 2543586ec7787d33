"""Per-fixture overhead: what one eval item costs beside pytest's cheapest test function.

N generated fixtures (small files, 2 tool calls each, the mock oracle, no latency) run with
`pytest --replio-provider=mock -p no:cacheprovider -q`; N trivial test functions run the same
way without a provider. Each side's cost per item is (wall(N) - wall(0)) / N, so start-up and
the 5 bundled catalog fixtures cancel out. Target: at most 3 ms per fixture beyond the trivial
test.

    python benchmarks/overhead.py [--n 500] [--repeat 3]
"""

from __future__ import annotations

import argparse

from _project import (
    best,
    child_env,
    emit,
    print_table,
    project,
    workspace,
    write_fixtures,
    write_tests,
)

TARGET_MS = 3.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500, help="items per side (default 500)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs, best kept (default 3)")
    args = parser.parse_args()
    with workspace() as root:
        env = child_env(root)
        eval_args = ["--replio-provider=mock", "-q"]
        fixtures_n, fixtures_0 = project(root, "fixtures"), project(root, "fixtures-0")
        write_fixtures(fixtures_n, args.n)
        tests_n, tests_0 = project(root, "tests"), project(root, "tests-0")
        write_tests(tests_n, args.n)
        eval_n = best(fixtures_n, eval_args, env, args.repeat)
        eval_0 = best(fixtures_0, eval_args, env, args.repeat)
        plain_n = best(tests_n, ["-q"], env, args.repeat)
        plain_0 = best(tests_0, ["-q"], env, args.repeat, allowed=(5,))  # 5: no tests
    per_fixture = (eval_n.wall_s - eval_0.wall_s) / args.n * 1000
    per_test = (plain_n.wall_s - plain_0.wall_s) / args.n * 1000
    overhead = per_fixture - per_test
    print_table(
        f"per-item cost, N = {args.n} (best of {args.repeat})",
        ["run", "wall N (s)", "wall 0 (s)", "ms/item"],
        [
            [
                "eval fixtures (mock)",
                f"{eval_n.wall_s:.2f}",
                f"{eval_0.wall_s:.2f}",
                f"{per_fixture:.2f}",
            ],
            ["trivial tests", f"{plain_n.wall_s:.2f}", f"{plain_0.wall_s:.2f}", f"{per_test:.2f}"],
        ],
    )
    verdict = "meets" if overhead <= TARGET_MS else "misses"
    print(f"overhead per fixture: {overhead:.2f} ms ({verdict} the {TARGET_MS:g} ms target)")
    emit(
        "overhead",
        {
            "n": args.n,
            "fixture_ms": round(per_fixture, 3),
            "trivial_ms": round(per_test, 3),
            "overhead_ms": round(overhead, 3),
            "target_ms": TARGET_MS,
            "meets_target": overhead <= TARGET_MS,
        },
    )


if __name__ == "__main__":
    main()
