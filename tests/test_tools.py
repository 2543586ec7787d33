"""The built-in tools on real temp worktrees: outputs, confinement, validation, caps."""

from __future__ import annotations

import dataclasses
import http.server
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pluggy
import pytest

from pytest_replio_eval import hookspecs, tools
from pytest_replio_eval.schemacheck import compile_schema
from pytest_replio_eval.tools import (
    OUTPUT_CAP,
    Tool,
    ToolContext,
    ToolError,
    builtin_tools,
    call_tool,
)

ESCAPE = "Error: path escapes the worktree"


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    wt = tmp_path / "wt"
    wt.mkdir()
    return wt.resolve()


@pytest.fixture
def ctx(worktree: Path) -> ToolContext:
    return ToolContext(worktree=worktree, timeout=10.0)


def call(ctx: ToolContext, name: str, arguments: dict | str) -> str:
    return call_tool(builtin_tools()[name], ctx, arguments)


def write(root: Path, files: dict[str, str]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


# --- registry -------------------------------------------------------------------------------


def test_builtin_tools_names_and_categories() -> None:
    categories = {name: tool.category for name, tool in builtin_tools().items()}
    assert categories == {
        "file_read": "read",
        "grep": "read",
        "list": "list",
        "glob": "list",
        "file_write": "edit",
        "file_edit": "edit",
        "run_command": "bash",
        "web_fetch": "web",
    }


def test_builtin_tools_returns_a_fresh_dict() -> None:
    first = builtin_tools()
    first.pop("file_read")
    assert "file_read" in builtin_tools()


def test_builtin_schemas_are_objects_with_their_required_params() -> None:
    required = {name: tool.parameters["required"] for name, tool in builtin_tools().items()}
    assert required == {
        "file_read": ["path"],
        "list": [],
        "glob": ["pattern"],
        "grep": ["pattern"],
        "file_write": ["path", "content"],
        "file_edit": ["path", "old", "new"],
        "run_command": ["command"],
        "web_fetch": ["url"],
    }
    assert all(t.parameters["type"] == "object" for t in builtin_tools().values())


def test_a_later_plugin_replaces_a_builtin_description_and_adds_a_tool() -> None:
    class UserPlugin:
        @hookspecs.hookimpl
        def register_tools(self, tools: dict[str, Tool]) -> None:
            tools["grep"] = dataclasses.replace(tools["grep"], description="Search. Use me first.")
            tools["echo"] = Tool("echo", "Echo text.", {"type": "object"}, "read", lambda c, a: "x")

    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.register(UserPlugin())  # registered first, still runs after the tryfirst built-ins
    pm.register(tools, name="replio-tools")
    registry: dict[str, Tool] = {}
    pm.hook.register_tools(tools=registry)
    assert registry["grep"].description == "Search. Use me first."
    assert registry["grep"].func is builtin_tools()["grep"].func
    assert registry["echo"].category == "read"
    assert len(registry) == 9


# --- file_read ------------------------------------------------------------------------------


def test_file_read_numbers_lines(ctx: ToolContext) -> None:
    write(ctx.worktree, {"a.txt": "one\ntwo\r\nthree"})
    assert call(ctx, "file_read", {"path": "a.txt"}) == "     1\tone\n     2\ttwo\n     3\tthree"


def test_file_read_pages_and_says_how_to_read_on(ctx: ToolContext) -> None:
    write(ctx.worktree, {"a.txt": "".join(f"line {n}\n" for n in range(1, 11))})
    assert call(ctx, "file_read", {"path": "a.txt", "offset": 3, "limit": 2}) == (
        "     3\tline 3\n     4\tline 4\n"
        "... 6 more lines (file has 10 lines); use offset=5 to read on"
    )
    assert (
        call(ctx, "file_read", {"path": "a.txt", "offset": 9}) == "     9\tline 9\n    10\tline 10"
    )


def test_file_read_offset_past_the_end(ctx: ToolContext) -> None:
    write(ctx.worktree, {"a.txt": "x\ny\n"})
    result = call(ctx, "file_read", {"path": "a.txt", "offset": 5})
    assert result == "Error: offset 5 is past the end of a.txt (2 lines)"


def test_file_read_empty_missing_and_directory(ctx: ToolContext) -> None:
    write(ctx.worktree, {"empty.txt": "", "d/x": ""})
    assert call(ctx, "file_read", {"path": "empty.txt"}) == "(empty file)"
    assert call(ctx, "file_read", {"path": "nope.txt"}) == "Error: no such file: nope.txt"
    assert call(ctx, "file_read", {"path": "d"}) == "Error: d is a directory"


def test_file_read_default_page_is_2000_lines(ctx: ToolContext) -> None:
    write(ctx.worktree, {"a.txt": "x\n" * 2500})
    lines = call(ctx, "file_read", {"path": "a.txt"}).split("\n")
    assert lines[1999] == "  2000\tx"
    assert lines[2000:] == ["... 500 more lines (file has 2500 lines); use offset=2001 to read on"]


def test_file_read_page_of_a_large_file_fits_the_output_cap(ctx: ToolContext) -> None:
    with (ctx.worktree / "big.log").open("w") as f:
        f.writelines(f"entry {n}\n" for n in range(1, 300_001))
    result = call(ctx, "file_read", {"path": "big.log"})
    *lines, note = result.split("\n")
    shown = len(lines)
    assert len(result) <= OUTPUT_CAP
    assert lines == [f"{n:>6}\tentry {n}" for n in range(1, shown + 1)]
    assert note == (
        f"... {300_000 - shown} more lines (file has 300000 lines); "
        f"use offset={shown + 1} to read on"
    )


def test_file_read_cuts_long_lines_and_replaces_undecodable_bytes(ctx: ToolContext) -> None:
    (ctx.worktree / "bin").write_bytes(b"ok\xff\n" + b"y" * 5000 + b"\n")
    assert call(ctx, "file_read", {"path": "bin"}) == (
        f"     1\tok\ufffd\n     2\t{'y' * 2000} [line cut: 2000 of 5000 characters shown]"
    )


# --- list -----------------------------------------------------------------------------------


def test_list_shows_an_indented_tree_two_levels_deep(ctx: ToolContext) -> None:
    write(ctx.worktree, {"b.txt": "", "a/x.py": "", "a/deep/y.py": "", ".replio/cfg.json": "{}"})
    (ctx.worktree / "empty").mkdir()
    assert call(ctx, "list", {}) == "a/\n  deep/\n  x.py\nb.txt\nempty/"
    assert call(ctx, "list", {"depth": 1}) == "a/\nb.txt\nempty/"
    assert call(ctx, "list", {"path": "a", "depth": 5}) == "deep/\n  y.py\nx.py"


def test_list_empty_missing_and_file(ctx: ToolContext) -> None:
    write(ctx.worktree, {"f.txt": ""})
    (ctx.worktree / "empty").mkdir()
    assert call(ctx, "list", {"path": "empty"}) == "(empty directory)"
    assert call(ctx, "list", {"path": "nope"}) == "Error: no such directory: nope"
    assert call(ctx, "list", {"path": "f.txt"}) == "Error: no such directory: f.txt"


def test_list_shows_a_symlinked_dir_without_entering_it(ctx: ToolContext, tmp_path: Path) -> None:
    write(tmp_path, {"outside/secret.txt": "s"})
    (ctx.worktree / "link").symlink_to(tmp_path / "outside")
    assert call(ctx, "list", {}) == "link/"


# --- glob -----------------------------------------------------------------------------------


def test_glob_lists_matches_relative_to_the_worktree(ctx: ToolContext) -> None:
    write(
        ctx.worktree,
        {"b.py": "", "a.txt": "", "pkg/c.py": "", "pkg/sub/d.py": "", ".replio/e.py": ""},
    )
    assert call(ctx, "glob", {"pattern": "**/*.py"}) == "b.py\npkg/c.py\npkg/sub/d.py"
    assert call(ctx, "glob", {"pattern": "*.py", "path": "pkg"}) == "pkg/c.py"
    assert call(ctx, "glob", {"pattern": "*"}) == "a.txt\nb.py\npkg/"
    assert call(ctx, "glob", {"pattern": "*.rs"}) == "No files match"
    everything = "a.txt\nb.py\npkg/\npkg/c.py\npkg/sub/\npkg/sub/d.py"
    assert call(ctx, "glob", {"pattern": "**"}) == everything
    assert call(ctx, "glob", {"pattern": "**", "path": "pkg"}) == "pkg/c.py\npkg/sub/\npkg/sub/d.py"


# --- grep -----------------------------------------------------------------------------------


def test_grep_prints_path_line_text_sorted(ctx: ToolContext) -> None:
    write(
        ctx.worktree,
        {
            "z.py": "def f():\n    return 1\n",
            "a/b.py": "x = 1\ndef g():\n",
            "a.md": "def in docs\n",
            ".replio/x.py": "def hidden():\n",
        },
    )
    (ctx.worktree / "blob.bin").write_bytes(b"def \0binary\n")
    assert call(ctx, "grep", {"pattern": r"^def \w"}) == (
        "a.md:1: def in docs\na/b.py:2: def g():\nz.py:1: def f():"
    )
    assert (
        call(ctx, "grep", {"pattern": "def", "glob": "*.py"})
        == "a/b.py:2: def g():\nz.py:1: def f():"
    )
    assert call(ctx, "grep", {"pattern": "def", "glob": "**/*.py"}).count("\n") == 1
    assert call(ctx, "grep", {"pattern": "def", "path": "a"}) == "a/b.py:2: def g():"
    assert call(ctx, "grep", {"pattern": "return", "path": "z.py"}) == "z.py:2:     return 1"
    assert call(ctx, "grep", {"pattern": "nothing here"}) == "No matches"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_special_files_are_skipped_by_grep_and_refused_by_file_read(ctx: ToolContext) -> None:
    write(ctx.worktree, {"a.txt": "needle\n"})
    os.mkfifo(ctx.worktree / "pipe")  # reading it would block forever
    assert call(ctx, "grep", {"pattern": "needle"}) == "a.txt:1: needle"
    assert call(ctx, "file_read", {"path": "pipe"}) == "Error: pipe is not a regular file"


def test_grep_bad_regex_and_missing_path(ctx: ToolContext) -> None:
    assert call(ctx, "grep", {"pattern": "("}).startswith("Error: invalid regex '(': missing )")
    assert call(ctx, "grep", {"pattern": "x", "path": "nope"}) == (
        "Error: no such file or directory: nope"
    )


# --- file_write / file_edit -----------------------------------------------------------------


def test_file_write_creates_parents_and_counts_bytes(ctx: ToolContext) -> None:
    assert call(ctx, "file_write", {"path": "new/dir/f.txt", "content": "héllo\n"}) == (
        "Wrote 7 bytes to new/dir/f.txt"
    )
    assert (ctx.worktree / "new/dir/f.txt").read_bytes() == "héllo\n".encode()
    call(ctx, "file_write", {"path": "new/dir/f.txt", "content": "2"})
    assert (ctx.worktree / "new/dir/f.txt").read_text() == "2"


def test_file_write_to_a_directory_or_under_a_file(ctx: ToolContext) -> None:
    write(ctx.worktree, {"d/f.txt": "keep"})
    assert call(ctx, "file_write", {"path": "d", "content": ""}) == "Error: d is a directory"
    result = call(ctx, "file_write", {"path": "d/f.txt/x", "content": ""})
    assert result.startswith("Error: cannot write d/f.txt/x: ")
    assert (ctx.worktree / "d/f.txt").read_text() == "keep"


def test_file_edit_replaces_the_single_occurrence(ctx: ToolContext) -> None:
    (ctx.worktree / "m.py").write_bytes(b"a = 1\r\nb = 2\r\n")
    assert call(ctx, "file_edit", {"path": "m.py", "old": "b = 2", "new": "b = 3"}) == "Edited m.py"
    assert (ctx.worktree / "m.py").read_bytes() == b"a = 1\r\nb = 3\r\n"


def test_file_edit_refuses_missing_or_ambiguous_old_text(ctx: ToolContext) -> None:
    write(ctx.worktree, {"m.py": "x\nx\nx\n"})
    assert call(ctx, "file_edit", {"path": "m.py", "old": "y", "new": "z"}) == (
        "Error: old text not found in m.py"
    )
    assert call(ctx, "file_edit", {"path": "m.py", "old": "x", "new": "z"}) == (
        "Error: old text occurs 3 times in m.py; include more context"
    )
    assert call(ctx, "file_edit", {"path": "nope.py", "old": "x", "new": "z"}) == (
        "Error: no such file: nope.py"
    )
    assert (ctx.worktree / "m.py").read_text() == "x\nx\nx\n"


def test_file_edit_refuses_non_utf8(ctx: ToolContext) -> None:
    (ctx.worktree / "l1.txt").write_bytes(b"caf\xe9")
    assert call(ctx, "file_edit", {"path": "l1.txt", "old": "caf", "new": "x"}) == (
        "Error: l1.txt is not UTF-8 text"
    )


# --- confinement ----------------------------------------------------------------------------


def snapshot(root: Path) -> dict[str, str]:
    """Every entry under root: file bytes, symlink targets, dirs; to prove nothing changed."""
    entries: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                entries[rel] = f"-> {os.readlink(path)}"
            elif path.is_file():
                entries[rel] = path.read_text()
            else:
                entries[rel] = "dir"
    return entries


@pytest.fixture
def escape_setup(ctx: ToolContext, tmp_path: Path) -> Path:
    """A secret outside the worktree, and links inside it that point out."""
    outside = tmp_path / "outside"
    write(outside, {"secret.txt": "secret\n"})
    (ctx.worktree / "link_dir").symlink_to(outside)
    (ctx.worktree / "link_file").symlink_to(outside / "secret.txt")
    (ctx.worktree / "dangling").symlink_to(outside / "ghost.txt")
    write(ctx.worktree, {"inside.txt": "inside\n"})
    return outside


ESCAPES = [
    ("file_read", {"path": "../outside/secret.txt"}),
    ("file_read", {"path": "{outside}/secret.txt"}),
    ("file_read", {"path": "link_file"}),
    ("file_read", {"path": "link_dir/secret.txt"}),
    ("file_read", {"path": "sub/../../outside/secret.txt"}),
    ("list", {"path": ".."}),
    ("list", {"path": "{outside}"}),
    ("list", {"path": "link_dir"}),
    ("glob", {"pattern": "*", "path": ".."}),
    ("glob", {"pattern": "*", "path": "link_dir"}),
    ("glob", {"pattern": "../outside/*"}),
    ("glob", {"pattern": "{outside}/*"}),
    ("grep", {"pattern": "secret", "path": ".."}),
    ("grep", {"pattern": "secret", "path": "link_dir"}),
    ("grep", {"pattern": "secret", "path": "link_file"}),
    ("file_write", {"path": "../outside/new.txt", "content": "x"}),
    ("file_write", {"path": "{outside}/new.txt", "content": "x"}),
    ("file_write", {"path": "link_dir/new.txt", "content": "x"}),
    ("file_write", {"path": "link_dir/deeper/new.txt", "content": "x"}),
    ("file_write", {"path": "link_file", "content": "x"}),
    ("file_write", {"path": "dangling", "content": "x"}),
    ("file_edit", {"path": "../outside/secret.txt", "old": "secret", "new": "x"}),
    ("file_edit", {"path": "{outside}/secret.txt", "old": "secret", "new": "x"}),
    ("file_edit", {"path": "link_dir/secret.txt", "old": "secret", "new": "x"}),
    ("file_edit", {"path": "link_file", "old": "secret", "new": "x"}),
]


@pytest.mark.parametrize(("name", "arguments"), ESCAPES)
def test_escape_attempts_are_refused_and_change_nothing(
    ctx: ToolContext, tmp_path: Path, escape_setup: Path, name: str, arguments: dict[str, str]
) -> None:
    arguments = {k: v.format(outside=escape_setup) for k, v in arguments.items()}
    before = snapshot(tmp_path)
    assert call(ctx, name, arguments) == ESCAPE
    assert snapshot(tmp_path) == before


def test_searching_the_whole_worktree_never_reads_through_links_out(
    ctx: ToolContext, escape_setup: Path
) -> None:
    assert call(ctx, "grep", {"pattern": "secret|inside"}) == "inside.txt:1: inside"
    assert call(ctx, "glob", {"pattern": "**/*"}) == "inside.txt"
    assert call(ctx, "glob", {"pattern": "link_dir/*"}) == "No files match"


def test_absolute_paths_inside_the_worktree_and_internal_symlinks_work(ctx: ToolContext) -> None:
    write(ctx.worktree, {"src/a.txt": "a\n"})
    (ctx.worktree / "alias").symlink_to(ctx.worktree / "src")
    assert call(ctx, "file_read", {"path": str(ctx.worktree / "src/a.txt")}) == "     1\ta"
    assert call(ctx, "file_write", {"path": "alias/b.txt", "content": "b"}) == (
        "Wrote 1 bytes to alias/b.txt"
    )
    assert (ctx.worktree / "src/b.txt").read_text() == "b"


def test_nul_byte_in_a_path_is_an_error(ctx: ToolContext) -> None:
    assert call(ctx, "file_read", {"path": "a\0b"}) == "Error: path contains a NUL byte"
    assert call(ctx, "glob", {"pattern": "*\0"}) == "Error: pattern contains a NUL byte"


# --- run_command ----------------------------------------------------------------------------


def test_run_command_runs_in_the_worktree_not_the_process_cwd(
    ctx: ToolContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = call(ctx, "run_command", {"command": "pwd; echo out; echo err >&2; exit 3"})
    assert result == f"exit code: 3\n{ctx.worktree}\nout\nerr\n"
    assert call(ctx, "run_command", {"command": "true"}) == "exit code: 0"


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_run_command_timeout_kills_the_whole_process_group(ctx: ToolContext) -> None:
    started = time.monotonic()
    result = call(
        ctx,
        "run_command",
        {"command": "sleep 30 & echo $! > child.pid; echo started; wait", "timeout": 1},
    )
    assert time.monotonic() - started < 10
    assert result == "Error: command timed out after 1s\nstarted\n"
    child = int((ctx.worktree / "child.pid").read_text())
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def test_run_command_default_timeout_comes_from_the_context(worktree: Path) -> None:
    ctx = ToolContext(worktree=worktree, timeout=0.3)
    assert call(ctx, "run_command", {"command": "sleep 5"}) == "Error: command timed out after 0.3s"


def test_run_command_output_is_capped(ctx: ToolContext) -> None:
    command = f"{sys.executable} -c \"print('x' * 30000)\""
    result = call(ctx, "run_command", {"command": command})
    total = len("exit code: 0\n") + 30001
    assert result == (
        "exit code: 0\n"
        + "x" * (OUTPUT_CAP - 13)
        + f"\n[output cut: {OUTPUT_CAP} of {total} characters shown]"
    )


# --- web_fetch ------------------------------------------------------------------------------


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/hello":
            body, status = "héllo web".encode(), 200
        else:
            body, status = b"no such page", 404
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    for name in ("http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_web_fetch_returns_status_and_text(ctx: ToolContext, server: str) -> None:
    assert call(ctx, "web_fetch", {"url": f"{server}/hello"}) == "HTTP 200 OK\n\nhéllo web"
    assert (
        call(ctx, "web_fetch", {"url": f"{server}/missing"}) == "HTTP 404 Not Found\n\nno such page"
    )


def test_web_fetch_connection_errors_and_schemes(ctx: ToolContext) -> None:
    with socket.socket() as sock:  # a port that was just free: nothing listens there
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    result = call(ctx, "web_fetch", {"url": dead})
    assert result.startswith(f"Error: cannot fetch {dead}: ")
    assert call(ctx, "web_fetch", {"url": "file:///etc/passwd"}) == (
        "Error: cannot fetch 'file:///etc/passwd': only http and https URLs are supported"
    )


# --- call_tool ------------------------------------------------------------------------------


def test_call_tool_rejects_invalid_json_arguments(ctx: ToolContext) -> None:
    assert call(ctx, "file_read", '{"path": ') == (
        "Error: arguments for file_read are not valid JSON: "
        "Expecting value: line 1 column 10 (char 9)"
    )
    assert call(ctx, "file_read", "[1]") == (
        "Error: invalid arguments for file_read: [1] is not of type 'object'"
    )


def test_call_tool_accepts_a_json_object_string(ctx: ToolContext) -> None:
    write(ctx.worktree, {"a.txt": "a\n"})
    assert call(ctx, "file_read", '{"path": "a.txt"}') == "     1\ta"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "'path' is a required property"),
        ({"path": 5}, "path: 5 is not of type 'string'"),
        ({"path": "a", "offset": 0}, "offset: 0 is less than the minimum of 1"),
        ({"path": "a", "pth": "b"}, "Additional properties are not allowed ('pth' was unexpected)"),
    ],
)
def test_call_tool_validates_arguments_against_the_schema(
    ctx: ToolContext, arguments: dict, message: str
) -> None:
    assert call(ctx, "file_read", arguments) == f"Error: invalid arguments for file_read: {message}"


def _tool(func) -> Tool:  # type: ignore[no-untyped-def]
    return Tool("t", "test tool", {"type": "object"}, "read", func)


def test_call_tool_turns_failures_into_error_results(ctx: ToolContext) -> None:
    def tool_error(c: ToolContext, a: dict) -> str:
        raise ToolError("nothing to do")

    def crash(c: ToolContext, a: dict) -> str:
        raise ValueError("boom")

    assert call_tool(_tool(tool_error), ctx, {}) == "Error: nothing to do"
    assert call_tool(_tool(crash), ctx, {}) == "Error: t failed: ValueError: boom"
    assert call_tool(_tool(lambda c, a: None), ctx, {}) == (
        "Error: t failed: TypeError: returned NoneType, not str"
    )


def test_call_tool_with_a_broken_schema_is_an_error_result(ctx: ToolContext) -> None:
    tool = Tool("t", "bad", {"type": "no-such-type"}, "read", lambda c, a: "ran")
    assert call_tool(tool, ctx, {}).startswith("Error: t failed: SchemaError: ")


def test_builtin_schemas_are_valid_and_compiled() -> None:
    for tool in builtin_tools().values():
        jsonschema.validators.validator_for(tool.parameters).check_schema(tool.parameters)
        assert compile_schema(tool.parameters) is not None, tool.name


def test_only_a_rejected_call_imports_jsonschema(tmp_path: Path) -> None:
    # Every xdist worker would pay 30 ms to import it at its first tool call.
    code = """if True:
        import sys
        from pathlib import Path
        from pytest_replio_eval.tools import ToolContext, builtin_tools, call_tool
        ctx, tool = ToolContext(Path(sys.argv[1])), builtin_tools()["list"]
        for arguments in ({"path": "."}, {"depth": 0}):
            print(call_tool(tool, ctx, arguments), "jsonschema" in sys.modules)
    """
    (tmp_path / "a.txt").write_text("a", encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path.resolve())], capture_output=True, text=True
    )
    assert (run.stdout, run.stderr) == (
        "a.txt False\n"
        "Error: invalid arguments for list: depth: 0 is less than the minimum of 1 True\n",
        "",
    )


def test_call_tool_caps_output_with_a_note(ctx: ToolContext) -> None:
    assert call_tool(_tool(lambda c, a: "y" * OUTPUT_CAP), ctx, {}) == "y" * OUTPUT_CAP
    assert call_tool(_tool(lambda c, a: "y" * 25_000), ctx, {}) == (
        "y" * OUTPUT_CAP + f"\n[output cut: {OUTPUT_CAP} of 25000 characters shown]"
    )
