"""Strict tool schemas (OpenAI `strict: true`): the provider's sampler keeps to them.

Strict mode asks every object to be closed (`additionalProperties: false`) and every
property to be required, and takes no `default`. A tool with defaulted parameters, or
with a nested model whose objects are open, meets none of that as pydantic writes it, so
`strict_schema` makes the strict form of it: each object closed, each optional property
required but nullable (`anyOf [..., {"type": "null"}]`), its default said in its
description instead. The model then sends `null` for a parameter it leaves alone, and
`restore_defaults` takes such a `null` out of the call's arguments wherever the original
schema does not allow one, so the tool's Python default applies, as if the model had left
the key out. (A parameter that may be `None` itself keeps the model's `null`: `None`.)

A schema that strict mode cannot express (a `dict[str, X]` parameter, an open object
the tool asks for) is sent as it is, without the flag; the runner still refuses extra
keys and validates strictly.
"""

from __future__ import annotations

import copy
import json
from typing import Any

_COMPATIBLE: dict[int, tuple[Any, bool]] = {}
_STRICT: dict[int, tuple[Any, dict[str, Any] | None]] = {}
_LIMIT = 4096
"""Schemas remembered per cache (tools built per request would otherwise pile up)."""


def strict_compatible(schema: dict[str, Any]) -> bool:
    """True when `schema` meets strict mode's rules as it is (checked once per object)."""
    hit = _COMPATIBLE.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    ok = _strict(schema)
    if len(_COMPATIBLE) > _LIMIT:
        _COMPATIBLE.clear()
    _COMPATIBLE[id(schema)] = (schema, ok)  # the schema is kept, so its id stays its own
    return ok


def strict_schema(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The schema to send as strict: `schema` itself when it is compatible, its strict
    form (see the module) when one exists, else None (send it without the flag)."""
    if strict_compatible(schema):
        return schema
    hit = _STRICT.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    copied = copy.deepcopy(schema)
    made = copied if _make_strict(copied) and _strict(copied) else None
    if len(_STRICT) > _LIMIT:
        _STRICT.clear()
    _STRICT[id(schema)] = (schema, made)
    return made


def restore_defaults(arguments: str, schema: dict[str, Any]) -> str:
    """A call's arguments (JSON text) without the `null`s a strict form of `schema` made
    the model send for parameters it left alone: each such key is removed, so its default
    applies. Text that is not a JSON object is returned as it is."""
    if "null" not in arguments:
        return arguments
    try:
        value = json.loads(arguments)
    except (ValueError, RecursionError):
        return arguments
    if not isinstance(value, dict) or not _drop_nulls(value, schema, schema.get("$defs", {})):
        return arguments
    return json.dumps(value, ensure_ascii=False)


def _drop_nulls(value: Any, node: Any, defs: dict[str, Any], depth: int = 0) -> bool:
    """Remove defaulted nulls from `value` in place, along `node`; whether any went."""
    if depth > 64 or not isinstance(node, dict):
        return False
    node = _resolved(node, defs)
    changed = False
    props = node.get("properties")
    if isinstance(value, dict) and isinstance(props, dict):
        required = set(node.get("required", ()))
        for key in list(value):
            sub = props.get(key)
            if sub is None:
                continue
            if value[key] is None and key not in required and not _nullable(sub, defs):
                del value[key]
                changed = True
            else:
                changed |= _drop_nulls(value[key], sub, defs, depth + 1)
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        for item in value:
            changed |= _drop_nulls(item, node["items"], defs, depth + 1)
    for option in node.get("anyOf", ()) if value is not None else ():
        if isinstance(option, dict) and option.get("type") != "null":
            changed |= _drop_nulls(value, option, defs, depth + 1)
    return changed


def _resolved(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = defs.get(ref[len("#/$defs/"):])
        if isinstance(target, dict):
            return target
    return node


def _nullable(node: dict[str, Any], defs: dict[str, Any]) -> bool:
    node = _resolved(node, defs)
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(isinstance(o, dict) and _nullable(o, defs) for o in node.get("anyOf", ()))


def _make_strict(node: Any) -> bool:
    """Make `node` strict in place; False when strict mode cannot express it."""
    if isinstance(node, list):
        return all(_make_strict(n) for n in node)
    if not isinstance(node, dict):
        return True
    default = node.pop("default", _NONE)
    if node.get("type") == "object" or "properties" in node:
        if node.get("additionalProperties") not in (None, False):
            return False  # an open object (a dict parameter): strict cannot say it
        node["additionalProperties"] = False
        props = node.setdefault("properties", {})
        required = set(node.get("required", ()))
        for name, sub in list(props.items()):
            if not isinstance(sub, dict) or not _make_strict(sub):
                return False
            if name not in required:
                props[name] = _optional(sub)
        node["required"] = list(props)
    for key in ("items", "anyOf", "allOf", "oneOf", "prefixItems"):
        if key in node and not _make_strict(node[key]):
            return False
    defs = node.get("$defs")
    if isinstance(defs, dict) and not all(_make_strict(d) for d in defs.values()):
        return False
    if default is not _NONE:
        said = f"Default: {json.dumps(default)} (send null for it)."
        node["description"] = f"{node['description']} {said}" if node.get("description") \
            else said
    return True


_NONE = object()


def _optional(sub: dict[str, Any]) -> dict[str, Any]:
    """A property the model may leave alone, as strict mode says it: null allowed."""
    if sub.get("type") == "null" or any(
            isinstance(o, dict) and o.get("type") == "null" for o in sub.get("anyOf", ())):
        return sub
    description = sub.pop("description", None)
    wrapped: dict[str, Any] = {"anyOf": [sub, {"type": "null"}]}
    if description is not None:
        wrapped["description"] = description
    return wrapped


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
