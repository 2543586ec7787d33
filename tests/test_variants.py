"""Tool-description variants: the file, the registry it makes, and runs that compare them."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_replio_eval.providers.base import ProviderSpec
from pytest_replio_eval.tools import builtin_tools
from pytest_replio_eval.variants import (
    BASE,
    Variant,
    VariantError,
    apply_variant,
    load_variant,
    resolve_variants,
    run_label,
    variant_name,
    variant_names,
)

TERSE = {
    "file_read": {"description": "Read a file."},
    "grep": {
        "parameters": {
            "type": "object",
            "properties": {"pattern": {"type": "string"}},
            "required": ["pattern"],
        }
    },
}
NOTES = {
    "task": "What does notes.txt say?",
    "files": {"notes.txt": "hello\n"},
    "expected": ["file_read"],
    "verifier": {"must_include": ["file_read"], "answer": {"contains": ["hello"]}},
    "oracle_answer": "It says hello.",
}
CHAT = "/v1/chat/completions"


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def write_variant(project: Path, name: str, data: Any) -> Path:
    return write(project / ".replio" / "eval" / "tools" / f"{name}.json", data)


# --- the file and the registry it makes ---------------------------------------------------------


def test_base_needs_no_file_and_changes_nothing(tmp_path: Path) -> None:
    variant = load_variant(tmp_path, BASE)
    assert variant == Variant(BASE)
    assert apply_variant(builtin_tools(), variant) == builtin_tools()


def test_a_variant_replaces_descriptions_and_parameters_only(tmp_path: Path) -> None:
    write_variant(tmp_path, "terse", TERSE)
    registry = builtin_tools()

    variant = load_variant(tmp_path, "terse")
    tools = apply_variant(registry, variant)

    assert (variant.name, variant.source) == ("terse", ".replio/eval/tools/terse.json")
    assert tools["file_read"].description == "Read a file."
    assert tools["file_read"].parameters == registry["file_read"].parameters
    assert tools["grep"].parameters == TERSE["grep"]["parameters"]
    assert tools["grep"].description == registry["grep"].description
    assert (tools["grep"].func, tools["grep"].category) == (registry["grep"].func, "read")
    assert {name: tools[name] for name in tools if name not in TERSE} == {
        name: tool for name, tool in registry.items() if name not in TERSE
    }
    assert registry == builtin_tools()  # the registry it was given is left alone


SCHEMA_ERROR = "invalid JSON Schema: 'strin' is not valid under any of the given schemas"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read: No such file or directory"),
        ('{"file_read": ', "invalid JSON at line 1, column 15: Expecting value"),
        (
            [{"file_read": {}}],
            "(root): must be a JSON object of tool name -> overrides, not an array",
        ),
        (
            {"file_read": "Read."},
            "file_read: must be an object with description and/or parameters, not a string",
        ),
        (
            {"file_read": {"descripton": "Read."}},
            "file_read: unknown key 'descripton' (expected description, parameters)",
        ),
        ({"file_read": {}}, "file_read: must give description and/or parameters"),
        ({"file_read": {"description": " "}}, "file_read.description: must be a non-empty string"),
        (
            {"grep": {"parameters": ["pattern"]}},
            "grep.parameters: must be a JSON Schema object, not an array",
        ),
        (
            {"grep": {"parameters": {"type": "string"}}},
            'grep.parameters.type: must be "object": a tool takes an object of arguments',
        ),
        (
            {"grep": {"parameters": {"type": "object", "properties": {"p": {"type": "strin"}}}}},
            f"grep.parameters.properties.p.type: {SCHEMA_ERROR}",
        ),
    ],
)
def test_a_bad_variant_file_is_one_error_naming_file_and_key(
    tmp_path: Path, content: Any, message: str
) -> None:
    if content is not None:
        write_variant(tmp_path, "v", content)
    with pytest.raises(VariantError) as info:
        load_variant(tmp_path, "v")
    assert str(info.value) == f".replio/eval/tools/v.json: {message}"


def test_a_variant_naming_an_unknown_tool_is_an_error(tmp_path: Path) -> None:
    write_variant(tmp_path, "v", {"grpe": {"description": "Search."}})
    with pytest.raises(VariantError) as info:
        apply_variant(builtin_tools(), load_variant(tmp_path, "v"))
    known = ", ".join(sorted(builtin_tools()))
    assert str(info.value) == f".replio/eval/tools/v.json: grpe: unknown tool (known: {known})"


def test_names_and_labels() -> None:
    assert variant_name(" terse ") == "terse"
    assert variant_names("base,terse,,base") == ["base", "terse"]
    assert resolve_variants(None, None) == ["base"]
    assert resolve_variants("terse", None) == ["terse"]
    assert resolve_variants("terse", ["base", "long"]) == ["base", "long"]
    assert run_label(ProviderSpec("openai", "gpt-4o"), "base") == "openai:gpt-4o"
    assert run_label(ProviderSpec("openai", "gpt-4o"), "terse") == "openai:gpt-4o+tools=terse"


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        (variant_name, "../x", "invalid tool variant name '../x': use letters, digits"),
        (variant_name, "", "invalid tool variant name ''"),
        (variant_names, ",", "no tool variant name in ','"),
        (variant_names, "base,a b", "invalid tool variant name 'a b'"),
    ],
)
def test_bad_names_are_rejected_at_parse_time(parse: Any, text: str, message: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as info:
        parse(text)
    assert str(info.value).startswith(message)


# --- runs, end to end through pytest ------------------------------------------------------------


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    write(pytester.path / ".replio" / "eval" / "notes.json", NOTES)
    write_variant(pytester.path, "terse", TERSE)
    return pytester


def test_compare_tools_runs_one_item_per_variant(project: pytest.Pytester) -> None:
    result = project.runpytest(
        "--replio-provider=mock", "--replio-compare-tools=base,terse", "--collect-only", "-q"
    )
    assert [line for line in result.stdout.lines if "::" in line][-2:] == [
        ".replio/eval/notes.json::notes[mock]",
        ".replio/eval/notes.json::notes[mock+tools=terse]",
    ]


def test_compare_tools_prints_the_variants_side_by_side(project: pytest.Pytester) -> None:
    report = project.path / "report.json"
    result = project.runpytest(
        "--replio-provider=mock",
        "--replio-compare-tools=base,terse",
        "--replio-fixture=notes",
        f"--replio-json={report}",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "metric           mock  mock+tools=terse",
            "---------  ----------  ----------------",
            "accuracy         1.00              1.00",
            "pass rate  100% (1/1)        100% (1/1)",
            "calls               1                 1",
            "redundant           0                 0",
            "errors              0                 0",
            "tokens           1139              1014",
        ]
    )
    doc = json.loads(report.read_text())
    assert doc["providers"] == ["mock", "mock+tools=terse"]
    assert [(r["provider"], r["model"], r["tools"]) for r in doc["results"]] == [
        ("mock", "", "base"),
        ("mock+tools=terse", "", "terse"),
    ]
    assert list(doc["summary"]) == ["mock", "mock+tools=terse"]


def test_replio_tools_selects_one_variant_from_the_ini_too(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nreplio_tools = terse\n")
    result = project.runpytest("--replio-provider=mock", "--replio-fixture=notes", "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*notes[[]mock+tools=terse[]] PASSED*"])


def test_variants_change_the_tools_the_model_is_sent(project: pytest.Pytester, protocol_server):
    arguments = json.dumps({"path": "notes.txt"})
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "file_read", "arguments": arguments},
    }
    read = {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [call]}}]}
    answer = {"choices": [{"message": {"role": "assistant", "content": "It says hello."}}]}
    for _ in ("base", "terse"):
        protocol_server.reply(CHAT, read)
        protocol_server.reply(CHAT, answer)

    result = project.runpytest(
        "--replio-provider=openai:gpt-4o",
        f"--replio-base-url={protocol_server.url}/v1",
        "--replio-compare-tools=base,terse",
        "--replio-fixture=notes",
        "-p",
        "no:cacheprovider",
    )

    result.assert_outcomes(passed=2)
    sent = [request.body["tools"] for request in protocol_server.requests_to(CHAT)]
    assert (len(sent), sent[0], sent[2]) == (4, sent[1], sent[3])  # two steps per variant
    base, terse = sent[0], sent[2]
    assert [tool["function"]["name"] for tool in base] == [
        "file_read",
        "glob",
        "grep",
        "list",
        "web_fetch",
    ]
    expected = json.loads(json.dumps(base))
    expected[0]["function"]["description"] = "Read a file."
    expected[2]["function"]["parameters"] = TERSE["grep"]["parameters"]
    assert terse == expected
    assert base[0]["function"]["description"] == builtin_tools()["file_read"].description


def test_xdist_runs_the_variants_the_same(project: pytest.Pytester) -> None:
    docs = []
    for workers in ("0", "2"):
        report = project.path / f"report-{workers}.json"
        result = project.runpytest(
            "--replio-compare=mock,mock:b",
            "--replio-compare-tools=terse,base",
            "--replio-fixture=notes",
            f"--replio-json={report}",
            "-n",
            workers,
            "-p",
            "no:cacheprovider",
        )
        result.assert_outcomes(passed=4)
        doc = json.loads(report.read_text())
        docs.append([{**r, "duration_s": 0} for r in doc["results"]])
        assert doc["providers"] == [
            "mock+tools=terse",
            "mock",
            "mock:b+tools=terse",
            "mock:b",
        ]
    assert docs[0] == docs[1]


@pytest.mark.parametrize(
    ("variant", "content", "message"),
    [
        (
            "missing",
            None,
            ".replio/eval/tools/missing.json: cannot read: No such file or directory",
        ),
        (
            "typo",
            {"grpe": {"description": "x"}},
            ".replio/eval/tools/typo.json: grpe: unknown tool",
        ),
    ],
)
def test_a_bad_variant_is_a_usage_error_before_the_run(
    project: pytest.Pytester, variant: str, content: Any, message: str
) -> None:
    if content is not None:
        write_variant(project.path, variant, content)
    result = project.runpytest("--replio-provider=mock", f"--replio-compare-tools=base,{variant}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}*"])


def test_a_bad_variant_name_is_a_usage_error(project: pytest.Pytester) -> None:
    result = project.runpytest("--replio-provider=mock", "--replio-tools=../terse")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*argument --replio-tools: invalid tool variant name '../terse'*"])
