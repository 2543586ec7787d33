"""Permission categories, their merge with a fixture, ask resolution, and refusals."""

from __future__ import annotations

import pytest

from pytest_replio_eval.fixtures import Fixture
from pytest_replio_eval.permissions import (
    DEFAULTS,
    HeadlessUI,
    Permissions,
    offered_tools,
    refusal,
)
from pytest_replio_eval.tools import Tool, builtin_tools


def fixture(**kwargs: object) -> Fixture:
    return Fixture(id="f", task="do it", **kwargs)  # type: ignore[arg-type]


def names(tools: list[Tool]) -> list[str]:
    return [tool.name for tool in tools]


def test_defaults_allow_looking_and_deny_changing() -> None:
    assert dict(DEFAULTS) == {
        "read": "allow",
        "list": "allow",
        "web": "allow",
        "edit": "deny",
        "bash": "deny",
        "mcp": "deny",
    }
    assert Permissions() == Permissions.from_fixture(fixture())


def test_tool_permission_merges_over_the_defaults_per_category() -> None:
    perms = Permissions.from_fixture(
        fixture(tool_permission={"edit": "allow", "web": "deny", "bash": "ask"})
    )
    assert perms.to_dict() == {
        "categories": {
            "read": "allow",
            "list": "allow",
            "web": "deny",
            "edit": "allow",
            "bash": "ask",
            "mcp": "deny",
        },
        "tools_deny": [],
    }


def test_tools_deny_denies_by_name_over_an_allowed_category() -> None:
    perms = Permissions.from_fixture(fixture(tools_deny=["grep", "file_write"]))
    registry = builtin_tools()
    assert perms.action(registry["grep"]) == "deny"
    assert perms.action(registry["file_read"]) == "allow"
    assert perms.to_dict()["tools_deny"] == ["file_write", "grep"]


def test_a_tool_in_an_unknown_category_is_denied() -> None:
    tool = Tool("probe", "x", {"type": "object"}, "network", lambda c, a: "")
    assert Permissions().action(tool) == "deny"
    assert refusal("probe", {"probe": tool}, Permissions(), HeadlessUI()) == (
        "Error: tool 'probe' is denied (network: deny)"
    )


def test_headless_ui_resolves_ask() -> None:
    assert HeadlessUI().allows("ask") is True
    assert HeadlessUI(auto="deny").allows("ask") is False
    assert HeadlessUI().allows("allow") is True
    assert HeadlessUI().allows("deny") is False


def test_default_offer_is_the_looking_tools_sorted() -> None:
    offered = offered_tools(builtin_tools(), Permissions(), HeadlessUI())
    assert names(offered) == ["file_read", "glob", "grep", "list", "web_fetch"]


def test_ask_categories_are_offered_by_the_headless_ui() -> None:
    perms = Permissions.from_fixture(fixture(tool_permission={"edit": "ask", "read": "deny"}))
    assert names(offered_tools(builtin_tools(), perms, HeadlessUI())) == [
        "file_edit",
        "file_write",
        "glob",
        "list",
        "web_fetch",
    ]
    assert names(offered_tools(builtin_tools(), perms, HeadlessUI(auto="deny"))) == [
        "glob",
        "list",
        "web_fetch",
    ]


def test_denied_tool_is_not_offered_and_refused_when_called() -> None:
    registry = builtin_tools()
    perms = Permissions.from_fixture(
        fixture(tool_permission={"edit": "allow", "bash": "ask"}, tools_deny=["file_edit"])
    )
    ui = HeadlessUI()
    assert "file_edit" not in names(offered_tools(registry, perms, ui))
    assert "file_write" in names(offered_tools(registry, perms, ui))
    assert refusal("file_edit", registry, perms, ui) == (
        "Error: tool 'file_edit' is denied (denied by tools_deny)"
    )
    assert refusal("file_write", registry, perms, ui) is None
    assert refusal("run_command", registry, perms, ui) is None
    assert refusal("run_command", registry, perms, HeadlessUI(auto="deny")) == (
        "Error: tool 'run_command' is denied (bash: ask)"
    )


def test_refusal_by_category_and_for_unknown_tools() -> None:
    registry = builtin_tools()
    assert refusal("file_write", registry, Permissions(), HeadlessUI()) == (
        "Error: tool 'file_write' is denied (edit: deny)"
    )
    assert refusal("rm_rf", registry, Permissions(), HeadlessUI()) == "Error: unknown tool 'rm_rf'"
    assert refusal("file_read", registry, Permissions(), HeadlessUI()) is None


@pytest.mark.parametrize(
    ("tool_permission", "message"),
    [
        (
            {"exec": "allow"},
            "unknown permission category 'exec' (expected read, list, web, edit, bash, mcp)",
        ),
        (
            {"edit": "yes"},
            "invalid action 'yes' for category 'edit' (expected allow, deny, ask)",
        ),
    ],
)
def test_bad_permissions_name_the_offending_entry(
    tool_permission: dict[str, str], message: str
) -> None:
    with pytest.raises(ValueError) as excinfo:
        Permissions.from_fixture(fixture(tool_permission=tool_permission))
    assert str(excinfo.value) == message


def test_bad_ui_answers_are_rejected() -> None:
    with pytest.raises(ValueError, match=r"^invalid auto answer 'ask' \(expected allow or deny\)$"):
        HeadlessUI(auto="ask")
    with pytest.raises(ValueError, match=r"^invalid action 'maybe' \(expected allow, deny, ask\)$"):
        HeadlessUI().allows("maybe")
