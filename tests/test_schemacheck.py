"""The compiled schema check must agree with jsonschema on every instance, valid or not."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from importlib.resources import files as package_files
from typing import Any

import jsonschema
import pytest

from pytest_replio_eval.schemacheck import compile_schema
from pytest_replio_eval.tools import builtin_tools

SCHEMA = json.loads(
    package_files("pytest_replio_eval").joinpath("schema", "fixture.schema.json").read_text()
)

RICH_FIXTURE: dict[str, Any] = {
    "id": "rich.fixture-1",
    "task": "Do the thing.",
    "description": "Every part of the schema once.",
    "files": {"src/a.py": "A = 1\n", "README.md": "# r\n"},
    "expected": ["grep", "file_read"],
    "verifier": {
        "exact": True,
        "must_include": ["grep"],
        "avoid": ["run_command"],
        "max_calls": 4,
        "min_calls": 1,
        "in_order": ["grep", "file_read"],
        "args": {
            "grep": {"pattern": {"$regex": "^A"}, "path": {"$any": ["src", {"$glob": "s*"}]}},
            "file_read": {"path": "src/a.py", "offset": 1, "meta": {"plain": [1, 2]}},
        },
        "answer": {"contains": ["1"], "ignore_case": True, "regex": "A", "equals": "A = 1"},
        "files": {
            "src/a.py": {"exists": True, "contains": ["A"], "equals": "A = 1\n", "regex": "A"},
            "gone.txt": {"absent": True, "contains": "x"},
        },
        "command": {"run": "true", "exit_code": 0, "timeout": 5},
    },
    "tool_permission": {"read": "allow", "edit": "ask", "bash": "deny"},
    "tools_deny": ["web_fetch"],
    "trials": 2,
    "oracle_answer": "A is 1.",
}

REPLACEMENTS: list[Any] = [
    None, True, False, 0, 1, -1, 1.5, 2.0, 0.0, "", " ", "x", "$x", "allow", "grep",
    [], ["x"], [1], [""], {}, {"a": 1}, {"$regex": "a"}, {"$regex": 1}, {"$contains": "a"},
    {"$any": [1, {"$glob": "*"}]}, {"$any": [{"$nope": 1}]}, {"$any": "x"},
    {"$regex": "a", "$glob": "b"}, {"$nope": 1}, {"run": "x"}, {"exists": "yes"},
]  # fmt: skip


def _paths(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*path, index))


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    doc = copy.deepcopy(doc)
    node = doc
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return doc


def _delete(doc: Any, path: tuple[Any, ...]) -> Any:
    doc = copy.deepcopy(doc)
    node = doc
    for part in path[:-1]:
        node = node[part]
    del node[path[-1]]
    return doc


def _mutations(doc: dict[str, Any]) -> Iterator[Any]:
    """The document, every value replaced by each odd value, every key removed, and an unknown
    key (plain and `$`-prefixed) added to every object."""
    yield doc
    for path in _paths(doc):
        for value in REPLACEMENTS:
            yield _set(doc, path, value)
        if path:
            yield _delete(doc, path)
        target = doc
        for part in path:
            target = target[part]
        if isinstance(target, dict):
            for key in ("zzz", "$zzz"):
                yield _set(doc, (*path, key), "v")


def test_agrees_with_jsonschema_on_every_mutation_of_a_full_fixture() -> None:
    check = compile_schema(SCHEMA)
    assert check is not None
    validator = jsonschema.Draft202012Validator(SCHEMA)
    verdicts = []
    for instance in _mutations(RICH_FIXTURE):
        expected = validator.is_valid(instance)
        assert check(instance) == expected, json.dumps(instance)
        verdicts.append(expected)
    # Both verdicts occur often, so agreement is not agreement on one answer only.
    assert verdicts.count(True) > 50
    assert verdicts.count(False) > 500


def test_agrees_on_the_builtin_tools_argument_schemas() -> None:
    arguments: list[Any] = [
        {}, {"path": "a"}, {"path": ""}, {"path": 1}, {"path": "a", "offset": 0},
        {"path": "a", "offset": 1, "limit": 2.0}, {"path": "a", "offset": True},
        {"command": "ls"}, {"command": "ls", "timeout": 0}, {"command": "ls", "timeout": 601},
        {"command": "ls", "timeout": 600}, {"url": "http://x"}, {"pattern": "*"}, [], "x",
        {"path": "a", "extra": 1}, {"path": "a", "old": "b", "new": "c"}, {"depth": 1.5},
    ]  # fmt: skip
    for tool in builtin_tools().values():
        check = compile_schema(tool.parameters)
        assert check is not None, tool.name
        validator = jsonschema.Draft202012Validator(tool.parameters)
        for instance in arguments:
            assert check(instance) == validator.is_valid(instance), (tool.name, instance)


def test_recursive_refs_are_followed() -> None:
    node = {"type": "object", "properties": {"kids": {"items": {"$ref": "#/$defs/node"}}}}
    schema = {"$defs": {"node": node}, "$ref": "#/$defs/node"}
    check = compile_schema(schema)
    assert check is not None
    assert check({"kids": [{"kids": [{}]}]}) is True
    assert check({"kids": [{"kids": [1]}]}) is False


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "anyOf": [{"required": ["a"]}]},
        {"$ref": "https://example.com/other.json"},
        {"$ref": "#/$defs/missing"},
        {"properties": {"a": {"$id": "https://example.com/a", "type": "string"}}},
        {"enum": [1, 2]},
        {"type": "decimal"},
        {"items": {"type": "string"}, "prefixItems": [{"type": "integer"}]},
    ],
)
def test_a_schema_using_anything_else_is_not_compiled(schema: dict[str, Any]) -> None:
    assert compile_schema(schema) is None
