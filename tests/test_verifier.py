from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_replio_eval.fixtures import Fixture
from pytest_replio_eval.verifier import VerifierResult, verify


def fixture(verifier: dict[str, Any], expected: list[str] | None = None) -> Fixture:
    return Fixture(id="t", task="do it", expected=expected, verifier=verifier)


def call(name: str, arguments: dict[str, Any] | str | None = None) -> dict[str, Any]:
    return {"name": name, "arguments": {} if arguments is None else arguments}


def failures(verifier: dict[str, Any], trace: list[dict[str, Any]], **kwargs: Any) -> list[str]:
    result = verify(fixture(verifier, kwargs.pop("expected", None)), trace, **kwargs)
    assert result.passed is (not result.failures)
    return result.failures


def test_empty_verifier_passes() -> None:
    assert verify(fixture({}), [call("glob")]) == VerifierResult(passed=True, failures=[])


# exact, must_include, avoid, min_calls, max_calls, in_order


def test_exact_passes_on_identical_names() -> None:
    trace = [call("glob"), call("file_read")]
    assert failures({"exact": True}, trace, expected=["glob", "file_read"]) == []


def test_exact_names_expected_and_actual() -> None:
    got = failures({"exact": True}, [call("file_read")], expected=["glob", "file_read"])
    assert got == ["exact: expected [glob, file_read], got [file_read]"]


def test_exact_with_no_calls() -> None:
    assert failures({"exact": True}, [], expected=["glob"]) == ["exact: expected [glob], got []"]


def test_exact_false_does_not_compare() -> None:
    assert failures({"exact": False}, [call("file_read")], expected=["glob"]) == []


def test_must_include_one_line_per_missing_tool() -> None:
    trace = [call("glob")]
    got = failures({"must_include": ["glob", "file_read", "grep"]}, trace)
    assert got == ["must_include: file_read was not called", "must_include: grep was not called"]


def test_avoid_names_the_first_call() -> None:
    trace = [call("glob"), call("file_read"), call("run_command"), call("run_command")]
    got = failures({"avoid": ["run_command", "file_write"]}, trace)
    assert got == ["avoid: run_command was called (call 3)"]


def test_avoid_passes_when_not_called() -> None:
    assert failures({"avoid": ["run_command"]}, [call("glob")]) == []


@pytest.mark.parametrize(
    ("verifier", "count", "expected"),
    [
        ({"max_calls": 3}, 3, []),
        ({"max_calls": 3}, 5, ["max_calls: 5 calls made, at most 3 allowed"]),
        ({"max_calls": 0}, 1, ["max_calls: 1 call made, at most 0 allowed"]),
        ({"min_calls": 1}, 1, []),
        ({"min_calls": 1}, 0, ["min_calls: 0 calls made, at least 1 required"]),
        ({"min_calls": 2}, 1, ["min_calls: 1 call made, at least 2 required"]),
    ],
)
def test_call_count_limits(verifier: dict[str, Any], count: int, expected: list[str]) -> None:
    assert failures(verifier, [call("glob")] * count) == expected


def test_in_order_is_a_subsequence_with_gaps() -> None:
    trace = [call("list"), call("glob"), call("grep"), call("file_read")]
    assert failures({"in_order": ["glob", "file_read"]}, trace) == []


def test_in_order_fails_when_reversed() -> None:
    got = failures({"in_order": ["glob", "file_read"]}, [call("file_read"), call("glob")])
    assert got == ["in_order: expected glob, file_read in order; got file_read, glob"]


def test_in_order_with_no_calls() -> None:
    got = failures({"in_order": ["glob"]}, [])
    assert got == ["in_order: expected glob in order; got no calls"]


def test_in_order_needs_each_repeat() -> None:
    got = failures({"in_order": ["glob", "glob"]}, [call("glob")])
    assert got == ["in_order: expected glob, glob in order; got glob"]


# args


def test_args_match_when_one_call_has_every_param() -> None:
    trace = [call("file_read", {"path": "other.txt"}), call("file_read", {"path": "notes.txt"})]
    assert failures({"args": {"file_read": {"path": "notes.txt"}}}, trace) == []


def test_args_failure_quotes_the_calls_made() -> None:
    trace = [call("file_read", {"path": "other.txt"})]
    got = failures({"args": {"file_read": {"path": "notes.txt"}}}, trace)
    assert got == [
        'args: no file_read call with path="notes.txt" '
        '(file_read was called with {"path": "other.txt"})'
    ]


def test_args_failure_when_tool_not_called() -> None:
    got = failures({"args": {"file_read": {"path": "notes.txt", "limit": 10}}}, [call("glob")])
    assert got == [
        'args: no file_read call with path="notes.txt", limit=10 (file_read was not called)'
    ]


def test_args_params_must_match_in_the_same_call() -> None:
    trace = [
        call("grep", {"pattern": "TODO", "path": "a"}),
        call("grep", {"pattern": "x", "path": "b"}),
    ]
    got = failures({"args": {"grep": {"pattern": "TODO", "path": "b"}}}, trace)
    assert got == [
        'args: no grep call with pattern="TODO", path="b" (grep was called with '
        '{"pattern": "TODO", "path": "a"}; {"pattern": "x", "path": "b"})'
    ]


def test_args_shows_at_most_three_calls() -> None:
    trace = [call("glob", {"pattern": str(i)}) for i in range(5)]
    got = failures({"args": {"glob": {"pattern": "9"}}}, trace)
    assert got == [
        'args: no glob call with pattern="9" (glob was called with '
        '{"pattern": "0"}; {"pattern": "1"}; {"pattern": "2"}; ... 2 more)'
    ]


def test_args_clips_long_arguments() -> None:
    trace = [call("file_write", {"path": "a", "content": "x" * 500})]
    (line,) = failures({"args": {"file_write": {"path": "b"}}}, trace)
    quoted = '{"path": "a", "content": "' + "x" * 51 + "..."
    assert line == f'args: no file_write call with path="b" (file_write was called with {quoted})'


def test_args_missing_param_never_matches() -> None:
    trace = [call("list", {})]
    assert failures({"args": {"list": {"path": None}}}, trace) == [
        "args: no list call with path=null (list was called with {})"
    ]
    assert failures({"args": {"list": {"path": None}}}, [call("list", {"path": None})]) == []


def test_args_raw_string_arguments_never_match() -> None:
    trace = [call("file_read", '{"path": "notes.txt"')]
    got = failures({"args": {"file_read": {}}}, trace)
    assert got == [
        "args: no file_read call with any arguments "
        '(file_read was called with "{\\"path\\": \\"notes.txt\\"")'
    ]


@pytest.mark.parametrize(
    ("expected", "actual", "matches"),
    [
        (1, 1.0, True),
        (2.5, 2.5, True),
        (1, True, False),
        (True, 1, False),
        (False, 0, False),
        ("1", 1, False),
        (None, None, True),
        (None, "", False),
        ({"a": 1, "b": [1, 2]}, {"b": [1.0, 2], "a": 1}, True),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ([1, 2], [2, 1], False),
        ([1], [True], False),
    ],
)
def test_args_plain_values_use_json_equality(expected: Any, actual: Any, matches: bool) -> None:
    result = verify(fixture({"args": {"t": {"v": expected}}}), [call("t", {"v": actual})])
    assert result.passed is matches


@pytest.mark.parametrize(
    ("matcher", "actual", "matches"),
    [
        ({"$regex": r"\.txt$"}, "notes.txt", True),
        ({"$regex": r"^notes"}, "src/notes.txt", False),
        ({"$regex": "1"}, 1, False),
        ({"$contains": "note"}, "src/notes.txt", True),
        ({"$contains": "Note"}, "src/notes.txt", False),
        ({"$contains": "1"}, [1], False),
        ({"$glob": "*.txt"}, "src/notes.txt", True),
        ({"$glob": "*.TXT"}, "notes.txt", False),
        ({"$any": ["a.txt", {"$glob": "*.md"}]}, "README.md", True),
        ({"$any": ["a.txt", {"$glob": "*.md"}]}, "a.txt", True),
        ({"$any": [1, 2]}, 2.0, True),
        ({"$any": ["a.txt", {"$glob": "*.md"}]}, "b.txt", False),
        ({"$any": []}, "b.txt", False),
    ],
)
def test_args_matchers(matcher: dict[str, Any], actual: Any, matches: bool) -> None:
    result = verify(fixture({"args": {"t": {"v": matcher}}}), [call("t", {"v": actual})])
    assert result.passed is matches


def test_args_object_that_is_not_a_matcher_is_a_plain_value() -> None:
    value = {"$regex": "a", "flags": "i"}
    assert failures({"args": {"t": {"v": value}}}, [call("t", {"v": dict(value)})]) == []
    assert failures({"args": {"t": {"v": {"$nope": 1}}}}, [call("t", {"v": {"$nope": 1}})]) == []


def test_args_failure_describes_matchers() -> None:
    wanted = {
        "a": {"$regex": r"\d+"},
        "b": {"$contains": "x"},
        "c": {"$glob": "*.py"},
        "d": {"$any": ["x", {"$regex": "^y"}]},
    }
    (line,) = failures({"args": {"t": wanted}}, [])
    assert line == (
        r'args: no t call with a=~/\d+/, b containing "x", c matching "*.py", '
        '(d="x" or d=~/^y/) (t was not called)'
    )


def test_args_invalid_regex_is_a_failure_not_a_crash() -> None:
    got = failures({"args": {"t": {"v": {"$regex": "("}}}}, [call("t", {"v": "a"})])
    assert got == ["args: invalid regex /(/: missing ), unterminated subpattern"]


# answer


def test_answer_contains_each_missing_string() -> None:
    got = failures({"answer": {"contains": ["42", "lines", "x"]}}, [], answer="There are 42 lines.")
    assert got == ['answer.contains: "x" not in the final answer']


def test_answer_contains_ignore_case() -> None:
    checks = {"contains": ["LINES"], "ignore_case": True}
    assert failures({"answer": checks}, [], answer="42 lines") == []
    got = failures({"answer": {"contains": ["LINES"]}}, [], answer="42 lines")
    assert got == ['answer.contains: "LINES" not in the final answer']


def test_answer_regex() -> None:
    assert failures({"answer": {"regex": r"\d+ lines"}}, [], answer="it has 42 lines") == []
    got = failures({"answer": {"regex": r"\d+ lines"}}, [], answer="it has many lines")
    assert got == [r"answer.regex: /\d+ lines/ did not match the final answer"]


def test_answer_regex_ignores_ignore_case() -> None:
    got = failures({"answer": {"regex": "LINES", "ignore_case": True}}, [], answer="lines")
    assert got == ["answer.regex: /LINES/ did not match the final answer"]


def test_answer_equals_strips_whitespace() -> None:
    assert failures({"answer": {"equals": " 42\n"}}, [], answer="\n42  ") == []
    got = failures({"answer": {"equals": "x"}}, [], answer="y\n")
    assert got == ['answer.equals: expected "x", got "y"']


def test_answer_equals_ignore_case_and_multiline_stays_one_line() -> None:
    assert failures({"answer": {"equals": "Yes", "ignore_case": True}}, [], answer="yes") == []
    got = failures({"answer": {"equals": "yes"}}, [], answer="no\nreally")
    assert got == ['answer.equals: expected "yes", got "no\\nreally"']


def test_answer_missing_counts_as_empty() -> None:
    got = failures({"answer": {"equals": "42", "contains": ["4"]}}, [])
    assert got == [
        'answer.contains: "4" not in the final answer',
        'answer.equals: expected "42", got ""',
    ]


# files


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    root = tmp_path / "wt"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 42\n")
    return root


def file_failures(worktree: Path, files: dict[str, Any]) -> list[str]:
    return failures({"files": files}, [], worktree=worktree)


def test_files_exists_and_absent(worktree: Path) -> None:
    assert file_failures(worktree, {"src/app.py": {"exists": True}, "gone": {"absent": True}}) == []
    assert file_failures(worktree, {"src": {}, "gone": {"exists": False}}) == []
    got = file_failures(
        worktree,
        {"src/main.py": {"exists": True}, "src/app.py": {"absent": True}, "x": {"absent": False}},
    )
    assert got == [
        "files.src/main.py: missing",
        "files.src/app.py: exists but should be absent",
        "files.x: missing",
    ]


def test_files_content_checks_need_the_file(worktree: Path) -> None:
    got = file_failures(worktree, {"nope.py": {"contains": "x", "regex": "y"}})
    assert got == ["files.nope.py: missing"]


def test_files_contains(worktree: Path) -> None:
    assert file_failures(worktree, {"src/app.py": {"contains": "return 42"}}) == []
    got = file_failures(worktree, {"src/app.py": {"contains": ["def main", "needle", "hay"]}})
    assert got == ['files.src/app.py: "needle" not found', 'files.src/app.py: "hay" not found']


def test_files_equals_ignores_line_endings_and_trailing_whitespace(worktree: Path) -> None:
    (worktree / "crlf.txt").write_bytes(b"a\r\nb\r\n\r\n")
    assert file_failures(worktree, {"crlf.txt": {"equals": "a\nb"}}) == []
    assert file_failures(worktree, {"src/app.py": {"equals": "def main():\n    return 42"}}) == []


def test_files_equals_names_the_first_differing_line(worktree: Path) -> None:
    got = file_failures(worktree, {"src/app.py": {"equals": "def main():\n    return 41\n"}})
    assert got == ["files.src/app.py: content differs from the expected content at line 2"]
    got = file_failures(worktree, {"src/app.py": {"equals": "def main():\n    return 42\npass"}})
    assert got == ["files.src/app.py: content differs from the expected content at line 3"]


def test_files_regex(worktree: Path) -> None:
    assert file_failures(worktree, {"src/app.py": {"regex": r"return \d+"}}) == []
    got = file_failures(worktree, {"src/app.py": {"regex": r"^return"}})
    assert got == ["files.src/app.py: /^return/ did not match"]


def test_files_content_of_a_directory(worktree: Path) -> None:
    assert file_failures(worktree, {"src": {"contains": "x"}}) == ["files.src: not a regular file"]


@pytest.mark.parametrize(
    "rel", ["/etc/passwd", "../outside.txt", "src/../../x", "a\0b", "C:/x", ""]
)
def test_files_paths_must_stay_inside(worktree: Path, rel: str) -> None:
    (worktree.parent / "outside.txt").write_text("secret")
    assert file_failures(worktree, {rel: {"absent": True}}) == [
        f"files.{rel}: invalid path (must be relative and stay inside the worktree)"
    ]


def test_files_symlink_out_of_the_worktree(worktree: Path) -> None:
    (worktree.parent / "outside.txt").write_text("secret")
    os.symlink(worktree.parent / "outside.txt", worktree / "link.txt")
    assert file_failures(worktree, {"link.txt": {"contains": "secret"}}) == [
        "files.link.txt: invalid path (must be relative and stay inside the worktree)"
    ]


def test_files_without_a_worktree() -> None:
    assert failures({"files": {"a": {"exists": True}}}, []) == ["files: no worktree to check"]


def test_files_invalid_regex(worktree: Path) -> None:
    got = file_failures(worktree, {"src/app.py": {"regex": "[a"}})
    assert got == ["files: invalid regex /[a/: unterminated character set"]


# command


def test_command_runs_in_the_worktree(worktree: Path) -> None:
    assert failures({"command": {"run": "test -f src/app.py"}}, [], worktree=worktree) == []


def test_command_exit_code_mismatch_quotes_last_output_line(worktree: Path) -> None:
    spec = {"run": "echo first; echo 'boom: bad' >&2; echo; exit 3"}
    got = failures({"command": spec}, [], worktree=worktree)
    assert got == [f'command: "{spec["run"]}" exited 3, expected 0: boom: bad']


def test_command_expected_exit_code(worktree: Path) -> None:
    assert failures({"command": {"run": "exit 1", "exit_code": 1}}, [], worktree=worktree) == []
    got = failures({"command": {"run": "true", "exit_code": 1}}, [], worktree=worktree)
    assert got == ['command: "true" exited 0, expected 1']


def test_command_timeout_kills_the_whole_group(worktree: Path) -> None:
    spec = {"run": "sleep 30; echo late", "timeout": 0.3}
    started = time.monotonic()
    got = failures({"command": spec}, [], worktree=worktree)
    assert got == ['command: "sleep 30; echo late" timed out after 0.3s']
    assert time.monotonic() - started < 10


def test_command_without_a_worktree() -> None:
    got = failures({"command": {"run": "true"}}, [])
    assert got == ['command: "true" has no worktree to run in']


def test_command_in_a_missing_worktree(tmp_path: Path) -> None:
    (line,) = failures({"command": {"run": "true"}}, [], worktree=tmp_path / "gone")
    assert line.startswith('command: "true" could not run: [Errno 2] No such file or directory')


def test_failures_come_in_clause_order(worktree: Path) -> None:
    verifier = {
        "command": {"run": "false"},
        "answer": {"contains": ["x"]},
        "avoid": ["glob"],
        "exact": True,
        "files": {"new.txt": {"exists": True}},
        "must_include": ["grep"],
    }
    got = failures(verifier, [call("glob")], expected=[], worktree=worktree)
    assert got == [
        "exact: expected [], got [glob]",
        "must_include: grep was not called",
        "avoid: glob was called (call 1)",
        'answer.contains: "x" not in the final answer',
        "files.new.txt: missing",
        'command: "false" exited 1, expected 0',
    ]
