"""Parallel scaling on a latency-bound provider: xdist (`-n`) and --replio-concurrency.

A local OpenAI-protocol server on 127.0.0.1 answers every completion after 200 ms (threaded, so
it is never the bottleneck). 64 fixtures of 3 steps each (grep, file_read, answer) wait
64 x 3 x 0.2 = 38.4 s in series. Each `-n` configuration runs beside its floor: 64 plain tests
that each sleep 0.6 s, with the same `-n`, which is what pytest-xdist itself costs here. Then
`-n 0 --replio-concurrency=N` runs the turns in threads of one process.

Targets: every `-n` configuration within 10% of its floor; concurrency N = 16 at least 12x
faster than `-n 0`; the same metrics (the JSON report without durations) everywhere.

    python benchmarks/parallel.py [--fixtures 64] [--delay 0.2] [--workers 0,8,16]
                                  [--concurrency 16]
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from _project import (
    check,
    child_env,
    emit,
    print_table,
    project,
    run_pytest,
    workspace,
    write_fixtures,
    write_tests,
)

STEPS = 3  # round-trips of a generated fixture (_project.fixture)
FLOOR_SLACK = 1.10
CONCURRENCY_SPEEDUP = 12.0
SERVER_LIFETIME_S = 600.0  # the server stops by itself even if the benchmark is stuck


def completion(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The scripted reply, from the conversation alone (the server keeps no state):
    grep for the task's name, read the file it names, then answer with the value read."""
    task = next(m["content"] for m in messages if m["role"] == "user")
    name = re.search(r"VALUE_\d+", task).group(0)  # type: ignore[union-attr]
    calls = sum(1 for m in messages if m["role"] == "tool")
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if calls == 0:
        message["tool_calls"] = [_call("grep", {"pattern": name})]
    elif calls == 1:
        message["tool_calls"] = [_call("file_read", {"path": "src/values.py"})]
    else:
        value = re.search(rf"{name} = (\d+)", messages[-1]["content"])
        message["content"] = f"src/values.py sets {name} = {value.group(1) if value else '?'}."
    return {
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": len(json.dumps(messages)) // 4,
            "completion_tokens": len(json.dumps(message)) // 4,
        },
    }


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"call_{name}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


@contextmanager
def server(delay: float) -> Iterator[str]:
    """The base URL of a threaded OpenAI-protocol server, for the duration of the block."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as a real API
        disable_nagle_algorithm = True  # headers and body leave at once: no 40 ms ACK wait

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            time.sleep(delay)
            data = json.dumps(completion(body["messages"])).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    ThreadingHTTPServer.request_queue_size = 256  # every worker's connections at once
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    watchdog = threading.Timer(SERVER_LIFETIME_S, httpd.shutdown)
    watchdog.daemon = True
    watchdog.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        watchdog.cancel()
        httpd.shutdown()
        httpd.server_close()


def report(path: Path) -> Any:
    """The JSON report without what differs from run to run: durations."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "duration_s"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(json.loads(path.read_text(encoding="utf-8")))


def workers(text: str) -> list[int]:
    """The -n values, always with 0 first: every speedup is over the serial run."""
    return sorted({0, *(int(part) for part in text.split(","))})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", type=int, default=64, help="default 64")
    parser.add_argument("--delay", type=float, default=0.2, help="seconds per reply (0.2)")
    parser.add_argument("--workers", type=workers, default=[0, 8, 16], help="-n values (0,8,16)")
    parser.add_argument("--concurrency", type=int, default=16, help="--replio-concurrency (16)")
    args = parser.parse_args()
    turn_s = STEPS * args.delay
    rows, figures = [], {}
    with workspace() as root, server(args.delay) as url:
        env = child_env(root)
        evals, plain = project(root, "fixtures"), project(root, "sleep")
        write_fixtures(evals, args.fixtures)
        write_tests(plain, args.fixtures, body=f"time.sleep({turn_s})")
        eval_args = [
            "-q",
            "--replio-provider=openai:latency",
            f"--replio-base-url={url}",
            "-k",
            "bench",
        ]
        reference: Any = None
        serial_s = None
        configurations = [(n, 1) for n in args.workers] + [(0, args.concurrency)]
        for n, concurrency in configurations:
            label = f"-n {n}" + (f" --replio-concurrency={concurrency}" if concurrency > 1 else "")
            path = root / f"report-{n}-{concurrency}.json"
            extra = ["-n", str(n), f"--replio-json={path}"]
            if concurrency > 1:
                extra.append(f"--replio-concurrency={concurrency}")
            run = run_pytest(evals, [*eval_args, *extra], env)
            check(run, [*eval_args, *extra])
            same = reference is None or report(path) == reference
            reference = reference or report(path)
            serial_s = serial_s or run.wall_s
            floor = None
            if concurrency == 1:
                floor = run_pytest(plain, ["-q", "-n", str(n)], env)
                check(floor, ["-n", str(n)])
            figures[label] = {
                "wall_s": round(run.wall_s, 2),
                "floor_s": round(floor.wall_s, 2) if floor else None,
                "vs_floor": round(run.wall_s / floor.wall_s, 3) if floor else None,
                "speedup": round(serial_s / run.wall_s, 2),
                "same_metrics": same,
            }
            rows.append(
                [label, f"{run.wall_s:.2f}", f"{floor.wall_s:.2f}" if floor else "-",
                 f"{run.wall_s / floor.wall_s:.3f}" if floor else "-",
                 f"{serial_s / run.wall_s:.1f}x", "yes" if same else "NO"]
            )  # fmt: skip
    print_table(
        f"{args.fixtures} fixtures x {STEPS} steps x {args.delay:g} s "
        f"({args.fixtures * turn_s:.1f} s of waiting in series)",
        ["configuration", "wall (s)", "floor (s)", "vs floor", "speedup", "same metrics"],
        rows,
    )
    floors_ok = all(f["vs_floor"] <= FLOOR_SLACK for f in figures.values() if f["vs_floor"])
    speedup = list(figures.values())[-1]["speedup"]
    same_ok = all(f["same_metrics"] for f in figures.values())
    print(
        f"within {FLOOR_SLACK - 1:.0%} of the floor: {'yes' if floors_ok else 'NO'}; "
        f"--replio-concurrency={args.concurrency}: {speedup:.1f}x over -n 0 "
        f"(target {CONCURRENCY_SPEEDUP:g}x); same metrics: {'yes' if same_ok else 'NO'}"
    )
    emit(
        "parallel",
        {
            "fixtures": args.fixtures,
            "delay_s": args.delay,
            "configurations": figures,
            "meets_target": floors_ok and same_ok and speedup >= CONCURRENCY_SPEEDUP,
        },
    )


if __name__ == "__main__":
    main()
