"""run_command: a shell command in the worktree, killed with its children on timeout."""

from __future__ import annotations

import os
import signal
import subprocess
from typing import Any

from .base import Tool, ToolContext, ToolError

MAX_TIMEOUT = 600.0  # seconds a model may ask for


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """The shell's children (a backgrounded server, a pipeline) must not outlive the call."""
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except ProcessLookupError:
        pass


def run_command(ctx: ToolContext, args: dict[str, Any]) -> str:
    timeout = ctx.time_left(args.get("timeout") or ctx.timeout)
    proc = subprocess.Popen(
        args["command"],
        shell=True,
        cwd=ctx.worktree,  # never the process's cwd: turns may run side by side
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        encoding="utf-8",
        errors="replace",
        start_new_session=True,
    )
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        try:
            output, _ = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:  # a child left the group and holds the pipe open
            proc.kill()
            output = ""
        message = f"command timed out after {timeout:g}s"
        raise ToolError(f"{message}\n{output}" if output else message) from None
    return f"exit code: {proc.returncode}\n{output}" if output else f"exit code: {proc.returncode}"


TOOLS = (
    Tool(
        name="run_command",
        description="Run a shell command in the worktree; returns exit code and stdout+stderr.",
        parameters={
            "type": "object",
            "properties": {
                "command": {"type": "string", "minLength": 1},
                "timeout": {
                    "type": "number",
                    "exclusiveMinimum": 0,
                    "maximum": MAX_TIMEOUT,
                    "description": "Seconds before the command is killed.",
                },
            },
            "required": ["command"],
            "additionalProperties": False,
        },
        category="bash",
        func=run_command,
    ),
)
