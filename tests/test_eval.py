"""The fixture model, its schema errors, discovery and precedence, and the bundled catalog."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bundled import BUNDLED

from pytest_replio_eval.fixtures import (
    Fixture,
    FixtureError,
    discover,
    global_dir,
    load_file,
    load_fixture,
    local_dir,
)


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


# --- the model -----------------------------------------------------------------------------------


def test_a_minimal_fixture_gets_the_defaults() -> None:
    fixture = load_fixture({"task": "Say hi."}, "hello.json", default_id="hello")
    assert fixture == Fixture(id="hello", task="Say hi.", source="hello.json")
    assert (fixture.expected, fixture.trials, fixture.oracle_answer) == (None, None, None)


def test_every_contract_key_is_loaded() -> None:
    data = {
        "id": "full",
        "task": "Read a.py.",
        "description": "All keys.",
        "files": {"a.py": "x = 1\n"},
        "expected": ["file_read"],
        "verifier": {
            "exact": True,
            "args": {"file_read": {"path": {"$glob": "*.py"}, "opts": {"deep": [1, 2]}}},
            "answer": {"contains": ["1"], "ignore_case": True},
            "files": {"a.py": {"exists": True, "contains": ["x"]}},
            "command": {"run": "python a.py", "exit_code": 0, "timeout": 5},
        },
        "tool_permission": {"bash": "ask"},
        "tools_deny": ["web_fetch"],
        "trials": 3,
        "oracle_answer": "x is 1",
    }
    fixture = load_fixture(data, "plug")
    assert fixture == Fixture(
        id="full",
        task="Read a.py.",
        description="All keys.",
        files={"a.py": "x = 1\n"},
        expected=["file_read"],
        verifier=data["verifier"],
        tool_permission={"bash": "ask"},
        tools_deny=["web_fetch"],
        source="plug",
        trials=3,
        oracle_answer="x is 1",
    )


def test_a_fixture_shares_no_data_with_its_caller() -> None:
    data = {"task": "t", "files": {"a": "1"}, "verifier": {"args": {"grep": {"pattern": "x"}}}}
    fixture = load_fixture(data, "src", default_id="t")
    data["files"]["b"] = "2"
    data["verifier"]["args"]["grep"]["pattern"] = "y"
    assert fixture.files == {"a": "1"}
    assert fixture.verifier == {"args": {"grep": {"pattern": "x"}}}


def test_id_defaults_to_the_file_stem_and_an_id_in_the_file_wins(tmp_path: Path) -> None:
    assert load_file(write(tmp_path / "stem-id.json", {"task": "t"})).id == "stem-id"
    named = load_file(write(tmp_path / "file.json", {"id": "given", "task": "t"}))
    assert (named.id, named.source) == ("given", str(tmp_path / "file.json"))


def test_a_byte_order_mark_is_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"task": "t"}).encode())
    assert load_file(path).task == "t"


# --- bad input: one FixtureError each, naming the source and the JSON path -----------------------

REGEX_ERROR = "invalid regular expression: missing ), unterminated subpattern at position 0"
ID_PATTERN = "'^[A-Za-z0-9][A-Za-z0-9_.-]*$'"
# Each case is added to an otherwise valid fixture {"task": "t"}.
BAD_KEYS = [
    ({"task": ""}, "task: must not be empty"),
    ({"task": " \n\t"}, "task: must not be empty"),
    ({"expect": [], "verifer": {}}, "(root): unknown keys 'expect', 'verifer'"),
    ({"id": "has space"}, f"id: 'has space' does not match {ID_PATTERN}"),
    ({"trials": 0}, "trials: 0 is less than the minimum of 1"),
    ({"expected": ["grep", 3]}, "expected.1: 3 is not of type 'string'"),
    ({"files": {"a.txt": 1}}, "files.a.txt: 1 is not of type 'string'"),
    ({"verifier": {"max_calls": -1}}, "verifier.max_calls: -1 is less than the minimum of 0"),
    ({"verifier": {"must_includes": ["grep"]}}, "verifier: unknown key 'must_includes'"),
    ({"verifier": {"exact": True}}, "verifier.exact: requires expected"),
    ({"verifier": {"command": {"exit_code": 1}}}, "verifier.command.run: is required"),
    ({"verifier": {"answer": {"regex": "("}}}, f"verifier.answer.regex: {REGEX_ERROR}"),
    (
        {"verifier": {"args": {"grep": {"pattern": {"$regexp": "x"}}}}},
        "verifier.args.grep.pattern: unknown key '$regexp'",
    ),
    (
        {"verifier": {"args": {"grep": {"pattern": {"$regex": "a", "$glob": "b"}}}}},
        "verifier.args.grep.pattern: a matcher takes exactly one key, not '$regex', '$glob'",
    ),
    (
        {"verifier": {"args": {"grep": {"pattern": {"$any": ["a", {"$regex": "("}]}}}}},
        f"verifier.args.grep.pattern.$any.1.$regex: {REGEX_ERROR}",
    ),
    ({"tool_permission": {"network": "allow"}}, "tool_permission: unknown key 'network'"),
    (
        {"tool_permission": {"bash": "maybe"}},
        "tool_permission.bash: 'maybe' is not one of ['allow', 'deny', 'ask']",
    ),
    ({"files": {"/etc/passwd": ""}}, "files./etc/passwd: absolute path is not allowed"),
    ({"files": {"C:\\boot.ini": ""}}, "files.C:\\boot.ini: absolute path is not allowed"),
    ({"files": {"../out.txt": ""}}, "files.../out.txt: path must not contain '..'"),
    ({"files": {"src/../../out": ""}}, "files.src/../../out: path must not contain '..'"),
    ({"files": {"a\0b": ""}}, 'files."a\\u0000b": path contains a NUL byte'),
    ({"files": {"": ""}}, 'files."": path is empty'),
    (
        {"files": {"a.txt": "x \udc00"}},
        "files.a.txt: holds an unpaired surrogate, which no file can",
    ),
    (
        {"verifier": {"files": {"/tmp/x": {"exists": True}}}},
        "verifier.files./tmp/x: absolute path is not allowed",
    ),
    ({"verifier": {"files": {"a": {"regex": "("}}}}, f"verifier.files.a.regex: {REGEX_ERROR}"),
]


@pytest.mark.parametrize(("keys", "message"), BAD_KEYS)
def test_a_bad_fixture_is_one_error_naming_its_source_and_path(keys: dict, message: str) -> None:
    with pytest.raises(FixtureError) as info:
        load_fixture({"task": "t", **keys}, ".replio/eval/bad.json", default_id="bad")
    assert str(info.value) == f".replio/eval/bad.json: {message}"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, "task: is required"),
        ([{"task": "t"}], "(root): must be a JSON object, not an array"),
        ("t", "(root): must be a JSON object, not a string"),
        (None, "(root): must be a JSON object, not null"),
    ],
)
def test_a_fixture_must_be_an_object_with_a_task(data: Any, message: str) -> None:
    with pytest.raises(FixtureError) as info:
        load_fixture(data, "bad.json", default_id="bad")
    assert str(info.value) == f"bad.json: {message}"


def test_an_id_is_required_when_there_is_no_default() -> None:
    with pytest.raises(FixtureError, match=r"^plug: id: is required$"):
        load_fixture({"task": "t"}, "plug")


def test_a_stem_that_is_not_a_valid_id_is_reported(tmp_path: Path) -> None:
    path = write(tmp_path / "my task.json", {"task": "t"})
    with pytest.raises(FixtureError) as info:
        load_file(path, "my task.json")
    assert str(info.value) == f"my task.json: id: 'my task' does not match {ID_PATTERN}"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"task": "t",\n  "files": }\n', "invalid JSON at line 2, column 12: Expecting value"),
        ('{"task": "t"', "invalid JSON at line 1, column 13: Expecting ',' delimiter"),
        (b"\xff\xfe{}", "is not UTF-8 text"),
        ("", "invalid JSON at line 1, column 1: Expecting value"),
    ],
)
def test_an_unreadable_file_names_the_file(
    tmp_path: Path, content: str | bytes, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(FixtureError) as info:
        load_file(path, "bad.json")
    assert str(info.value) == f"bad.json: {message}"


def test_a_directory_named_like_a_fixture_is_reported(tmp_path: Path) -> None:
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(FixtureError, match=r"^dir.json: cannot read: Is a directory$"):
        load_file(tmp_path / "dir.json", "dir.json")


# --- discovery and precedence ------------------------------------------------------------------


def test_global_dir_follows_xdg_config_home(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert global_dir() == tmp_path / "xdg" / "replio" / "eval"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert global_dir() == isolated_home / ".config" / "replio" / "eval"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/config")  # the XDG spec says: ignore it
    assert global_dir() == isolated_home / ".config" / "replio" / "eval"


def test_local_dir_is_under_the_project(tmp_path: Path) -> None:
    assert local_dir(tmp_path) == tmp_path / ".replio" / "eval"


def test_later_sources_win_by_id_and_remember_what_they_overrode(tmp_path: Path) -> None:
    project = tmp_path / "project"
    global_file = write(global_dir() / "grep-symbol.json", {"task": "global grep"})
    write(global_dir() / "only-global.json", {"task": "global only"})
    write(local_dir(project) / "grep-symbol.json", {"task": "local grep"})
    write(local_dir(project) / "renamed.json", {"id": "page-large-file", "task": "local page"})
    write(local_dir(project) / "only-local.json", {"task": "local only"})

    found = discover(project)

    assert found.errors == []
    by_id = {f.id: (f.task, f.source, f.overrides) for f in found.fixtures}
    assert [f.id for f in found.fixtures] == sorted(by_id)
    assert by_id["grep-symbol"] == (
        "local grep",
        ".replio/eval/grep-symbol.json",
        ["replio-core-eval", str(global_file)],
    )
    assert by_id["page-large-file"] == (
        "local page",
        ".replio/eval/renamed.json",
        ["replio-core-eval"],
    )
    assert by_id["only-global"] == ("global only", str(global_dir() / "only-global.json"), [])
    assert by_id["only-local"] == ("local only", ".replio/eval/only-local.json", [])
    assert by_id["read-file-lines"][1:] == ("replio-core-eval", [])
    assert set(by_id) == {*BUNDLED, "only-global", "only-local"}


def test_without_a_project_only_plugin_and_global_fixtures_are_found(tmp_path: Path) -> None:
    write(global_dir() / "mine.json", {"task": "t"})
    write(local_dir(tmp_path) / "local.json", {"task": "t"})
    assert [f.id for f in discover(None).fixtures] == sorted([*BUNDLED, "mine"])


def test_one_bad_file_does_not_stop_the_others(tmp_path: Path) -> None:
    eval_dir = local_dir(tmp_path)
    write(eval_dir / "bad.json", {"task": "t", "verifier": {"max_calls": -1}})
    write(eval_dir / "broken.json", '{"task": ')
    write(eval_dir / "good.json", {"task": "t"})
    write(global_dir() / "typo.json", {"task": "t", "verifier": {"must_includes": ["grep"]}})

    found = discover(tmp_path)

    assert [str(e) for e in found.errors] == [
        f"{global_dir() / 'typo.json'}: verifier: unknown key 'must_includes'",
        ".replio/eval/bad.json: verifier.max_calls: -1 is less than the minimum of 0",
        ".replio/eval/broken.json: invalid JSON at line 1, column 10: Expecting value",
    ]
    assert [f.id for f in found.fixtures] == sorted([*BUNDLED, "good"])


def test_hidden_files_are_not_fixtures(tmp_path: Path) -> None:
    write(local_dir(tmp_path) / ".#draft.json", "{")
    found = discover(tmp_path)
    assert (found.errors, [f.id for f in found.fixtures]) == ([], BUNDLED)


# --- the bundled catalog -----------------------------------------------------------------------


def test_the_catalog_is_eight_bundled_fixtures_each_with_an_oracle() -> None:
    found = discover(None)
    assert found.errors == []
    for fixture in found.fixtures:
        assert (fixture.source, fixture.overrides) == ("replio-core-eval", [])
        assert fixture.expected is not None and fixture.oracle_answer
        assert set(fixture.verifier.get("args", {})) <= set(fixture.expected)
        assert "answer" in fixture.verifier  # the answer, not the exact arguments, proves success
    assert [f.id for f in found.fixtures] == BUNDLED


# What the oracle's last tool result must show, so its answer is earned (None: no tool called).
EVIDENCE = {
    "edit-fix-bug": "Edited calc.py",
    "find-then-read": "port: 8443",
    "grep-symbol": "MAX_DISCOUNT_PERCENT = 40",
    "list-directory": "0004_add_order_status.sql",
    "no-tool-needed": None,
    "page-large-file": "line 2613: deploy token = amber-falcon-42",
    "read-file-lines": "    21\t        self.counts[sku] = available - quantity",
    "write-new-file": "Wrote 5 bytes to VERSION",
}


def catalog_fixture(fixture_id: str) -> Fixture:
    return next(f for f in discover(None).fixtures if f.id == fixture_id)


def run_oracle(fixture: Fixture, worktree: Path) -> Any:
    """One turn of the mock oracle through the engine, as `pytest --replio-provider=mock` runs."""
    from pytest_replio_eval.engine import TurnSettings, provision, run_turn
    from pytest_replio_eval.providers.base import ProviderSettings, ProviderSpec
    from pytest_replio_eval.providers.mock import MockProvider

    provider = MockProvider(ProviderSpec("mock"), ProviderSettings())
    worktree = provision(fixture, worktree)
    return run_turn(fixture, provider, TurnSettings(chdir=False), worktree=worktree)


@pytest.mark.parametrize("fixture_id", BUNDLED)
def test_the_oracle_solves_each_catalog_fixture(fixture_id: str, tmp_path: Path) -> None:
    from pytest_replio_eval.metrics import compute_metrics

    fixture = catalog_fixture(fixture_id)
    turn = run_oracle(fixture, tmp_path / "worktree")

    assert [entry["name"] for entry in turn.trace] == fixture.expected
    assert [r for r in turn.results if r.startswith("Error")] == []
    if EVIDENCE[fixture_id] is None:
        assert turn.results == []
    else:
        assert EVIDENCE[fixture_id] in turn.results[-1]
    metrics = compute_metrics(fixture, turn)
    assert (metrics.passed, metrics.failures) == (True, [])


@pytest.mark.parametrize(
    ("fixture_id", "failures"),
    [
        (
            "edit-fix-bug",
            [
                "must_include: file_edit was not called",
                "in_order: expected file_read, file_edit in order; got no calls",
                'args: no file_read call with path="calc.py" (file_read was not called)',
                'args: no file_edit call with path="calc.py", old containing "a - b", '
                '(new="a + b" or new=~/\\+/) (file_edit was not called)',
                "files.calc.py: /return (a \\+ b|b \\+ a)\\n/ did not match",
                'command: "python3 -c \\"import calc; assert calc.add(2, 3) == 5; '
                "assert calc.mul(2, 3) ... exited 1, expected 0: AssertionError",
            ],
        ),
        (
            "write-new-file",
            [
                "must_include: file_write was not called",
                "in_order: expected file_read, file_write in order; got no calls",
                'args: no file_read call with path="CHANGELOG.md" (file_read was not called)',
                'args: no file_write call with path="VERSION", content containing "1.4.0" '
                "(file_write was not called)",
                "files.VERSION: missing",
            ],
        ),
    ],
)
def test_an_edit_fixture_is_judged_by_the_file_on_disk(
    fixture_id: str, failures: list[str], tmp_path: Path
) -> None:
    """An answer that claims the edit without making it fails on the end state."""
    from pytest_replio_eval.engine import provision
    from pytest_replio_eval.verifier import verify

    fixture = catalog_fixture(fixture_id)
    worktree = provision(fixture, tmp_path / "worktree")
    result = verify(fixture, [], answer=fixture.oracle_answer, worktree=worktree)
    assert result.failures == failures


def test_the_irrelevance_fixture_fails_a_model_that_calls_a_tool() -> None:
    from pytest_replio_eval.verifier import verify

    fixture = catalog_fixture("no-tool-needed")
    trace = [{"name": "run_command", "arguments": {"command": "echo $((17 * 3))"}}]
    result = verify(fixture, trace, answer="51")
    assert result.failures == ["max_calls: 1 call made, at most 0 allowed"]


def test_the_large_file_answer_is_past_the_first_page(tmp_path: Path) -> None:
    from pytest_replio_eval.tools import builtin_tools, call_tool
    from pytest_replio_eval.tools.base import ToolContext

    fixture = catalog_fixture("page-large-file")
    write(tmp_path / "logs/server.log", fixture.files["logs/server.log"])
    first_page = call_tool(
        builtin_tools()["file_read"], ToolContext(tmp_path.resolve()), {"path": "logs/server.log"}
    )
    assert "amber-falcon-42" not in first_page
    assert "use offset=" in first_page
