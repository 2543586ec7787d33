"""`replio eval check`: one line per problem of a project's fixtures and tool variants."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_replio_eval import cli
from pytest_replio_eval.check import check_project
from pytest_replio_eval.plugins import plugin_manager
from pytest_replio_eval.tools import builtin_tools

GOOD = {
    "task": "What does notes.txt say?",
    "files": {"notes.txt": "hello\n"},
    "expected": ["file_read"],
    "verifier": {"must_include": ["file_read"], "answer": {"contains": ["hello"]}},
    "oracle_answer": "It says hello.",
}
# One fixture per kind of problem, each otherwise GOOD.
BAD_FIXTURES: dict[str, dict[str, Any]] = {
    "schema": {"verifier": {"max_calls": "two"}},
    "abs-path": {"files": {"/etc/hosts": ""}},
    "file-and-dir": {"files": {"notes.txt": "hello\n", "notes.txt/deeper": ""}},
    "unknown-expected": {"expected": ["file_read", "read_file"]},
    "denied-expected": {"expected": ["file_read", "file_write"]},
    "unknown-names": {
        "tools_deny": ["web_fetsh"],
        "verifier": {"must_include": ["file_read"], "avoid": ["bash"], "in_order": ["grepp"]},
    },
    "unknown-args": {
        "verifier": {
            "args": {"file_reader": {"path": "notes.txt"}, "file_read": {"file": "notes.txt"}}
        }
    },
    "oracle-fails": {
        "verifier": {
            "must_include": ["grep"],
            "args": {"file_read": {"offset": {"$regex": "1"}}},
            "answer": {"contains": ["goodbye"]},
        }
    },
    "no-oracle-answer": {"oracle_answer": None},
    "oracle-call-fails": {"verifier": {"args": {"file_read": {"path": "missing.txt"}}}},
}
VARIANTS: dict[str, Any] = {
    "terse": {"file_read": {"description": "Read a file."}},
    "typo": {"grpe": {"description": "Search."}},
    "broken": '{"file_read": {',
    "base": {"file_read": {"description": "Read."}},
    "two words": {"file_read": {"description": "Read."}},
}


def write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")


def fixture(changes: dict[str, Any]) -> dict[str, Any]:
    data = {**GOOD, **changes}
    return {key: value for key, value in data.items() if value is not None}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write(tmp_path / ".replio" / "eval" / "good.json", GOOD)
    for name, changes in BAD_FIXTURES.items():
        write(tmp_path / ".replio" / "eval" / f"{name}.json", fixture(changes))
    for name, content in VARIANTS.items():
        write(tmp_path / ".replio" / "eval" / "tools" / f"{name}.json", content)
    return tmp_path


KNOWN = ", ".join(sorted(builtin_tools()))
EXPECTED = [
    ".replio/eval/abs-path.json: files./etc/hosts: absolute path is not allowed",
    ".replio/eval/schema.json: verifier.max_calls: 'two' is not of type 'integer'",
    ".replio/eval/denied-expected.json: expected.1: tool 'file_write' is denied (edit: deny)",
    ".replio/eval/file-and-dir.json: files.notes.txt/deeper: cannot write: File exists",
    '.replio/eval/no-oracle-answer.json: oracle: answer.contains: "hello" not in the final answer',
    ".replio/eval/oracle-call-fails.json: oracle: call 1 file_read: "
    "Error: no such file: missing.txt",
    ".replio/eval/oracle-fails.json: oracle: must_include: grep was not called",
    ".replio/eval/oracle-fails.json: oracle: args: no file_read call with offset=~/1/ "
    '(file_read was called with {"path": "notes.txt"})',
    '.replio/eval/oracle-fails.json: oracle: answer.contains: "goodbye" not in the final answer',
    ".replio/eval/unknown-args.json: verifier.args.file_reader: unknown tool 'file_reader'",
    ".replio/eval/unknown-args.json: verifier.args.file_read.file: file_read has no parameter "
    "'file' (it takes path, offset, limit)",
    ".replio/eval/unknown-expected.json: expected.1: unknown tool 'read_file'",
    ".replio/eval/unknown-names.json: tools_deny.0: unknown tool 'web_fetsh'",
    ".replio/eval/unknown-names.json: verifier.avoid.0: unknown tool 'bash'",
    ".replio/eval/unknown-names.json: verifier.in_order.0: unknown tool 'grepp'",
    ".replio/eval/tools/base.json: base is the tools as registered and takes no file; rename it",
    ".replio/eval/tools/broken.json: invalid JSON at line 1, column 16: "
    "Expecting property name enclosed in double quotes",
    ".replio/eval/tools/two words.json: invalid tool variant name 'two words': use letters, "
    "digits, '_', '.' and '-'; it cannot be selected",
    f".replio/eval/tools/typo.json: grpe: unknown tool (known: {KNOWN})",
]


def test_check_finds_each_kind_of_problem_one_line_each(project: Path) -> None:
    assert check_project(project, plugin_manager()) == EXPECTED


def test_the_bundled_catalog_and_a_good_project_have_no_problems(tmp_path: Path) -> None:
    write(tmp_path / ".replio" / "eval" / "good.json", GOOD)
    write(tmp_path / ".replio" / "eval" / "tools" / "terse.json", VARIANTS["terse"])
    assert check_project(tmp_path, plugin_manager()) == []


def test_a_fixture_without_expected_has_no_oracle_to_check(tmp_path: Path) -> None:
    write(tmp_path / ".replio" / "eval" / "free.json", fixture({"expected": None}))
    assert check_project(tmp_path, plugin_manager()) == []


def test_a_fixture_without_expected_still_has_its_files_checked(tmp_path: Path) -> None:
    clash = {"expected": None, "files": {"notes.txt": "hello\n", "notes.txt/deeper": ""}}
    write(tmp_path / ".replio" / "eval" / "free.json", fixture(clash))
    assert check_project(tmp_path, plugin_manager()) == [
        ".replio/eval/free.json: files.notes.txt/deeper: cannot write: File exists"
    ]


def test_cli_check_prints_the_problems_and_exits_1(project: Path, capsys) -> None:
    assert cli.main(["eval", "--path", str(project), "check"]) == 1
    assert capsys.readouterr() == ("".join(line + "\n" for line in EXPECTED), "")


def test_cli_check_of_a_clean_project_says_ok(tmp_path: Path, capsys) -> None:
    write(tmp_path / ".replio" / "eval" / "good.json", GOOD)
    write(tmp_path / ".replio" / "eval" / "tools" / "terse.json", VARIANTS["terse"])
    assert cli.main(["eval", "--path", str(tmp_path), "check"]) == 0
    assert capsys.readouterr() == ("ok: 9 fixtures, 1 variant files\n", "")
