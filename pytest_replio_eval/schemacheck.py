"""A JSON Schema compiled once into a plain yes/no check: the fast path in front of jsonschema.

jsonschema spends about 0.2 ms on one small fixture, more than pytest spends collecting a test
function; a fixture that passes this check is valid, and jsonschema runs only to name what a
rejected one got wrong. Only the keywords below are compiled; a schema using any other (or a
`$ref` that is not `#/$defs/<name>`) is not compiled at all, so the caller falls back to
jsonschema and never accepts what it would reject. The semantics are jsonschema's: a keyword
about strings ignores non-strings, `integer` includes 1.0, booleans are not numbers.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]

_ANNOTATIONS = frozenset({"$schema", "$defs", "$comment", "title", "description"})
_TYPES: dict[str, Check] = {
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "string": lambda x: isinstance(x, str),
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
    "number": lambda x: _number(x),
    "integer": lambda x: (
        (isinstance(x, int) and not isinstance(x, bool))
        or (isinstance(x, float) and x.is_integer())
    ),
}


def _number(x: Any) -> bool:
    return isinstance(x, numbers.Number) and not isinstance(x, bool)


class _Unsupported(Exception):
    pass


def compile_schema(schema: Mapping[str, Any]) -> Check | None:
    """The check, or None when the schema uses something not compiled here."""
    try:
        return _Compiler(schema).compile(schema, root=True)
    except _Unsupported:
        return None


class _Compiler:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.refs: dict[str, Check] = {}  # filled as compiled; a recursive $ref finds it late

    def compile(self, schema: Any, root: bool = False) -> Check:
        if schema is True or schema == {}:
            return lambda x: True
        if schema is False:
            return lambda x: False
        if not isinstance(schema, dict):
            raise _Unsupported
        checks = [self.keyword(key, value, schema) for key, value in schema.items()]
        checks = [check for check in checks if check is not None]
        if not root and "$id" in schema:
            raise _Unsupported  # a new base URI changes what $ref means below it
        if len(checks) == 1:
            return checks[0]
        return lambda x: all(check(x) for check in checks)

    def keyword(self, key: str, value: Any, schema: dict[str, Any]) -> Check | None:
        if key in _ANNOTATIONS or key in ("$id", "then", "else"):
            return None  # then/else belong to `if`
        if key == "type":
            names = [value] if isinstance(value, str) else value
            if not isinstance(names, list) or not all(name in _TYPES for name in names):
                raise _Unsupported
            types = [_TYPES[name] for name in names]
            return types[0] if len(types) == 1 else lambda x: any(t(x) for t in types)
        if key == "required":
            return lambda x: not isinstance(x, dict) or all(name in x for name in value)
        if key == "properties":
            props = [(name, self.compile(sub)) for name, sub in value.items()]
            return lambda x: (
                not isinstance(x, dict) or all(check(x[name]) for name, check in props if name in x)
            )
        if key == "additionalProperties":
            if "patternProperties" in schema:
                raise _Unsupported
            known = frozenset(schema.get("properties", {}))
            extra = self.compile(value)
            return lambda x: (
                not isinstance(x, dict)
                or all(extra(item) for name, item in x.items() if name not in known)
            )
        if key == "items":
            if "prefixItems" in schema:
                raise _Unsupported
            each = self.compile(value)
            return lambda x: not isinstance(x, list) or all(each(item) for item in x)
        if key == "enum":
            if not all(isinstance(option, str) for option in value):
                raise _Unsupported  # JSON equality of other values is not worth copying here
            options = frozenset(value)
            return lambda x: isinstance(x, str) and x in options
        if key == "pattern":
            search = re.compile(value).search
            return lambda x: not isinstance(x, str) or search(x) is not None
        if key == "minLength":
            return lambda x: not isinstance(x, str) or len(x) >= value
        if key == "minimum":
            return lambda x: not _number(x) or x >= value
        if key == "maximum":
            return lambda x: not _number(x) or x <= value
        if key == "exclusiveMinimum":
            return lambda x: not _number(x) or x > value
        if key == "maxProperties":
            return lambda x: not isinstance(x, dict) or len(x) <= value
        if key == "propertyNames":
            name_check = self.compile(value)
            return lambda x: not isinstance(x, dict) or all(name_check(name) for name in x)
        if key == "not":
            negated = self.compile(value)
            return lambda x: not negated(x)
        if key == "if":
            condition = self.compile(value)
            then = self.compile(schema.get("then", True))
            otherwise = self.compile(schema.get("else", True))
            return lambda x: then(x) if condition(x) else otherwise(x)
        if key == "$ref":
            return self.ref(value)
        raise _Unsupported

    def ref(self, ref: Any) -> Check:
        prefix = "#/$defs/"
        if not isinstance(ref, str) or not ref.startswith(prefix):
            raise _Unsupported
        name = ref[len(prefix) :]
        defs = self.root.get("$defs", {})
        if "/" in name or "~" in name or "%" in name or name not in defs:
            raise _Unsupported
        if ref not in self.refs:
            self.refs[ref] = lambda x: self.refs[ref](x)  # a cycle resolves to the real check
            self.refs[ref] = self.compile(defs[name])
        return self.refs[ref]
