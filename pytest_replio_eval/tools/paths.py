"""Path confinement: the one place where a tool's path argument becomes a real path."""

from __future__ import annotations

from pathlib import Path

from .base import ToolError

HIDDEN = ".replio"  # the harness's own throwaway config dir, not part of the task


def resolve_in(worktree: Path, path: str) -> Path:
    """Resolve `path` (relative to the worktree, or absolute) and keep it inside the worktree.

    Symlinks are followed, including dangling ones and symlinked parent dirs, so reading or
    writing through a link that points out of the worktree is refused too.
    """
    if "\0" in path:
        raise ToolError("path contains a NUL byte")
    root = worktree.resolve()
    try:
        target = (root / path).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop
        raise ToolError(f"cannot resolve {path!r}: {exc}") from None
    if not target.is_relative_to(root):
        raise ToolError("path escapes the worktree")
    return target


def inside(root: Path, path: Path) -> bool:
    """Whether `path`, symlinks followed, lies inside the resolved `root`."""
    try:
        return path.resolve().is_relative_to(root)
    except (OSError, RuntimeError):
        return False


def relative(root: Path, path: Path) -> str:
    """How results name a path: relative to the worktree, with POSIX slashes."""
    return path.relative_to(root).as_posix()


def hidden(rel: str) -> bool:
    return rel == HIDDEN or rel.startswith(HIDDEN + "/")
