"""The OpenAI and Ollama providers through the pytest plugin, against real local servers.

Whole multi-step turns with their exact metrics, tables, report and wire requests; every
provider fault as the one line a user reads while the rest of the suite runs on; the turn
timeout bounding each request; and the API key kept out of everything the run leaves behind.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_replio_eval.engine import SYSTEM_PROMPT
from pytest_replio_eval.fixtures import discover
from pytest_replio_eval.plugins import plugin_manager
from pytest_replio_eval.providers import http

KEY = "sk-test-not-a-real-key-0123456789"
OPENAI = "/v1/chat/completions"
OLLAMA = "/api/chat"
TASK = "Which port does the YAML file in this project configure?"
FIXTURE = {
    "task": TASK,
    "files": {"README.md": "# svc\n", "deploy/service.yaml": "name: svc\nport: 8443\n"},
    "expected": ["glob", "file_read"],
    "verifier": {
        "must_include": ["glob", "file_read"],
        "max_calls": 3,
        "args": {"glob": {"pattern": "**/*.yaml"}, "file_read": {"path": "deploy/service.yaml"}},
        "answer": {"contains": ["8443"]},
    },
    "oracle_answer": "Port 8443.",
}
OFFERED = ["file_read", "glob", "grep", "list", "web_fetch"]  # read, list and web are allowed
GLOB = ("glob", {"pattern": "**/*.yaml"})
READ = ("file_read", {"path": "deploy/service.yaml"})
MISREAD = ("file_read", {"path": "service.yaml"})
FOUND = "deploy/service.yaml"
CONTENT = "     1\tname: svc\n     2\tport: 8443"
MISSING = "Error: no such file: service.yaml"
RESULT_KEYS = ("fixture", "provider", "model", "source", "trace", "names", "accuracy", "pass")
RESULT_KEYS += ("calls", "redundant", "errors", "tokens", "status", "failures")
SUMMARY_KEYS = ("fixtures", "accuracy", "pass_rate", "calls", "redundant", "errors", "tokens")


@dataclass(frozen=True)
class Step:
    """One model reply: tool calls, else the final text; and its token counts."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    text: str = ""
    prompt: int = 0
    completion: int = 0


# The ideal turn: 420 tokens.
CLEAN = [
    Step([GLOB], prompt=90, completion=10),
    Step([READ], prompt=130, completion=20),
    Step(text="It configures port 8443.", prompt=150, completion=20),
]
# A wrong path (a tool error), the glob again (redundant) beside the right read: 305 tokens.
SLOPPY = [
    Step([GLOB], prompt=40, completion=5),
    Step([MISREAD], prompt=60, completion=8),
    Step([GLOB, READ], prompt=80, completion=10),
    Step(text="Port 8443.", prompt=90, completion=12),
]


def openai_reply(step: Step, number: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": step.text or None}
    if step.calls:
        message["tool_calls"] = [
            {
                "id": f"call_{number}_{index}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for index, (name, arguments) in enumerate(step.calls)
        ]
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if step.calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": step.prompt,
            "completion_tokens": step.completion,
            "total_tokens": step.prompt + step.completion,
        },
    }


def ollama_reply(step: Step, number: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": step.text}
    if step.calls:  # Ollama sends no call ids and arguments as objects
        message["tool_calls"] = [
            {"function": {"name": name, "arguments": arguments}} for name, arguments in step.calls
        ]
    return {
        "model": "m",
        "message": message,
        "done": True,
        "done_reason": "stop",
        "prompt_eval_count": step.prompt,
        "eval_count": step.completion,
    }


def script(server: Any, path: str, steps: list[Step]) -> None:
    reply = ollama_reply if path.endswith(OLLAMA) else openai_reply
    for number, step in enumerate(steps):
        server.reply(path, reply(step, number))


def write_fixture(pytester: pytest.Pytester) -> None:
    path = pytester.path / ".replio" / "eval" / "x.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(FIXTURE), encoding="utf-8")


def trace(*calls: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"name": name, "arguments": arguments} for name, arguments in calls]


def result(spec: str, **changes: Any) -> dict[str, Any]:
    """x's report entry for the clean turn, with `changes`; duration_s is left out."""
    entry = {
        "fixture": "x",
        "provider": spec,
        "model": spec.partition(":")[2],
        "source": ".replio/eval/x.json",
        "trace": trace(GLOB, READ),
        "names": ["glob", "file_read"],
        "accuracy": 1.0,
        "pass": True,
        "calls": 2,
        "redundant": 0,
        "errors": 0,
        "tokens": 420,
        "status": "ok",
        "failures": [],
    }
    return entry | changes


def fault(spec: str, line: str) -> dict[str, Any]:
    return result(
        spec,
        trace=[],
        names=[],
        accuracy=0.0,
        calls=0,
        tokens=0,
        errors=1,
        status="error",
        failures=[line],
        **{"pass": False},
    )


def summary(entry: dict[str, Any]) -> dict[str, Any]:
    """The summary of a provider that ran x alone, without a fault."""
    keys = ("accuracy", "calls", "redundant", "errors", "tokens")
    return {"fixtures": 1, "pass_rate": float(entry["pass"])} | {k: entry[k] for k in keys}


def load_report(path: Path) -> dict[str, Any]:
    """The report's contract keys; what other features add to it is theirs to test."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert all(entry["duration_s"] >= 0 for entry in doc["results"])
    return {
        "providers": doc["providers"],
        "results": [{key: entry[key] for key in RESULT_KEYS} for entry in doc["results"]],
        "summary": {
            spec: {key: figures[key] for key in SUMMARY_KEYS}
            for spec, figures in doc["summary"].items()
        },
    }


def assistant_openai(number: int, *calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{number}_{index}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for index, (name, arguments) in enumerate(calls)
        ],
    }


def assistant_ollama(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"function": {"name": n, "arguments": a}} for n, a in calls],
    }


PROMPT = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": TASK}]
SLOPPY_RESULT = result(
    "ollama:m1",
    trace=trace(GLOB, MISREAD, GLOB, READ),
    names=["glob", "file_read", "glob", "file_read"],
    accuracy=0.0,
    calls=4,
    redundant=1,
    errors=1,
    tokens=305,
    failures=["max_calls: 4 calls made, at most 3 allowed"],
    **{"pass": False},
)


@pytest.fixture
def servers(protocol_server: Any) -> Iterator[tuple[Any, Any]]:
    """Two local model servers: the shared fixture's and a second of its kind."""
    other = type(protocol_server)()
    yield protocol_server, other
    other.close()


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Retry waits, recorded instead of slept (in-process runs share the http module)."""
    recorded: list[float] = []
    monkeypatch.setattr(http, "sleep", recorded.append)
    return recorded


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_compare_ollama_and_openai_over_two_servers(
    pytester: pytest.Pytester,
    servers: tuple[Any, Any],
    monkeypatch: pytest.MonkeyPatch,
    workers: list[str],
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    ollama_server, openai_server = servers
    script(ollama_server, OLLAMA, SLOPPY)
    script(openai_server, OPENAI, CLEAN)
    write_fixture(pytester)
    report = pytester.path / "report.json"

    run = pytester.runpytest(
        f"--replio-compare=ollama:m1@{ollama_server.url},openai:m2@{openai_server.url}/v1",
        "--replio-fixture=x",
        f"--replio-json={report}",
        "-p",
        "no:cacheprovider",
        *workers,
    )

    run.assert_outcomes(passed=1, failed=1)
    run.stdout.fnmatch_lines(
        [
            "*_ x[[]ollama:m1[]] _*",
            "max_calls: 4 calls made, at most 3 allowed",
            "trace (4 calls):",
            '  1. glob {"pattern": "**/*.yaml"}',
            '  2. file_read {"path": "service.yaml"}',
            '  3. glob {"pattern": "**/*.yaml"}',
            '  4. file_read {"path": "deploy/service.yaml"}',
            "*= replio eval =*",
            "*- ollama:m1 -*",
            "fixture  status  pass   acc  calls  redund  errors  tokens  secs",
            "x        ok      FAIL  0.00      4       1       1     305  *",
            "*- openai:m2 -*",
            "fixture  status  pass   acc  calls  redund  errors  tokens  secs",
            "x        ok      PASS  1.00      2       0       0     420  *",
            "ollama:m1: 1 fixture, accuracy 0.00, pass rate 0% (0/1), calls 4, redundant 1,",
            "  errors 1, tokens 305",
            "openai:m2: 1 fixture, accuracy 1.00, pass rate 100% (1/1), calls 2, redundant 0,",
            "  errors 0, tokens 420",
            "",
            "metric     ollama:m1   openai:m2",
            "---------  ---------  ----------",
            "accuracy        0.00        1.00",
            "pass rate   0% (0/1)  100% (1/1)",
            "calls              4           2",
            "redundant          1           0",
            "errors             1           0",
            "tokens           305         420",
            "",
            "fixture  ollama:m1  openai:m2",
            "-------  ---------  ---------",
            "x        FAIL       PASS",
        ]
    )
    openai_result = result("openai:m2")
    assert load_report(report) == {
        "providers": ["ollama:m1", "openai:m2"],
        "results": [SLOPPY_RESULT, openai_result],
        "summary": {"ollama:m1": summary(SLOPPY_RESULT), "openai:m2": summary(openai_result)},
    }
    # The conversation each server saw grew by the model's calls and the tools' results.
    sent = [request.body for request in openai_server.requests]
    assert [(r.path, r.headers["authorization"]) for r in openai_server.requests] == [
        (OPENAI, f"Bearer {KEY}")
    ] * 3
    assert [body["messages"] for body in sent] == [
        PROMPT,
        [
            *PROMPT,
            assistant_openai(0, GLOB),
            {"role": "tool", "tool_call_id": "call_0_0", "content": FOUND},
        ],
        [
            *PROMPT,
            assistant_openai(0, GLOB),
            {"role": "tool", "tool_call_id": "call_0_0", "content": FOUND},
            assistant_openai(1, READ),
            {"role": "tool", "tool_call_id": "call_1_0", "content": CONTENT},
        ],
    ]
    for body in sent:
        assert [tool["function"]["name"] for tool in body.pop("tools")] == OFFERED
        assert body | {"messages": None} == {
            "model": "m2",
            "messages": None,
            "temperature": 0.0,
            "seed": 1234,
        }
    sent = [request.body for request in ollama_server.requests]
    assert [(r.path, "authorization" in r.headers) for r in ollama_server.requests] == [
        (OLLAMA, False)
    ] * 4
    assert sent[-1]["messages"] == [
        *PROMPT,
        assistant_ollama(GLOB),
        {"role": "tool", "content": FOUND, "tool_name": "glob"},
        assistant_ollama(MISREAD),
        {"role": "tool", "content": MISSING, "tool_name": "file_read"},
        assistant_ollama(GLOB, READ),
        {"role": "tool", "content": FOUND, "tool_name": "glob"},
        {"role": "tool", "content": CONTENT, "tool_name": "file_read"},
    ]
    assert [len(body["messages"]) for body in sent] == [2, 4, 6, 9]
    for body in sent:
        assert [tool["function"]["name"] for tool in body.pop("tools")] == OFFERED
        assert body | {"messages": None} == {
            "model": "m1",
            "messages": None,
            "stream": False,
            "options": {"temperature": 0.0, "num_ctx": 16384, "seed": 1234},
        }


def test_each_fault_is_one_line_and_the_suite_runs_on(
    pytester: pytest.Pytester,
    protocol_server: Any,
    refused_url: str,
    monkeypatch: pytest.MonkeyPatch,
    waits: list[float],
) -> None:
    """One server, one path per spec; healthy items and a plain test run beside the faults."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    url = protocol_server.url
    protocol_server.reply(
        "/rate" + OPENAI,
        {"error": {"message": "Rate limit reached for rate"}},
        status=429,
        headers={"Retry-After": "7"},
    )
    script(protocol_server, "/rate" + OPENAI, CLEAN)
    protocol_server.reply("/busy" + OPENAI, {"error": {"message": "overloaded"}}, status=500)
    protocol_server.reply("/busy" + OPENAI, "<html>Bad Gateway</html>", status=500)
    script(protocol_server, "/busy" + OPENAI, CLEAN)
    protocol_server.reply(
        "/denied" + OPENAI,
        {"error": {"message": f"Incorrect API key provided: {KEY}.", "code": "invalid_api_key"}},
        status=401,
    )
    script(protocol_server, "/denied" + OPENAI, CLEAN)  # never asked for: a 401 is final
    protocol_server.reply("/gone" + OLLAMA, {"error": "model 'gone' not found"}, status=404)
    write_fixture(pytester)
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    specs = [
        f"openai:rate@{url}/rate/v1",
        f"openai:busy@{url}/busy/v1",
        f"openai:denied@{url}/denied/v1",
        f"ollama:gone@{url}/gone",
        f"ollama:down@{refused_url}",
        "mock",
    ]
    report, junit, basetemp = (pytester.path / name for name in ("r.json", "junit.xml", "bt"))

    run = pytester.runpytest(
        "--replio-compare=" + ",".join(specs),
        "-k",
        "x.json or mock or plain",  # x for every spec, the bundled fixtures for the mock only
        f"--replio-json={report}",
        f"--junitxml={junit}",
        f"--basetemp={basetemp}",
        "-p",
        "no:cacheprovider",
    )

    bundled = sorted(fixture.id for fixture in discover(None, plugin_manager()).fixtures)
    # rate, busy, x and the bundled fixtures with the mock, the plain test; the bundled
    # fixtures for the five HTTP specs are deselected.
    run.assert_outcomes(passed=4 + len(bundled), failed=3, deselected=5 * len(bundled))
    denied = "status: error: openai:denied: Incorrect API key provided: ***. (HTTP 401)"
    gone = "status: error: ollama:gone: model 'gone' not found (HTTP 404)"
    down = (
        f"status: error: ollama:down: cannot connect to {refused_url}/api/chat: "
        "connection refused (is the server running?)"
    )
    run.stdout.fnmatch_lines(
        [
            "*_ x[[]openai:denied[]] _*",
            denied,
            "trace: no tool calls",
            "*_ x[[]ollama:gone[]] _*",
            gone,
            "trace: no tool calls",
            "*_ x[[]ollama:down[]] _*",
            down,
            "trace: no tool calls",
            "*= replio eval =*",
        ]
    )
    output = run.stdout.str() + run.stderr.str()
    assert "Traceback" not in output
    assert KEY not in output
    doc = load_report(report)
    assert doc["results"][:5] == [
        result("openai:rate"),
        result("openai:busy"),
        fault("openai:denied", denied),
        fault("ollama:gone", gone),
        fault("ollama:down", down),
    ]
    assert [(r["fixture"], r["provider"], r["pass"]) for r in doc["results"][5:]] == [
        (fixture, "mock", True) for fixture in [*bundled, "x"]
    ]
    assert doc["providers"] == [spec.partition("@")[0] for spec in specs]
    # Retried to success, a fault leaves no trace in the figures. (How the faults themselves
    # count in a summary is the infrastructure-error feature's to say.)
    for spec in ("openai:rate", "openai:busy"):
        assert doc["summary"][spec] == summary(result(spec))
    # Retried: 429 after its Retry-After, 500 twice with backoff, a refused connection twice.
    assert waits[0] == 7.0
    assert 0.25 <= waits[1] <= 0.5 and 0.5 <= waits[2] <= 1.0
    assert 0.25 <= waits[3] <= 0.5 and 0.5 <= waits[4] <= 1.0
    assert len(waits) == 5
    paths = [request.path for request in protocol_server.requests]
    assert {path: paths.count(path) for path in paths} == {
        "/rate" + OPENAI: 4,
        "/busy" + OPENAI: 5,
        "/denied" + OPENAI: 1,
        "/gone" + OLLAMA: 1,
    }
    # The key went to the OpenAI-protocol servers and nowhere else: not to the report, the
    # junitxml (which does hold the redacted failure) or any worktree file.
    assert {request.headers.get("authorization") for request in protocol_server.requests} == {
        f"Bearer {KEY}",
        None,
    }
    assert KEY not in report.read_text() and KEY not in junit.read_text()
    cases = {case.get("name"): case for case in ET.parse(junit).getroot().iter("testcase")}
    assert cases["x[openai:denied]"].find("failure").text == f"{denied}\ntrace: no tool calls"
    worktrees = sorted(
        path.name
        for path in basetemp.iterdir()
        if path.name.startswith("x_") and not path.is_symlink()  # x_*current: pytest's links
    )
    assert worktrees == [
        "x_mock_0",
        "x_ollama_down_0",
        "x_ollama_gone_0",
        "x_openai_busy_0",
        "x_openai_denied_0",
        "x_openai_rate_0",
    ]
    config = json.loads((basetemp / "x_openai_denied_0" / ".replio" / "config.json").read_text())
    assert config["provider"] == {
        "name": "openai",
        "model": "denied",
        "base_url": f"{url}/denied/v1",
    }
    leaked = [p for p in basetemp.rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()]
    assert leaked == []


def test_the_turn_timeout_bounds_each_request(
    pytester: pytest.Pytester, protocol_server: Any, waits: list[float]
) -> None:
    protocol_server.reply(OPENAI, openai_reply(CLEAN[0], 0), delay=3.0)
    write_fixture(pytester)
    report = pytester.path / "r.json"

    run = pytester.runpytest(
        f"--replio-provider=openai:m@{protocol_server.url}/v1",
        "--replio-fixture=x",
        "--replio-timeout=0.5",
        f"--replio-json={report}",
        "-p",
        "no:cacheprovider",
    )

    run.assert_outcomes(failed=1)
    run.stdout.fnmatch_lines(
        ["*_ x[[]openai:m[]] _*", "status: cancelled: turn timed out after 0.5s", "trace: *"]
    )
    assert "Traceback" not in run.stdout.str()
    [entry] = json.loads(report.read_text())["results"]
    assert (entry["status"], entry["failures"][0]) == (
        "cancelled",
        "status: cancelled: turn timed out after 0.5s",
    )
    assert 0.5 <= entry["duration_s"] < 2.0  # the request was cut at the turn's limit, not 120s
    assert (len(protocol_server.requests), waits) == (1, [])  # a timeout is not retried


def test_one_spec_label_on_two_servers_is_a_usage_error(pytester: pytest.Pytester) -> None:
    run = pytester.runpytest(
        "--replio-compare=ollama:q@http://127.0.0.1:1,ollama:q@http://127.0.0.1:2,ollama:q"
    )

    assert run.ret == pytest.ExitCode.USAGE_ERROR
    assert run.stderr.lines == [
        "ERROR: provider 'ollama:q' is given more than once with different base URLs; "
        "results are told apart by name:model only",
        "",
    ]
