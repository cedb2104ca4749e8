"""The object `RuleModel` answers with when an agent must answer with an object
(`Agent(output_type=...)`, `ctx.ask(..., output_type=...)`) and no rule applies: one that
fits the JSON schema, so a team with a structured-output agent or a classifier
guardrail plays offline instead of failing on a placeholder sentence."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PLACEHOLDER = "(offline placeholder)"
"""A string field's value."""


def placeholder_object(schema: Mapping[str, Any]) -> Any:
    """A value of `schema`: each property's default or `const` or first `enum` value where
    it has one, else a string `PLACEHOLDER`, a boolean true (a classifier's `is_safe` or
    `is_relevant` lets the message through), the least number allowed, an empty list, an
    object filled the same way; of alternatives (`anyOf`), the first that is not null."""
    return _value(schema, schema.get("$defs") or schema.get("definitions") or {}, 0)


def _value(schema: Mapping[str, Any], defs: Mapping[str, Any], depth: int) -> Any:
    if depth > 20:
        return None
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = defs.get(ref.rpartition("/")[2])
        return _value(target, defs, depth + 1) if isinstance(target, Mapping) else None
    for key in ("default", "const"):
        if key in schema:
            return schema[key]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        options = [o for o in schema.get(key) or () if isinstance(o, Mapping)
                   and o.get("type") != "null"]
        if options:
            return _value(options[0], defs, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        return {k: _value(v, defs, depth + 1) for k, v in props.items()
                if isinstance(v, Mapping)}
    if kind == "array":
        return []
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        least = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        least = least + 1 if "exclusiveMinimum" in schema and "minimum" not in schema \
            else least
        return int(least) if kind == "integer" else least
    if kind == "null":
        return None
    return PLACEHOLDER
