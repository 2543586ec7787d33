"""Fixture model, schema validation, discovery and precedence."""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import cache
from importlib.resources import files as package_files
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING, Any

from .schemacheck import Check, compile_schema

if TYPE_CHECKING:
    import jsonschema
    import pluggy
    from jsonschema.exceptions import ValidationError


@dataclass(frozen=True)
class Fixture:
    id: str
    task: str
    description: str = ""
    files: dict[str, str] = field(default_factory=dict)
    expected: list[str] | None = None
    verifier: dict[str, Any] = field(default_factory=dict)
    tool_permission: dict[str, str] = field(default_factory=dict)
    tools_deny: list[str] = field(default_factory=list)
    # Where it came from: "replio-core-eval", a plugin's name, or a global/local file path.
    source: str = ""
    # The sources it replaced by id, earliest first.
    overrides: list[str] = field(default_factory=list)
    trials: int | None = None  # runs per provider spec; None: the run's --replio-trials
    oracle_answer: str | None = None  # the mock oracle's final text


class FixtureError(Exception):
    """A bad fixture, named by source and JSON path: `<source>: <path>: <message>`."""

    def __init__(self, source: str, path: str, message: str) -> None:
        self.source, self.path, self.message = source, path, message
        where = f"{source}: {path}" if path else source
        super().__init__(f"{where}: {message}")


@dataclass
class Discovery:
    fixtures: list[Fixture]  # sorted by id, each the winner of its id
    errors: list[FixtureError]


def global_dir() -> Path:
    """`$XDG_CONFIG_HOME/replio/eval`; the XDG spec says to ignore a relative value."""
    config = os.environ.get("XDG_CONFIG_HOME", "")
    base = Path(config) if os.path.isabs(config) else Path.home() / ".config"
    return base / "replio" / "eval"


def local_dir(project: Path) -> Path:
    return project / ".replio" / "eval"


def load_fixture(data: Any, source: str, default_id: str | None = None) -> Fixture:
    """Validate one fixture object; any problem is one FixtureError naming its JSON path."""
    if not isinstance(data, dict):
        raise FixtureError(source, "(root)", f"must be a JSON object, not {json_type(data)}")
    if "id" not in data:
        if default_id is None:
            raise FixtureError(source, "id", "is required")
        data = {"id": default_id, **data}
    if not _accepts()(data):  # jsonschema only to name the problem: it is slow
        from jsonschema.exceptions import best_match  # deferred: costs 25 ms to import

        error = best_match(_validator().iter_errors(data))
        if error is not None:
            raise FixtureError(source, *_describe(error))
    problem = _semantic_problem(data)
    if problem is not None:
        raise FixtureError(source, *problem)
    data = copy.deepcopy(data)  # the fixture must not share mutable state with its caller
    return Fixture(
        id=data["id"],
        task=data["task"],
        description=data.get("description", ""),
        files=data.get("files", {}),
        expected=data.get("expected"),
        verifier=data.get("verifier", {}),
        tool_permission=data.get("tool_permission", {}),
        tools_deny=data.get("tools_deny", []),
        source=source,
        trials=data.get("trials"),
        oracle_answer=data.get("oracle_answer"),
    )


def load_file(path: Path, source: str | None = None) -> Fixture:
    """Load a fixture file; its id defaults to the file's stem."""
    source = str(path) if source is None else source
    try:
        text = path.read_text(encoding="utf-8-sig")  # tolerate the BOM some editors write
    except UnicodeDecodeError:
        raise FixtureError(source, "", "is not UTF-8 text") from None
    except OSError as exc:
        raise FixtureError(source, "", f"cannot read: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        message = f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        raise FixtureError(source, "", message) from None
    return load_fixture(data, source, default_id=path.stem)


def discover(project: Path | None, pm: pluggy.PluginManager | None = None) -> Discovery:
    """Merge plugin, global and local fixtures by id (later wins); bad ones become errors."""
    if pm is None:
        from .plugins import plugin_manager  # deferred: plugins imports modules that import us

        pm = plugin_manager()
    sources = [_plugin_fixtures(pm), _file_fixtures(global_dir())]
    if project is not None:
        sources.append(_file_fixtures(local_dir(project), relative_to=project))
    found: dict[str, Fixture] = {}
    errors: list[FixtureError] = []
    for source in sources:
        for item in source:
            if isinstance(item, FixtureError):
                errors.append(item)
                continue
            earlier = found.get(item.id)
            if earlier is not None:
                item = replace(item, overrides=[*earlier.overrides, earlier.source])
            found[item.id] = item
    return Discovery(fixtures=sorted(found.values(), key=lambda f: f.id), errors=errors)


def _plugin_fixtures(pm: pluggy.PluginManager) -> Iterator[Fixture | FixtureError]:
    # One call per hookimpl, in pluggy's call order, each with its own dict: so every fixture is
    # attributed to the plugin that contributed it.
    for impl in reversed(pm.hook.register_fixtures.get_hookimpls()):
        contributed: dict[str, Any] = {}
        try:
            impl.function(fixtures=contributed)
        except Exception as exc:
            message = f"register_fixtures failed: {type(exc).__name__}: {exc}"
            yield FixtureError(impl.plugin_name, "", message)
            continue
        for key, data in contributed.items():
            try:
                yield load_fixture(data, impl.plugin_name, default_id=str(key))
            except FixtureError as exc:
                yield FixtureError(f"{impl.plugin_name}: fixture {key!r}", exc.path, exc.message)


def _file_fixtures(
    directory: Path, relative_to: Path | None = None
) -> Iterator[Fixture | FixtureError]:
    """Global sources are absolute paths; local ones are relative to the project."""
    for path in sorted(directory.glob("*.json")):
        if path.name.startswith("."):  # editor lock and backup files, as a shell glob would skip
            continue
        source = path.relative_to(relative_to).as_posix() if relative_to else str(path)
        try:
            yield load_file(path, source)
        except FixtureError as exc:
            yield exc


@cache
def _schema() -> dict[str, Any]:
    path = package_files(__package__).joinpath("schema", "fixture.schema.json")
    return json.loads(path.read_text(encoding="utf-8"))


@cache
def _accepts() -> Check:
    """Compiled once per process: collecting thousands of fixtures must stay fast."""
    return compile_schema(_schema()) or _validator().is_valid


@cache
def _validator() -> jsonschema.Draft202012Validator:
    import jsonschema  # deferred: only a rejected fixture needs it

    return jsonschema.Draft202012Validator(_schema())


def _describe(error: ValidationError) -> tuple[str, str]:
    """A jsonschema error as (JSON path, message), with its least readable messages rephrased."""
    path = list(error.absolute_path)
    if error.validator == "required":
        missing = next(key for key in error.validator_value if key not in error.instance)
        return json_path_of([*path, missing]), "is required"
    if error.validator == "additionalProperties":
        known = error.schema.get("properties", {})
        unknown = [repr(key) for key in error.instance if key not in known]
        return json_path_of(path), f"unknown key{'s' * (len(unknown) > 1)} {', '.join(unknown)}"
    if error.validator == "maxProperties":  # only matchers limit their keys
        keys = ", ".join(repr(key) for key in error.instance)
        return json_path_of(path), f"a matcher takes exactly one key, not {keys}"
    if (error.validator, error.validator_value) in (("minLength", 1), ("pattern", r"\S")):
        return json_path_of(path), "must not be empty"
    return json_path_of(path), error.message


def _semantic_problem(data: dict[str, Any]) -> tuple[str, str] | None:
    """What the schema cannot say: safe paths, exact needs expected, regexes that compile."""
    verifier = data.get("verifier", {})
    for path, content in data.get("files", {}).items():
        if not (_encodable(path) and _encodable(content)):
            return json_path_of(["files", path]), "holds an unpaired surrogate, which no file can"
    for where, paths in (
        (["files"], data.get("files", {})),
        (["verifier", "files"], verifier.get("files", {})),
    ):
        for path in paths:
            problem = _path_problem(path)
            if problem is not None:
                return json_path_of([*where, path]), problem
    if verifier.get("exact") and "expected" not in data:
        return "verifier.exact", "requires expected"
    for where, pattern in _regexes(verifier):
        try:
            re.compile(pattern)
        except re.error as exc:
            return json_path_of(where), f"invalid regular expression: {exc}"
    return None


def _encodable(text: str) -> bool:
    """JSON escapes can spell a lone surrogate (`\\udc00`): valid JSON, but no valid Unicode."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _path_problem(path: str) -> str | None:
    if "\0" in path:
        return "path contains a NUL byte"
    if PurePosixPath(path).is_absolute() or PureWindowsPath(path).is_absolute():
        return "absolute path is not allowed"
    parts = re.split(r"[/\\]", path)
    if ".." in parts:
        return "path must not contain '..'"
    if all(part in ("", ".") for part in parts):
        return "path is empty"
    return None


def _regexes(verifier: dict[str, Any]) -> Iterator[tuple[list[Any], str]]:
    if "regex" in verifier.get("answer", {}):
        yield ["verifier", "answer", "regex"], verifier["answer"]["regex"]
    for path, checks in verifier.get("files", {}).items():
        if "regex" in checks:
            yield ["verifier", "files", path, "regex"], checks["regex"]
    for tool, params in verifier.get("args", {}).items():
        for param, value in params.items():
            yield from _matcher_regexes(["verifier", "args", tool, param], value)


def _matcher_regexes(where: list[Any], value: Any) -> Iterator[tuple[list[Any], str]]:
    if not isinstance(value, dict):
        return
    if "$regex" in value:
        yield [*where, "$regex"], value["$regex"]
    for index, option in enumerate(value.get("$any", [])):
        yield from _matcher_regexes([*where, "$any", index], option)


def json_path_of(parts: list[Any]) -> str:
    """Dotted, with odd keys (empty, unprintable) JSON-quoted so the message stays one line."""
    if not parts:
        return "(root)"
    return ".".join(p if p and p.isprintable() else json.dumps(p) for p in map(str, parts))


def json_type(value: Any) -> str:
    names = {
        list: "an array",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
    }
    return "null" if value is None else names.get(type(value), type(value).__name__)
