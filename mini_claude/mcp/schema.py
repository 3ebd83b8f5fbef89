"""Make an MCP tool's `inputSchema` acceptable to the model APIs, changing as little as possible.

The APIs want the root of a tool's input schema to be `{"type": "object", ...}` and the Anthropic API rejects
`anyOf` / `oneOf` / `allOf` at the root. Only the root is fixed; every keyword below it (JSON Schema 2020-12
included: `$defs`, `prefixItems`, `const`, …) is passed through as written. The input is never mutated.

A schema comes from the server, so its depth is bounded before anything recurses into it (copies, JSON
encoders, pinning digests): `schema_depth_problem` names a schema nested deeper than `MAX_SCHEMA_DEPTH`, and
the tool reader (protocol.read_tools) withholds that one tool, with the reason, instead of offering it.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from mini_claude.errors import ProtocolError
from mini_claude.mcp.transports.json_depth import nested_deeper_than

__all__ = ["MAX_SCHEMA_DEPTH", "ROOT_COMBINATORS", "WRAPPED_VALUE_KEY", "sanitize_input_schema",
           "schema_depth_problem"]

# Levels of objects/arrays a tool's input or output schema may have (the schema object itself is level 1). Real
# schemas stay far below (a deep one is a handful of $defs levels); the bound keeps Python-level recursion safe.
MAX_SCHEMA_DEPTH = 64

# Order of merging when a root has more than one: allOf first (it constrains every variant), then the unions.
ROOT_COMBINATORS = ("allOf", "anyOf", "oneOf")
# A root schema that is not an object (e.g. {"type": "string"}) is offered as the one property of this name.
WRAPPED_VALUE_KEY = "value"

_UNION_NOTE = {
    "anyOf": "The arguments must match at least one of these schemas",
    "oneOf": "The arguments must match exactly one of these schemas",
}


def schema_depth_problem(schema: Any, what: str = "input schema") -> str | None:
    """`"input schema nested deeper than 64 levels"` when `schema` nests deeper than MAX_SCHEMA_DEPTH; else None.
    Safe on a value of any depth (iterative)."""
    if nested_deeper_than(schema, MAX_SCHEMA_DEPTH):
        return f"{what} nested deeper than {MAX_SCHEMA_DEPTH} levels"
    return None


def sanitize_input_schema(schema: Any) -> dict[str, Any]:
    """Return a copy of `schema` whose root is an object schema the model APIs accept.

    - not a dict → `{"type": "object", "properties": {}}`;
    - root `anyOf` / `oneOf` / `allOf` → merged into the root object: the union of the variants' properties
      (a property defined differently by two variants becomes `{"anyOf": [...]}`, or `{"allOf": [...]}` under
      allOf); `required` is the intersection of the variants' for anyOf/oneOf and the union for allOf, added
      to the root's own; for anyOf/oneOf the variants are spelled out (compact JSON) at the end of the root's
      `description`, so the model still knows the exact shapes; local `$ref`s (`#/$defs/...`,
      `#/definitions/...`) in variants are followed to find their properties;
    - a root `type` other than "object" (e.g. "string") → `{"type": "object", "properties": {"value": <the
      original schema>}, "required": ["value"]}`; a root without `type` gets `"type": "object"`, and a root
      without `properties` gets `"properties": {}`.

    Raises ProtocolError for a schema nested deeper than MAX_SCHEMA_DEPTH (the tool reader withholds such tools
    first, so a listed tool never gets here with one).
    """
    if not isinstance(schema, dict):
        return {"type": "object", "properties": {}}
    problem = schema_depth_problem(schema)
    if problem is not None:
        raise ProtocolError(problem)
    root: dict[str, Any] = _json_copy(schema)
    for keyword in ROOT_COMBINATORS:
        if keyword in root:
            root = _merge_combinator(root, keyword)
    kind = root.get("type")
    if kind is None and _looks_like_non_object(root):
        return _wrap(root)
    if kind is not None and kind != "object":
        if isinstance(kind, list) and "object" in kind:
            # ["object", "null"]: the arguments are always an object, so the other types add nothing.
            root["type"] = "object"
        else:
            return _wrap(root)
    root["type"] = "object"
    if not isinstance(root.get("properties"), dict):
        root["properties"] = {}
    if "required" in root:
        required = root["required"]
        cleaned = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
        if cleaned:
            root["required"] = list(dict.fromkeys(cleaned))
        else:
            del root["required"]
    return _with_type_first(root)


def _json_copy(value: Any) -> Any:
    """A deep copy of parsed JSON (dicts and lists copied, everything else immutable and shared): several times
    faster than `copy.deepcopy`, which a fleet's thousand schemas made a visible part of its start. Recursive: call
    it only on a value whose depth was bounded (`schema_depth_problem`)."""
    if type(value) is dict:
        return {key: _json_copy(item) for key, item in value.items()}
    if type(value) is list:
        return [_json_copy(item) for item in value]
    return copy.deepcopy(value) if isinstance(value, (dict, list)) else value


def _looks_like_non_object(root: dict[str, Any]) -> bool:
    # A typeless root that only makes sense for a scalar or array (`{"enum": [...]}`, `{"items": ...}`).
    object_keys = {"properties", "required", "additionalProperties", "patternProperties", "propertyNames"}
    value_keys = {"enum", "const", "items", "prefixItems"}
    return not (object_keys & root.keys()) and bool(value_keys & root.keys())


def _wrap(original: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {WRAPPED_VALUE_KEY: original}, "required": [WRAPPED_VALUE_KEY]}


def _with_type_first(root: dict[str, Any]) -> dict[str, Any]:
    # Cosmetic: "type" first reads better in `mcp tools --json`; key order has no meaning in JSON Schema.
    return {"type": root["type"], **{k: v for k, v in root.items() if k != "type"}}


def _merge_combinator(root: dict[str, Any], keyword: str) -> dict[str, Any]:
    variants_raw = root.pop(keyword)
    if not isinstance(variants_raw, list) or not variants_raw:
        return root
    variants = [_resolve_local_ref(v, root) for v in variants_raw]
    union = keyword != "allOf"

    given = root.get("properties")
    properties: dict[str, Any] = dict(given) if isinstance(given, dict) else {}
    own = set(properties)
    variant_defs: dict[str, list[Any]] = {}
    for variant in variants:
        props = variant.get("properties") if isinstance(variant, dict) else None
        if not isinstance(props, dict):
            continue
        for name, definition in props.items():
            if name in own:
                continue  # the root's own definition applies to every variant
            seen = variant_defs.setdefault(name, [])
            if definition not in seen:
                seen.append(definition)
    # A property two variants define differently may take either form (or, under allOf, must satisfy both).
    alternatives = "anyOf" if union else "allOf"
    for name, definitions in variant_defs.items():
        properties[name] = definitions[0] if len(definitions) == 1 else {alternatives: definitions}
    if properties or "properties" in root:
        root["properties"] = properties

    lists = [_required_of(v) for v in variants]
    if union:  # only what every variant requires is required whichever the model picks
        extra = [r for r in lists[0] if all(r in other for other in lists[1:])]
    else:
        extra = [r for one in lists for r in one]
    merged_required = list(dict.fromkeys([*_required_of(root), *extra]))
    if merged_required:
        root["required"] = merged_required

    if union:
        shapes = "; ".join(f"({i}) {json.dumps(v, separators=(',', ':'), ensure_ascii=False)}"
                           for i, v in enumerate(variants_raw, start=1))
        note = f"{_UNION_NOTE[keyword]}: {shapes}"
        description = root.get("description")
        root["description"] = f"{description}\n\n{note}" if isinstance(description, str) and description else note
    return root


def _required_of(variant: Any) -> list[str]:
    if not isinstance(variant, dict) or not isinstance(variant.get("required"), list):
        return []
    return [r for r in variant["required"] if isinstance(r, str)]


def _resolve_local_ref(variant: Any, root: dict[str, Any]) -> Any:
    """Follow a `{"$ref": "#/$defs/Name"}` variant to its definition, for merging only (refs stay as written
    inside properties)."""
    if not isinstance(variant, dict) or not isinstance(variant.get("$ref"), str):
        return variant
    ref = variant["$ref"]
    for container in ("$defs", "definitions"):
        prefix = f"#/{container}/"
        if ref.startswith(prefix):
            defs = root.get(container)
            target = defs.get(ref[len(prefix):]) if isinstance(defs, dict) else None
            if isinstance(target, dict):
                return target
    return variant
