"""Form-mode elicitation helpers: the defaults a `requestedSchema` declares (SEP-1034) and a small validator of
an answer against it.

A requested schema is a flat object of primitive properties (string, number, integer, boolean, and enums of
strings, single or multi-select). `schema_defaults()` gathers each property's `default` that fits its type;
`validate_content()` lists what is wrong with an answer (missing required fields, wrong types, out-of-range
values), empty when it is acceptable. Both are pure and never raise on a malformed schema.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["schema_defaults", "validate_content"]

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})?$")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S*$")
_FORMATS = {"email": _EMAIL, "date": _DATE, "date-time": _DATE_TIME, "uri": _URI}


def schema_defaults(schema: Any) -> dict[str, Any]:
    """`{property: default}` for every property of `schema` whose `default` is valid for it."""
    defaults: dict[str, Any] = {}
    for name, prop in _properties(schema).items():
        if "default" in prop and not _property_errors(name, prop, prop["default"]):
            defaults[name] = prop["default"]
    return defaults


def validate_content(schema: Any, content: Any) -> list[str]:
    """What is wrong with `content` as an answer to `schema` (one short sentence each); [] when it is fine."""
    if not isinstance(content, Mapping):
        return ["the answer is not an object"]
    properties = _properties(schema)
    errors: list[str] = []
    required = schema.get("required") if isinstance(schema, Mapping) else None
    for name in required if isinstance(required, list) else []:
        if isinstance(name, str) and name not in content:
            errors.append(f"{name}: required")
    for name, value in content.items():
        prop = properties.get(name)
        if prop is None:
            errors.append(f"{name}: not asked for")
        else:
            errors.extend(_property_errors(name, prop, value))
    return errors


def _properties(schema: Any) -> dict[str, Mapping[str, Any]]:
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(props, Mapping):
        return {}
    return {str(k): v for k, v in props.items() if isinstance(v, Mapping)}


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _property_errors(name: str, prop: Mapping[str, Any], value: Any) -> list[str]:
    kind = prop.get("type")
    options = _enum_values(prop)
    if kind == "array":
        return _array_errors(name, prop, value)
    if kind == "boolean":
        return [] if isinstance(value, bool) else [f"{name}: expected true or false"]
    if kind in ("number", "integer"):
        if not _is_number(value) or (kind == "integer" and not float(value).is_integer()):
            return [f"{name}: expected {'an integer' if kind == 'integer' else 'a number'}"]
        errors = []
        if _is_number(prop.get("minimum")) and value < prop["minimum"]:
            errors.append(f"{name}: must be at least {prop['minimum']}")
        if _is_number(prop.get("maximum")) and value > prop["maximum"]:
            errors.append(f"{name}: must be at most {prop['maximum']}")
        return errors
    if kind == "string" or options is not None:
        if not isinstance(value, str):
            return [f"{name}: expected a string"]
        if options is not None:
            return [] if value in options else [f"{name}: must be one of {', '.join(options)}"]
        errors = []
        if isinstance(prop.get("minLength"), int) and len(value) < prop["minLength"]:
            errors.append(f"{name}: must be at least {prop['minLength']} characters")
        if isinstance(prop.get("maxLength"), int) and len(value) > prop["maxLength"]:
            errors.append(f"{name}: must be at most {prop['maxLength']} characters")
        fmt = prop.get("format")
        pattern = _FORMATS.get(fmt) if isinstance(fmt, str) else None
        if pattern is not None and not pattern.match(value):
            errors.append(f"{name}: not a valid {prop['format']}")
        return errors
    return []  # a type we do not know: accept whatever the user gave


def _enum_values(prop: Mapping[str, Any]) -> list[str] | None:
    if isinstance(prop.get("enum"), list):
        return [v for v in prop["enum"] if isinstance(v, str)]
    for key in ("oneOf", "anyOf"):  # titled enums: [{"const": "a", "title": "A"}, ...]
        if isinstance(prop.get(key), list):
            values = [o.get("const") for o in prop[key] if isinstance(o, Mapping)]
            return [v for v in values if isinstance(v, str)]
    return None


def _array_errors(name: str, prop: Mapping[str, Any], value: Any) -> list[str]:
    if not isinstance(value, list):
        return [f"{name}: expected a list"]
    items = prop.get("items")
    options = _enum_values(items) if isinstance(items, Mapping) else None
    errors = []
    if options is not None:
        wrong = [v for v in value if v not in options]
        if wrong:
            errors.append(f"{name}: {', '.join(map(str, wrong))} not among {', '.join(options)}")
    if isinstance(prop.get("minItems"), int) and len(value) < prop["minItems"]:
        errors.append(f"{name}: choose at least {prop['minItems']}")
    if isinstance(prop.get("maxItems"), int) and len(value) > prop["maxItems"]:
        errors.append(f"{name}: choose at most {prop['maxItems']}")
    return errors
