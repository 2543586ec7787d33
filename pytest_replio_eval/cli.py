"""`replio eval`: list a project's fixtures, or run its eval suite through pytest in-process.

    replio eval --path <project> list
    replio eval --path <project> run [--fixture ID]... [--provider P] [--model M]
                                     [--compare P1,P2] [--output table|json]
    replio eval --path <project> check
    replio eval merge A.json B.json... -o ALL.json
    replio eval report ALL.json [--baseline OLD.json [--fail-on-regression]]

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

from .baseline import compare, regression_lines, render_comparison
from .check import check_project
from .fixtures import Fixture, discover
from .options import output_file, spec_list
from .plugins import plugin_manager
from .report import render_tables, write_report
from .saved import ReportError, merge_reports, report_file
from .variants import variant_files


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


def check_files(path: Path, args: argparse.Namespace) -> int:
    """Validate every fixture and tool-variant file (schema, paths, tool names, permissions,
    and the mock oracle's trace against the verifier); one line per problem and exit 1, for
    pre-commit. Like list, it sees no conftest.py plugins."""
    pm = plugin_manager()
    problems = check_project(path, pm)
    for line in problems:
        print(line)
    if problems:
        return 1
    fixtures = len(discover(path, pm).fixtures)
    print(f"ok: {fixtures} fixtures, {len(variant_files(path))} variant files")
    return 0


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


def merge_files(path: Path, args: argparse.Namespace) -> int:
    """Merge the reports of CI shards (or of xdist runs on several machines) into the report
    one run of all their items would have written; an item found in two shards is an error."""
    try:
        doc = merge_reports(args.reports)
    except ReportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    write_report(doc, args.output)
    print(f"{args.output}: {len(doc['results'])} results from {len(args.reports)} reports")
    return 0


def print_report(path: Path, args: argparse.Namespace) -> int:
    """Print the tables of a saved report, as the run printed them, and with --baseline how
    it compares with another."""
    if args.fail_on_regression and args.baseline is None:
        print("error: --fail-on-regression needs --baseline", file=sys.stderr)
        return 2
    report = args.report
    print(render_tables(report.results, providers=report.providers))
    if args.baseline is None:
        return 0
    comparison = compare(args.baseline, report.results, report.providers)
    print("\n" + render_comparison(comparison))
    lines = regression_lines(comparison) if args.fail_on_regression else []
    for line in lines:
        print(line)
    return 1 if lines else 0


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

    checking = actions.add_parser(
        "check",
        help="validate fixtures and tool variants; exit 1 with one line per problem",
        description=check_files.__doc__,
    )
    checking.set_defaults(handler=check_files)

    merging = actions.add_parser(
        "merge", help="merge the JSON reports of CI shards", description=merge_files.__doc__
    )
    merging.add_argument("reports", nargs="+", type=report_file, metavar="REPORT")
    merging.add_argument(
        "-o", "--output", required=True, type=output_file, metavar="PATH", help="merged report"
    )
    merging.set_defaults(handler=merge_files)

    reporting = actions.add_parser(
        "report", help="print the tables of a saved report", description=print_report.__doc__
    )
    reporting.add_argument("report", type=report_file, metavar="REPORT")
    reporting.add_argument(
        "--baseline", type=report_file, metavar="PATH", help="compare with this saved report"
    )
    reporting.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when a fixture regressed against --baseline",
    )
    reporting.set_defaults(handler=print_report)

    # Caught after parsing, to answer with the right order.
    for sub in (listing, running, checking, merging, reporting):
        sub.add_argument("--path", dest="misplaced_path", help=argparse.SUPPRESS)
    return parser
