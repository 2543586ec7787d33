"""`replio eval`: list a project's fixtures, or run its eval suite through pytest in-process.

    replio eval --path <project> list
    replio eval --path <project> run [--fixture ID]... [--provider P] [--model M]
                                     [--compare P1,P2] [--output table|json]

Thin on purpose: discovery, running and reporting live in the plugin and its modules.
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from .fixtures import Fixture, discover
from .options import spec_list
from .plugins import plugin_manager


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed usage or help; keep main's int contract
        return int(exc.code or 0)
    if args.misplaced_path is not None:
        hint = f"replio eval --path {shlex.quote(args.misplaced_path)} {args.action}"
        print(f"error: --path goes before the subcommand: {hint}", file=sys.stderr)
        return 2
    path = Path(args.path)
    if not path.is_dir():
        print(f"error: --path {args.path}: not a directory", file=sys.stderr)
        return 2
    return args.handler(path.resolve(), args)


def list_fixtures(path: Path, args: argparse.Namespace) -> int:
    """Bundled, entry-point, global and local fixtures; a project's conftest.py plugins are
    loaded only by pytest, so fixtures they register show up in `run`, not here."""
    found = discover(path, plugin_manager())
    rows = [(fixture.id, fixture.source, _describe(fixture)) for fixture in found.fixtures]
    if rows:
        print(_columns(rows))
    for error in found.errors:
        print(f"error: {error}", file=sys.stderr)
    return 1 if found.errors else 0


def run_suite(path: Path, args: argparse.Namespace) -> int:
    """Exit with pytest's code; `--output json` leaves stdout to the report document alone."""
    if args.output == "table":
        return int(pytest.main(_pytest_args(path, args), plugins=[]))
    with tempfile.TemporaryDirectory(prefix="replio-") as tmp:
        report = Path(tmp) / "report.json"
        # pytest's terminal writer binds sys.stdout when its config is made, so this moves all
        # of its output, the metrics table included, to stderr.
        with contextlib.redirect_stdout(sys.stderr):
            argv = [*_pytest_args(path, args), f"--replio-json={report}"]
            code = int(pytest.main(argv, plugins=[]))
        if not report.is_file():
            print(f"error: pytest exited {code} without writing a report", file=sys.stderr)
            return code or 1  # no document on stdout is never a success
        text = report.read_text(encoding="utf-8")
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return code


def _pytest_args(path: Path, args: argparse.Namespace) -> list[str]:
    # No -q: the plugin hides the per-fixture table when pytest is quiet.
    argv = [str(path), "--rootdir", str(path), "--replio-only", "-p", "no:cacheprovider"]
    argv.append(f"--replio-provider={args.provider}")
    if args.model:
        argv.append(f"--replio-model={args.model}")
    if args.compare:
        argv.append(f"--replio-compare={args.compare}")
    argv.extend(f"--replio-fixture={fixture_id}" for fixture_id in args.fixture)
    return argv


def _describe(fixture: Fixture) -> str:
    text = " ".join(fixture.description.split())  # one line per fixture keeps columns aligned
    if fixture.overrides:
        text = f"{text} (overrides {', '.join(fixture.overrides)})".lstrip()
    return text


def _columns(rows: Sequence[tuple[str, str, str]]) -> str:
    id_width = max(len(row[0]) for row in rows)
    source_width = max(len(row[1]) for row in rows)
    lines = (f"{id_:<{id_width}}  {source:<{source_width}}  {text}" for id_, source, text in rows)
    return "\n".join(line.rstrip() for line in lines)


def _specs(text: str) -> str:
    """Reject a malformed provider spec before pytest starts; pytest gets the text as typed."""
    spec_list(text)
    return text


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="replio", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    evaluate = commands.add_parser("eval", help="evaluate tool use on a project's fixtures")
    evaluate.add_argument(
        "--path", default=".", metavar="PROJECT", help="project directory (default: .)"
    )
    actions = evaluate.add_subparsers(dest="action", required=True)

    listing = actions.add_parser(
        "list",
        help="list fixtures and bad fixture files",
        description=list_fixtures.__doc__,
    )
    listing.set_defaults(handler=list_fixtures)

    running = actions.add_parser("run", help="run the eval suite with pytest")
    running.add_argument(
        "--fixture",
        action="append",
        default=[],
        metavar="ID",
        help="run only this fixture (repeatable)",
    )
    running.add_argument(
        "--provider", default="mock", type=_specs, help="provider spec (default: mock)"
    )
    running.add_argument("--model", help="model for a provider spec that names none")
    running.add_argument(
        "--compare", type=_specs, metavar="P1,P2", help="run every fixture once per spec"
    )
    running.add_argument("--output", choices=("table", "json"), default="table")
    running.set_defaults(handler=run_suite)

    for sub in (listing, running):  # caught after parsing, to answer with the right order
        sub.add_argument("--path", dest="misplaced_path", help=argparse.SUPPRESS)
    return parser
