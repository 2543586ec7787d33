"""Declarative verifier: judge a turn's calls, final answer and end state against a fixture.

Every failed clause becomes one short line `<clause>: <what was expected> ... <what happened>`,
so an item failure reads like a sentence and a report stays greppable.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import re
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path, PureWindowsPath
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .fixtures import Fixture

_MATCHERS = ("$regex", "$contains", "$any", "$glob")
_CLIP = 80  # longest rendering of a model-produced value inside a failure line
_SHOWN_CALLS = 3  # calls quoted when an `args` clause fails


@dataclass(frozen=True)
class VerifierResult:
    passed: bool
    failures: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Turn:
    """What the clauses look at, gathered once."""

    trace: Sequence[Mapping[str, Any]]
    names: list[str]
    answer: str
    worktree: Path | None
    expected: list[str]


def verify(
    fixture: Fixture,
    trace: Sequence[Mapping[str, Any]],
    *,
    answer: str | None = None,
    worktree: Path | None = None,
) -> VerifierResult:
    """Check each clause of `fixture.verifier`, in a fixed order, and collect what failed."""
    turn = _Turn(
        trace=trace,
        names=[entry["name"] for entry in trace],
        answer=answer or "",
        worktree=worktree,
        expected=list(fixture.expected or []),
    )
    failures: list[str] = []
    for key, check in _CLAUSES.items():
        if key not in fixture.verifier:
            continue
        try:
            failures.extend(check(turn, fixture.verifier[key]))
        except re.error as exc:
            failures.append(f"{key}: invalid regex /{exc.pattern}/: {exc.msg}")
    return VerifierResult(passed=not failures, failures=failures)


def _exact(turn: _Turn, on: bool) -> list[str]:
    if on and turn.names != turn.expected:
        return [f"exact: expected {_listed(turn.expected)}, got {_listed(turn.names)}"]
    return []


def _must_include(turn: _Turn, names: list[str]) -> list[str]:
    return [f"must_include: {name} was not called" for name in names if name not in turn.names]


def _avoid(turn: _Turn, names: list[str]) -> list[str]:
    return [
        f"avoid: {name} was called (call {turn.names.index(name) + 1})"
        for name in names
        if name in turn.names
    ]


def _max_calls(turn: _Turn, limit: int) -> list[str]:
    if len(turn.names) > limit:
        return [f"max_calls: {_calls(len(turn.names))} made, at most {limit} allowed"]
    return []


def _min_calls(turn: _Turn, limit: int) -> list[str]:
    if len(turn.names) < limit:
        return [f"min_calls: {_calls(len(turn.names))} made, at least {limit} required"]
    return []


def _in_order(turn: _Turn, order: list[str]) -> list[str]:
    remaining = iter(turn.names)
    if all(name in remaining for name in order):  # `in` consumes: a subsequence test
        return []
    got = ", ".join(turn.names) or "no calls"
    return [f"in_order: expected {', '.join(order)} in order; got {got}"]


def _args(turn: _Turn, wanted: Mapping[str, Mapping[str, Any]]) -> list[str]:
    failures = []
    for tool, params in wanted.items():
        calls = [entry["arguments"] for entry in turn.trace if entry["name"] == tool]
        if any(_call_matches(arguments, params) for arguments in calls):
            continue
        want = ", ".join(_describe(param, value) for param, value in params.items())
        want = want or "any arguments"
        failures.append(f"args: no {tool} call with {want} ({_seen(tool, calls)})")
    return failures


def _answer(turn: _Turn, checks: Mapping[str, Any]) -> list[str]:
    def fold(text: str) -> str:
        return text.casefold() if checks.get("ignore_case") else text

    failures = [
        f"answer.contains: {_quoted(needle)} not in the final answer"
        for needle in checks.get("contains", [])
        if fold(needle) not in fold(turn.answer)
    ]
    if "regex" in checks and re.search(checks["regex"], turn.answer) is None:
        failures.append(f"answer.regex: /{checks['regex']}/ did not match the final answer")
    if "equals" in checks:
        want, got = checks["equals"].strip(), turn.answer.strip()
        if fold(want) != fold(got):
            failures.append(f"answer.equals: expected {_quoted(want)}, got {_quoted(got)}")
    return failures


def _files(turn: _Turn, files: Mapping[str, Mapping[str, Any]]) -> list[str]:
    if turn.worktree is None:
        return ["files: no worktree to check"]
    return [
        f"files.{rel}: {problem}"
        for rel, checks in files.items()
        for problem in _file_problems(turn.worktree, rel, checks)
    ]


def _file_problems(worktree: Path, rel: str, checks: Mapping[str, Any]) -> list[str]:
    path = _inside(worktree, rel)
    if path is None:
        return ["invalid path (must be relative and stay inside the worktree)"]
    if checks.get("absent") is True or checks.get("exists") is False:
        return ["exists but should be absent"] if path.exists() else []
    if not path.exists():
        return ["missing"]
    if not {"contains", "equals", "regex"} & checks.keys():
        return []
    if not path.is_file():
        return ["not a regular file"]
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return [f"could not be read: {exc.strerror}"]
    contains = checks.get("contains", [])
    problems = [
        f"{_quoted(needle)} not found"
        for needle in ([contains] if isinstance(contains, str) else contains)
        if needle not in text
    ]
    if "equals" in checks:
        line = _first_difference(text, checks["equals"])
        if line is not None:
            problems.append(f"content differs from the expected content at line {line}")
    if "regex" in checks and re.search(checks["regex"], text) is None:
        problems.append(f"/{checks['regex']}/ did not match")
    return problems


def _command(turn: _Turn, spec: Mapping[str, Any]) -> list[str]:
    command, expected, timeout = spec["run"], spec.get("exit_code", 0), spec.get("timeout", 30)
    shown = _quoted(command)
    if turn.worktree is None:
        return [f"command: {shown} has no worktree to run in"]
    try:
        code, output = _run_shell(command, turn.worktree, timeout)
    except subprocess.TimeoutExpired:
        return [f"command: {shown} timed out after {timeout:g}s"]
    except OSError as exc:
        return [f"command: {shown} could not run: {exc}"]
    if code == expected:
        return []
    failure = f"command: {shown} exited {code}, expected {expected}"
    last = next((line.strip() for line in reversed(output.splitlines()) if line.strip()), "")
    return [f"{failure}: {_clip(last, 2 * _CLIP)}" if last else failure]


_CLAUSES: dict[str, Callable[[_Turn, Any], list[str]]] = {
    "exact": _exact,
    "must_include": _must_include,
    "avoid": _avoid,
    "min_calls": _min_calls,
    "max_calls": _max_calls,
    "in_order": _in_order,
    "args": _args,
    "answer": _answer,
    "files": _files,
    "command": _command,
}


def _run_shell(command: str, cwd: Path, timeout: float) -> tuple[int, str]:
    """Run `command` with a shell; on timeout kill its whole process group, not just the shell.

    Returns the exit code and stdout+stderr interleaved; raises subprocess.TimeoutExpired.
    """
    with subprocess.Popen(
        command,
        shell=True,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    ) as proc:
        try:
            output, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.communicate()
            raise
    return proc.returncode, output.decode("utf-8", errors="replace")


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    if os.name != "posix":
        proc.kill()
        return
    with contextlib.suppress(ProcessLookupError):  # already gone
        os.killpg(proc.pid, signal.SIGKILL)


def _call_matches(arguments: dict[str, Any] | str, params: Mapping[str, Any]) -> bool:
    """Raw (invalid JSON) arguments never match; neither does a missing param."""
    if not isinstance(arguments, dict):
        return False
    return all(p in arguments and _matches(value, arguments[p]) for p, value in params.items())


def _matches(expected: Any, actual: Any) -> bool:
    """A plain JSON value by JSON equality, or a one-key matcher object (`$regex`, ...)."""
    matcher = _matcher(expected)
    if matcher is None:
        return _json_equal(expected, actual)
    op, operand = matcher
    if op == "$any":
        return any(_matches(option, actual) for option in operand)
    if not isinstance(actual, str):
        return False
    if op == "$regex":
        return re.search(operand, actual) is not None
    if op == "$contains":
        return operand in actual
    return fnmatch.fnmatchcase(actual, operand)


def _json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON sees it: 1 == 1.0, but true != 1 and "1" != 1; key order is ignored."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_json_equal, a, b))
    return type(a) is type(b) and a == b


def _matcher(value: Any) -> tuple[str, Any] | None:
    if isinstance(value, dict) and len(value) == 1:
        ((op, operand),) = value.items()
        if op in _MATCHERS:
            return op, operand
    return None


def _describe(param: str, value: Any) -> str:
    matcher = _matcher(value)
    if matcher is None:
        return f"{param}={_json(value)}"
    op, operand = matcher
    if op == "$regex":
        return f"{param}=~/{operand}/"
    if op == "$contains":
        return f"{param} containing {_quoted(operand)}"
    if op == "$glob":
        return f"{param} matching {_quoted(operand)}"
    return "(" + " or ".join(_describe(param, option) for option in operand) + ")"


def _seen(tool: str, calls: list[dict[str, Any] | str]) -> str:
    if not calls:
        return f"{tool} was not called"
    shown = "; ".join(_clip(_json(arguments)) for arguments in calls[:_SHOWN_CALLS])
    more = len(calls) - _SHOWN_CALLS
    return f"{tool} was called with {shown}" + (f"; ... {more} more" if more > 0 else "")


def _inside(worktree: Path, rel: str) -> Path | None:
    """The checked file, or None when `rel` is absolute, climbs out, or a symlink leads out."""
    parsed = PureWindowsPath(rel)  # also splits on "/", so both separators are caught
    if not rel or "\0" in rel or parsed.drive or parsed.root or ".." in parsed.parts:
        return None
    root = worktree.resolve()
    path = root / rel
    try:
        path.resolve().relative_to(root)
    except (ValueError, OSError, RuntimeError):  # RuntimeError: symlink loop before 3.13
        return None
    return path


def _first_difference(text: str, expected: str) -> int | None:
    """1-based line of the first difference; line endings and trailing whitespace ignored."""
    got = text.replace("\r\n", "\n").rstrip().split("\n")
    want = expected.replace("\r\n", "\n").rstrip().split("\n")
    for number, (a, b) in enumerate(zip_longest(got, want), start=1):
        if a != b:
            return number
    return None


def _calls(count: int) -> str:
    return f"{count} call" if count == 1 else f"{count} calls"


def _listed(names: list[str]) -> str:
    return "[" + ", ".join(names) + "]"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _quoted(text: str) -> str:
    """A JSON string literal: quoted, one line, clipped."""
    return _clip(_json(text))


def _clip(text: str, limit: int = _CLIP) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
