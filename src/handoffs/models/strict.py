"""Whether a tool's JSON schema may be sent as strict (OpenAI `strict: true`).

A strict schema makes the provider's sampler keep to it: every object closed
(`additionalProperties: false`) and every property required. A schema with optional
parameters or an open object is valid but not strict-compatible; it is sent without the
flag (the runner still refuses extra keys and validates strictly).
"""

from __future__ import annotations

from typing import Any

_CACHE: dict[int, tuple[Any, bool]] = {}


def strict_compatible(schema: dict[str, Any]) -> bool:
    """True when `schema` meets strict mode's rules (checked once per schema object)."""
    hit = _CACHE.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    ok = _strict(schema)
    if len(_CACHE) > 4096:  # tools built per request would otherwise pile up
        _CACHE.clear()
    _CACHE[id(schema)] = (schema, ok)  # the schema is kept, so its id stays its own
    return ok


def _strict(node: Any) -> bool:
    if isinstance(node, list):
        return all(map(_strict, node))
    if not isinstance(node, dict):
        return True
    if "default" in node:
        return False
    if node.get("type") == "object" or "properties" in node:
        props = node.get("properties", {})
        if node.get("additionalProperties") is not False:
            return False
        if set(node.get("required", ())) != set(props):
            return False
        if not all(map(_strict, props.values())):
            return False
    for key in ("items", "anyOf", "allOf", "oneOf", "prefixItems"):
        if key in node and not _strict(node[key]):
            return False
    defs = node.get("$defs")
    return defs is None or all(map(_strict, defs.values()))
