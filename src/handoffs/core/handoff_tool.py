"""The handoff tool: what a model is told about a route, and how its call is read.

A one-way route is offered as `transfer_to_<target>` ("Hand the conversation to ..."); a
delegation as `ask_<target>` ("Ask ... and get the answer back"), so a model is never
told a question is a transfer. The arguments are the ones an ordinary tool would have:
`reason` (and `task` for a delegation) beside the payload's own fields, at the top level,
not nested under a `payload` object. Models put a tool's fields at the top level; a
nested shape was refused twenty times in a row by a small model that did so.

A payload whose fields clash with `reason` or `task` (or that has a `payload` field)
keeps the nested shape. A call in the nested shape is accepted on every route.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .tools import ToolSpec

if TYPE_CHECKING:
    from .agent import Agent
    from .handoff import Handoff

REASON_DESCRIPTION = "Why, in one sentence."
"""The description of a one-way handoff tool's `reason` argument."""
DELEGATION_REASON_DESCRIPTION = "Why you ask, in one sentence."
"""The description of a delegation tool's `reason` argument (with these two, a handoff
tool is told apart from an ordinary one by what a model is shown)."""

OWN_ARGUMENTS = frozenset(("reason", "task"))
"""The arguments of the handoff tool itself, beside the payload's fields."""

PayloadShape = Literal["none", "flat", "nested"]


@dataclass(slots=True, frozen=True)
class HandoffTool:
    """A route's tool as the model sees it, and how its arguments are laid out."""

    spec: ToolSpec
    """The tool the model is offered."""
    shape: PayloadShape
    """`none`: the route takes no payload; `flat`: the payload's fields are top-level
    arguments; `nested`: the payload is one `payload` argument (fields clash)."""
    example: str
    """A literal call that would be accepted, shown when a call's arguments are refused."""


def handoff_tool(h: Handoff, target: Agent, name: str) -> HandoffTool:
    """The tool for route `h` to `target`, called `name`."""
    if h.description is not None:
        description = h.description
    else:
        label = target.label
        about = f": {target.description}" if target.description else "."
        description = (f"Ask {label} and get the answer back{about}" if h.returns
                       else f"Hand the conversation to {label}{about}")
    description += examples_text(h)
    props: dict[str, Any] = {}
    required: list[str] = []
    if h.returns:  # a delegation: the target works on a task and answers the caller
        props["task"] = {"type": "string", "description": (
            f"The question or work for {target.label}, with every detail it needs; the "
            "answer comes to you, not to the user.")}
        required.append("task")
        props["reason"] = {"type": "string", "description": DELEGATION_REASON_DESCRIPTION}
    else:
        props["reason"] = {"type": "string", "description": REASON_DESCRIPTION}
    shape: PayloadShape = "none"
    defs = None
    if h.payload is not None:
        schema = h.payload.model_json_schema()
        # Nested models put their definitions under $defs with refs to the document root,
        # so the definitions move to the root of the tool's schema.
        defs = schema.pop("$defs", None)
        fields: dict[str, Any] = schema.get("properties", {})
        if fields.keys() & (OWN_ARGUMENTS | {"payload"}):
            shape = "nested"
            if h.payload.model_config.get("extra") != "allow":
                schema.setdefault("additionalProperties", False)
            props["payload"] = schema
            required.append("payload")
        else:
            shape = "flat"
            props.update(fields)
            required.extend(schema.get("required", ()))
    params: dict[str, Any] = {"type": "object", "properties": props}
    if shape != "none":  # without a payload an extra key is ignored (`split_arguments`)
        params["additionalProperties"] = False
    if defs:
        params["$defs"] = defs
    if required:
        params["required"] = required
    spec = ToolSpec(name, description, params)
    return HandoffTool(spec, shape, _example(spec, shape))


def _example(spec: ToolSpec, shape: PayloadShape) -> str:
    """`name({...})` with every required argument (and `reason`) filled in."""
    props: dict[str, Any] = spec.parameters["properties"]
    required = spec.parameters.get("required", ())
    args: dict[str, Any] = {}
    for key in ("task", "reason", *required):
        if key in props and key not in args:
            args[key] = _value(props[key], key)
    return f"{spec.name}({json.dumps(args, ensure_ascii=False)})"


def _value(schema: dict[str, Any], key: str) -> Any:
    """A value `schema` accepts: its first example, enum value or default, else a
    placeholder of its type (a zero that a range may refuse, never an invented amount)."""
    for k in ("examples", "enum"):
        values = schema.get(k)
        if isinstance(values, list) and values:
            return values[0]
    if "default" in schema:
        return schema["default"]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind is None:
        for option in schema.get("anyOf", ()):
            if isinstance(option, dict) and option.get("type") not in (None, "null"):
                return _value(option, key)
    if kind == "object":
        inner = schema.get("properties", {})
        return {k: _value(v, k) for k, v in inner.items() if k in schema.get("required", ())}
    return {"string": f"<{key}>", "integer": 0, "number": 0, "boolean": False,
            "array": []}.get(kind if isinstance(kind, str) else "", f"<{key}>")


def split_arguments(args: dict[str, Any], shape: PayloadShape, payload_fields: frozenset[str]
                    ) -> tuple[Any, list[str]]:
    """The payload part of a handoff call's arguments, and the keys that are neither the
    tool's own nor the payload's (ignored: an extra key does no harm).

    The nested shape (`{"reason": ..., "payload": {...}}`) is accepted on every route;
    `None` is returned for the payload when the call gives none."""
    raw: Any = None
    extra: list[str] = []
    if shape == "none":
        extra = [k for k in args if k not in OWN_ARGUMENTS]
        return None, extra
    nested = args.get("payload")
    if "payload" in args and (shape == "nested" or "payload" not in payload_fields) and (
            isinstance(nested, dict | str)):
        raw = nested
        extra = [k for k in args if k not in OWN_ARGUMENTS and k != "payload"]
        return raw, extra
    if shape == "nested":
        return None, [k for k in args if k not in OWN_ARGUMENTS and k != "payload"]
    raw = {k: v for k, v in args.items() if k not in OWN_ARGUMENTS}
    return (raw or None), extra


DEFAULT_HANDOFF_INSTRUCTIONS = (
    "What another agent should answer: call its transfer tool at once, without announcing "
    "it. Answer the rest yourself."
)
"""What an agent with one-way routes is told about handing off (the source side of a
handoff: without it, models announce a transfer in words and never call the tool)."""

DEFAULT_ASK_INSTRUCTIONS = (
    "An ask_ tool brings another agent's answer back to you; then you answer the user."
)
"""Added for an agent with delegation routes (`returns=True`)."""


def examples_text(h: Handoff) -> str:
    """A route's examples and counter-examples, compactly (empty when it has none)."""
    text = ""
    if h.examples:
        text += " For: " + "; ".join(f'"{e}"' for e in h.examples) + "."
    if h.counter_examples:
        text += " Not for: " + "; ".join(f'"{e}"' for e in h.counter_examples) + "."
    return text


def routing_text(kinds: Collection[bool], setting: bool | str) -> str:
    """What an agent's system text says about handing off, given the kinds of its routes
    (each route's `returns`) and the setting (`Team(handoff_instructions=...)`,
    `Agent(handoff_instructions=...)`)."""
    if setting is False or not kinds:
        return ""
    if isinstance(setting, str):
        return setting
    if False in kinds:
        return (DEFAULT_HANDOFF_INSTRUCTIONS if True not in kinds
                else f"{DEFAULT_HANDOFF_INSTRUCTIONS} {DEFAULT_ASK_INSTRUCTIONS}")
    return DEFAULT_ASK_INSTRUCTIONS
