"""File tools: read, list, glob, grep, write, edit; every path confined to the worktree."""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterator
from fnmatch import fnmatchcase
from pathlib import Path
from typing import IO, Any

from .base import Tool, ToolContext, ToolError
from .output import OUTPUT_CAP
from .paths import hidden, inside, relative, resolve_in

READ_LIMIT = 2000  # lines per file_read page
READ_BUDGET = OUTPUT_CAP - 200  # characters per page: the read-on note must survive the cap
LINE_CAP = 2000  # characters shown of one line
BINARY_PROBE = 8192  # bytes sniffed for a NUL to call a file binary


def _decode(raw: bytes) -> str:
    """One line of a file without its line ending, decoded leniently (binary never fails)."""
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    return raw.decode("utf-8", errors="replace")


def _cut(text: str) -> str:
    """A line as shown to the model: one minified megabyte must not fill the output."""
    if len(text) > LINE_CAP:
        return f"{text[:LINE_CAP]} [line cut: {LINE_CAP} of {len(text)} characters shown]"
    return text


def _count_lines(f: IO[bytes]) -> int:
    """Lines left in `f`, counted in chunks so a large file is never held in memory."""
    count, last = 0, b"\n"
    for chunk in iter(lambda: f.read(1 << 20), b""):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (last != b"\n")


def _file(ctx: ToolContext, path: str) -> Path:
    target = resolve_in(ctx.worktree, path)
    if target.is_dir():
        raise ToolError(f"{path} is a directory")
    if not target.exists():
        raise ToolError(f"no such file: {path}")
    if not target.is_file():
        raise ToolError(f"{path} is not a regular file")
    return target


def _directory(ctx: ToolContext, path: str) -> Path:
    target = resolve_in(ctx.worktree, path)
    if not target.is_dir():
        raise ToolError(f"no such directory: {path}")
    return target


def file_read(ctx: ToolContext, args: dict[str, Any]) -> str:
    path, offset, limit = args["path"], args.get("offset", 1), args.get("limit", READ_LIMIT)
    lines: list[str] = []
    size = unshown = 0
    with _file(ctx, path).open("rb") as f:
        skipped = sum(1 for _ in itertools.islice(f, offset - 1))
        for n, raw in enumerate(itertools.islice(f, limit), start=offset):
            line = f"{n:>6}\t{_cut(_decode(raw))}"
            size += len(line) + 1
            if size > READ_BUDGET:  # a page of long lines ends early, not cut mid-line
                unshown = 1
                break
            lines.append(line)
        rest = unshown + _count_lines(f)
    total = skipped + len(lines) + rest
    if total == 0:
        return "(empty file)"
    if not lines:
        raise ToolError(f"offset {offset} is past the end of {path} ({total} lines)")
    if rest:
        lines.append(
            f"... {rest} more lines (file has {total} lines); "
            f"use offset={offset + len(lines)} to read on"
        )
    return "\n".join(lines)


def _tree(root: Path, directory: Path, depth: int, level: int, lines: list[str]) -> None:
    for entry in sorted(directory.iterdir(), key=lambda p: p.name):
        if hidden(relative(root, entry)):
            continue
        is_dir = entry.is_dir()
        lines.append(f"{'  ' * level}{entry.name}{'/' if is_dir else ''}")
        # Symlinked dirs are shown but not entered: no loops, no listing outside the worktree.
        if is_dir and not entry.is_symlink() and level + 1 < depth:
            _tree(root, entry, depth, level + 1, lines)


def list_dir(ctx: ToolContext, args: dict[str, Any]) -> str:
    root = ctx.worktree.resolve()
    lines: list[str] = []
    _tree(root, _directory(ctx, args.get("path", ".")), args.get("depth", 2), 0, lines)
    return "\n".join(lines) or "(empty directory)"


def _check_pattern(pattern: str) -> None:
    if "\0" in pattern:
        raise ToolError("pattern contains a NUL byte")
    if pattern.startswith("/") or ".." in pattern.split("/"):
        raise ToolError("path escapes the worktree")


def glob(ctx: ToolContext, args: dict[str, Any]) -> str:
    root = ctx.worktree.resolve()
    pattern = args["pattern"]
    _check_pattern(pattern)
    base = _directory(ctx, args.get("path", "."))
    if pattern.split("/")[-1] == "**":
        # Everything below, files too, on every Python (before 3.13 pathlib gave only dirs).
        pattern += "/*"
    try:
        matches = list(base.glob(pattern))
    except (ValueError, IndexError) as exc:  # pathlib rejects "" and chokes on "."
        raise ToolError(f"invalid pattern {pattern!r}: {exc or type(exc).__name__}") from None
    found = sorted(
        relative(root, m) + ("/" if m.is_dir() else "")
        for m in matches
        if m != root and inside(root, m) and not hidden(relative(root, m))
    )
    return "\n".join(found) or "No files match"


def _walk(root: Path, base: Path) -> Iterator[Path]:
    """Files under `base` that resolve inside the worktree, without entering symlinked dirs."""
    for dirpath, dirnames, filenames in os.walk(base):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if not hidden(relative(root, here / d))]
        for name in filenames:
            path = here / name
            # is_file: a FIFO or socket would block the read or mean nothing.
            if path.is_file() and not hidden(relative(root, path)) and inside(root, path):
                yield path


def _name_matches(rel: str, pattern: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    if fnmatchcase(rel, pattern) or fnmatchcase(name, pattern):
        return True
    # `**/*.py` should match top-level files too, as it does in shells with globstar.
    return pattern.startswith("**/") and fnmatchcase(rel, pattern[3:])


def _is_binary(path: Path) -> bool:
    with path.open("rb") as f:
        return b"\0" in f.read(BINARY_PROBE)


def grep(ctx: ToolContext, args: dict[str, Any]) -> str:
    root = ctx.worktree.resolve()
    pattern, path, name_glob = args["pattern"], args.get("path", "."), args.get("glob")
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise ToolError(f"invalid regex {pattern!r}: {exc}") from None
    base = resolve_in(root, path)
    if base.is_file():
        files = [base]
    elif base.is_dir():
        files = list(_walk(root, base))
    else:
        raise ToolError(f"no such file or directory: {path}")
    hits: list[str] = []
    for file in sorted(files, key=lambda p: relative(root, p)):
        rel = relative(root, file)
        if (name_glob and not _name_matches(rel, name_glob)) or _is_binary(file):
            continue
        with file.open("rb") as f:
            for n, raw in enumerate(f, start=1):
                text = _decode(raw)
                if regex.search(text):
                    hits.append(f"{rel}:{n}: {_cut(text)}")
    return "\n".join(hits) or "No matches"


def file_write(ctx: ToolContext, args: dict[str, Any]) -> str:
    path = args["path"]
    target = resolve_in(ctx.worktree, path)
    if target.is_dir():
        raise ToolError(f"{path} is a directory")
    data = args["content"].encode("utf-8")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    except OSError as exc:
        raise ToolError(f"cannot write {path}: {exc.strerror or exc}") from None
    return f"Wrote {len(data)} bytes to {path}"


def file_edit(ctx: ToolContext, args: dict[str, Any]) -> str:
    path, old, new = args["path"], args["old"], args["new"]
    target = _file(ctx, path)
    try:
        text = target.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{path} is not UTF-8 text") from None
    count = text.count(old)
    if count == 0:
        raise ToolError(f"old text not found in {path}")
    if count > 1:
        raise ToolError(f"old text occurs {count} times in {path}; include more context")
    target.write_bytes(text.replace(old, new, 1).encode("utf-8"))
    return f"Edited {path}"


def _schema(required: list[str], **properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


_PATH = {"type": "string", "minLength": 1, "description": "Path relative to the worktree."}
_DIR = {"type": "string", "description": "Directory relative to the worktree (default: its root)."}

TOOLS = (
    Tool(
        name="file_read",
        description="Read a text file as numbered lines. Page through long files with offset.",
        parameters=_schema(
            ["path"],
            path=_PATH,
            offset={"type": "integer", "minimum": 1, "description": "First line, 1-based."},
            limit={"type": "integer", "minimum": 1, "description": "Lines to read (default 2000)."},
        ),
        category="read",
        func=file_read,
    ),
    Tool(
        name="list",
        description="List a directory as an indented tree; directories end in /.",
        parameters=_schema(
            [],
            path=_DIR,
            depth={"type": "integer", "minimum": 1, "description": "Levels to show (default 2)."},
        ),
        category="list",
        func=list_dir,
    ),
    Tool(
        name="glob",
        description="Find paths matching a glob pattern, e.g. **/*.py.",
        parameters=_schema(["pattern"], pattern={"type": "string", "minLength": 1}, path=_DIR),
        category="list",
        func=glob,
    ),
    Tool(
        name="grep",
        description="Search file contents with a Python regex; prints path:line: text.",
        parameters=_schema(
            ["pattern"],
            pattern={"type": "string"},
            path={"type": "string", "description": "File or directory to search."},
            glob={"type": "string", "description": "Only files matching this, e.g. *.py."},
        ),
        category="read",
        func=grep,
    ),
    Tool(
        name="file_write",
        description="Create or overwrite a file with the given content.",
        parameters=_schema(["path", "content"], path=_PATH, content={"type": "string"}),
        category="edit",
        func=file_write,
    ),
    Tool(
        name="file_edit",
        description="Replace the text old, which must occur exactly once, with new in a file.",
        parameters=_schema(
            ["path", "old", "new"],
            path=_PATH,
            old={"type": "string", "minLength": 1},
            new={"type": "string"},
        ),
        category="edit",
        func=file_edit,
    ),
)
